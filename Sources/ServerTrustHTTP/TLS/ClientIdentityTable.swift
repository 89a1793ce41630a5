import ServerTrust

/// A session's client identities by host pattern, looked up with the rule every part of
/// ServerTrust shares (``HostPatternTable``: exact host, else the deepest wildcard base, `*.`
/// before `**.`), so the host the trust manager pins is the host the identity goes to.
///
/// Built once per session; a policy looks its host up once. Immutable, hence `Sendable`.
struct ClientIdentityTable: Sendable {
    private let table: HostPatternTable<ClientIdentity>

    /// - Throws: `TrustError` `.invalidHostPattern` for an invalid pattern or two spellings of
    ///   one pattern (which identity would win would otherwise depend on dictionary order);
    ///   `.invalidConfiguration` for an identity OpenSSL would refuse to install in a handshake.
    init(_ identities: [String: ClientIdentity]) throws {
        var table = HostPatternTable<ClientIdentity>()
        var spellings: [HostPattern: String] = [:]
        for (text, identity) in identities.sorted(by: { $0.key < $1.key }) {
            let pattern: HostPattern
            do {
                pattern = try HostPattern(text)
            } catch let error as TrustError {
                throw TrustError(.invalidHostPattern, "Client identity pattern \(text.debugDescription): \(error.reason)")
            }
            if let other = spellings[pattern] {
                throw TrustError(
                    .invalidHostPattern,
                    "Client identity patterns \(other.debugDescription) and \(text.debugDescription) are both \"\(pattern)\" after normalisation; keep one.")
            }
            spellings[pattern] = text
            if let problems = TLSBridge.installationProblems(identity) {
                var evidence = TrustError.Evidence()
                evidence.openSSLErrors = problems
                throw TrustError(
                    .invalidConfiguration,
                    "OpenSSL refuses the client identity \(identity) for \(text.debugDescription) (a key below the system's security level, e.g. RSA under 2048 bits?).",
                    evidence: evidence)
            }
            table.insert(identity, for: pattern)
        }
        self.table = table
    }

    /// The identity for a host, or nil.
    func identity(for host: NormalizedHost) -> ClientIdentity? {
        table.patterns.isEmpty ? nil : table.entry(for: host)?.value
    }
}
