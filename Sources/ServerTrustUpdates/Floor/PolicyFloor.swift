import Foundation
public import ServerTrust

/// A delivered policy laid over the floor: the manager it makes, or why it may not be applied.
public enum PolicyFloor {
    /// One way a delivered policy weakens what the floor protects.
    public struct Weakening: Sendable, Hashable, CustomStringConvertible {
        /// The permission it needs.
        public let permission: TrustUpdateRules.Permissions
        /// What it does, naming the host pattern (and the floor's).
        public let reason: String
        public var description: String { reason }
    }

    /// Why a delivered policy may not be applied: a ``TrustUpdateStatus/Refusal``, the one
    /// type for it (the status reports what these functions throw).
    public typealias Refusal = TrustUpdateStatus.Refusal

    /// Reads a delivered policy target: its format version first (a newer one is refused as
    /// such, not as invalid), then the whole file.
    /// An RFC 9421 host without inline `keys` reads `signingKeys` (the delivered `jwks.json`).
    /// A host requiring Certificate Transparency reads `certificateTransparencyLogs` (the floor's,
    /// or the trust-update client's when the floor has none).
    public static func read(
        _ bytes: [UInt8], name: String, signingKeys: (@Sendable () -> SigningKeySet)? = nil,
        certificateTransparencyLogs: CertificateTransparencyLogs? = nil
    ) throws(Refusal) -> TrustPolicyFile {
        if let version = formatVersion(of: bytes), version > TrustPolicyFile.formatVersion {
            throw Refusal(
                .newerFormat,
                "its format version \(version) is newer than this library reads (\(TrustPolicyFile.formatVersion)); the policy in force stays")
        }
        do {
            return try TrustPolicyFile(data: bytes, fileName: name, signingKeys: signingKeys, certificateTransparencyLogs: certificateTransparencyLogs)
        } catch let error as TrustError {
            throw .invalid(error)
        } catch {
            throw .invalid(TrustError(.invalidPolicyFile, "\(name): \(error)"))
        }
    }


    /// The top-level `version` of a JSON object, if it is an integer.
    static func formatVersion(of bytes: [UInt8]) -> Int? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return nil }
        return (object["version"] as? NSNumber).map(\.intValue)
    }

    /// The manager in force with `delivered` over `floor`: the floor's patterns, each pattern
    /// `delivered` names replaced by its policy (keeping the floor's client identity for it),
    /// the patterns it adds, `delivered`'s `allHostsMustBeEvaluated`, and the union of the
    /// floor's deny-list and `denyList`. Hosts requiring Certificate Transparency read
    /// `certificateTransparencyLogs` (default the floor's): the list a trust update replaces.
    ///
    /// - Throws: a ``Refusal`` coded `weakensFloor` listing every weakening `permissions` does not allow;
    ///   one coded `unusable` when the manager cannot be made.
    public static func manager(
        floor: ServerTrustManager, delivered: TrustPolicyFile?, denyList: KeyDenyList?, permissions: TrustUpdateRules.Permissions,
        certificateTransparencyLogs: CertificateTransparencyLogs? = nil
    ) throws(Refusal) -> ServerTrustManager {
        var policies = Dictionary(uniqueKeysWithValues: floor.policies.map { ($0.pattern, $0.policy) })
        var allHostsMustBeEvaluated = floor.allHostsMustBeEvaluated
        if let delivered {
            let weakenings = weakenings(of: delivered, against: floor).filter { !permissions.contains($0.permission) }
            guard weakenings.isEmpty else {
                throw Refusal(
                    .weakensFloor,
                    "it weakens the compiled-in floor without the application's permission: " + weakenings.map(\.reason).joined(separator: "; "),
                    weakenings: weakenings)
            }
            for host in delivered.hosts {
                var policy = host.policy
                if policy.clientIdentity == nil { policy.clientIdentity = try clientIdentity(for: host.pattern, floor: floor) }
                policies[host.pattern] = policy
            }
            allHostsMustBeEvaluated = delivered.allHostsMustBeEvaluated
        }
        do {
            return try ServerTrustManager(
                policies: policies, allHostsMustBeEvaluated: allHostsMustBeEvaluated, denyList: Self.denyList(floor: floor, delivered: denyList),
                certificateTransparencyLogs: certificateTransparencyLogs ?? floor.certificateTransparencyLogs)
        } catch {
            throw .unusable(error)
        }
    }

    /// The client identity a delivered pattern presents: a policy file carries none (a private
    /// key is never delivered), so a pattern keeps the identity the floor gave its hosts — the
    /// same pattern's; for an exact host or address, that of the floor pattern the host
    /// resolved to; for a wildcard, the one identity every floor pattern it takes hosts from
    /// presents. A delivered pattern never drops the floor's identity for the hosts it takes
    /// over (fifth review, item 6).
    ///
    /// - Throws: a ``Refusal`` coded `unusable` when a wildcard takes hosts from floor patterns that
    ///   present different identities, so no one identity is the floor's for all of its hosts.
    static func clientIdentity(for pattern: HostPattern, floor: ServerTrustManager) throws(Refusal) -> ClientIdentity? {
        let floorPolicies = floor.policies
        if let same = floorPolicies.first(where: { $0.pattern == pattern }) { return same.policy.clientIdentity }
        switch pattern.kind {
        case .exact, .ipAddress:
            return (try? floor.resolve(host: pattern.suffix))?.policy.clientIdentity
        case .singleLabelWildcard, .anyDepthWildcard:
            let taken = floorPolicies.filter { pattern.takesHosts(from: $0.pattern) }
            guard let first = taken.first?.policy.clientIdentity else {
                if taken.allSatisfy({ $0.policy.clientIdentity == nil }) { return nil }
                throw different(pattern, taken)
            }
            guard taken.allSatisfy({ $0.policy.clientIdentity === first }) else { throw different(pattern, taken) }
            return first
        }
    }

    private static func different(_ pattern: HostPattern, _ taken: [(pattern: HostPattern, policy: HostPolicy)]) -> Refusal {
        .unusable(TrustError(
            .invalidConfiguration,
            "\(pattern) takes hosts from the floor's " + taken.map(\.pattern.description).joined(separator: ", ")
                + ", which present different client identities; deliver those patterns themselves"))
    }

    /// The deny-list in force with `delivered`: the union of the floor's and `delivered`.
    public static func denyList(floor: ServerTrustManager, delivered: KeyDenyList?) -> KeyDenyList {
        denyList(floor.denyList, delivered: delivered)
    }

    /// The union of the floor's deny-list `floor` and `delivered`.
    static func denyList(_ floor: KeyDenyList, delivered: KeyDenyList?) -> KeyDenyList {
        KeyDenyList(keys: floor.keys.union(delivered?.keys ?? []), certificates: floor.certificates.union(delivered?.certificates ?? []))
    }

    /// Every way `delivered` weakens `floor`, whatever the permissions.
    ///
    /// Each delivered host is compared with every floor pattern it takes hosts from
    /// (`HostPattern.takesHosts(from:)`: the same pattern, or one it outranks for
    /// some host they share), as two `HostPolicy` values, field by field
    /// (`HostPolicy.softenings(comparedWith:)`); each softening needs the permission of its
    /// field. A floor's custom evaluator cannot be compared, so replacing it needs
    /// ``TrustUpdateRules/Permissions/replaceCustomEvaluators``.
    public static func weakenings(of delivered: TrustPolicyFile, against floor: ServerTrustManager) -> [Weakening] {
        var found: [Weakening] = []
        if floor.allHostsMustBeEvaluated, !delivered.allHostsMustBeEvaluated {
            found.append(Weakening(
                permission: .unlistedHosts,
                reason: "allHostsMustBeEvaluated is false, letting hosts no pattern matches through with default validation"))
        }
        let floorPolicies = floor.policies
        for host in delivered.hosts {
            for (floorPattern, floorPolicy) in floorPolicies where host.pattern.takesHosts(from: floorPattern) {
                let under = "the floor's \(floorPattern)"
                for softening in host.policy.softenings(comparedWith: floorPolicy) {
                    found.append(Weakening(
                        permission: permission(for: softening.field), reason: "\(host.pattern) " + softening.reason(naming: under)))
                }
            }
        }
        return found
    }

    /// The permission a softening of `field` needs.
    static func permission(for field: HostPolicy.Softening.Field) -> TrustUpdateRules.Permissions {
        switch field {
        case .validation, .anchors, .pins, .canary: .unpinHosts
        case .revocation: .weakerRevocation
        case .minimumTLSVersion: .lowerTLSVersion
        case .keyExchange: .classicalKeyExchange
        case .mode: .reportOnly
        case .signedResponses: .weakerSignedResponses
        case .certificateTransparency: .weakerCertificateTransparency
        case .custom: .replaceCustomEvaluators
        }
    }
}
