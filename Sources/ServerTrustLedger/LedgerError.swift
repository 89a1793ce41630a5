public import Foundation

/// Why the ledger refused, or could not answer. A refusal writes nothing.
public struct LedgerError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable {
        /// The purchase is granted to another account (``holder``, ``heldSince``): a replay.
        case replay
        /// The purchase's signed `appAccountToken` is not the account's.
        case accountTokenMismatch
        /// The store refunded or revoked the purchase: nothing to grant.
        case revoked
        /// The purchase is not one the ledger can record (a field missing, malformed or too long,
        /// an unknown store).
        case invalidPurchase
        /// The database could not be reached or was busy past its timeout: nothing was decided,
        /// retry (the claim is idempotent).
        case storeUnavailable
        /// The database refused a statement.
        case storeFailed
        /// A row does not hold what the schema says, or the schema is newer than this code.
        case corruptRecord
    }

    public let code: Code
    public let reason: String
    /// For ``Code/replay``: the account the purchase is granted to, and since when.
    public let holder: String?
    public let heldSince: Date?

    public init(_ code: Code, _ reason: String, holder: String? = nil, heldSince: Date? = nil) {
        self.code = code
        self.reason = reason
        self.holder = holder
        self.heldSince = heldSince
    }

    /// Whether trying again later may succeed.
    public var isRetryable: Bool { code == .storeUnavailable }

    public var description: String { "\(code): \(reason)" }
}
