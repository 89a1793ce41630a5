public import Foundation
public import ServerTrustTUF

extension TrustUpdateStatus {
    /// Why a verified policy was not applied (``TrustUpdateStatus/refusal``): a ``code`` to
    /// branch on and a ``reason`` for a person, which names the file, the host pattern or the
    /// date. ``description`` is the reason, as `servertrust` prints it.
    /// What `PolicyFloor.read(_:name:signingKeys:certificateTransparencyLogs:)` and
    /// `PolicyFloor.manager(floor:delivered:denyList:permissions:certificateTransparencyLogs:)`
    /// throw, too: the status reports the refusal as it was thrown.
    public struct Refusal: Error, Sendable, Codable, Hashable, CustomStringConvertible {
        /// An opaque, extensible refusal kind.
        public struct Code: Sendable, Codable, Hashable, CustomStringConvertible {
            private enum Base: String, Sendable, Codable, Hashable {
                case newerFormat, invalidPolicy, invalidTarget, weakensFloor, unusable, expired, invalidLogList, logListRollback,
                    invalidAppleSigningTrust
            }
            private let base: Base
            private init(_ base: Base) { self.base = base }

            /// The policy's `version` is newer than this library reads.
            public static let newerFormat = Code(.newerFormat)
            /// The policy file is not valid (the reason names the line and field).
            public static let invalidPolicy = Code(.invalidPolicy)
            /// The deny-list or the key set delivered beside the policy is not valid: nothing of
            /// the state is put in force.
            public static let invalidTarget = Code(.invalidTarget)
            /// The policy weakens the compiled-in floor without the application's permission
            /// (`TrustUpdateRules.Permissions`).
            public static let weakensFloor = Code(.weakensFloor)
            /// The manager the policy makes over the floor cannot be made.
            public static let unusable = Code(.unusable)
            /// The policy is past its own `expires`.
            public static let expired = Code(.expired)
            /// The CT log list delivered beside the policy (`ct_log_list.json`) does not read
            /// (the reason names the file, line and member) or OpenSSL cannot load its keys: the
            /// policy and the list are not put in force; the deny-list and key withdrawals are.
            public static let invalidLogList = Code(.invalidLogList)
            /// The CT log list delivered beside the policy is older (`log_list_timestamp`) than
            /// the one in force: refused as a rollback, with the policy; the deny-list and key
            /// withdrawals are put in force.
            public static let logListRollback = Code(.logListRollback)
            /// The App Store signing trust delivered beside the policy does not read (the reason
            /// names the member): refused with the policy; the deny-list and key withdrawals
            /// beside it are put in force. A weakening of its floor is ``weakensFloor``.
            public static let invalidAppleSigningTrust = Code(.invalidAppleSigningTrust)

            public var description: String { base.rawValue }
            public init(from decoder: any Decoder) throws { base = try Base(from: decoder) }
            public func encode(to encoder: any Encoder) throws { try base.encode(to: encoder) }
        }

        public let code: Code
        /// Why, for a person: `it expired on …`, `it weakens the compiled-in floor …`.
        public let reason: String

        /// For ``Code/weakensFloor``: each weakening, with the permission it needs; empty
        /// otherwise (and in a decoded status, which keeps the reason that names them).
        public let weakenings: [PolicyFloor.Weakening]

        /// - Parameters:
        ///   - code: the kind of refusal.
        ///   - reason: why, for a person.
        ///   - weakenings: for ``Code/weakensFloor``, each weakening; default none.
        public init(_ code: Code, _ reason: String, weakenings: [PolicyFloor.Weakening] = []) {
            self.code = code
            self.reason = reason
            self.weakenings = weakenings
        }

        private enum CodingKeys: String, CodingKey { case code, reason }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(try container.decode(Code.self, forKey: .code), try container.decode(String.self, forKey: .reason))
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(code, forKey: .code)
            try container.encode(reason, forKey: .reason)
        }

        public var description: String { reason }
    }

    /// Why the last refresh or restore did not put a verified state in force
    /// (``TrustUpdateStatus/lastError``): the TUF client's error, and when it happened.
    public struct Failure: Sendable, Codable, Hashable, CustomStringConvertible {
        /// When the failure happened.
        public enum Stage: String, Sendable, Codable, Hashable {
            /// A refresh: the network or the TUF workflow (rollback, freeze, bad signatures…).
            case refresh
            /// A restore: nothing stored, or the store does not verify.
            case restore
            /// A restore found the stored metadata expired (``storedMetadataExpired``): only the
            /// deny-list and key withdrawals were put back.
            case restoreExpired
            /// A restore found the store unrestorable, not expired (a refresh interrupted
            /// between its files, a cached target that no longer matches): only the deny-list
            /// and key withdrawals recorded beside it were put back
            /// (``TrustUpdateStatus/InForce-swift.enum/floorStoreInterrupted``).
            case restoreInterrupted
        }

        public let stage: Stage
        /// The TUF client's error code (`TUFError.Code`).
        public let code: TUFError.Code
        /// The TUF client's reason.
        public let reason: String
        /// With ``Stage/restoreExpired``: when the stored metadata expired.
        public let storedMetadataExpired: Date?

        /// - Parameters:
        ///   - stage: when it happened.
        ///   - error: the TUF client's error.
        ///   - storedMetadataExpired: with ``Stage/restoreExpired``, when the stored metadata expired.
        public init(_ stage: Stage, _ error: TUFError, storedMetadataExpired: Date? = nil) {
            self.stage = stage
            code = error.code
            reason = error.reason
            self.storedMetadataExpired = storedMetadataExpired
        }

        /// The TUF client's error.
        public var error: TUFError { TUFError(code, reason) }

        /// As `servertrust` prints it: `rollback: …`, `restore: storeFailure: …`,
        /// `restore: the stored metadata expired on DATE (expired: …)`,
        /// `restore: the store could not be restored (…); only the recorded deny-list and key withdrawals were put back`.
        public var description: String {
            switch stage {
            case .refresh: error.description
            case .restore: "restore: \(error.description)"
            case .restoreExpired: "restore: the stored metadata expired on \(storedMetadataExpired.map { "\($0)" } ?? "?") (\(error.description))"
            case .restoreInterrupted: "restore: the store could not be restored (\(error.description)); only the recorded deny-list and key withdrawals were put back"
            }
        }
    }
}
