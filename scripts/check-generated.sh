#!/usr/bin/env bash
# Regenerates every committed generated source into a temporary file and fails on a difference,
# so a generator change, a hand edit or a stale input cannot reach a release unnoticed.
# Generated sources live in Sources/ServerTrust/Generated/, one generator each:
#   PublicSuffixList+Data.swift  scripts/generate-public-suffix-list.py, from the Debian package
#                                publicsuffix (/usr/share/publicsuffix/public_suffix_list.dat)
# and one generated fixture:
#   Tests/ServerTrustTUFTests/Certificates/sample.tufroot.json
#                                Tests/ServerTrustTUFTests/Fixtures/tuf_repo.py compiled-root, with
#                                python-tuf from .venv-tuf (scripts/setup.sh): the TUF root the
#                                plugin compiles into the tests (fixed keys and expiry)
# Not checked here: the pins of Certificates/ are generated at build time by a plugin and never
# committed; Fuzz/make-seeds.sh makes fresh keys on every run (its output cannot be reproduced,
# only replaced), and Fuzz/ is a separate package with its own regression test of its seeds.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=$(mktemp -d /tmp/servertrust-generated.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
status=0

check() {  # check <committed file> <generator command…>; the generator writes to --output
    local committed=$1
    shift
    local fresh="$scratch/$(basename "$committed")"
    if ! "$@" --output "$fresh" >/dev/null; then
        echo "check-generated: the generator of $committed failed: $*" >&2
        status=1
        return
    fi
    if ! diff -u "$committed" "$fresh" >"$scratch/diff"; then
        echo "check-generated: $committed differs from what $1 generates now:" >&2
        head -n 40 "$scratch/diff" >&2
        echo "check-generated: regenerate it ($*, without --output) and commit the result." >&2
        status=1
        return
    fi
    echo "check-generated: $committed is up to date"
}

check Sources/ServerTrust/Generated/PublicSuffixList+Data.swift scripts/generate-public-suffix-list.py
check Tests/ServerTrustTUFTests/Certificates/sample.tufroot.json \
    .venv-tuf/bin/python Tests/ServerTrustTUFTests/Fixtures/tuf_repo.py compiled-root

exit "$status"
