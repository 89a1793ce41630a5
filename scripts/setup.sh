#!/usr/bin/env bash
# Installs the system packages ServerTrust builds and tests with (Debian 12). Idempotent.
set -euo pipefail
packages=(libcurl4-openssl-dev libssl-dev zlib1g-dev pkg-config openssl curl ca-certificates python3 nginx-light publicsuffix)
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
pkg-config --exists libcurl openssl zlib
curl_backend=$(curl-config --ssl-backends 2>/dev/null || true)
case "$curl_backend" in
    *OpenSSL*) ;;
    *) echo "setup: libcurl's TLS backend is '$curl_backend', ServerTrust needs OpenSSL (libcurl4-openssl-dev)" >&2; exit 1 ;;
esac
