#!/usr/bin/env bash
# Checks that the shipping `servertrust` binary holds no test code: no symbol of the Swift module
# ServerTrustTestSupport (the attacker's pieces: intercepting and body-rewriting CONNECT proxy,
# forged certificates, hostile OCSP responses) and none of the C target CServerTrustTestShims.
# The demo's lab, ServerTrustLab, is a product and belongs in the binary.
#
#   swift build -c release --product servertrust && scripts/check-shipping-binary.sh [BINARY]
#
# BINARY defaults to .build/release/servertrust. Nothing is built here. Symbols are read with
# `nm` and demangled with `swift demangle`; a Swift symbol names its module
# (`ServerTrustTestSupport.LocalConnectProxy…`), a C shim its target's prefix.
#
# Fails closed: a binary whose symbol table cannot be read, or in which no ServerTrustLab symbol
# is found (a stripped binary, or a demangler that did not run), is an error rather than a pass.
#
# Exit status: 0 when the binary is clean; 1 when it holds a test-only symbol; 2 when it cannot
# be checked (no binary, no nm or swift demangle, no symbol table).
set -euo pipefail

binary=${1:-.build/release/servertrust}
if [[ ! -f $binary ]]; then
    echo "error: $binary not found; build it first: swift build -c release --product servertrust" >&2
    exit 2
fi
for tool in nm swift; do
    command -v "$tool" >/dev/null || { echo "error: $tool is not on PATH" >&2; exit 2; }
done

symbols=$(mktemp /tmp/servertrust-symbols.XXXXXX)
trap 'rm -f "$symbols"' EXIT
if ! nm "$binary" | swift demangle >"$symbols"; then
    echo "error: cannot read the symbols of $binary (nm or swift demangle failed)" >&2
    exit 2
fi

# The check must see Swift symbols by module, or a clean result means nothing.
if ! grep -q 'ServerTrustLab\.' "$symbols"; then
    echo "error: no ServerTrustLab symbol in $binary (stripped, or not demangled): cannot check it" >&2
    exit 2
fi

# A module or target name, not a longer identifier that happens to contain it.
pattern='(^|[^A-Za-z0-9_])(ServerTrustTestSupport\.|CServerTrustTestShims_)'
count=$(grep -cE "$pattern" "$symbols" || true)
if [[ $count -gt 0 ]]; then
    echo "error: $binary links test-only code: $count symbols of ServerTrustTestSupport or CServerTrustTestShims, e.g." >&2
    grep -m 10 -E "$pattern" "$symbols" | sed 's/^/  /' >&2
    echo "The shipping tool may depend on ServerTrustLab, never on ServerTrustTestSupport (Package.swift)." >&2
    exit 1
fi
echo "ok: $binary holds no symbol of ServerTrustTestSupport or CServerTrustTestShims ($(wc -l <"$symbols") symbols checked)"
