public import Foundation

/// A host's Certificate Transparency requirement: its certificate must have been logged
/// publicly, shown by enough verified SCTs from the application's log list
/// (``CertificateTransparencyPolicy``).
///
/// Opt-in per host (``HostPolicy/certificateTransparency``,
/// the policy file's `"certificateTransparency"`); it runs after the host's evaluator has
/// validated the chain, beside pins and revocation. A manager with any host requiring CT needs
/// a log list (`ServerTrustManager(…, certificateTransparencyLogs:)`), or it is not made.
///
/// Dropping the requirement, moving it from enforced to report-only, or from fail-closed to
/// fail-open on a stale list, is a softening (``HostPolicy/softenings(comparedWith:)``):
/// a trust update may do it only with the floor's permission.
public struct CertificateTransparencyRequirement: Hashable, Sendable, CustomStringConvertible {
    /// Whether a failure refuses the connection.
    public enum Mode: String, Hashable, Sendable, CaseIterable {
        /// Log, count and report the outcome; never refuse. Default: the way to trial CT.
        case reportOnly
        /// Refuse a server whose certificate does not meet the policy
        /// (`TrustError.Code.certificateTransparency`).
        case enforced
    }

    /// What happens when the log list is older than ``maximumLogListAge`` or dated in the future.
    public enum StaleLogListBehaviour: String, Hashable, Sendable, CaseIterable {
        /// CT is not enforced while the list is stale: the outcome is reported
        /// (``CertificateTransparencyOutcome/Reason/staleLogList``), counted and logged, and the
        /// connection proceeds. The platforms' choice (Chrome, Android): a list that is not kept
        /// current would otherwise refuse certificates from logs added since. The default.
        case failOpen
        /// A stale list refuses every connection of an enforced host until a current list arrives.
        case failClosed
    }

    /// Default ``Mode/reportOnly``.
    public var mode: Mode
    /// Default ``StaleLogListBehaviour/failOpen``.
    public var staleLogList: StaleLogListBehaviour
    /// How old the list's `log_list_timestamp` may be before it is stale. Default 70 days, as Android.
    public var maximumLogListAge: TimeInterval

    /// 70 days, Android's limit.
    public static let defaultMaximumLogListAge: TimeInterval = 70 * 86_400

    /// - Parameters:
    ///   - mode: default ``Mode/reportOnly``.
    ///   - staleLogList: default ``StaleLogListBehaviour/failOpen``.
    ///   - maximumLogListAge: default 70 days.
    public init(mode: Mode = .reportOnly, staleLogList: StaleLogListBehaviour = .failOpen, maximumLogListAge: TimeInterval = defaultMaximumLogListAge) {
        self.mode = mode
        self.staleLogList = staleLogList
        self.maximumLogListAge = maximumLogListAge
    }

    /// Enforced, with the other settings at their defaults (or as given).
    public static func enforced(staleLogList: StaleLogListBehaviour = .failOpen, maximumLogListAge: TimeInterval = defaultMaximumLogListAge) -> Self {
        Self(mode: .enforced, staleLogList: staleLogList, maximumLogListAge: maximumLogListAge)
    }

    /// Report-only, with the other settings at their defaults (or as given).
    public static func reportOnly(staleLogList: StaleLogListBehaviour = .failOpen, maximumLogListAge: TimeInterval = defaultMaximumLogListAge) -> Self {
        Self(mode: .reportOnly, staleLogList: staleLogList, maximumLogListAge: maximumLogListAge)
    }

    public var description: String {
        "\(mode), stale list \(staleLogList == .failOpen ? "fails open" : "fails closed") after \(Int(maximumLogListAge / 86_400)) days"
    }

    /// Why `mine` requires less than `floor`, or nil.
    static func softening(_ mine: Self?, _ floor: Self?) -> String? {
        guard let floor else { return nil }
        guard let mine else { return "does not require Certificate Transparency, where %FLOOR% does (\(floor))" }
        var softer: [String] = []
        if mine.mode == .reportOnly, floor.mode == .enforced { softer.append("only reports it, where it was enforced") }
        if mine.staleLogList == .failOpen, floor.staleLogList == .failClosed { softer.append("fails open on a stale log list") }
        if mine.maximumLogListAge > floor.maximumLogListAge {
            softer.append("accepts a log list \(Int(mine.maximumLogListAge / 86_400)) days old, not \(Int(floor.maximumLogListAge / 86_400))")
        }
        guard !softer.isEmpty else { return nil }
        return "requires Certificate Transparency less strictly (" + softer.joined(separator: "; ") + ") than %FLOOR% (\(floor))"
    }

    /// The fields ``softening(_:_:)`` reads: every stored property, checked by a test.
    static let comparedFields: Set<String> = ["mode", "staleLogList", "maximumLogListAge"]
}
