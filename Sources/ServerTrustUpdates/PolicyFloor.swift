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

    /// Why a delivered policy was not applied.
    public enum Refusal: Error, Sendable, CustomStringConvertible {
        /// Its `version` is newer than this library reads.
        case newerFormat(version: Int)
        /// It is not a valid policy file (the reason names the line and field).
        case invalid(TrustError)
        /// It weakens the floor without permission.
        case weakens([Weakening])
        /// The resulting manager cannot be made.
        case unusable(TrustError)

        public var description: String {
            switch self {
            case .newerFormat(let version):
                "its format version \(version) is newer than this library reads (\(TrustPolicyFile.formatVersion)); the policy in force stays"
            case .invalid(let error): "it is not a valid policy: \(error.reason)"
            case .weakens(let weakenings):
                "it weakens the compiled-in floor without the application's permission: " + weakenings.map(\.reason).joined(separator: "; ")
            case .unusable(let error): "it cannot be applied: \(error.reason)"
            }
        }
    }

    /// Reads a delivered policy target: its format version first (a newer one is refused as
    /// such, not as invalid), then the whole file.
    /// An RFC 9421 host without inline `keys` reads `signingKeys` (the delivered `jwks.json`).
    public static func read(_ bytes: [UInt8], name: String, signingKeys: (@Sendable () -> SigningKeySet)? = nil) throws(Refusal) -> TrustPolicyFile {
        if let version = formatVersion(of: bytes), version > TrustPolicyFile.formatVersion {
            throw .newerFormat(version: version)
        }
        do {
            return try TrustPolicyFile(data: bytes, fileName: name, signingKeys: signingKeys)
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
    /// floor's deny-list and `denyList`.
    ///
    /// - Throws: ``Refusal/weakens(_:)`` listing every weakening `permissions` does not allow;
    ///   ``Refusal/unusable(_:)`` when the manager cannot be made.
    public static func manager(
        floor: ServerTrustManager, delivered: TrustPolicyFile?, denyList: KeyDenyList?, permissions: TrustUpdateRules.Permissions
    ) throws(Refusal) -> ServerTrustManager {
        var policies = Dictionary(uniqueKeysWithValues: floor.policies.map { ($0.pattern.description, $0.policy) })
        var allHostsMustBeEvaluated = floor.allHostsMustBeEvaluated
        if let delivered {
            let weakenings = weakenings(of: delivered, against: floor).filter { !permissions.contains($0.permission) }
            guard weakenings.isEmpty else { throw .weakens(weakenings) }
            for host in delivered.hosts {
                var policy = host.policy
                let key = host.pattern.description
                if policy.clientIdentity == nil { policy.clientIdentity = policies[key]?.clientIdentity }
                policies[key] = policy
            }
            allHostsMustBeEvaluated = delivered.allHostsMustBeEvaluated
        }
        let keys = floor.denyList.keys.union(denyList?.keys ?? [])
        let certificates = floor.denyList.certificates.union(denyList?.certificates ?? [])
        do {
            return try ServerTrustManager(
                policies: policies, allHostsMustBeEvaluated: allHostsMustBeEvaluated,
                denyList: KeyDenyList(keys: keys, certificates: certificates))
        } catch let error as TrustError {
            throw .unusable(error)
        } catch {
            throw .unusable(TrustError(.invalidConfiguration, "\(error)"))
        }
    }

    /// Every way `delivered` weakens `floor`, whatever the permissions. Each delivered host is
    /// compared with the floor policy its pattern falls under (the floor's match for the
    /// pattern's own name, or for a name under a wildcard).
    public static func weakenings(of delivered: TrustPolicyFile, against floor: ServerTrustManager) -> [Weakening] {
        var found: [Weakening] = []
        if floor.allHostsMustBeEvaluated, !delivered.allHostsMustBeEvaluated {
            found.append(Weakening(
                permission: .unlistedHosts,
                reason: "allHostsMustBeEvaluated is false, letting hosts no pattern matches through with default validation"))
        }
        for host in delivered.hosts {
            let pattern = host.pattern.description
            if host.mode == .informational {
                found.append(Weakening(permission: .reportOnly, reason: "\(pattern) is put in report-only (informational) mode"))
            }
            guard let match = try? floor.match(forHost: representative(of: host.pattern)) else { continue }
            let floorPolicy = match.policy
            let under = "the floor's \(match.pattern)"
            let floorGoesBeyondDefault = !(floorPolicy.evaluator is DefaultTrustEvaluator)
            if floorGoesBeyondDefault, host.pinSet == nil {
                found.append(Weakening(
                    permission: .unpinHosts, reason: "\(pattern) gets default validation only, where \(under) uses \(floorPolicy.evaluator.name)"))
            } else if floorGoesBeyondDefault, let pinSet = host.pinSet, pinSet.expiryBehaviour == .fallBackToDefaultValidation {
                found.append(Weakening(
                    permission: .unpinHosts,
                    reason: "\(pattern)'s pins fall back to default validation when they expire, where \(under) uses \(floorPolicy.evaluator.name)"))
            }
            if floorPolicy.minimumTLSVersion > host.policy.minimumTLSVersion {
                found.append(Weakening(
                    permission: .lowerTLSVersion,
                    reason: "\(pattern) accepts \(host.policy.minimumTLSVersion), where \(under) requires \(floorPolicy.minimumTLSVersion)"))
            }
            if let floorSigned = floorPolicy.signedResponses, floorSigned.mode == .enforced, host.policy.signedResponses?.mode != .enforced {
                found.append(Weakening(
                    permission: .weakerSignedResponses, reason: "\(pattern) does not enforce signed responses, where \(under) does"))
            } else if let floorSigned = floorPolicy.signedResponses, floorSigned.mode == .enforced, let delivered = host.policy.signedResponses,
                floorSigned.scheme != .either, delivered.scheme != floorSigned.scheme
            {
                // Neither scheme is stronger in general (v1 binds the ETag and the request time,
                // RFC 9421 Content-Encoding and any server language), and `either` accepts the
                // weaker of two: a change of scheme is the application's to allow.
                found.append(Weakening(
                    permission: .weakerSignedResponses,
                    reason: "\(pattern) requires \(delivered.scheme) signed responses, where \(under) requires \(floorSigned.scheme)"))
            }
        }
        return found
    }

    /// A name the pattern covers, for finding the floor's policy over it.
    static func representative(of pattern: HostPattern) -> String {
        switch pattern.kind {
        case .exact, .ipAddress, .anyDepthWildcard: pattern.suffix
        case .singleLabelWildcard: "servertrust-probe." + pattern.suffix
        }
    }
}
