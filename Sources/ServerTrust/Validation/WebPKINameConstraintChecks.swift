internal import COpenSSL

/// The name-constraint rules of ``WebPKICheck``: what OpenSSL's `NAME_CONSTRAINTS_check` does
/// not catch about the names a constrained CA's leaf may carry.
extension WebPKICheck {
    static func emptyNameConstraints(in chain: [Certificate]) -> WebPKIViolation? {
        for (depth, certificate) in chain.enumerated().dropFirst().dropLast()
        where X509_get_ext_by_NID(certificate.x509, NID_name_constraints, -1) >= 0 {
            guard let constraints = NameConstraintSubtrees(certificate), constraints.isEmpty else { continue }
            return WebPKIViolation(
                check: .emptyNameConstraints, depth: depth,
                detail: "its nameConstraints extension has neither permitted nor excluded subtrees")
        }
        return nil
    }

    static func malformedNameUnderConstraints(in chain: [Certificate]) -> WebPKIViolation? {
        guard chain.count > 1, hasNameConstraints(chain.dropFirst()) else { return nil }
        let constrained = chain.dropFirst().contains { certificate in
            guard let constraints = NameConstraintSubtrees(certificate) else { return false }
            return !constraints.permittedDNS.isEmpty || !constraints.excludedDNS.isEmpty
        }
        guard constrained, let name = chain[0].dnsNames.first(where: { !isWellFormedDNSName($0) }) else { return nil }
        return WebPKIViolation(
            check: .malformedNameUnderConstraints, depth: 0,
            detail: "the leaf's subjectAltName \"\(name)\" is not a well-formed DNS name, so DNS name constraints cannot be applied to it")
    }

    static func wildcardIntoExcludedSubtree(in chain: [Certificate]) -> WebPKIViolation? {
        guard chain.count > 1, hasNameConstraints(chain.dropFirst()) else { return nil }
        let wildcardParents = chain[0].dnsNames.filter { $0.hasPrefix("*.") }.map { $0.dropFirst(2).lowercased() }
        guard !wildcardParents.isEmpty else { return nil }
        for (depth, certificate) in chain.enumerated().dropFirst() {
            guard let constraints = NameConstraintSubtrees(certificate) else { continue }
            for excluded in constraints.excludedDNS.map({ $0.lowercased() }) {
                // `*.P` matches exactly one label over P, so it reaches into an excluded subtree
                // E exactly when E is one label over P. A subtree that contains P itself is
                // already refused by OpenSSL; `.E` (subdomains only) lies deeper than the wildcard.
                guard !excluded.hasPrefix("."),
                    let parent = wildcardParents.first(where: { excluded.hasSuffix("." + $0) }),
                    !excluded.dropLast(parent.count + 1).contains(".")
                else { continue }
                return WebPKIViolation(
                    check: .wildcardIntoExcludedSubtree, depth: depth,
                    detail: "it excludes \(excluded), which the leaf's wildcard *.\(parent) would match")
            }
        }
        return nil
    }

    /// Whether any of `certificates` has a nameConstraints extension: a lookup, no decoding, so
    /// the common unconstrained chain costs nothing more.
    private static func hasNameConstraints(_ certificates: ArraySlice<Certificate>) -> Bool {
        certificates.contains { X509_get_ext_by_NID($0.x509, NID_name_constraints, -1) >= 0 }
    }

    /// Letters, digits, `-` and `_` in non-empty labels of at most 63 characters, at most 253
    /// characters in all, with an optional whole-label `*` on the left. Underscores are allowed:
    /// they appear in real internal names and cannot widen a constraint match.
    static func isWellFormedDNSName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        var labels = name.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count > 1, labels[0] == "*" { labels.removeFirst() }
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63
                && label.utf8.allSatisfy { byte in
                    (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                        || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                }
        }
    }
}

/// The subtrees of a certificate's nameConstraints extension, decoded by OpenSSL; nil when the
/// certificate has none (or OpenSSL cannot decode it, which path validation already refused).
struct NameConstraintSubtrees {
    /// How many permitted and excluded subtrees there are, of any name type.
    var permittedCount = 0
    var excludedCount = 0
    /// The dNSName subtrees, as written.
    var permittedDNS: [String] = []
    var excludedDNS: [String] = []

    var isEmpty: Bool { permittedCount == 0 && excludedCount == 0 }

    init?(_ certificate: Certificate) {
        guard let raw = X509_get_ext_d2i(certificate.x509, NID_name_constraints, nil, nil) else {
            _ = drainOpenSSLErrors()
            return nil
        }
        let constraints = raw.assumingMemoryBound(to: NAME_CONSTRAINTS.self)
        defer { NAME_CONSTRAINTS_free(constraints) }
        (permittedCount, permittedDNS) = Self.subtrees(constraints.pointee.permittedSubtrees)
        (excludedCount, excludedDNS) = Self.subtrees(constraints.pointee.excludedSubtrees)
    }

    /// `STACK_OF(GENERAL_SUBTREE)` through the plain `OPENSSL_sk_*` functions (the typed
    /// `sk_GENERAL_SUBTREE_*` accessors are macros).
    private static func subtrees(_ stack: OpaquePointer?) -> (count: Int, dns: [String]) {
        guard let stack else { return (0, []) }
        let count = Int(OPENSSL_sk_num(stack))
        var dns: [String] = []
        for index in 0..<count {
            guard let raw = OPENSSL_sk_value(stack, Int32(index)) else { continue }
            let subtree = raw.assumingMemoryBound(to: GENERAL_SUBTREE.self)
            guard let base = subtree.pointee.base, base.pointee.type == GEN_DNS, let name = base.pointee.d.dNSName else { continue }
            dns.append(asn1StringText(name))
        }
        return (count, dns)
    }
}
