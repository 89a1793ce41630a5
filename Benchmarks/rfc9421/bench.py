#!/usr/bin/env python3
"""RFC 9421 response verification with the Python library http-message-signatures 3.0.0, on the
responses `signature-bench --export DIR` wrote: the very same bytes ServerTrust's
MessageSignatureVerifier verified in that process.

    .venv-tuf/bin/python Benchmarks/rfc9421/bench.py DIR     (scripts/signatures.sh runs it)

Per response, what our verifier checks, with the library doing the RFC 9421 and RFC 9530 work:
HTTPMessageVerifier.verify(response, require_components=<our policy's required components>,
body=<body>) — the signature over the base with the request attached for `;req` components,
created/expires and the keyid, and, because a body is passed, the library's ContentDigest check
of every covered Content-Digest against the body (it hashes the algorithms the field names) —
then the nonce is this request's and was not accepted before (a set, as our replay cache; the
library leaves replay detection to the caller). The message objects are built before timing,
as ours are in memory before it verifies. The first `warmup` responses are verified untimed,
the next `count` timed. Prints `wall_ns W` and `cpu_ns C` per verification (CPU = this
process's user + system time).
"""
import base64, json, os, sys, time, warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../Tests/ServerTrustHTTPTests/Fixtures"))
from rfc9421_peer import ALGORITHMS, Headers, Request, Response  # noqa: E402
from cryptography.hazmat.primitives.serialization import load_pem_public_key  # noqa: E402
from http_message_signatures import HTTPMessageVerifier, MappingKeyResolver  # noqa: E402


def main():
    directory = sys.argv[1]
    with open(os.path.join(directory, "responses.json")) as f:
        document = json.load(f)
    with open(os.path.join(directory, document["body_file"]), "rb") as f:
        body = f.read()
    key = load_pem_public_key(document["public_key_pem"].encode())
    verifier = HTTPMessageVerifier(
        signature_algorithm=ALGORITHMS[document["alg"]],
        key_resolver=MappingKeyResolver(public_keys={document["keyid"]: key}, private_keys={}),
    )
    required = document["required"]
    messages = []
    for item in document["responses"]:
        req, res = item["request"], item["response"]
        request = Request(req["method"], req["url"], Headers(req["headers"]))
        messages.append((Response(int(res["status"]), Headers(res["headers"]), request), item["nonce"]))
    accepted = set()

    def verify(response, nonce):
        results = verifier.verify(response, require_components=required, body=body)
        if len(results) != 1 or results[0].nonce != nonce:
            raise SystemExit(f"bench.py: the signature does not carry this request's nonce {nonce}")
        if nonce in accepted:
            raise SystemExit(f"bench.py: nonce {nonce} replayed")
        accepted.add(nonce)

    warmup, count = document["warmup"], document["count"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for response, nonce in messages[:warmup]:
            verify(response, nonce)
        wall, cpu = time.perf_counter_ns(), time.process_time_ns()
        for response, nonce in messages[warmup:warmup + count]:
            verify(response, nonce)
        wall, cpu = time.perf_counter_ns() - wall, time.process_time_ns() - cpu
    print("wall_ns", wall // count)
    print("cpu_ns", cpu // count)


if __name__ == "__main__":
    main()
