#!/usr/bin/env python3
"""Prints the target lists CI needs, one a line, from the manifest and the sources' compile
conditions, so that a new target, trait, catalogue or fuzz target needs no edit of a script:

  trait-tests    what the traits step of .ci/run tests: every test target whose code is all
                 behind a trait, and every suite (Target.Suite) behind one in a default test
                 target (TrustUpdateServiceTests, in ServerTrustUpdatesTests, needs LifecycleService)
  docc           library targets with a DocC catalogue, for one DocC build with every trait
                 (the adapters' code is all behind their traits: empty, so undocumentable,
                 without them)
  traits         the package's traits
  fuzz-targets   from Fuzz/'s manifest: its fuzz-NAME executables, as NAME

    swift package dump-package | scripts/targets.py trait-tests
    swift package --package-path Fuzz dump-package | scripts/targets.py fuzz-targets

"Behind a trait": a Swift file is, when its first line of code is `#if TRAIT` (a trait of the
manifest) and that block, with no `#else`, closes on its last line; a target is, when all of its
Swift files are. That is the compile condition itself, so it cannot drift from the code; the
manifest alone cannot say it (ServerTrustURLSession has no trait-conditional dependency, and
ServerTrustUpdatesTests has some but is a default target). Targets come in manifest order. Exit
status 0; 2 when the manifest cannot be read, a file's condition cannot be told apart, or the
list is empty (an empty --filter would run every test).
"""
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DIRECTIVE = re.compile(r"^\s*#(if|elseif|else|endif)\b\s*(.*?)\s*$")
# A top-level declaration starts in column 0; a type with tests in it is a suite, @Suite or not.
TOP_LEVEL = re.compile(r"^(?![\s}#/]|import\b)", re.M)
TYPE = re.compile(r"^(?:@[^\n]*\s+)*(?:(?:public|package|internal|fileprivate|private|final)\s+)*(struct|class|enum|actor)\s+(\w+)")


class Unreadable(Exception):
    pass


def gating_trait(path, traits):
    """The trait a file's code is all behind, or None."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    code = [line for line in lines if not line.lstrip().startswith("//")]
    first = DIRECTIVE.match(code[0]) if code else None
    if not first or first.group(1) != "if":
        return None
    condition = first.group(2)
    if condition not in traits:
        if any(re.search(rf"\b{re.escape(trait)}\b", condition) for trait in traits):
            raise Unreadable(f"{path.relative_to(REPO)}: `#if {condition}`: name one trait alone, or none")
        return None
    depth = 0
    for index, line in enumerate(code):
        directive = DIRECTIVE.match(line)
        if not directive:
            continue
        kind = directive.group(1)
        if kind == "if":
            depth += 1
        elif kind == "endif":
            depth -= 1
            if depth == 0:
                return condition if index == len(code) - 1 else None
        elif depth == 1:
            return None  # an #else: code without the trait
    return None


def directory(target):
    kind = "Tests" if target["type"] == "test" else "Sources"
    return REPO / (target.get("path") or f"{kind}/{target['name']}")


def swift_files(target):
    root = directory(target)
    skipped = [root / p for p in target.get("exclude", [])] + [root / r["path"] for r in target.get("resources", [])]
    return sorted(
        path for path in root.rglob("*.swift") if not any(path == s or s in path.parents for s in skipped)
    )


def suites(path):
    """The suites a file behind a trait declares, for --filter."""
    text = path.read_text(encoding="utf-8")
    starts = [match.start() for match in TOP_LEVEL.finditer(text)] + [len(text)]
    names = []
    for start, end in zip(starts, starts[1:]):
        declaration = text[start:end]
        if "@Test" not in declaration:
            continue
        kind = TYPE.match(declaration)
        if not kind:  # a global @Test, or an extension of a suite that has default tests too
            raise Unreadable(
                f"{path.relative_to(REPO)}: tests behind a trait outside a type of their own cannot be "
                "filtered apart from the default ones; put them in a suite")
        names.append(kind.group(2))
    return names


def main():
    queries = {"trait-tests", "docc", "traits", "fuzz-targets"}
    if len(sys.argv) != 2 or sys.argv[1] not in queries:
        print(f"usage: swift package dump-package | {sys.argv[0]} {{{'|'.join(sorted(queries))}}}", file=sys.stderr)
        return 2
    query = sys.argv[1]
    try:
        manifest = json.load(sys.stdin)
        targets = manifest["targets"]
        traits = {trait["name"] for trait in manifest.get("traits", [])}
    except (ValueError, KeyError, TypeError) as error:
        print(f"error: not a manifest from `swift package dump-package`: {error}", file=sys.stderr)
        return 2

    if query == "traits":
        out = sorted(traits)  # dump-package lists them in hash order
    elif query == "fuzz-targets":
        out = [t["name"][len("fuzz-"):] for t in targets if t["type"] == "executable" and t["name"].startswith("fuzz-")]
    else:
        out = []
        try:
            for target in targets:
                wanted = "test" if query == "trait-tests" else "regular"
                if target["type"] != wanted:
                    continue
                files = swift_files(target)
                gated = [path for path in files if gating_trait(path, traits)]
                whole = bool(files) and len(gated) == len(files)
                if query == "trait-tests":
                    if whole:
                        out.append(target["name"])
                    else:
                        out += [f"{target['name']}.{suite}" for path in gated for suite in suites(path)]
                elif any(p.is_dir() for p in directory(target).rglob("*.docc")):
                    out.append(target["name"])
        except Unreadable as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    if not out:  # an empty --filter would run every test
        print(f"error: no {query} in the manifest", file=sys.stderr)
        return 2
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
