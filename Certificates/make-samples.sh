#!/usr/bin/env bash
# Regenerates the sample chain in this folder. Private keys are written to a temporary folder
# and discarded: this folder holds certificates only, because every file here is compiled into
# Swift constants and a key is not a certificate.
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

openssl ecparam -name prime256v1 -genkey -noout -out "$work/root.key"
openssl ecparam -name prime256v1 -genkey -noout -out "$work/intermediate.key"
openssl ecparam -name prime256v1 -genkey -noout -out "$work/leaf.key"
openssl ecparam -name prime256v1 -genkey -noout -out "$work/backup.key"

cat > "$work/ext.cnf" <<'CNF'
[root]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[intermediate]
basicConstraints = critical, CA:true, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[leaf]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:demo.servertrust.test, DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
CNF

openssl req -new -x509 -key "$work/root.key" -subj "/O=ServerTrust Samples/CN=ServerTrust Sample Root" \
    -days 7300 -sha256 -extensions root -config <(cat /etc/ssl/openssl.cnf "$work/ext.cnf") -out sample-root.pem
openssl req -new -key "$work/intermediate.key" -subj "/O=ServerTrust Samples/CN=ServerTrust Sample Intermediate" -out "$work/intermediate.csr"
openssl x509 -req -in "$work/intermediate.csr" -CA sample-root.pem -CAkey "$work/root.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$work/ext.cnf" -extensions intermediate -out sample-intermediate.pem
openssl req -new -key "$work/leaf.key" -subj "/CN=demo.servertrust.test" -out "$work/leaf.csr"
openssl x509 -req -in "$work/leaf.csr" -CA sample-intermediate.pem -CAkey "$work/intermediate.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$work/ext.cnf" -extensions leaf -out sample-leaf.pem
# The backup key's certificate exists only to carry its public key: pin it, keep the key offline.
openssl req -new -x509 -key "$work/backup.key" -subj "/O=ServerTrust Samples/CN=ServerTrust Sample Backup Key" \
    -days 7300 -sha256 -extensions root -config <(cat /etc/ssl/openssl.cnf "$work/ext.cnf") -out sample-backup.pem
cat sample-leaf.pem sample-intermediate.pem > sample-chain.pem.txt
rm -f sample-root.srl sample-intermediate.srl
