#!/usr/bin/env bash
# Makes the CRL workload's material with the openssl command line, once, and keeps it:
#
#   scripts/make-crls.sh DIR SIZE...
#
# DIR gets root.pem → intermediate.pem → leaf.pem, root.crl.der (empty, by the root) and, for
# each SIZE, intermediate-SIZE.crl.der: SIZE revoked serials (not the leaf's) from
# `openssl ca -gencrl` over an index of SIZE entries. Files are kept while the certificates
# have more than 7 days of validity left and the (30-day) CRLs are less than 20 days old: the
# 1,000,000-entry CRL takes 10–20 s to make.
set -euo pipefail
dir=$(mkdir -p "${1:?usage: make-crls.sh DIR SIZE...}" && cd "$1" && pwd)
shift
cd "$dir"
ossl() { local out; out=$(openssl "$@" 2>&1) || { echo "$out" >&2; return 1; }; }
fresh() { [ -f "$1" ] && openssl x509 -in "$1" -noout -checkend 604800 >/dev/null 2>&1; }
crl_fresh() { [ -n "$(find "$1" -mtime -20 2>/dev/null)" ]; }  # valid 30 days: made less than 20 days ago

if ! fresh leaf.pem || ! fresh root.pem; then
    rm -f ./*.pem ./*.key ./*.der ./*.txt* crlnumber*
    cat > ext.cnf <<'CNF'
[root_ext]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[intermediate_ext]
basicConstraints = critical, CA:true, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[leaf_ext]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:crl.servertrust.test
authorityKeyIdentifier = keyid
CNF
    ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256)
    ossl req -x509 "${ec[@]}" -nodes -keyout root.key -out root.pem -subj "/CN=CRL Bench Root" -days 365 \
        -extensions root_ext -config <(cat /etc/ssl/openssl.cnf ext.cnf)
    ossl req "${ec[@]}" -nodes -keyout intermediate.key -out intermediate.csr -subj "/CN=CRL Bench Intermediate"
    ossl x509 -req -in intermediate.csr -CA root.pem -CAkey root.key -set_serial 2 -days 365 \
        -extfile ext.cnf -extensions intermediate_ext -out intermediate.pem
    ossl req "${ec[@]}" -nodes -keyout leaf.key -out leaf.csr -subj "/CN=crl.servertrust.test"
    ossl x509 -req -in leaf.csr -CA intermediate.pem -CAkey intermediate.key -set_serial 3 -days 365 \
        -extfile ext.cnf -extensions leaf_ext -out leaf.pem
fi

# gencrl CA-NAME INDEX OUT
gencrl() {
    cat > ca.cnf <<CNF
[ca]
default_ca = c
[c]
database = $2
crlnumber = crlnumber
default_md = sha256
default_crl_days = 30
certificate = $1.pem
private_key = $1.key
CNF
    echo 01 > crlnumber
    rm -f "$2.attr"
    ossl ca -gencrl -config ca.cnf -out "$3.pem"
    ossl crl -in "$3.pem" -outform DER -out "$3"
    rm -f "$3.pem"
}

if ! crl_fresh root.crl.der; then
    : > root-index.txt
    gencrl root root-index.txt root.crl.der
fi
for size in "$@"; do
    out=intermediate-$size.crl.der
    crl_fresh "$out" && continue
    # Serials from 0x01000000 up: never the leaf's (3).
    awk -v n="$size" 'BEGIN { for (i = 1; i <= n; i++) printf "R\t351231000000Z\t250101000000Z\t%08X\tunknown\t/CN=revoked\n", 16777216 + i }' > index-$size.txt
    gencrl intermediate index-$size.txt "$out"
    rm -f index-$size.txt index-$size.txt.*
done
ls -la "$dir"/*.crl.der
