import ServerTrust

/// A session's client identities by host pattern, looked up with the rule every part of
/// ServerTrust shares (``HostPatternTable``: exact host, else the deepest wildcard base, `*.`
/// before `**.`), so the host the trust manager pins is the host the identity goes to.
///
/// Built once per session; a policy looks its host up once. Immutable, hence `Sendable`.
struct ClientIdentityTable: Sendable {
    private let table: HostPatternTable<ClientIdentity?>

    /// - Parameters:
    ///   - identities: ``Session/Configuration/clientIdentities``, by pattern.
    ///   - trustManager: the session's manager, whose ``HostPolicy/clientIdentity`` values are
    ///     used instead when any is set: their table has the manager's patterns, so a host's
    ///     identity comes from the pattern that chose its evaluator.
    /// - Throws: `TrustError` `.invalidHostPattern` for an invalid pattern or two spellings of
    ///   one pattern (which identity would win would otherwise depend on dictionary order);
    ///   `.invalidConfiguration` for an identity OpenSSL would refuse to install in a handshake,
    ///   or for identities configured both ways (the manager's host policies and the session's
    ///   table), which could pick different patterns for one host.
    init(_ identities: [String: ClientIdentity], trustManager: ServerTrustManager? = nil) throws {
        let fromPolicies = trustManager.map { $0.table.mapValues(\.clientIdentity) }
        if let fromPolicies, fromPolicies.entries.contains(where: { $0.value != nil }) {
            guard identities.isEmpty else {
                throw TrustError(
                    .invalidConfiguration,
                    "Client identities are set both in the trust manager's host policies and in Session.Configuration.clientIdentities; "
                        + "set them in one place (HostPolicy.clientIdentity).")
            }
            table = fromPolicies
        } else {
            do {
                table = try HostPatternTable(validating: identities.sorted { $0.key < $1.key }.map { (key: $0.key, value: Optional($0.value)) })
            } catch {
                throw error.trustError(subject: "Client identity")
            }
        }
        for entry in table.entries {
            guard let identity = entry.value, let problems = TLSBridge.installationProblems(identity) else { continue }
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = problems
            throw TrustError(
                .invalidConfiguration,
                "OpenSSL refuses the client identity \(identity) for \(entry.pattern.description.debugDescription) (a key below the system's security level, e.g. RSA under 2048 bits?).",
                evidence: evidence)
        }
    }

    /// The identity for a host, or nil.
    func identity(for host: NormalizedHost) -> ClientIdentity? {
        table.patterns.isEmpty ? nil : table.entry(for: host)?.value ?? nil
    }
}
