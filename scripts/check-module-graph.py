#!/usr/bin/env python3
"""Checks the promises the module layout makes, from the manifest alone (nothing is built):

  ServerTrustCertificates  OpenSSL only: what the build plugin's tool needs
  ServerTrust              no libcurl, no ServerTrustHTTP, no TUF client
  ServerTrustHTTP          no TUF client (a program using only it never builds ServerTrustTUF)
                           and not the glue of the two, ServerTrustUpdates
  ServerTrustTUF           no libcurl, no ServerTrustHTTP, not even ServerTrust
  ServerTrustPurchases     no libcurl, no ServerTrustHTTP, no TUF client: a verifier of signed data
  ServerTrustLedger        no libcurl, no ServerTrustHTTP, no TUF client: SQLite and the verifier
  servertrust-generate     the plugin's tool: never ServerTrust (the build would compile it twice)
  products                 none holds ServerTrustTestSupport or CServerTrustTestShims

    swift package dump-package | scripts/check-module-graph.py

Dependencies behind a package trait are left out: this is the default build. Exit status 0 when
every promise holds, 1 naming each broken one, 2 when the manifest cannot be read.
"""
import json
import sys

FORBIDDEN = {
    "ServerTrustCertificates": {"ServerTrust", "ServerTrustHTTP", "ServerTrustTUF", "CCurl", "swift-log"},
    "ServerTrust": {"ServerTrustHTTP", "ServerTrustTUF", "ServerTrustUpdates", "CCurl", "CServerTrustCurlShims"},
    "ServerTrustHTTP": {"ServerTrustTUF", "ServerTrustUpdates"},
    "ServerTrustTUF": {"ServerTrust", "ServerTrustHTTP", "ServerTrustUpdates", "CCurl", "CServerTrustCurlShims"},
    "ServerTrustPurchases": {"ServerTrustHTTP", "ServerTrustTUF", "ServerTrustUpdates", "CCurl", "CServerTrustCurlShims"},
    "ServerTrustLedger": {"ServerTrustHTTP", "ServerTrustTUF", "ServerTrustUpdates", "CCurl", "CServerTrustCurlShims"},
    "servertrust-generate": {"ServerTrust", "ServerTrustHTTP", "CCurl"},
}
TEST_ONLY = {"ServerTrustTestSupport", "CServerTrustTestShims"}


def main():
    try:
        manifest = json.load(sys.stdin)
        targets = {t["name"]: t for t in manifest["targets"]}
    except (ValueError, KeyError, TypeError) as error:
        print(f"error: not a manifest from `swift package dump-package`: {error}", file=sys.stderr)
        return 2

    def direct(name):
        """Default-build dependencies of a target: its targets by name, and packages by name."""
        out = []
        for dependency in targets[name]["dependencies"]:
            (kind, value), = dependency.items()
            condition = value[-1]
            if condition and condition.get("traits"):
                continue  # only with a package trait
            out.append(value[1] if kind == "product" else value[0])  # a product: its package
        return out

    def closure(name):
        seen, stack = set(), [name]
        while stack:
            for dependency in direct(stack.pop()):
                if dependency not in seen:
                    seen.add(dependency)
                    if dependency in targets:
                        stack.append(dependency)
        return seen

    problems = []
    for name, forbidden in FORBIDDEN.items():
        if name not in targets:
            problems.append(f"{name}: no such target in the manifest")
            continue
        for dependency in sorted(closure(name) & forbidden):
            problems.append(f"{name} depends on {dependency}")
    for product in manifest.get("products", []):
        if not {"executable", "library"} & set(product.get("type", {})):
            continue  # plugins, macros: not linked into anything a user ships
        reached = set()
        for target in product["targets"]:
            reached |= closure(target) | {target}
        for dependency in sorted(reached & TEST_ONLY):
            problems.append(f"product {product['name']} holds {dependency}")

    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if not problems:
        checked = ", ".join(FORBIDDEN)
        print(f"module graph: {checked} depend only on what they should; no product holds test code")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
