#!/usr/bin/env python3
"""Repositories for ServerTrustTUF's tests, made with python-tuf's Metadata API (tuf 7.0.1).

    tuf_repo.py generate OUT     every scenario: OUT/<scenario>/root.json (the initial trusted
                                 root) and OUT/<scenario>/<state>/{metadata,targets}/ — the
                                 repository as served at each step of a test
    tuf_repo.py serve DIR        serves DIR on 127.0.0.1 (an ephemeral port, printed as
                                 "PORT <n>"); a file F with a sibling F.endless is answered with
                                 endless data, with F.slow one byte every 0.5 s; every request
                                 path is appended to DIR/requests.log
    tuf_repo.py policies OUT SPEC
                                 trust-update repositories (ServerTrustUpdates' tests): SPEC is a
                                 JSON list of states, each {"targets": {name: text}} (every state
                                 a new targets, snapshot and timestamp version publishing exactly
                                 those targets) or {"replay": k} (state k's files served again:
                                 old metadata, validly signed); OUT/root.json, OUT/<i>/…. A
                                 state's "delegated": {"names": [...], "expiresInDays": n} lists
                                 those targets in the delegated role "policies" instead, which
                                 expires n days from now (the top-level metadata in 30)
    tuf_repo.py vectors OUT      known-answer vectors: canonical JSON and signatures by
                                 securesystemslib
    tuf_repo.py find DIR STATE TARGET
                                 python-tuf's own client (ngclient) over the files of a generated
                                 scenario DIR: prints {"sha256": …} of the target it finds,
                                 {"found": false}, or {"error": <exception class>}
    tuf_repo.py compiled-root [--output FILE]
                                 the fixture root compiled into the tests by ServerTrustPinsPlugin
                                 (Tests/ServerTrustTUFTests/Certificates/sample.tufroot.json): the
                                 same bytes on every run, so scripts/check-generated.sh checks it
"""
import base64, copy, hashlib, http.server, json, os, socketserver, sys, threading, time
from urllib.parse import quote
from datetime import datetime, timedelta, timezone

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from securesystemslib.formats import encode_canonical
from securesystemslib.signer import CryptoSigner, SSlibKey
from tuf.api.metadata import (DelegatedRole, Delegations, Metadata, MetaFile, Root, Signature, Snapshot,
                              SuccinctRoles, TargetFile, Targets, Timestamp)
from tuf.api.serialization.json import JSONSerializer

NOW = datetime.now(timezone.utc).replace(microsecond=0)
FUTURE = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=30)
PAST = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=1)
SER = JSONSerializer(compact=True)
# The compiled-in fixture root expires on a fixed date, so its bytes never change.
COMPILED_EXPIRES = datetime(2099, 12, 31, tzinfo=timezone.utc)


def seeded_signer(label):
    """An Ed25519 signer whose private key is derived from a public label: TEST-ONLY keys that
    anyone can derive, so the compiled-in fixture root and the repositories signed for it can be
    made again, byte for byte, on every run."""
    seed = hashlib.sha256(f"servertrust test-only key: {label}".encode()).digest()
    return CryptoSigner(Ed25519PrivateKey.from_private_bytes(seed))


def compiled_signers():
    return {r: [seeded_signer(r)] for r in ("root", "timestamp", "snapshot", "targets")}


def unusable_key():
    """An ECDSA P-384 key: securesystemslib signs with it, ServerTrustTUF does not support it."""
    return SSlibKey.from_crypto(ec.generate_private_key(ec.SECP384R1()).public_key())


class Repo:
    """A repository with consistent snapshots; publish() writes one served state."""

    def __init__(self, keytype="ed25519", signers=None, root_expires=FUTURE):
        gen = {"ed25519": CryptoSigner.generate_ed25519, "ecdsa": CryptoSigner.generate_ecdsa,
               "rsa": CryptoSigner.generate_rsa}[keytype]
        self.signers = signers or {r: [gen()] for r in ("root", "timestamp", "snapshot", "targets")}
        self.root = Metadata(Root(expires=root_expires))
        for role, signers in self.signers.items():
            for s in signers:
                self.root.signed.add_key(s.public_key, role)
        self.root.signed.consistent_snapshot = True
        self.roots = {}
        self.sign_root()
        self.targets = Metadata(Targets(expires=FUTURE))
        self.delegated = {}        # name -> (Metadata[Targets], [signers])
        self.snapshot = Metadata(Snapshot(expires=FUTURE))
        self.timestamp = Metadata(Timestamp(expires=FUTURE))
        self.target_data = {}      # path -> bytes

    def sign_root(self, extra_signers=()):
        self.root.signatures.clear()
        for s in self.signers["root"]:
            self.root.sign(s, append=True)
        for s in extra_signers:
            self.root.sign(s, append=True)
        self.roots[self.root.signed.version] = SER.serialize(self.root)

    def add_target(self, path, data, role=None):
        md = self.targets if role is None else self.delegated[role][0]
        md.signed.targets[path] = TargetFile.from_data(path, data, ["sha256"])
        self.target_data[path] = data

    def delegate(self, name, paths, terminating=False):
        signer = CryptoSigner.generate_ed25519()
        if self.targets.signed.delegations is None:
            self.targets.signed.delegations = Delegations(keys={}, roles={})
        role = DelegatedRole(name, [], 1, terminating, paths=paths)
        self.targets.signed.delegations.roles[name] = role
        self.targets.signed.add_key(signer.public_key, name)
        self.delegated[name] = (Metadata(Targets(expires=FUTURE)), [signer])

    def hash_bins(self, bit_length=3, prefix="bin"):
        signer = CryptoSigner.generate_ed25519()
        succinct = SuccinctRoles([], 1, bit_length, prefix)
        self.targets.signed.delegations = Delegations(keys={}, succinct_roles=succinct)
        self.targets.signed.add_key(signer.public_key)
        for name in succinct.get_roles():
            self.delegated[name] = (Metadata(Targets(expires=FUTURE)), [signer])
        return succinct

    def bump(self, *roles):
        for r in roles:
            md = {"timestamp": self.timestamp, "snapshot": self.snapshot, "targets": self.targets}.get(r)
            if md is None:
                md = self.delegated[r][0]
            md.signed.version += 1

    def publish(self, out, sign=True, timestamp_signers=None):
        """Signs targets, delegated targets, snapshot and timestamp (in that order, each
        referring to the ones before) and writes the state."""
        meta = os.path.join(out, "metadata")
        tdir = os.path.join(out, "targets")
        os.makedirs(meta, exist_ok=True)
        os.makedirs(tdir, exist_ok=True)
        for v, data in self.roots.items():
            open(os.path.join(meta, f"{v}.root.json"), "wb").write(data)
        files = {}
        for name, (md, signers) in self.delegated.items():
            if sign:
                md.signatures.clear()
                for s in signers:
                    md.sign(s, append=True)
            files[name] = md
            self.snapshot.signed.meta[f"{name}.json"] = MetaFile(md.signed.version)
        if sign:
            self.targets.signatures.clear()
            self.targets.sign(self.signers["targets"][0])
        files["targets"] = self.targets
        self.snapshot.signed.meta["targets.json"] = MetaFile(self.targets.signed.version)
        if sign:
            self.snapshot.signatures.clear()
            self.snapshot.sign(self.signers["snapshot"][0])
        files["snapshot"] = self.snapshot
        self.timestamp.signed.snapshot_meta = MetaFile(self.snapshot.signed.version)
        if sign:
            self.timestamp.signatures.clear()
            for s in (timestamp_signers or self.signers["timestamp"]):
                self.timestamp.sign(s, append=True)
        for name, md in files.items():
            # A role's file is named as its URL is (percent-encoded, as python-tuf's client asks).
            open(os.path.join(meta, f"{md.signed.version}.{quote(name, safe='')}.json"), "wb").write(SER.serialize(md))
        open(os.path.join(meta, "timestamp.json"), "wb").write(SER.serialize(self.timestamp))
        for path, data in self.target_data.items():
            h = hashlib.sha256(data).hexdigest()
            d, sep, base = path.rpartition("/")
            full = os.path.join(tdir, f"{d}{sep}{h}.{base}")
            os.makedirs(os.path.dirname(full), exist_ok=True)
            open(full, "wb").write(data)

    def write_initial_root(self, scenario_dir):
        os.makedirs(scenario_dir, exist_ok=True)
        open(os.path.join(scenario_dir, "root.json"), "wb").write(self.roots[1])


def scenario_happy(out):
    r = Repo()
    r.write_initial_root(out)
    r.add_target("file.txt", b"hello, world\n")
    r.delegate("subdir", ["sub/*"])
    r.delegate("unused", ["other/*"], terminating=True)
    r.add_target("sub/deep.txt", b"delegated target\n", role="subdir")
    r.publish(f"{out}/0")
    # state 1: the target changed; state 2: a wrong hash; state 3: wrong (longer) length
    r.add_target("file.txt", b"hello, world, version 2\n")
    r.bump("targets", "snapshot", "timestamp")
    r.publish(f"{out}/1")
    for name, data in (("2", b"HELLO, WORLD, VERSION 2\n"), ("3", b"hello, world, version 2, longer\n")):
        os.system(f"cp -r {out}/1 {out}/{name}")
        h = r.targets.signed.targets["file.txt"].hashes["sha256"]
        open(f"{out}/{name}/targets/{h}.file.txt", "wb").write(data)
    # state 4: endless timestamp; state 5: slow timestamp
    os.system(f"cp -r {out}/1 {out}/4 && touch {out}/4/metadata/timestamp.json.endless")
    os.system(f"cp -r {out}/1 {out}/5 && touch {out}/5/metadata/timestamp.json.slow")


def scenario_hashbins(out):
    r = Repo("ecdsa")
    r.write_initial_root(out)
    succinct = r.hash_bins()
    for i in range(20):
        path = f"packages/p{i}.json"
        r.add_target(path, f"package {i}\n".encode(), role=succinct.get_role_for_target(path))
    r.publish(f"{out}/0")


def scenario_rotation(out):
    r = Repo()
    r.write_initial_root(out)
    r.publish(f"{out}/0")
    old = r.signers["root"][0]
    new = CryptoSigner.generate_rsa()
    # v2: the old root key is removed; v2 is signed by the old key (the trusted root's
    # threshold) and the new one (its own threshold)
    r.root.signed.revoke_key(old.public_key.keyid, "root")
    r.root.signed.add_key(new.public_key, "root")
    r.root.signed.version += 1
    r.signers["root"] = [new]
    r.sign_root(extra_signers=[old])
    # v3: a threshold of 2 of two new keys
    k3a, k3b = CryptoSigner.generate_ecdsa(), CryptoSigner.generate_ecdsa()
    r.root.signed.revoke_key(new.public_key.keyid, "root")
    r.root.signed.add_key(k3a.public_key, "root")
    r.root.signed.add_key(k3b.public_key, "root")
    r.root.signed.roles["root"].threshold = 2
    r.root.signed.version += 1
    r.signers["root"] = [k3a, k3b]
    r.sign_root(extra_signers=[new])
    r.bump("timestamp")
    r.publish(f"{out}/1")
    # states 2 and 3: a v4 that replaces both v3 keys by a new key k4 (threshold 1), each
    # failing exactly one of the two checks, so each check is tested on its own.
    # 2: signed by k4 (its own threshold met) and by one of the two v3 keys (the trusted v3's
    # threshold of 2 not met); 3: signed by both v3 keys (the trusted threshold met) but not by
    # k4 (its own threshold not met)
    k4 = CryptoSigner.generate_ed25519()
    for state, signers in (("2", [k4, k3a]), ("3", [k3a, k3b])):
        x = copy.deepcopy(r)
        for k in (k3a, k3b):
            x.root.signed.revoke_key(k.public_key.keyid, "root")
        x.root.signed.add_key(k4.public_key, "root")
        x.root.signed.roles["root"].threshold = 1
        x.root.signed.version += 1
        x.signers["root"] = signers
        x.sign_root()
        x.publish(f"{out}/{state}")


def scenario_threshold(out):
    r = Repo()
    extra = CryptoSigner.generate_ed25519()
    r.root.signed.add_key(extra.public_key, "timestamp")
    r.root.signed.roles["timestamp"].threshold = 2
    r.sign_root()
    r.roots = {1: r.roots[1]}
    r.write_initial_root(out)
    r.publish(f"{out}/0")              # timestamp signed by one key of two
    r.publish(f"{out}/1", timestamp_signers=r.signers["timestamp"] + [extra])


def scenario_rollback(out):
    r = Repo()
    r.write_initial_root(out)
    r.bump("timestamp", "snapshot", "targets")
    r.publish(f"{out}/0")                              # ts 2, snap 2, targets 2
    saved = copy.deepcopy(r)
    # 1: timestamp rolled back to version 1 (valid signature)
    r.timestamp.signed.version = 1
    r.publish(f"{out}/1")
    # 2: timestamp 3 naming snapshot 1
    r = copy.deepcopy(saved)
    r.timestamp.signed.version = 3
    r.snapshot.signed.version = 1
    r.publish(f"{out}/2")
    # 3: ts 3, snapshot 3 naming targets 1
    r = copy.deepcopy(saved)
    r.bump("timestamp", "snapshot")
    r.targets.signed.version = 1
    r.publish(f"{out}/3")
    # 4: root rollback: 2.root.json holds the version-1 root
    r = copy.deepcopy(saved)
    r.publish(f"{out}/4")
    open(f"{out}/4/metadata/2.root.json", "wb").write(r.roots[1])


def scenario_freeze(out):
    r = Repo()
    r.write_initial_root(out)
    r.publish(f"{out}/0")
    for state, role in (("1", "timestamp"), ("2", "snapshot"), ("3", "targets")):
        x = copy.deepcopy(r)
        x.bump("timestamp", "snapshot", "targets")
        md = {"timestamp": x.timestamp, "snapshot": x.snapshot, "targets": x.targets}[role]
        md.signed.expires = PAST
        x.publish(f"{out}/{state}")
    # 4: the final root (version 2, validly rotated to) has expired
    x = copy.deepcopy(r)
    x.root.signed.version += 1
    x.root.signed.expires = PAST
    x.sign_root()
    x.bump("timestamp", "snapshot", "targets")
    x.publish(f"{out}/4")


def scenario_mixmatch(out):
    r = Repo()
    r.write_initial_root(out)
    r.publish(f"{out}/0")
    old_targets = SER.serialize(r.targets)
    r.bump("timestamp", "snapshot", "targets")
    r.publish(f"{out}/1")
    # snapshot names targets 2, the mirror serves the (validly signed) targets 1 under that name
    open(f"{out}/1/metadata/2.targets.json", "wb").write(old_targets)


def scenario_mirror(out):
    r = Repo()
    r.write_initial_root(out)
    r.add_target("file.txt", b"genuine\n")
    r.publish(f"{out}/0")
    # a malicious mirror: new versions signed by keys it made itself
    x = copy.deepcopy(r)
    attacker = CryptoSigner.generate_ed25519()
    for role in ("timestamp", "snapshot", "targets"):
        x.signers[role] = [attacker]
    x.add_target("file.txt", b"malware\n")
    x.bump("timestamp", "snapshot", "targets")
    x.publish(f"{out}/1")
    # 2: a mirror without any key alters the signed targets (file.txt is now the malware) and
    # keeps the genuine signatures, which no longer verify: the signatures are under the
    # trusted key ID, so only the cryptographic check refuses them
    os.system(f"cp -r {out}/0 {out}/2")
    path = f"{out}/2/metadata/{r.targets.signed.version}.targets.json"
    doc = json.load(open(path))
    malware = b"malware\n"
    doc["signed"]["targets"]["file.txt"] = {"length": len(malware), "hashes": {"sha256": hashlib.sha256(malware).hexdigest()}}
    open(path, "w").write(json.dumps(doc, separators=(",", ":")))
    open(f"{out}/2/targets/{hashlib.sha256(malware).hexdigest()}.file.txt", "wb").write(malware)


def scenario_crash(out, states=201):
    r = Repo()
    r.write_initial_root(out)
    r.delegate("subdir", ["sub/*"])
    for i in range(states):
        r.add_target("sub/file.txt", f"state {i}\n".encode(), role="subdir")
        if i:
            r.bump("timestamp", "snapshot", "targets", "subdir")
        r.publish(f"{out}/{i}")


def scenario_compiled(out):
    """The repository of the root compiled into the tests (compiled-root): state 0 as published
    with it, state 1 after a rotation to root version 2 whose new key replaces the old one."""
    r = Repo(signers=compiled_signers(), root_expires=COMPILED_EXPIRES)
    r.write_initial_root(out)
    r.add_target("policy.json", b'{"pins": []}\n')
    r.publish(f"{out}/0")
    old = r.signers["root"][0]
    new = CryptoSigner.generate_ed25519()
    r.root.signed.revoke_key(old.public_key.keyid, "root")
    r.root.signed.add_key(new.public_key, "root")
    r.root.signed.version += 1
    r.signers["root"] = [new]
    r.sign_root(extra_signers=[old])
    r.bump("timestamp")
    r.publish(f"{out}/1")


def alias(key, spell=lambda public: public):
    """The same public key under a second key ID (GHSA-4f8r-qqr9-fq8j): python-tuf takes any
    string as a key ID, so a root or a delegator can list one key twice; `spell` may write its
    value another way."""
    keyval = {"public": spell(key.keyval["public"])}
    return SSlibKey(hashlib.sha256(f"alias of {key.keyid}".encode()).hexdigest(), key.keytype, key.scheme, keyval)


def sign_twice(md, signer, alias_key):
    """One signature by `signer` (Ed25519: deterministic), listed under its key ID and under
    `alias_key`'s, as if two keys had signed."""
    signature = md.signatures[signer.public_key.keyid].signature
    md.signatures[alias_key.keyid] = Signature(alias_key.keyid, signature)


def resign_file(path, signer, alias_key):
    md = Metadata.from_file(path)
    sign_twice(md, signer, alias_key)
    open(path, "wb").write(SER.serialize(md))


def scenario_samekey_timestamp(out, spell=lambda public: public):
    """The initial root lists the timestamp key under two key IDs with a threshold of 2; the
    timestamp is signed once, the signature listed under both IDs."""
    r = Repo()
    key = r.signers["timestamp"][0]
    twin = alias(key.public_key, spell)
    r.root.signed.add_key(twin, "timestamp")
    r.root.signed.roles["timestamp"].threshold = 2
    r.sign_root()
    r.write_initial_root(out)
    r.publish(f"{out}/0")
    resign_file(f"{out}/0/metadata/timestamp.json", key, twin)


def scenario_samekey_timestamp_uppercase(out):
    """samekey_timestamp with the second ID's copy of the key written in upper-case hex."""
    scenario_samekey_timestamp(out, spell=str.upper)


def scenario_samekey_root(out):
    """Root version 2 lists its one new root key under two key IDs with a threshold of 2; it is
    signed by the trusted version 1's key and once by the new key, under both IDs."""
    r = Repo()
    r.write_initial_root(out)
    old = r.signers["root"][0]
    new = CryptoSigner.generate_ed25519()
    twin = alias(new.public_key)
    r.root.signed.revoke_key(old.public_key.keyid, "root")
    r.root.signed.add_key(new.public_key, "root")
    r.root.signed.add_key(twin, "root")
    r.root.signed.roles["root"].threshold = 2
    r.root.signed.version += 1
    r.signers["root"] = [new]
    r.sign_root(extra_signers=[old])
    sign_twice(r.root, new, twin)
    r.roots[2] = SER.serialize(r.root)
    r.publish(f"{out}/0")


def scenario_samekey_delegated(out):
    """The role "policies" (policy.json) is delegated to one key under two key IDs with a
    threshold of 2, and signed once, the signature listed under both IDs."""
    r = Repo()
    r.write_initial_root(out)
    r.delegate("policies", ["policy.json"])
    key = r.delegated["policies"][1][0]
    twin = alias(key.public_key)
    r.targets.signed.add_key(twin, "policies")
    r.targets.signed.delegations.roles["policies"].threshold = 2
    r.add_target("policy.json", b"delegated\n", role="policies")
    r.publish(f"{out}/0")
    resign_file(f"{out}/0/metadata/1.policies.json", key, twin)


def scenario_distinctkeys(out):
    """The control of the samekey scenarios: two distinct keys and a threshold of 2 for the
    timestamp, for root version 2 and for the delegated role "policies", each signed by both."""
    r = Repo()
    r.write_initial_root(out)
    old = r.signers["root"][0]
    roots = [CryptoSigner.generate_ed25519(), CryptoSigner.generate_ed25519()]
    r.root.signed.revoke_key(old.public_key.keyid, "root")
    for s in roots:
        r.root.signed.add_key(s.public_key, "root")
    r.root.signed.roles["root"].threshold = 2
    second = CryptoSigner.generate_ed25519()
    r.root.signed.add_key(second.public_key, "timestamp")
    r.root.signed.roles["timestamp"].threshold = 2
    r.root.signed.version += 1
    r.signers["root"] = roots
    r.sign_root(extra_signers=[old])
    r.delegate("policies", ["policy.json"])
    extra = CryptoSigner.generate_ed25519()
    r.targets.signed.add_key(extra.public_key, "policies")
    r.delegated["policies"][1].append(extra)
    r.targets.signed.delegations.roles["policies"].threshold = 2
    r.add_target("policy.json", b"delegated\n", role="policies")
    r.publish(f"{out}/0", timestamp_signers=r.signers["timestamp"] + [second])


def scenario_maxversion(out):
    """Root versions at the top of 64 bits: the initial root is version 2^63 - 2; state 0 also
    publishes version 2^63 - 1, the largest a version can be."""
    r = Repo()
    r.root.signed.version = 2**63 - 2
    r.roots = {}
    r.sign_root()
    os.makedirs(out, exist_ok=True)
    open(os.path.join(out, "root.json"), "wb").write(r.roots[2**63 - 2])
    r.root.signed.version += 1
    r.sign_root()
    r.publish(f"{out}/0")


# policy.json of scenario_delegatedexpiry: the two pins DelegatedExpiryTests' floor pins.
DELEGATED_POLICY = json.dumps({"version": 1, "hosts": {"api.servertrust.test": {"pins": [
    {"pin": "sha256/" + base64.b64encode(bytes([1]) * 32).decode()},
    {"pin": "sha256/" + base64.b64encode(bytes([2]) * 32).decode()}]}}}).encode()


def scenario_delegatedexpiry(out):
    """policy.json is delivered by the delegated role "policies", which expires in 2 days (the
    top-level metadata in 30); file.txt is listed by the top-level targets."""
    r = Repo()
    r.write_initial_root(out)
    r.add_target("file.txt", b"top-level\n")
    r.delegate("policies", ["policy.json"])
    r.delegated["policies"][0].signed.expires = NOW + timedelta(days=2)
    r.add_target("policy.json", DELEGATED_POLICY, role="policies")
    r.publish(f"{out}/0")


def scenario_twodelegators(out):
    """One role name delegated by two delegators with different keys: targets delegates "*" to
    A, then B; A delegates "*" to shared (key SA, which signs it); B delegates "*" to shared
    (another key) and then to Z, which lists wanted.txt. A walk that skips a visited role name
    (python-tuf 7) finds wanted.txt in Z; one that tracks (role, delegator) loads shared again
    for B and refuses its signature."""
    r = Repo()
    r.write_initial_root(out)
    r.delegate("A", ["*"])
    r.delegate("B", ["*"])
    shared_a, shared_b = CryptoSigner.generate_ed25519(), CryptoSigner.generate_ed25519()
    for parent, signer, children in (("A", shared_a, ["shared"]), ("B", shared_b, ["shared", "Z"])):
        md = r.delegated[parent][0]
        md.signed.delegations = Delegations(keys={}, roles={})
        for child in children:
            md.signed.delegations.roles[child] = DelegatedRole(child, [], 1, False, paths=["*"])
        md.signed.add_key(signer.public_key, "shared")
    z = CryptoSigner.generate_ed25519()
    r.delegated["B"][0].signed.add_key(z.public_key, "Z")
    r.delegated["shared"] = (Metadata(Targets(expires=FUTURE)), [shared_a])
    r.delegated["Z"] = (Metadata(Targets(expires=FUTURE)), [z])
    r.add_target("other.txt", b"in shared\n", role="shared")
    r.add_target("wanted.txt", b"in Z\n", role="Z")
    r.publish(f"{out}/0")


def scenario_advisory_threshold0(out):
    """go-tuf, 2026: a threshold of 0 disabled signature checks. State 0: targets delegates
    "zero" (zero.txt) with a threshold of 0, and zero.json carries no signature. State 1: root
    version 2, properly signed, sets the timestamp role's threshold to 0."""
    r = Repo()
    r.write_initial_root(out)
    r.delegate("zero", ["zero.txt"])
    r.targets.signed.delegations.roles["zero"].threshold = 0
    r.add_target("zero.txt", b"accepted unsigned\n", role="zero")
    r.delegated["zero"] = (r.delegated["zero"][0], [])
    r.publish(f"{out}/0")
    r.root.signed.roles["timestamp"].threshold = 0
    r.root.signed.version += 1
    r.sign_root()
    r.bump("timestamp")
    r.publish(f"{out}/1")


def scenario_advisory_traversal(out):
    """go-tuf, 2026: a role name used as a file path escaped the metadata folder. targets
    delegates "../../escape" (escape.txt), served under its percent-encoded name."""
    r = Repo()
    r.write_initial_root(out)
    r.delegate("../../escape", ["escape.txt"])
    r.add_target("escape.txt", b"escaped?\n", role="../../escape")
    r.publish(f"{out}/0")


def scenario_advisory_emptyhashes(out):
    """go-tuf, 2026: empty hashes were accepted, leaving nothing to check the bytes against.
    State 0: targets lists empty.txt with "hashes": {}. State 1: the timestamp's snapshot meta
    has "hashes": {} (signed)."""
    r = Repo()
    r.write_initial_root(out)
    r.add_target("empty.txt", b"any bytes of this length\n")
    r.targets.signed.targets["empty.txt"].hashes = {}
    r.publish(f"{out}/0")
    r.targets.signed.targets["empty.txt"] = TargetFile.from_data("empty.txt", b"any bytes of this length\n", ["sha256"])
    r.bump("targets", "snapshot", "timestamp")
    r.publish(f"{out}/1")
    r.timestamp.signed.snapshot_meta.hashes = {}
    r.timestamp.signatures.clear()
    r.timestamp.sign(r.signers["timestamp"][0])
    open(f"{out}/1/metadata/timestamp.json", "wb").write(SER.serialize(r.timestamp))


def find(directory, state, target):
    """python-tuf's Updater over local files (no network), as the oracle of the walk."""
    from tuf.ngclient import FetcherInterface, Updater
    from tuf.api import exceptions

    class FileFetcher(FetcherInterface):
        def _fetch(self, url):
            path = os.path.join(directory, url.removeprefix("file://"))
            if not os.path.isfile(path):
                raise exceptions.DownloadHTTPError(f"{url} not found", 404)
            return iter([open(path, "rb").read()])

    import tempfile
    store = tempfile.mkdtemp()
    updater = Updater(store, f"file://{state}/metadata/", fetcher=FileFetcher(),
                      bootstrap=open(os.path.join(directory, "root.json"), "rb").read())
    try:
        updater.refresh()
        info = updater.get_targetinfo(target)
    except Exception as e:
        print(json.dumps({"error": type(e).__name__, "reason": str(e)}))
        return
    print(json.dumps({"sha256": info.hashes["sha256"]} if info else {"found": False}))


def scenario_roots(out):
    """Root files for the build-time check (no repository): OUT/<case>.tufroot.json."""
    os.makedirs(out, exist_ok=True)

    def write(name, md):
        open(os.path.join(out, f"{name}.tufroot.json"), "wb").write(SER.serialize(md))

    write("valid", Repo().root)
    r = Repo()
    r.root.signatures.clear()
    write("unsigned", r.root)
    # 2 of 2 root keys required, signed by one
    r = Repo()
    extra = CryptoSigner.generate_ed25519()
    r.root.signed.add_key(extra.public_key, "root")
    r.root.signed.roles["root"].threshold = 2
    r.sign_root()
    write("below-threshold", r.root)
    # the only timestamp key is of a type the client cannot use: timestamps could never verify
    r = Repo()
    r.root.signed.revoke_key(r.signers["timestamp"][0].public_key.keyid, "timestamp")
    r.root.signed.add_key(unusable_key(), "timestamp")
    r.sign_root()
    write("unusable-timestamp-key", r.root)
    # a spare unusable key beside a usable one, threshold 1: compiles, with a warning
    r = Repo()
    r.root.signed.add_key(unusable_key(), "snapshot")
    r.sign_root()
    write("spare-unusable-key", r.root)
    write("expired", Repo(root_expires=PAST).root)


def compiled_root(args):
    data = Repo(signers=compiled_signers(), root_expires=COMPILED_EXPIRES).roots[1]
    if args[:1] == ["--output"]:
        open(args[1], "wb").write(data)
    else:
        sys.stdout.buffer.write(data)


def generate(out):
    for name, fn in list(globals().items()):
        if name.startswith("scenario_"):
            fn(os.path.join(out, name[len("scenario_"):]))


def vectors(out):
    docs = [
        {"b": 1, "a": [True, False, None, -5, 0], "c": {"z": "", "y": "q\"uote\\back"}},
        {"é": "ünïcödé ✓", "e": "\u0001\n\t", "Z": "𝄞", "a": {}},
        [], {}, "plain", 1234567890123,
    ]
    signer = {"ed25519": CryptoSigner.generate_ed25519(), "ecdsa": CryptoSigner.generate_ecdsa(),
              "rsa": CryptoSigner.generate_rsa()}
    result = {"canonical": [{"json": json.dumps(d), "canonical_hex": encode_canonical(d).encode().hex()} for d in docs],
              "signatures": []}
    message = b"the bytes securesystemslib signed"
    for name, s in signer.items():
        sig = s.sign(message)
        result["signatures"].append({"key": s.public_key.to_dict(), "message_hex": message.hex(), "sig": sig.signature})
    json.dump(result, open(out, "w"), indent=1)


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        with open(os.path.join(self.directory, "requests.log"), "a") as log:
            log.write(self.path + "\n")
        path = self.translate_path(self.path)
        if os.path.exists(path + ".endless"):
            self.send_response(200)
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b"x" * 65536)
            except OSError:
                return
        if os.path.exists(path + ".slow") and os.path.isfile(path):
            data = open(path, "rb").read()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                for b in data:
                    self.wfile.write(bytes([b]))
                    self.wfile.flush()
                    time.sleep(0.5)
            except OSError:
                return
            return
        super().do_GET()


def policies(out, spec_file):
    spec = json.load(open(spec_file))
    r = Repo()
    r.write_initial_root(out)
    import shutil
    for index, state in enumerate(spec):
        if "replay" in state:
            shutil.copytree(f"{out}/{state['replay']}", f"{out}/{index}")
            continue
        if index > 0:
            r.bump("timestamp", "snapshot", "targets")
        r.targets.signed.targets.clear()
        r.target_data.clear()
        delegated = state.get("delegated", {"names": []})
        if delegated["names"]:
            if "policies" not in r.delegated:
                r.delegate("policies", delegated["names"])
            else:
                r.bump("policies")
            r.delegated["policies"][0].signed.targets.clear()
            r.delegated["policies"][0].signed.expires = NOW + timedelta(days=delegated["expiresInDays"])
        for name, text in state["targets"].items():
            r.add_target(name, text.encode(), role="policies" if name in delegated["names"] else None)
        # "expired": a timestamp that expired a day ago, for a client whose clock is behind.
        r.timestamp.signed.expires = PAST if state.get("expired") else FUTURE
        r.publish(f"{out}/{index}")


def serve(directory):
    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True
    httpd = Server(("127.0.0.1", 0), lambda *a, **k: Handler(*a, directory=directory, **k))
    print(f"PORT {httpd.server_address[1]}", flush=True)
    # The test stops the server by closing our stdin (or killing us).
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    httpd.serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "compiled-root":
        compiled_root(sys.argv[2:])
    elif sys.argv[1] == "find":
        find(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "policies":
        policies(sys.argv[2], sys.argv[3])
    else:
        {"generate": generate, "serve": serve, "vectors": vectors}[sys.argv[1]](sys.argv[2])
