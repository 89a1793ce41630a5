package import ServerTrustCertificates

/// A `ServerTrustManager` entry for one host, with the SPKI pins of its chain as named
/// constants: the Swift that `servertrust pins --swift` prints, for an app to paste.
///
/// Any one matching pin admits the server, so the snippet names each pin's level (leaf,
/// intermediate, root) and leaves a place for the backup pin it must not ship without.
package struct PinningSnippet: Sendable {
    /// One certificate's pin and its place in the chain.
    package struct Entry: Sendable {
        package enum Role: String, Sendable {
            case leaf, intermediate, root
        }

        package let role: Role
        /// The Swift constant name: `leaf`, `intermediate` (`intermediate1`, `intermediate2`…
        /// when there are several), `root`.
        package let constantName: String
        package let certificate: Certificate
    }

    package let host: String
    /// Where the chain was read from, e.g. the URL; named in the snippet's first comment.
    package let source: String
    /// What the chain was validated against (for the comment), or `nil` when it failed default
    /// validation: the snippet then says so in a warning.
    package let validatedAgainst: String?
    package let entries: [Entry]

    /// - Parameters:
    ///   - host: the host the entry is for.
    ///   - source: where the chain was read from.
    ///   - chain: leaf first; the validated chain when there is one, else the chain as sent.
    ///   - endsAtAnchor: whether `chain` is a validated chain, whose last certificate is then
    ///     the root; a chain as sent has no root role.
    ///   - validatedAgainst: the anchors' origin when the chain passed default validation for
    ///     `host`, else `nil`.
    package init(host: String, source: String, chain: [Certificate], endsAtAnchor: Bool, validatedAgainst: String?) {
        self.host = host
        self.source = source
        self.validatedAgainst = validatedAgainst
        let intermediateCount = max(chain.count - (endsAtAnchor ? 2 : 1), 0)
        entries = chain.enumerated().map { index, certificate in
            if index == 0 { return Entry(role: .leaf, constantName: "leaf", certificate: certificate) }
            if endsAtAnchor, index == chain.count - 1 { return Entry(role: .root, constantName: "root", certificate: certificate) }
            return Entry(
                role: .intermediate, constantName: intermediateCount == 1 ? "intermediate" : "intermediate\(index)",
                certificate: certificate)
        }
    }

    /// The enum name for the pins: `api.example.com` → `ApiExampleComPins`; a name that would
    /// not start with a letter gets `Host` in front (`10.0.0.1` → `Host10_0_0_1Pins`).
    package var namespace: String {
        let words = host.split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }.map(String.init)
        let name = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }
            .joined(separator: words.allSatisfy { $0.allSatisfy(\.isNumber) } ? "_" : "")
        return (name.first?.isLetter == true ? "" : "Host") + name + "Pins"
    }

    /// The Swift source: the pins as constants of ``namespace`` and the manager entry using them.
    package var swiftSource: String {
        var lines = [
            "// SPKI pins of \(host), read from \(source)",
            validatedAgainst.map { "// and validated against \($0)." }
                ?? "// WARNING: this chain FAILED default validation; verify these pins out of band.",
            "// Any one matching pin admits the server: keep only the levels you mean to trust",
            "// (leaf: this key; intermediate: what the CA issues from it; root: anything under that CA).",
            "import ServerTrust",
            "",
            "enum \(namespace) {",
        ]
        for entry in entries {
            lines.append("    /// \(entry.role.rawValue.capitalized): \(entry.certificate.subject)")
            lines.append("    static let \(entry.constantName) = \"\(entry.certificate.spkiPin)\"")
        }
        lines += [
            "    // A backup pin is needed: the pin of a key pair you generate now and keep offline (or of",
            "    // your second CA), so that a key rotation or compromise does not lock deployed clients out.",
            "    // `servertrust generate` compiles its certificate into a constant; or from the key:",
            "    //   openssl pkey -in backup.key -pubout -outform der | openssl dgst -sha256 -binary | base64",
            "}",
            "",
            "let manager = try ServerTrustManager(evaluators: [",
            "    try HostPattern(\"\(host)\"): try .pinnedKeyHashes([",
        ]
        lines += entries.map { "        \(namespace).\($0.constantName)," }
        lines += [
            "        // the backup pin goes here",
            "    ]),",
            "])",
        ]
        return lines.joined(separator: "\n")
    }
}
