#!/usr/bin/env bash
# Regenerates the fuzzers' fixtures and seed corpora with the openssl CLI:
#   Fuzz/Fixtures/                       a small PKI the OCSP and CRL targets verify against
#   Fuzz/Sources/FuzzSupport/Fixtures.swift  the same, compiled into the fuzzers
#   Fuzz/Corpus/<target>/                seeds: real certificates, pins, host patterns, an OCSP
#                                        response from `openssl ocsp`, a CRL from `openssl ca -gencrl`
# The signed-response seed is written by the fuzzer itself (a genuine header for its fixed keys),
# so it is refreshed only when the fuzzers are built (scripts/fuzz.sh build).
# Seeds are only a starting point: libFuzzer's own corpus lives under Fuzz/.corpus (gitignored).
set -euo pipefail
cd "$(dirname "$0")"
fuzz=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# --- The PKI: a root, a leaf, a revoked leaf, a delegated OCSP responder. -----------------------
cat > ca.cnf <<'CNF'
[ca]
default_ca = fuzz
[fuzz]
dir = .
database = index.txt
new_certs_dir = .
serial = serial
crlnumber = crlnumber
default_md = sha256
default_crl_days = 36500
policy = anything
unique_subject = no
[anything]
commonName = supplied
[req]
distinguished_name = dn
[dn]
[root]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[leaf]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:fuzz.servertrust.test, DNS:*.fuzz.servertrust.test, IP:192.0.2.1, IP:2001:db8::1, email:fuzz@servertrust.test, URI:https://fuzz.servertrust.test/
authorityInfoAccess = OCSP;URI:http://ocsp.fuzz.servertrust.test/, caIssuers;URI:http://ca.fuzz.servertrust.test/root.der
crlDistributionPoints = URI:http://crl.fuzz.servertrust.test/root.crl, URI:ldap://crl.fuzz.servertrust.test/cn=root
certificatePolicies = 2.23.140.1.2.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[mustStaple]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:staple.fuzz.servertrust.test
tlsfeature = status_request
[responder]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = OCSPSigning
noCheck = ignored
[crlext]
authorityKeyIdentifier = keyid
CNF
touch index.txt
echo 1000 > serial
echo 01 > crlnumber
key() { openssl genpkey -algorithm "$@" 2>/dev/null; }
key EC -pkeyopt ec_paramgen_curve:P-256 -out root.key
key EC -pkeyopt ec_paramgen_curve:P-256 -out leaf.key
key EC -pkeyopt ec_paramgen_curve:P-256 -out responder.key
key RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.key
key ED25519 -out ed25519.key

openssl req -new -x509 -key root.key -subj "/O=ServerTrust Fuzzing/CN=ServerTrust Fuzz Root" \
    -days 36500 -config ca.cnf -extensions root -out root.pem
issue() {  # name key subject extensions
    openssl req -new -key "$2" -subj "$3" -config ca.cnf -out "$1.csr"
    openssl ca -batch -config ca.cnf -cert root.pem -keyfile root.key -days 36500 -extfile ca.cnf \
        -extensions "$4" -notext -in "$1.csr" -out "$1.pem" 2>/dev/null
}
issue leaf leaf.key "/CN=fuzz.servertrust.test" leaf
issue revoked leaf.key "/CN=revoked.fuzz.servertrust.test" leaf
issue responder responder.key "/CN=ServerTrust Fuzz OCSP Responder" responder
issue staple rsa.key "/CN=staple.fuzz.servertrust.test" mustStaple
issue ed25519 ed25519.key "/CN=ed25519.fuzz.servertrust.test" leaf
openssl ca -batch -config ca.cnf -cert root.pem -keyfile root.key -revoke revoked.pem -crl_reason keyCompromise 2>/dev/null
openssl ca -batch -config ca.cnf -cert root.pem -keyfile root.key -gencrl -crlexts crlext -out crl.pem 2>/dev/null
openssl crl -in crl.pem -outform DER -out crl.der
# An empty CRL (nothing revoked) from a fresh database.
mkdir empty && (cd empty && cp ../ca.cnf ../root.pem ../root.key . && touch index.txt && echo 01 > crlnumber \
    && openssl ca -batch -config ca.cnf -cert root.pem -keyfile root.key -gencrl -crlexts crlext -out ../crl-empty.pem 2>/dev/null)

# --- OCSP responses from `openssl ocsp` acting as a one-shot responder. ------------------------
ocsp() {  # name certificate signer key [extra request options]
    local name=$1 cert=$2 signer=$3 signerKey=$4
    shift 4
    openssl ocsp -issuer root.pem -cert "$cert" "$@" -reqout "$name-request.der" >/dev/null 2>&1
    openssl ocsp -index index.txt -CA root.pem -rsigner "$signer" -rkey "$signerKey" -ndays 36500 \
        -reqin "$name-request.der" -respout "$name.der" >/dev/null 2>&1
}
ocsp good-by-issuer leaf.pem root.pem root.key -no_nonce
ocsp good-by-responder leaf.pem responder.pem responder.key -no_nonce
ocsp revoked revoked.pem responder.pem responder.key -no_nonce
ocsp two-certificates leaf.pem responder.pem responder.key -cert revoked.pem -no_nonce
ocsp nonce leaf.pem responder.pem responder.key -nonce
# The nonce the request carried, as bytes (inside its OCTET STRING: 04 10 + 16 bytes).
nonce=$(openssl ocsp -reqin nonce-request.der -req_text | sed -n '/OCSP Nonce/{n;p}' | tr -d ' \n' | sed 's/^0410//')
# An unauthorised-signer response (the leaf's key, not certified for OCSP) and an error status.
ocsp wrong-signer leaf.pem leaf.pem leaf.key -no_nonce
printf '\x30\x03\x0a\x01\x06' > unauthorized.der   # OCSPResponse { responseStatus unauthorized(6) }
validation_time=$(( $(date +%s) + 3600 ))

# --- Fixtures. ---------------------------------------------------------------------------------
mkdir -p "$fuzz/Fixtures"
cp root.pem leaf.pem revoked.pem responder.pem crl.pem "$fuzz/Fixtures/"
echo "$validation_time" > "$fuzz/Fixtures/validation-time.txt"
echo "$nonce" > "$fuzz/Fixtures/ocsp-nonce.hex"
swift_string() { printf '    static let %s = """\n%s\n"""\n' "$1" "$(cat "$2")"; }
{
    echo "// Generated by Fuzz/make-seeds.sh; do not edit. The PKI the OCSP and CRL seeds were made with."
    echo "import Foundation"
    echo
    echo "public enum Fixtures {"
    swift_string rootPEM root.pem | sed 's/^    static/    public static/'
    swift_string leafPEM leaf.pem | sed 's/^    static/    public static/'
    swift_string revokedPEM revoked.pem | sed 's/^    static/    public static/'
    swift_string responderPEM responder.pem | sed 's/^    static/    public static/'
    swift_string crlPEM crl.pem | sed 's/^    static/    public static/'
    echo "    /// The nonce of the request behind Corpus/ocsp/nonce.der (hex)."
    echo "    public static let ocspNonceHex = \"$nonce\""
    echo "    /// An hour after the seeds were made: every certificate, CRL and OCSP response is current."
    echo "    public static let validationTime = Date(timeIntervalSince1970: $validation_time)"
    echo "}"
} > "$fuzz/Sources/FuzzSupport/Fixtures.swift"

# --- Seed corpora. -----------------------------------------------------------------------------
seeds() { rm -rf "$fuzz/Corpus/$1"; mkdir -p "$fuzz/Corpus/$1"; }
der() { openssl x509 -in "$1" -outform DER; }
pin() { openssl x509 -in "$1" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64; }

seeds certificate
for name in root leaf revoked responder staple ed25519; do
    der $name.pem > "$fuzz/Corpus/certificate/$name.der"
done
cp leaf.pem "$fuzz/Corpus/certificate/leaf.pem"
cat leaf.pem root.pem > "$fuzz/Corpus/certificate/chain.pem"
der leaf.pem | base64 -w0 > "$fuzz/Corpus/certificate/leaf.base64"
cp "$fuzz/../Certificates/sample-chain.pem.txt" "$fuzz/Corpus/certificate/sample-chain.pem"
openssl req -new -x509 -key rsa.key -subj "/CN=self-signed RSA/O=Fuzz\\, Inc./C=FR" -days 36500 -config ca.cnf \
    -extensions leaf -outform DER -out "$fuzz/Corpus/certificate/rsa-self-signed.der"
printf -- '-----BEGIN TRUSTED CERTIFICATE-----\nMAA=\n-----END TRUSTED CERTIFICATE-----\n' > "$fuzz/Corpus/certificate/trusted.pem"

seeds pin
{
    echo "sha256/$(pin leaf.pem)" > "$fuzz/Corpus/pin/leaf"
    echo "sha256//$(pin root.pem)" > "$fuzz/Corpus/pin/root-curl-form"
    printf '  sha256/%s\t\n' "$(pin ed25519.pem)" > "$fuzz/Corpus/pin/whitespace"
    echo "sha1/$(openssl x509 -in leaf.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha1 -binary | base64)" > "$fuzz/Corpus/pin/sha1"
    echo "SHA256/AAAA" > "$fuzz/Corpus/pin/short"
    echo "sha256/$(pin leaf.pem | tr '+/' '-_' | tr -d '=')" > "$fuzz/Corpus/pin/base64url"
}

# host-pattern input: one pattern per line, the last line is the host looked up.
seeds host-pattern
hp() { printf '%b' "$2" > "$fuzz/Corpus/host-pattern/$1"; }
hp exact 'api.example.com\napi.example.com'
hp single-label '*.example.com\nfoo.example.com'
hp any-depth '**.example.com\na.b.example.com'
hp most-specific 'api.example.com\n*.example.com\n**.example.com\napi.example.com'
hp ipv4 '192.0.2.1\n192.0.2.1'
hp ipv6 '[2001:db8::1]\n2001:0db8:0000::1'
hp public-suffix '**.co.uk\nfoo.co.uk'
hp idn 'xn--bcher-kva.example\nB\xc3\xbccher.example'
hp trailing-dot 'API.Example.COM.\napi.example.com'
hp psl-wildcard '*.kawasaki.jp\nfoo.kawasaki.jp'

seeds ocsp
for name in good-by-issuer good-by-responder revoked two-certificates nonce wrong-signer unauthorized; do
    cp $name.der "$fuzz/Corpus/ocsp/$name.der"
done

seeds crl
cp crl.pem crl.der "$fuzz/Corpus/crl/"
cp crl-empty.pem "$fuzz/Corpus/crl/"

seeds signed-response
seed_binary="$fuzz/.build-fuzz/debug/fuzz-signed-response"
if [ -x "$seed_binary" ]; then
    SERVERTRUST_FUZZ_WRITE_SEED="$fuzz/Corpus/signed-response/genuine" "$seed_binary" -runs=0 >/dev/null 2>&1
else
    echo "make-seeds.sh: $seed_binary not built; run scripts/fuzz.sh build, then this again for the signed-response seed" >&2
fi
printf 'X-ServerTrust-Signature: v1; cert=; salt=; nonce=; time=0; req=; body=; sig=\n' > "$fuzz/Corpus/signed-response/empty-values"
printf 'X-ServerTrust-Signature: v2, v1\nETag: "e"\n' > "$fuzz/Corpus/signed-response/versions"
echo "seeds written under $fuzz/Corpus"
