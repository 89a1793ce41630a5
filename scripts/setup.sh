#!/usr/bin/env bash
# Installs the system packages ServerTrust builds and tests with (Debian 12 or 13). Idempotent.
set -euo pipefail
# libsqlite3-dev: the purchase ledger's embedded store (ServerTrustLedger) links the system SQLite.
packages=(libcurl4-openssl-dev libssl-dev zlib1g-dev libsqlite3-dev pkg-config openssl curl ca-certificates python3 python3-venv nginx-light publicsuffix)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# nginx-light's package starts a system nginx on port 80; our tests start their own on high ports.
if command -v systemctl >/dev/null 2>&1; then systemctl stop nginx >/dev/null 2>&1 || true; fi
pkg-config --exists libcurl openssl zlib sqlite3
curl_backend=$(curl-config --ssl-backends 2>/dev/null || true)
case "$curl_backend" in
    *OpenSSL*) ;;
    *) echo "setup: libcurl's TLS backend is '$curl_backend', ServerTrust needs OpenSSL (libcurl4-openssl-dev)" >&2; exit 1 ;;
esac
# Python test peers, pinned, in .venv-tuf (gitignored): ServerTrustTUFTests build their
# repositories with python-tuf, and ServerTrustHTTPTests run
# Tests/ServerTrustHTTPTests/Fixtures/rfc9421_peer.py (http-message-signatures) as the
# RFC 9421/9530 interop peer. PyPI is the only network access this needs.
venv=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.venv-tuf
tuf_requirements=(tuf==7.0.1 "securesystemslib[crypto]==1.6.0" cryptography==50.0.2
    http-message-signatures==3.0.0 http-sf==1.5.0)
if ! "$venv/bin/python" -c "
import importlib.metadata as m, tuf, cryptography, http_sf, http_message_signatures
assert tuf.__version__ == '7.0.1'
assert m.version('http-message-signatures') == '3.0.0' and m.version('http-sf') == '1.5.0'
" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "${tuf_requirements[@]}"
fi
