internal import COpenSSL

/// Which TLS key exchange a host's connections must use: any the TLS library and the server
/// agree on (the default), or a post-quantum one.
///
/// Post-quantum key exchange protects the traffic of today against an adversary who records it
/// and decrypts it later with a quantum computer ("harvest now, decrypt later"); the server's
/// certificate is still a classical signature, so it does not protect against impersonation.
/// OpenSSL 3.5 and later offer the hybrid group `X25519MLKEM768` first by default, and also
/// `SecP256r1MLKEM768` and `SecP384r1MLKEM1024` (ML-KEM, FIPS 203, combined with a classical
/// curve), so a server that supports one negotiates it without any configuration. OpenSSL 3.0
/// offers none: a policy requiring one is refused when the manager is made there
/// (``ServerTrustManager/init(policies:allHostsMustBeEvaluated:denyList:certificateTransparencyLogs:logger:)``), naming the version.
public struct KeyExchangeRequirement: Hashable, Sendable, Comparable, CustomStringConvertible {
    private enum Base: Int, Hashable, Sendable { case any, postQuantum }
    private let base: Base
    private init(_ base: Base) { self.base = base }

    /// Any group the TLS library and the server agree on (the default).
    public static let any = KeyExchangeRequirement(.any)
    /// A group with ML-KEM (FIPS 203): the hybrids `X25519MLKEM768`, `SecP256r1MLKEM768`,
    /// `SecP384r1MLKEM1024`, or ML-KEM alone. A connection that negotiated a classical group
    /// (`X25519`, `secp256r1`…), TLS 1.2, or a group the transport cannot tell is refused with
    /// `TrustError.Code.keyExchangeBelowPolicy`.
    public static let postQuantum = KeyExchangeRequirement(.postQuantum)

    /// The policy file's spelling: `any` or `postQuantum`.
    public init?(rawValue: String) {
        switch rawValue {
        case "any": self = .any
        case "postQuantum": self = .postQuantum
        default: return nil
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.base.rawValue < rhs.base.rawValue }

    public var description: String { base == .any ? "any" : "postQuantum" }

    /// Whether a negotiated group, as OpenSSL names it (`X25519MLKEM768`), is post-quantum.
    public static func isPostQuantum(group: String) -> Bool { group.uppercased().contains("MLKEM") }

    /// Whether `group` (nil when the transport cannot tell) satisfies this requirement.
    public func isSatisfied(by group: String?) -> Bool {
        switch base {
        case .any: true
        case .postQuantum: group.map(Self.isPostQuantum(group:)) ?? false
        }
    }

    /// Why this process cannot honour the requirement, or nil: post-quantum groups need
    /// OpenSSL 3.5 or later.
    var unavailability: String? {
        guard base == .postQuantum else { return nil }
        let version = OpenSSL_version_num()
        guard version < 0x3050_0000 else { return nil }
        let name = OpenSSL_version(OPENSSL_VERSION).map { String(cString: $0) } ?? "OpenSSL \(String(version, radix: 16))"
        return "requires post-quantum key exchange, and this process links \(name), which offers no post-quantum group (OpenSSL 3.5 or later does)"
    }

    /// Whether the OpenSSL this process links offers post-quantum groups (3.5 or later).
    public static var isAvailable: Bool { OpenSSL_version_num() >= 0x3050_0000 }
}
