#!/usr/bin/env python3
"""Certificate Transparency fixtures for the benchmark nginx (nginx.sh, issue #45).

    make-ct.py PRECERT.pem ISSUER.pem ISSUER.key OUT.pem LIST.json LOG.key...

Signs an embedded SCT (RFC 6962 §3.2, precert_entry) from each LOG.key (ECDSA P-256, one
operator per log) over PRECERT's TBSCertificate and ISSUER's key hash; writes OUT.pem, PRECERT
with the SignedCertificateTimestampList extension (1.3.6.1.4.1.11129.2.4.2) appended to its
TBSCertificate and signed again by ISSUER.key (ECDSA, SHA-256), and LIST.json, a v3 log list
naming every LOG.key's log, usable since 30 days ago, dated now. Signing is `openssl dgst`;
the rest is bytes.
"""
import base64
import datetime
import hashlib
import json
import struct
import subprocess
import sys
import time


def openssl(*args, data=None):
    return subprocess.run(["openssl", *args], input=data, capture_output=True, check=True).stdout


def element(der, offset):
    """(start of contents, end) of the DER element at offset."""
    length = der[offset + 1]
    start = offset + 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(der[start:start + count], "big")
        start += count
    return start, start + length


def der(tag, contents):
    length = len(contents)
    if length < 0x80:
        return bytes([tag, length]) + contents
    octets = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(octets)]) + octets + contents


def with_extension(tbs, extension):
    """tbs (a whole TBSCertificate, whose last element is [3] Extensions) with extension appended."""
    contents, end = element(tbs, 0)
    offset = contents
    while True:
        start, stop = element(tbs, offset)
        if stop == end:
            break
        offset = stop
    assert tbs[offset] == 0xA3, "the TBSCertificate does not end with its extensions"
    extensions_start, extensions_end = element(tbs, start)
    extensions = der(0x30, tbs[extensions_start:extensions_end] + extension)
    return der(0x30, tbs[contents:offset] + der(0xA3, extensions))


def spki(key):
    return openssl("pkey", "-in", key, "-pubout", "-outform", "DER")


def main():
    precert, issuer, issuer_private, out, list_path, keys = sys.argv[1:6] + [sys.argv[6:]]
    cert = openssl("x509", "-in", precert, "-outform", "DER")
    contents, _ = element(cert, 0)
    _, tbs_end = element(cert, contents)
    tbs = cert[contents:tbs_end]
    _, algorithm_end = element(cert, tbs_end)
    issuer_key = openssl("x509", "-in", issuer, "-pubkey", "-noout")
    issuer_key_hash = hashlib.sha256(openssl("pkey", "-pubin", "-outform", "DER", data=issuer_key)).digest()
    timestamp = int(time.time() * 1000) - 60_000
    scts = b""
    logs = []
    for index, key in enumerate(keys):
        public = spki(key)
        signed = (struct.pack(">BBQH", 0, 0, timestamp, 1) + issuer_key_hash
                  + len(tbs).to_bytes(3, "big") + tbs + struct.pack(">H", 0))
        signature = openssl("dgst", "-sha256", "-sign", key, data=signed)
        sct = (struct.pack(">B", 0) + hashlib.sha256(public).digest() + struct.pack(">QH", timestamp, 0)
               + struct.pack(">BBH", 4, 3, len(signature)) + signature)
        scts += struct.pack(">H", len(sct)) + sct
        logs.append((index, public))
    sct_list = struct.pack(">H", len(scts)) + scts
    oid = bytes.fromhex("060a2b06010401d679020402")  # 1.3.6.1.4.1.11129.2.4.2
    final_tbs = with_extension(tbs, der(0x30, oid + der(0x04, der(0x04, sct_list))))
    signature = openssl("dgst", "-sha256", "-sign", issuer_private, data=final_tbs)
    final = der(0x30, final_tbs + cert[tbs_end:algorithm_end] + der(0x03, b"\0" + signature))
    with open(out, "wb") as file:
        file.write(openssl("x509", "-inform", "DER", "-outform", "PEM", data=final))
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    rfc3339 = lambda date: date.strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
    operators = [{
        "name": f"Bench Operator {index + 1}",
        "email": [f"ct{index + 1}@bench.servertrust.test"],
        "logs": [{
            "description": f"Bench Log {index + 1}",
            "log_id": base64.b64encode(hashlib.sha256(public).digest()).decode(),
            "key": base64.b64encode(public).decode(),
            "url": f"https://ct{index + 1}.bench.servertrust.test/",
            "mmd": 86400,
            "state": {"usable": {"timestamp": rfc3339(now - datetime.timedelta(days=30))}},
        }],
    } for index, public in logs]
    with open(list_path, "w") as file:
        json.dump({"version": "1.0", "log_list_timestamp": rfc3339(now), "operators": operators}, file, indent=2)


main()
