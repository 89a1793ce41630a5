/// Why a public key for signature verification could not be made.
///
/// Equality compares ``code`` only. A signature that does not verify is not an error: it is
/// `false` from ``SignaturePublicKey/isValidSignature(_:for:algorithm:)``.
public struct SignatureKeyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An opaque failure kind.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case malformedKey, unsupportedKey, weakKey
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// Bytes or PEM text that are not a key of the stated type.
        public static let malformedKey = Code(.malformedKey)
        /// A key of a type or curve this verifier does not accept.
        public static let unsupportedKey = Code(.unsupportedKey)
        /// An RSA key shorter than 2,048 bits.
        public static let weakKey = Code(.weakKey)
        public var description: String { base.rawValue }
    }

    public let code: Code
    public let reason: String

    init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
