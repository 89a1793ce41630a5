#!/usr/bin/env python3
"""One place chooses a host's settings: ServerTrustManager's registry, one HostPolicy per host
pattern (issues #44, #51). Checked on the declarations of Sources, wherever they are:

  public API     no `public` or `open` declaration whose type holds a dictionary keyed by
                 `String` or `HostPattern` with per-host values: HostPolicy, or the type of one
                 of its stored properties (read from HostPolicy's own declaration, so a new
                 setting is covered when it is added). Keyed by HostPattern, any value counts.
  tables         no use of HostPatternTable (a property, local, parameter, alias or one built)
                 outside the files declaring ServerTrustManager and HostPatternTable itself; a
                 static call such as `HostPatternTable.validate(_:)` holds no table.

    scripts/check-host-tables.py

ALLOWED names the exemptions, each with its reason; an exemption that matches nothing fails the
check too, so the list shrinks with the code. Members of a `public extension` are public without
saying so, which this check cannot see: it refuses such an extension. Exit status 0 when both
rules hold, 1 naming each finding (file:line, declaration).
"""
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

ALLOWED = {
    # The registry's own inputs: a manager is made from one HostPolicy (or one evaluator of your
    # own) per HostPattern, the table every per-host setting is then read from.
    "ServerTrustManager.init(policies:allHostsMustBeEvaluated:denyList:certificateTransparencyLogs:logger:)",
    "ServerTrustManager.init(evaluators:allHostsMustBeEvaluated:denyList:)",
}

TYPE_KEYWORDS = r"struct|class|enum|actor|extension|protocol"
TOKEN = re.compile(
    rf"[{{}}]|\b(?:({TYPE_KEYWORDS})\s+(?!(?:func|var|let|init|subscript)\b)([A-Za-z_][\w.]*)"
    r"|(var|let|func|init|subscript|typealias)\b)")
# What may stand before a declaration's keyword on its line: attributes and modifiers only.
MODIFIERS = re.compile(r"^\s*(?:@\w+(?:\([^()]*\))?\s+|\w+(?:\(\w+\))?\s+)*$")


def blank(source):
    """The source with comments and string contents replaced by spaces (newlines kept)."""
    out, i, n = list(source), 0, len(source)

    def wipe(start, end):
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        if source.startswith("//", i):
            end = source.find("\n", i)
            end = n if end < 0 else end
            wipe(i, end)
            i = end
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            wipe(i, end)
            i = end
        elif source[i] == '"':
            quote = '"""' if source.startswith('"""', i) else '"'
            j = i + len(quote)
            while j < n and not source.startswith(quote, j):
                j += 2 if source[j] == "\\" else 1
            wipe(i + len(quote), j)
            i = j + len(quote)
        else:
            i += 1
    return "".join(out)


def signature(code, start):
    """A declaration's text from its keyword to its body, or to the end of its line."""
    depth, i = 0, start
    while i < len(code):
        c = code[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0 and c == "{":
            return code[start:i], True
        elif depth == 0 and c == "\n":
            if not re.match(r"\s*(->|throws|rethrows|async|where)\b", code[i + 1:]):
                return code[start:i], False
        i += 1
    return code[start:], False


def name_of(keyword, sig):
    """`name`, or `name(label:…)` for a function, an init or a subscript."""
    match = re.match(rf"{keyword}\s*([A-Za-z_]\w*)?", sig)
    name = keyword if keyword in ("init", "subscript") else match.group(1) or "?"
    if keyword not in ("func", "init", "subscript"):
        return name
    start = sig.find("(")
    depth, labels, part = 0, [], ""
    for c in sig[start + 1:]:
        if c in "([<":
            depth += 1
        elif c in ")]>":
            if depth == 0:
                break
            depth -= 1
        if c == "," and depth == 0:
            labels.append(part)
            part = ""
        else:
            part += c
    labels.append(part)
    words = [re.sub(r"@\w+", "", label).split(":")[0].split() for label in labels]
    return f"{name}({''.join(w[0] + ':' for w in words if w)})"


def dictionaries(text):
    """(key, value) of every `[K: V]` and `Dictionary<K, V>` in a type."""
    for match in re.finditer(r"\[|Dictionary<", text):
        opening, closing, separator = ("[", "]", ":") if match.group() == "[" else ("<", ">", ",")
        depth, i, split = 0, match.end(), None
        while i < len(text):
            c = text[i]
            if c in "[(<":
                depth += 1
            elif c in "])>":
                if depth == 0 and c == closing:
                    break
                depth -= 1
            elif c == separator and depth == 0 and split is None:
                split = i
            i += 1
        if split is not None:
            yield text[match.end():split], text[split + 1:i]


def normal(type_text):
    text = re.sub(r"\s+|\b(any|some)\b", "", type_text)
    while text and (text[-1] in "?!" or (text[0] == "(" and text[-1] == ")")):
        text = text[:-1] if text[-1] in "?!" else text[1:-1]
    return text


def declarations(path):
    """(line, qualified name, keyword, signature, public, has body, enclosing names) of a file."""
    code = blank(path.read_text(encoding="utf-8"))
    stack, pending, found = [], None, []
    for token in TOKEN.finditer(code):
        if token.group() == "{":
            stack.append(pending)
            pending = None
        elif token.group() == "}":
            if stack:
                stack.pop()
        elif token.group(1):
            line_start = code.rfind("\n", 0, token.start()) + 1
            prefix = code[line_start:token.start()]
            if token.group(1) == "extension" and re.search(r"\bpublic\b", prefix):
                found.append((code.count("\n", 0, token.start()) + 1, token.group(2), "public extension", "", True, True, []))
            pending = token.group(2).split(".")[-1]
        else:
            keyword = token.group(3)
            line_start = code.rfind("\n", 0, token.start()) + 1
            prefix = code[line_start:token.start()]
            if not MODIFIERS.match(prefix):
                continue
            sig, body = signature(code, token.start())
            qualified = ".".join([name for name in stack if name] + [name_of(keyword, sig)])
            public = bool(re.search(r"\b(public|open)\b", prefix))
            line = code.count("\n", 0, token.start()) + 1
            found.append((line, qualified, keyword, sig, public, body, stack[:]))
    return code, found


def main():
    files = sorted((REPO / "Sources").rglob("*.swift"))
    parsed = {path: declarations(path) for path in files}

    def declaring(kind, name):
        return {p for p, (code, _) in parsed.items() if re.search(rf"\b{kind}\s+{name}\b", code)}

    policy_files, owners = declaring("struct", "HostPolicy"), declaring("class", "ServerTrustManager") | declaring("struct", "HostPatternTable")
    settings = {"HostPolicy"}
    for path in policy_files:
        for _, _, keyword, sig, _, body, stack in parsed[path][1]:
            if keyword in ("var", "let") and not body and stack == ["HostPolicy"]:
                settings.add(normal(sig.split(":", 1)[1].split("=")[0]))
    if len(settings) == 1:
        print("error: no stored property found in HostPolicy's declaration", file=sys.stderr)
        return 1

    findings, used = [], set()

    def allowed(qualified):
        for entry in ALLOWED:
            if qualified == entry or qualified.startswith(entry + "."):
                used.add(entry)
                return True
        return False

    for path, (code, found) in parsed.items():
        where = path.relative_to(REPO)
        for line, qualified, keyword, sig, public, _, _ in found:
            if keyword == "public extension":
                findings.append(f"{where}:{line}: public extension {qualified}: write `public` on each member")
                continue
            if not public:
                continue
            for key, value in dictionaries(sig.split("=")[0] if keyword in ("var", "let") else sig):
                if normal(key) == "HostPattern" or (normal(key) == "String" and normal(value) in settings):
                    if not allowed(qualified):
                        findings.append(f"{where}:{line}: public {qualified}: [{key.strip()}: {value.strip()}] by host pattern")
        if path in owners:
            continue
        for use in re.finditer(r"\bHostPatternTable\b(?!\s*\.\s*[a-z]\w*\s*\()", code):
            line = code.count("\n", 0, use.start()) + 1
            enclosing = [(l, q) for l, q, *_ in found if l <= line]
            qualified = enclosing[-1][1] if enclosing else "(top level)"
            if not allowed(qualified):
                findings.append(f"{where}:{line}: {qualified}: a HostPatternTable outside ServerTrustManager")

    for entry in sorted(ALLOWED - used):
        findings.append(f"scripts/check-host-tables.py: ALLOWED names {entry}, which holds no per-pattern table now: remove it")
    if findings:
        print("Per-host settings outside the core's registry (one HostPolicy per pattern, in ServerTrustManager):", file=sys.stderr)
        for finding in findings:
            print(f"  {finding}", file=sys.stderr)
        return 1
    print(f"host tables: no public per-pattern dictionary, no HostPatternTable outside ServerTrustManager "
          f"({len(ALLOWED)} allowed, the registry's inputs: {', '.join(sorted(ALLOWED))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
