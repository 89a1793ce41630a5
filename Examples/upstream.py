#!/usr/bin/env python3
"""The local upstream of the two example services: an API and the TUF repository that keeps
their pins current, over HTTPS on 127.0.0.1:19443 (both names resolve there in the services).

    .venv-tuf/bin/python Examples/upstream.py DIR     (the venv scripts/setup.sh makes)

makes, in DIR (emptied first; it must be new, or a directory this script made before):

    keys/               every private key: the CA, the server, the two spare server keys, the
                        four TUF roles (a real repository keeps root and targets offline)
    ca.pem              the CA the server's certificate chains to: the services' only anchor
    server.pem          the server's certificate, for api.upstream.test and updates.upstream.test
    floor.json          the pins the services start from: a policy file pinning both hosts
    root.json           the TUF root the services start from
    repository/         the TUF repository: metadata/ (root, timestamp, snapshot, targets) and
                        targets/ (policy.json, which pins the API host's key and the next key)
    ready               written last: the services wait for it

and serves GET /v1/quote (the API) and GET /tuf/... (the repository) until SIGTERM or ^C.
docs/TRUST_UPDATES.md says what each role and target is for; docs/POLICY_FILE.md, the policy.
"""
import base64, hashlib, http.server, json, os, shutil, signal, ssl, sys
from datetime import datetime, timedelta, timezone

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from securesystemslib.signer import CryptoSigner
from tuf.api.metadata import Metadata, MetaFile, Root, Snapshot, TargetFile, Targets, Timestamp
from tuf.api.serialization.json import JSONSerializer

# Not 18441-18999: scripts/interop/nginx.sh takes ports there, and .ci/run runs it meanwhile.
ADDRESS, PORT = "127.0.0.1", 19443
HOSTS = ["api.upstream.test", "updates.upstream.test"]
NOW = datetime.now(timezone.utc).replace(microsecond=0)


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def new_key(dir, name):
    key = ec.generate_private_key(ec.SECP256R1())
    write(f"{dir}/keys/{name}.pem", key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return key


def pin(key):
    """The policy file's pin: sha256/ and the base64 SHA-256 of the key's SubjectPublicKeyInfo."""
    spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "sha256/" + base64.b64encode(hashlib.sha256(spki).digest()).decode()


def make_pki(dir):
    """A CA and one server certificate for both host names."""
    ca_key, server_key = new_key(dir, "ca"), new_key(dir, "server")
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ServerTrust example upstream CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(NOW - timedelta(hours=1))
          .not_valid_after(NOW + timedelta(days=365))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    server = (x509.CertificateBuilder()
              .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOSTS[0])])).issuer_name(ca_name)
              .public_key(server_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(NOW - timedelta(hours=1)).not_valid_after(NOW + timedelta(days=90))
              .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in HOSTS]), critical=False)
              .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
              .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
              .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
              .add_extension(x509.SubjectKeyIdentifier.from_public_key(server_key.public_key()), critical=False)
              .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
              .sign(ca_key, hashes.SHA256()))
    write(f"{dir}/ca.pem", ca.public_bytes(serialization.Encoding.PEM))
    write(f"{dir}/server.pem", server.public_bytes(serialization.Encoding.PEM))
    return server_key


def policy(hosts):
    """A ServerTrust policy file (docs/POLICY_FILE.md): each host pinned to two keys."""
    return json.dumps({"version": 1, "hosts": {
        host: {"pins": [{"pin": p, "label": label} for p, label in pins]} for host, pins in hosts.items()}}, indent=2) + "\n"


def make_repository(dir, policy_json):
    """A TUF repository with one target, policy.json: one ed25519 key per role, consistent
    snapshots, expiries as docs/TRUST_UPDATES.md suggests (root a year … timestamp a day)."""
    signers = {}
    for role in ("root", "targets", "snapshot", "timestamp"):
        key = Ed25519PrivateKey.generate()
        write(f"{dir}/keys/tuf-{role}.pem", key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        signers[role] = CryptoSigner(key)
    root = Metadata(Root(expires=NOW + timedelta(days=365)))
    root.signed.consistent_snapshot = True
    for role, signer in signers.items():
        root.signed.add_key(signer.public_key, role)
    root.sign(signers["root"])
    targets = Metadata(Targets(expires=NOW + timedelta(days=30)))
    targets.signed.targets["policy.json"] = TargetFile.from_data("policy.json", policy_json.encode(), ["sha256"])
    targets.sign(signers["targets"])
    snapshot = Metadata(Snapshot(expires=NOW + timedelta(days=7)))
    snapshot.signed.meta["targets.json"] = MetaFile(targets.signed.version)
    snapshot.sign(signers["snapshot"])
    timestamp = Metadata(Timestamp(expires=NOW + timedelta(days=1)))
    timestamp.signed.snapshot_meta = MetaFile(snapshot.signed.version)
    timestamp.sign(signers["timestamp"])
    serializer = JSONSerializer(compact=True)
    repository = f"{dir}/repository"
    write(f"{repository}/metadata/1.root.json", serializer.serialize(root))
    write(f"{repository}/metadata/1.targets.json", serializer.serialize(targets))
    write(f"{repository}/metadata/1.snapshot.json", serializer.serialize(snapshot))
    write(f"{repository}/metadata/timestamp.json", serializer.serialize(timestamp))
    write(f"{repository}/targets/{hashlib.sha256(policy_json.encode()).hexdigest()}.policy.json", policy_json)
    write(f"{dir}/root.json", serializer.serialize(root))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # keep-alive, as a real API is
    repository = None

    def do_GET(self):
        if self.path == "/v1/quote":
            body, kind = json.dumps({"symbol": "STX", "price": "42.17", "currency": "EUR"}).encode() + b"\n", "application/json"
        elif self.path.startswith("/tuf/") and ".." not in self.path:
            try:
                with open(os.path.join(self.repository, self.path[len("/tuf/"):]), "rb") as f:
                    body, kind = f.read(), "application/octet-stream"
            except OSError:
                return self.send_error(404)
        else:
            return self.send_error(404)
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        print(f"upstream: {self.headers.get('Host', '-')} {format % args}", flush=True)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    dir = os.path.abspath(sys.argv[1])
    if os.path.exists(dir) and os.listdir(dir) and not os.path.exists(f"{dir}/.servertrust-example-upstream"):
        sys.exit(f"upstream: {dir} is not empty and was not made by this script; give a new directory")
    shutil.rmtree(dir, ignore_errors=True)   # new keys each run: the services' stores go too
    write(f"{dir}/.servertrust-example-upstream", "")
    server_key = make_pki(dir)
    backup, next_key = new_key(dir, "backup"), new_key(dir, "next")
    # The floor: in a real app these pins are compiled in from Certificates/ (ServerTrustPinsPlugin);
    # here the service reads them from this file. The update host is pinned here and only here.
    write(f"{dir}/floor.json", policy({
        "api.upstream.test": [(pin(server_key), "server key"), (pin(backup), "backup key, offline")],
        "updates.upstream.test": [(pin(server_key), "server key"), (pin(backup), "backup key, offline")]}))
    # What the repository delivers: the API host pinned to the server key and the next key
    # (step 1 of the rotation runbook in docs/TRUST_UPDATES.md). The services apply it at start.
    make_repository(dir, policy({"api.upstream.test": [(pin(server_key), "server key"), (pin(next_key), "next key")]}))

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(f"{dir}/server.pem", f"{dir}/keys/server.pem")
    Handler.repository = f"{dir}/repository"
    server = http.server.ThreadingHTTPServer((ADDRESS, PORT), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    write(f"{dir}/ready", "")
    print(f"upstream: serving https://{{{','.join(HOSTS)}}}:{PORT} on {ADDRESS} from {dir}", flush=True)
    try:
        server.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        print("upstream: stopped", flush=True)


if __name__ == "__main__":
    main()
