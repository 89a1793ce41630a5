public import Foundation

/// A Certificate Transparency outcome as reports print it (`servertrust verify --json`,
/// `fetch --json`): compliant or the reason, and every SCT seen with its log, operator, source,
/// timestamp and verdict.
public struct CertificateTransparencyReport: Sendable, Encodable, Hashable {
    /// One SCT.
    public struct SCT: Sendable, Encodable, Hashable {
        /// The log's description, or nil when the list has no log with this ID.
        public let log: String?
        /// The log ID, base64.
        public let logID: String
        public let `operator`: String?
        /// `embedded`, `tlsExtension` or `ocspStaple`.
        public let source: String
        public let timestamp: Date
        /// `verified`, `unknownLog`, `badSignature`, `timestampInFuture`…
        public let status: String
        /// The SCT's extensions, base64 (a static-ct-api log's `leaf_index`); absent when none.
        public let extensions: String?
    }

    public let compliant: Bool
    /// `enforced` or `reportOnly`.
    public let mode: String
    /// Why not compliant: `notEnoughSCTs`, `notEnoughOperators`, `unknownLog`, `badSCTSignature`,
    /// `staleLogList`, `noLogList`; absent when compliant.
    public let reason: String?
    /// What was missing and what was not counted; absent when compliant.
    public let detail: String?
    /// Whether the outcome refused the server (enforced, and not a stale list failing open).
    public let refused: Bool
    public let scts: [SCT]

    /// - Parameters:
    ///   - outcome: the policy's outcome.
    ///   - requirement: the requirement it was judged under.
    public init(_ outcome: CertificateTransparencyOutcome, requirement: CertificateTransparencyRequirement) {
        compliant = outcome.isCompliant
        mode = requirement.mode.rawValue
        reason = outcome.reason?.rawValue
        detail = outcome.isCompliant ? nil : outcome.detail
        refused = !outcome.isCompliant && requirement.mode == .enforced && outcome.isEnforceable
        scts = outcome.observations.map { observation in
            SCT(
                log: observation.log?.name, logID: observation.sct.logIDBase64, operator: observation.log?.operatorName,
                source: observation.sct.source.rawValue, timestamp: observation.sct.timestamp, status: observation.status.rawValue,
                extensions: observation.sct.extensions.isEmpty ? nil : Data(observation.sct.extensions).base64EncodedString())
        }
    }
}
