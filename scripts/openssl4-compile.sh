#!/usr/bin/env bash
# Compiles ServerTrust against OpenSSL 4.0's headers (#54 item 3): compile only — libcurl links
# OpenSSL 3 on every Debian, so nothing links or runs against 4.0 yet. OpenSSL 4.0 makes
# ASN1_STRING, ASN1_TIME and their kin opaque; the sources hold such pointers through
# OpenSSLObjectPointer (ServerTrustCertificates) and the out-parameter shims of
# CServerTrustShims, one source for 3.0, 3.5, 3.6 and 4.0.
#
#   scripts/openssl4-compile.sh
#
# The headers come from Debian experimental's libssl-dev 4.x (the archive's package index
# names the file), extracted into .build-openssl4-headers (ignored by git, reused), and go
# before the system's with -Xcc -I. Each library and test target that holds OpenSSL code and
# no build plugin is compiled in .build-openssl4: the plugin's tool, and the targets that use
# it (servertrust, ServerTrustTUFTests, the CLI and update tests), would be linked, and their
# OpenSSL code is the libraries' anyway.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
headers=$here/.build-openssl4-headers
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ ! -f "$headers/usr/include/openssl/opensslv.h" ]; then
    arch=$(dpkg --print-architecture)
    entry=$(curl -fsS --retry 3 "$mirror/dists/experimental/main/binary-$arch/Packages.xz" | xz -dc | awk '/^Package: libssl-dev$/,/^$/')
    version=$(sed -n 's/^Version: //p' <<<"$entry" | head -n 1)
    file=$(sed -n 's/^Filename: //p' <<<"$entry" | head -n 1)
    case $version in
        4.*) ;;
        *) echo "openssl4-compile: experimental's libssl-dev is '$version', not 4.x" >&2; exit 1 ;;
    esac
    rm -rf "$headers" && mkdir -p "$headers"
    curl -fsS --retry 3 -o "$headers/libssl-dev.deb" "$mirror/$file"
    dpkg-deb -x "$headers/libssl-dev.deb" "$headers"
fi
grep -h '# *define OPENSSL_VERSION_TEXT' "$headers/usr/include/openssl/opensslv.h" | sed 's/.*"\(.*\)"/headers: \1/'
include=(-Xcc "-I$headers/usr/include" -Xcc "-I$headers/usr/include/$(gcc -print-multiarch)")
for target in ServerTrustUpdates ServerTrustPurchases ServerTrustTestSupport ServerTrustTests ServerTrustHTTPTests ServerTrustPurchasesTests; do
    log=$here/.build-openssl4-headers/$target.log
    if ! swift build --target "$target" --scratch-path .build-openssl4 "${include[@]}" >"$log" 2>&1; then
        grep -E "error:" "$log" | sort -u | head -n 40 >&2
        echo "openssl4-compile: $target does not compile against OpenSSL 4.0's headers" >&2
        exit 1
    fi
    echo "$target: compiled"
done
