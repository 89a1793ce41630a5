/// The roles a targets role delegates to, with their keys: a list of named roles, or succinct
/// hash bins.
package struct Delegations: Sendable {
    package let keys: [String: TUFKey]
    /// Named delegated roles, in priority order; nil when ``succinctRoles`` is used.
    package let roles: [DelegatedRole]?
    package let succinctRoles: SuccinctRoles?

    init(_ value: JSONValue, _ path: String) throws(TUFError) {
        let fields = try Fields(value, path)
        let keysFields = try fields.object("keys")
        var keys: [String: TUFKey] = [:]
        for member in keysFields.members { keys[member.key] = try TUFKey(member.value, "\(path).keys.\(member.key)") }
        self.keys = keys
        let rolesValue = fields.optional("roles")
        let succinctValue = fields.optional("succinct_roles")
        guard (rolesValue == nil) != (succinctValue == nil) else {
            throw TUFError(.malformedMetadata, "\(path): exactly one of roles and succinct_roles must be set")
        }
        if let rolesValue {
            guard case .array(let elements) = rolesValue else { throw TUFError(.malformedMetadata, "\(path).roles is not an array") }
            var roles: [DelegatedRole] = []
            var names = Set<String>()
            for (index, element) in elements.enumerated() {
                let role = try DelegatedRole(element, "\(path).roles[\(index)]")
                guard !role.name.isEmpty, !["root", "timestamp", "snapshot", "targets"].contains(role.name) else {
                    throw TUFError(.malformedMetadata, "\(path).roles[\(index)]: a delegated role cannot be named \"\(role.name)\"")
                }
                guard names.insert(role.name).inserted else { throw TUFError(.malformedMetadata, "\(path): duplicate role \(role.name)") }
                roles.append(role)
            }
            self.roles = roles
            succinctRoles = nil
        } else {
            roles = nil
            succinctRoles = try SuccinctRoles(succinctValue!, "\(path).succinct_roles")
        }
    }

    /// The roles responsible for `targetPath`, in order, each with its terminating flag.
    func rolesFor(targetPath: String) -> [(name: String, terminating: Bool)] {
        if let roles {
            return roles.filter { $0.isDelegated(path: targetPath) }.map { ($0.name, $0.terminating) }
        }
        if let succinctRoles { return [(succinctRoles.roleName(for: targetPath), false)] }
        return []
    }

    /// The keys and threshold for the delegated role `name`, or nil when it is not delegated here.
    func role(named name: String) -> TUFRole? {
        if let roles { return roles.first { $0.name == name }?.role }
        if let succinctRoles, succinctRoles.isDelegated(roleName: name) { return succinctRoles.role }
        return nil
    }
}

/// A named delegation: the role's keys, threshold, terminating flag, and the target paths it is
/// trusted for (glob patterns or SHA-256 hash prefixes).
package struct DelegatedRole: Sendable {
    package let name: String
    package let role: TUFRole
    package let terminating: Bool
    package let paths: [String]?
    package let pathHashPrefixes: [String]?

    init(_ value: JSONValue, _ path: String) throws(TUFError) {
        let fields = try Fields(value, path)
        name = try fields.string("name")
        role = try TUFRole(fields)
        terminating = try fields.bool("terminating")
        paths = fields.optional("paths") == nil ? nil : try fields.strings("paths")
        pathHashPrefixes = fields.optional("path_hash_prefixes") == nil ? nil : try fields.strings("path_hash_prefixes")
        guard (paths == nil) != (pathHashPrefixes == nil) else {
            throw TUFError(.malformedMetadata, "\(path): exactly one of paths and path_hash_prefixes must be set")
        }
    }

    /// python-tuf's `is_delegated_path`: a hash prefix of the path's SHA-256, or a pattern that
    /// matches segment by segment (same number of `/`-separated parts, each by `fnmatchcase`).
    func isDelegated(path target: String) -> Bool {
        if let pathHashPrefixes {
            let digest = Digest.hex(Digest.sha256(Array(target.utf8)))
            return pathHashPrefixes.contains { digest.hasPrefix($0) }
        }
        guard let paths else { return false }
        let targetParts = target.split(separator: "/", omittingEmptySubsequences: false)
        return paths.contains { pattern in
            let patternParts = pattern.split(separator: "/", omittingEmptySubsequences: false)
            guard patternParts.count == targetParts.count else { return false }
            return zip(targetParts, patternParts).allSatisfy { PathPattern.matches(Array($0.unicodeScalars), pattern: Array($1.unicodeScalars)) }
        }
    }
}

/// Succinct hash-bin delegation (TAP 15): `2^bitLength` roles named `prefix-<hex bin>`, a target
/// going to the bin of the first `bitLength` bits of its path's SHA-256.
package struct SuccinctRoles: Sendable {
    package let role: TUFRole
    package let bitLength: Int
    package let namePrefix: String

    init(_ value: JSONValue, _ path: String) throws(TUFError) {
        let fields = try Fields(value, path)
        role = try TUFRole(fields)
        let bits = try fields.integer("bit_length")
        guard bits >= 1, bits <= 32 else { throw TUFError(.malformedMetadata, "\(path).bit_length must be between 1 and 32") }
        bitLength = Int(bits)
        namePrefix = try fields.string("name_prefix")
    }

    var numberOfBins: UInt64 { 1 << UInt64(bitLength) }
    var suffixLength: Int { String(numberOfBins - 1, radix: 16).count }

    func roleName(for target: String) -> String {
        let digest = Digest.sha256(Array(target.utf8))
        let first32 = UInt32(digest[0]) << 24 | UInt32(digest[1]) << 16 | UInt32(digest[2]) << 8 | UInt32(digest[3])
        let bin = UInt64(first32) >> UInt64(32 - bitLength)
        let hex = String(bin, radix: 16)
        return "\(namePrefix)-" + String(repeating: "0", count: max(0, suffixLength - hex.count)) + hex
    }

    func isDelegated(roleName: String) -> Bool {
        let prefix = namePrefix + "-"
        guard roleName.hasPrefix(prefix) else { return false }
        let suffix = roleName.dropFirst(prefix.count)
        guard suffix.count == suffixLength, let bin = UInt64(suffix, radix: 16) else { return false }
        return bin < numberOfBins
    }
}

/// Python's `fnmatch.fnmatchcase` over one path segment: `*` any run, `?` one character,
/// `[seq]`/`[!seq]` a set with ranges; everything else literal, matched case-sensitively.
enum PathPattern {
    static func matches(_ text: [Unicode.Scalar], pattern: [Unicode.Scalar]) -> Bool {
        matches(text[...], pattern[...])
    }

    private static func matches(_ text: ArraySlice<Unicode.Scalar>, _ pattern: ArraySlice<Unicode.Scalar>) -> Bool {
        var t = text.startIndex
        var p = pattern.startIndex
        var starP: Int? = nil
        var starT = 0
        while t < text.endIndex {
            if p < pattern.endIndex {
                let c = pattern[p]
                if c == "*" {
                    starP = p
                    starT = t
                    p += 1
                    continue
                }
                if c == "?" {
                    p += 1
                    t += 1
                    continue
                }
                if c == "[", let (set, next) = characterSet(pattern, from: p) {
                    if set(text[t]) {
                        p = next
                        t += 1
                        continue
                    }
                } else if c == text[t] {
                    p += 1
                    t += 1
                    continue
                }
            }
            guard let star = starP else { return false }
            p = star + 1
            starT += 1
            t = starT
        }
        while p < pattern.endIndex, pattern[p] == "*" { p += 1 }
        return p == pattern.endIndex
    }

    /// The set starting at `start` (a `[`) and the index after its `]`, or nil when the `[` is
    /// unclosed and so literal (as in Python's `fnmatch.translate`).
    private static func characterSet(_ pattern: ArraySlice<Unicode.Scalar>, from start: Int) -> ((Unicode.Scalar) -> Bool, Int)? {
        var i = start + 1
        var negate = false
        if i < pattern.endIndex, pattern[i] == "!" {
            negate = true
            i += 1
        }
        var items: [ClosedRange<UInt32>] = []
        var first = true
        while i < pattern.endIndex {
            let c = pattern[i]
            if c == "]" && !first { break }
            first = false
            if i + 2 < pattern.endIndex, pattern[i + 1] == "-", pattern[i + 2] != "]" {
                let low = c.value, high = pattern[i + 2].value
                if low <= high { items.append(low...high) }
                i += 3
            } else {
                items.append(c.value...c.value)
                i += 1
            }
        }
        guard i < pattern.endIndex else { return nil }
        let ranges = items
        return ({ scalar in ranges.contains { $0.contains(scalar.value) } != negate }, i + 1)
    }
}
