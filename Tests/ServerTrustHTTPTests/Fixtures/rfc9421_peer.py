"""RFC 9421 (HTTP Message Signatures) / RFC 9530 (Content-Digest) interop peer.

Built on the Python package http-message-signatures 3.0.0 (with http-sf 1.5.0 and
cryptography), pinned in .venv-tuf by scripts/setup.sh. Run it with
``.venv-tuf/bin/python``; it needs nothing else (stdlib otherwise).

serve
-----
    rfc9421_peer.py serve --cert CERT.pem --key KEY.pem --signing-key SIGNKEY.pem \
        --keyid KID --alg {ed25519,ecdsa-p256-sha256,rsa-pss-sha512} [--debug]

HTTPS (TLS from CERT.pem/KEY.pem) on 127.0.0.1, port chosen by the OS. Prints exactly one
line ``PORT <n>`` to stdout, then nothing more on stdout (logs go to stderr). Serves until
stdin reaches EOF or the process gets SIGTERM/SIGINT, so give it a pipe as stdin (an
inherited /dev/null stdin ends it at once). SIGNKEY.pem is a PKCS#8 PEM private key whose
type must match --alg. HTTP/1.1 with keep-alive; GET and POST (a POST body is read by
Content-Length and ignored). --debug prints every signature base to stderr.

Response: 200, ``Content-Type: application/json``, body ``{"ok":true,"path":"<path>"}``
(<path> = request path without query, JSON-escaped, no spaces), ``Content-Length``,
``Content-Digest: sha-256=:<base64>:`` (RFC 9530, over the bytes sent, i.e. after any
content coding), plus the ``Server``/``Date`` fields http.server always adds.

Signing is driven by the request's ``Accept-Signature`` (RFC 9421 section 5.1), e.g.
``sig1=("@status" "content-digest" "content-type" "@method";req "@authority";req
"@path";req "@query";req);nonce="n0nce"``. For EVERY member of that Dictionary the server
signs with the member's key as label, covering exactly the member's component list, in
the client's order and with the client's component parameters (``;req``, ``;sf``,
``;key=``...), plus ``"content-encoding"`` appended when the scenario sets one and
``"location"`` appended for ``redirect``. Exception: a requested HTTP field that the
message does not carry (e.g. ``content-encoding`` on an identity-coded response, or a
``;req`` field the request lacked) is skipped, with a note on stderr: check coverage. Signature parameters, in this order:
``created`` (now), ``keyid`` (--keyid), ``alg`` (--alg), [``expires``], ``nonce`` (the
member's ``nonce`` parameter, omitted if the client sent none), [``tag``] (echoed from the
member's ``tag`` parameter). Other requested parameters (keyid, alg...) are ignored.
Signature-Input / Signature are emitted as one line each (several labels are joined with
", ") unless a scenario says otherwise. Without Accept-Signature every path answers 200 +
JSON + Content-Digest, unsigned. A malformed Accept-Signature gets 400, unsigned; an
unknown scenario gets 404, unsigned; a component the library refuses (e.g. ``"@method"``
without ``;req``) gets 500, unsigned, with the reason in the text/plain body.

Scenarios are chosen by a path starting with ``/s/<scenario>`` (anything after the next
``/`` and any query are ignored for the choice but are part of @path/@query). Any other
path (``/``, ``/foo?x=1``) behaves as ``ok``. Unless stated, mutations happen AFTER a
correct signature was made:

  ok                      correct signature.
  gzip                    body gzip-compressed (mtime 0), ``Content-Encoding: gzip``,
                          Content-Digest over the gzip bytes, "content-encoding" covered.
  tamper-body             body replaced by ``{"ok":false,"path":...}``; Content-Digest kept.
  tamper-body-and-digest  same new body plus a matching new Content-Digest.
  tamper-status           signed as 200, sent as 201.
  tamper-content-type     Content-Type changed to ``text/plain`` after signing.
  add-content-encoding    ``Content-Encoding: gzip`` added after signing; body not gzipped.
  strip-content-encoding  ``gzip`` scenario, then the Content-Encoding field is removed.
  drop-component          signed without any ``content-digest`` component (the field is
                          still sent); everything else as requested.
  other-nonce             signed with a fresh random nonce instead of the client's.
  other-method            ``;req`` components resolved as if the method were POST.
  other-path              ... as if the request URL path were ``/elsewhere`` (query kept).
  other-authority         ... as if the authority were ``evil.example:443`` (the library
                          normalises that to ``evil.example`` for https).
  expired                 created = now-3600, expires = now-3000.
  future                  created = now+3600.
  unknown-keyid           keyid ``nobody`` (signed with the real key).
  alg-mismatch            ``alg`` names another algorithm (ed25519 -> "ecdsa-p256-sha256",
                          ecdsa-p256-sha256 -> "ed25519", rsa-pss-sha512 ->
                          "rsa-v1_5-sha256"); signature made with the real key/algorithm.
  duplicate-label         two Signature-Input lines and two Signature lines, all with
                          label ``sig1``: line 1 = the correct signature, line 2 = a valid
                          signature with another nonce. Wire order: SI1, SI2, Sig1, Sig2.
  oversized               correct signature, but with a signed ``tag`` of 64512 "x", so
                          the single Signature-Input value is ~64 KiB (64512 + the usual
                          few hundred bytes; under the 65536-byte line limit of stock
                          clients such as Python's http.client). All else valid.
  unsigned                no Signature-Input / Signature (Content-Digest still sent).
  two-signatures          label ``old`` (valid, another random nonce) first, then the
                          correct signature under the client's label, on one line each.
  redirect                302, ``Location: /s/ok``, empty body, Content-Type kept
                          (application/json), Content-Digest of the empty body; covers the
                          requested components plus "location".

verify
------
    rfc9421_peer.py verify --public-key PUB.pem --keyid KID --alg ALG --message MSG.json \
        [--required COMPONENT ...] [--label L] [--tag T] [--nonce N] [--debug]

MSG.json: {"request": {"method": "GET", "url": "https://host:port/path?q",
"headers": [[name, value], ...]}, "response": {"status": 200, "headers": [[name, value],
...], "body_base64": "..."}}. Verifies the response signature with HTTPMessageVerifier
(the request supplies ``;req`` components), requires a signed Content-Digest matching the
body when the body is non-empty or Content-Digest is present, and checks any
Content-Digest field with ContentDigest.verify. COMPONENT uses the signing syntax, e.g.
``@status`` or ``"@method";req``. With several signatures, select one with --label
(label-only selection allowed) and/or --tag; --nonce demands that nonce. Library policy:
created required, max age 1 day, 5 s clock skew, keyid required, alg (if present) must
equal ALG. Exit 0 printing ``verified <label> <components>`` (serialized covered
components, space-separated, without @signature-params); exit 1 printing
``failed: <reason>``; usage errors exit 2. --debug prints the signature base to stderr.
"""

import argparse
import base64
import datetime
import gzip
import http.server
import json
import secrets
import signal
import ssl
import sys
import threading
import urllib.parse
import warnings

import http_sf
from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key

from http_message_signatures import (
    ContentDigest,
    HTTPMessageSigner,
    HTTPMessageVerifier,
    MappingKeyResolver,
    algorithms,
)

ALGORITHMS = {
    "ed25519": algorithms.ED25519,
    "ecdsa-p256-sha256": algorithms.ECDSA_P256_SHA256,
    "rsa-pss-sha512": algorithms.RSA_PSS_SHA512,
}
LYING_ALG_ID = {
    "ed25519": "ecdsa-p256-sha256",
    "ecdsa-p256-sha256": "ed25519",
    "rsa-pss-sha512": "rsa-v1_5-sha256",
}
OVERSIZED_TAG_LENGTH = 64512
SCENARIOS = {
    "ok", "gzip", "tamper-body", "tamper-body-and-digest", "tamper-status", "tamper-content-type",
    "add-content-encoding", "strip-content-encoding", "drop-component", "other-nonce", "other-method",
    "other-path", "other-authority", "expired", "future", "unknown-keyid", "alg-mismatch",
    "duplicate-label", "oversized", "unsigned", "two-signatures", "redirect",
}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


class Headers:
    """Ordered field lines, case-insensitive, with the mapping methods the library uses."""

    def __init__(self, pairs=()):
        self.lines = [(str(n), str(v)) for n, v in pairs]

    def items(self):
        return list(self.lines)

    def __iter__(self):
        return iter(list(dict.fromkeys(n for n, _ in self.lines)))

    def __contains__(self, name):
        return any(n.lower() == name.lower() for n, _ in self.lines)

    def __setitem__(self, name, value):
        del self[name]
        self.lines.append((name, value))

    def __delitem__(self, name):
        self.lines = [(n, v) for n, v in self.lines if n.lower() != name.lower()]

    def get(self, name):
        values = [v for n, v in self.lines if n.lower() == name.lower()]
        return ", ".join(values) if values else None

    def add(self, name, value):
        self.lines.append((name, value))


class Request:
    def __init__(self, method, url, headers):
        self.method, self.url, self.headers = method, url, headers


class Response:
    def __init__(self, status_code, headers, request):
        self.status_code, self.headers, self.request = status_code, headers, request


# ---------------------------------------------------------------------------------------------
# serve


class Peer:
    def __init__(self, args):
        self.alg = args.alg
        self.keyid = args.keyid
        self.debug = args.debug
        with open(args.signing_key, "rb") as f:
            self.key = load_pem_private_key(f.read(), password=None)
        self.key_resolver = MappingKeyResolver(public_keys={}, private_keys={self.keyid: self.key, "nobody": self.key})
        real = ALGORITHMS[self.alg]
        real(private_key=self.key)  # fail early on a key/alg mismatch
        self.signer = HTTPMessageSigner(signature_algorithm=real, key_resolver=self.key_resolver)
        lying = type("Lying", (real,), {"algorithm_id": LYING_ALG_ID[self.alg]})
        self.lying_signer = HTTPMessageSigner(signature_algorithm=lying, key_resolver=self.key_resolver)

    def sign(self, response, *, label, components, nonce, tag=None, signer=None, keyid=None, created=None,
             expires=None, append=True):
        signer = signer or self.signer
        keyid = keyid or self.keyid
        prepared = signer.prepare(
            response, key_id=keyid, created=created or datetime.datetime.now(datetime.timezone.utc),
            expires=expires, nonce=nonce, label=label, tag=tag, include_alg=True,
            covered_component_ids=components, use_existing_digest=True,
        )
        if self.debug:
            log(f"--- signature base for label {label}:\n{prepared.signature_base.decode()}\n---")
        algorithm = signer.signature_algorithm(private_key=self.key_resolver.resolve_private_key(keyid))
        signer.apply(response, prepared, algorithm.sign(prepared.signature_base), append_if_signature_exists=append)


def parse_accept_signature(value):
    """Return [(label, [serialized component ids], {params})] from an Accept-Signature value."""
    parsed = http_sf.parse(value.encode("ascii"), tltype="dictionary")
    members = []
    for label, (member, params) in parsed.items():
        if not isinstance(member, list):
            raise ValueError(f"Accept-Signature member {label!r} is not an Inner List")
        components = []
        for item in member:
            if not isinstance(item[0], str):
                raise ValueError(f"Accept-Signature member {label!r} has a non-String component")
            components.append(http_sf.ser(item))
        members.append((label, components, params))
    return members


def component_node(serialized):
    return http_sf.parse(serialized.encode(), tltype="item")


def make_handler(peer):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 30

        def setup(self):
            self.request.settimeout(self.timeout)
            self.request.do_handshake()  # in this connection's thread, not the accept loop
            super().setup()

        def log_message(self, format, *args):
            log("%s - %s" % (self.address_string(), format % args))

        def do_GET(self):
            self.handle_any()

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            self.handle_any()

        def send(self, status, headers, body):
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def plain(self, status, text):
            body = (text + "\n").encode()
            self.send(status, Headers([("Content-Type", "text/plain")]), body)

        def handle_any(self):
            try:
                self.respond()
            except Exception as e:  # a peer bug must not kill the connection silently
                log(f"error handling {self.command} {self.path}: {e!r}")
                self.plain(500, f"peer error: {e}")

        def respond(self):
            target = self.path
            split = urllib.parse.urlsplit(target)
            path = split.path or "/"
            scenario = "ok"
            if path.startswith("/s/"):
                scenario = path[3:].split("/", 1)[0]
            host = self.headers.get("Host") or f"127.0.0.1:{self.server.server_address[1]}"
            url = f"https://{host}{target}"

            accept = self.headers.get_all("Accept-Signature")
            members = None
            if accept:
                try:
                    members = parse_accept_signature(", ".join(accept))
                except Exception as e:
                    log(f"bad Accept-Signature {accept!r}: {e}")
                    return self.plain(400, "malformed Accept-Signature")
            if scenario not in SCENARIOS:
                return self.plain(404, f"unknown scenario {scenario}")

            request = Request(self.command, url, Headers(self.headers.items()))
            status = 200
            body = json.dumps({"ok": True, "path": path}, separators=(",", ":")).encode()
            headers = Headers([("Content-Type", "application/json")])
            extra = []
            if not members:
                ContentDigest.add(headers, body)
                return self.send(status, headers, body)
            if scenario in ("gzip", "strip-content-encoding"):
                body = gzip.compress(body, mtime=0)
                headers.add("Content-Encoding", "gzip")
                extra.append('"content-encoding"')
            if scenario == "redirect":
                status, body = 302, b""
                headers.add("Location", "/s/ok")
                extra.append('"location"')
            ContentDigest.add(headers, body)

            sign_request = request
            if scenario == "other-method":
                sign_request = Request("POST", url, request.headers)
            elif scenario == "other-path":
                sign_request = Request(self.command, f"https://{host}/elsewhere" + (f"?{split.query}" if "?" in target else ""), request.headers)
            elif scenario == "other-authority":
                sign_request = Request(self.command, f"https://evil.example:443{target}", request.headers)
            response = Response(status, headers, sign_request)

            now = datetime.datetime.now(datetime.timezone.utc)
            kwargs = {}
            if scenario == "expired":
                kwargs.update(created=now - datetime.timedelta(seconds=3600), expires=now - datetime.timedelta(seconds=3000))
            elif scenario == "future":
                kwargs.update(created=now + datetime.timedelta(seconds=3600))
            elif scenario == "unknown-keyid":
                kwargs.update(keyid="nobody")
            elif scenario == "alg-mismatch":
                kwargs.update(signer=peer.lying_signer)

            duplicate_lines = None
            for index, (label, requested, params) in enumerate(members):
                components = []
                for c in requested + [e for e in extra if e not in requested]:
                    node = component_node(c)
                    name = node[0]
                    if scenario == "drop-component" and name == "content-digest":
                        continue
                    source = request.headers if "req" in node[1] else headers
                    if not name.startswith("@") and name not in source:
                        log(f"skipping requested component {c}: field not in the message")
                        continue
                    components.append(c)
                nonce = params.get("nonce")
                if scenario == "other-nonce":
                    nonce = secrets.token_urlsafe(16)
                tag = params.get("tag")
                if scenario == "oversized":
                    tag = "x" * OVERSIZED_TAG_LENGTH
                if scenario == "two-signatures" and index == 0:
                    peer.sign(response, label="old", components=components, nonce=secrets.token_urlsafe(16), tag=tag)
                if scenario == "duplicate-label" and index == 0:
                    other = Response(status, Headers(headers.items()), sign_request)
                    peer.sign(other, label=label, components=components, nonce=secrets.token_urlsafe(16), tag=tag,
                              append=False)
                    duplicate_lines = (other.headers.get("Signature-Input"), other.headers.get("Signature"))
                peer.sign(response, label=label, components=components, nonce=nonce, tag=tag, **kwargs)

            if duplicate_lines:
                si, sig = headers.get("Signature-Input"), headers.get("Signature")
                del headers["Signature-Input"]
                del headers["Signature"]
                headers.add("Signature-Input", si)
                headers.add("Signature-Input", duplicate_lines[0])
                headers.add("Signature", sig)
                headers.add("Signature", duplicate_lines[1])
            if scenario in ("tamper-body", "tamper-body-and-digest"):
                body = json.dumps({"ok": False, "path": path}, separators=(",", ":")).encode()
                if scenario == "tamper-body-and-digest":
                    headers["Content-Digest"] = ContentDigest.create(body)
            elif scenario == "tamper-status":
                status = 201
            elif scenario == "tamper-content-type":
                headers["Content-Type"] = "text/plain"
            elif scenario == "add-content-encoding":
                headers.add("Content-Encoding", "gzip")
            elif scenario == "strip-content-encoding":
                del headers["Content-Encoding"]
            elif scenario == "unsigned":
                del headers["Signature-Input"]
                del headers["Signature"]
            self.send(status, headers, body)

    return Handler


def serve(args):
    peer = Peer(args)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), make_handler(peer))
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    print(f"PORT {server.server_address[1]}", flush=True)

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        while sys.stdin.buffer.read(65536):
            pass
    finally:
        log("rfc9421_peer: shutting down")
    return 0


# ---------------------------------------------------------------------------------------------
# verify


def verify(args):
    with open(args.public_key, "rb") as f:
        public_key = load_pem_public_key(f.read())
    with open(args.message) as f:
        message = json.load(f)
    req, res = message["request"], message["response"]
    request = Request(req["method"], req["url"], Headers(req.get("headers", [])))
    body = base64.b64decode(res.get("body_base64", ""), validate=True)
    response = Response(int(res["status"]), Headers(res.get("headers", [])), request)

    verifier = HTTPMessageVerifier(
        signature_algorithm=ALGORITHMS[args.alg],
        key_resolver=MappingKeyResolver(public_keys={args.keyid: public_key}, private_keys={}),
    )
    if args.label is not None and args.tag is None:
        verifier.allow_label_only_selection = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = verifier.verify(
                response, expect_label=args.label, expect_tag=args.tag, require_components=args.required or (),
                body=body,
            )
        digest = response.headers.get("Content-Digest")
        if digest is not None:
            ContentDigest.verify(digest, body)
        if args.nonce is not None:
            for result in results:
                if result.nonce != args.nonce:
                    raise ValueError(f"signature {result.label} has nonce {result.nonce!r}, expected {args.nonce!r}")
    except Exception as e:
        print(f"failed: {type(e).__name__}: {str(e) or 'cryptographic signature check failed'}", flush=True)
        return 1
    for result in results:
        if args.debug:
            base = "\n".join(f"{k}: {v}" for k, v in result.covered_components.items())
            log(f"--- signature base for label {result.label}:\n{base}\n---")
        covered = [c for c in result.covered_components if c != '"@signature-params"']
        print(f"verified {result.label} {' '.join(covered)}", flush=True)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description="RFC 9421/9530 interop peer (http-message-signatures)")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--cert", required=True)
    s.add_argument("--key", required=True)
    s.add_argument("--signing-key", required=True)
    s.add_argument("--keyid", required=True)
    s.add_argument("--alg", required=True, choices=sorted(ALGORITHMS))
    s.add_argument("--debug", action="store_true")
    v = sub.add_parser("verify")
    v.add_argument("--public-key", required=True)
    v.add_argument("--keyid", required=True)
    v.add_argument("--alg", required=True, choices=sorted(ALGORITHMS))
    v.add_argument("--message", required=True)
    v.add_argument("--required", nargs="+", action="extend", metavar="COMPONENT")
    v.add_argument("--label")
    v.add_argument("--tag")
    v.add_argument("--nonce")
    v.add_argument("--debug", action="store_true")
    args = parser.parse_args(argv)
    return serve(args) if args.command == "serve" else verify(args)


if __name__ == "__main__":
    sys.exit(main())
