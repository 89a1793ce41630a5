import ServerTrust
import ServerTrustTUF

extension PolicyFloor {
    /// What is in force when no delivered policy is: the floor with `denyList` joined to its own
    /// (a revert never un-refuses a key); under `beforeFirstUpdate = refuseConnections` the
    /// floor is not a policy to connect under, so the state before the first update comes back
    /// instead: every host refused.
    static func reverted(floor: ServerTrustManager, denyList: KeyDenyList?, rules: TrustUpdateRules) -> ServerTrustManager {
        // The floor's own policies with another deny-list: built from them, it cannot fail.
        let withDenyList = (try? manager(floor: floor, delivered: nil, denyList: denyList, permissions: [])) ?? floor
        guard rules.beforeFirstUpdate == .refuseConnections else { return withDenyList }
        return (try? refusing(withDenyList)) ?? withDenyList
    }

    /// The floor's patterns, each refusing its hosts until a delivered policy is applied;
    /// unmatched hosts refused too.
    ///
    /// - Throws: `TUFError` (`invalidState`) when the floor names no host pattern to refuse.
    static func refusing(_ floor: ServerTrustManager) throws(TUFError) -> ServerTrustManager {
        do {
            return try ServerTrustManager(
                policies: Dictionary(uniqueKeysWithValues: floor.policies.map { ($0.pattern, HostPolicy.custom(UntilFirstUpdate())) }),
                allHostsMustBeEvaluated: true, denyList: floor.denyList)
        } catch {
            throw TUFError(
                .invalidState, "beforeFirstUpdate is refuseConnections, and the floor names no host pattern to refuse: \(error)")
        }
    }

    /// The evaluator of ``TrustUpdateRules/BeforeFirstUpdate/refuseConnections``.
    struct UntilFirstUpdate: ServerTrustEvaluating {
        var name: String { "UntilFirstUpdate" }
        func evaluate(_ trust: PeerTrust, forHost host: String) throws {
            throw TrustError(
                .noEvaluatorForHost,
                "No trust update has been applied yet, and TrustUpdateRules.beforeFirstUpdate refuses connections until one is.",
                evaluator: name, host: host)
        }
    }
}

extension TrustUpdateStatus.Refusal {
    /// The refusal of a policy that is not valid (the reason names the line and field).
    static func invalid(_ error: TrustError) -> Self { Self(.invalidPolicy, "it is not a valid policy: \(error.reason)") }

    /// The refusal of a policy whose manager cannot be made.
    static func unusable(_ error: TrustError) -> Self { Self(.unusable, "it cannot be applied: \(error.reason)") }
}
