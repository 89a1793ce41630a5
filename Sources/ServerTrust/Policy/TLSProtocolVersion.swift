/// A TLS protocol version, by its wire value: what a handshake negotiated
/// (``HandshakeEvidence/protocolVersion``) and the least a host's policy accepts
/// (``HostPolicy/minimumTLSVersion``).
public struct TLSProtocolVersion: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The version as TLS encodes it: `0x0303` for TLS 1.2, `0x0304` for TLS 1.3.
    public let wireValue: UInt16

    /// A version by its wire value; any value is kept, named or not.
    public init(wireValue: UInt16) { self.wireValue = wireValue }

    /// TLS 1.0, deprecated by RFC 8996 and refused by every ServerTrust connection.
    public static let tls10 = TLSProtocolVersion(wireValue: 0x0301)
    /// TLS 1.1, deprecated by RFC 8996 and refused by every ServerTrust connection.
    public static let tls11 = TLSProtocolVersion(wireValue: 0x0302)
    /// TLS 1.2, ServerTrust's floor.
    public static let tls12 = TLSProtocolVersion(wireValue: 0x0303)
    /// TLS 1.3.
    public static let tls13 = TLSProtocolVersion(wireValue: 0x0304)

    public static func < (lhs: TLSProtocolVersion, rhs: TLSProtocolVersion) -> Bool { lhs.wireValue < rhs.wireValue }

    /// `TLS 1.2`, `TLS 1.3`; an unnamed version as its hexadecimal wire value.
    public var description: String {
        switch wireValue {
        case 0x0300: "SSL 3.0"
        case 0x0301: "TLS 1.0"
        case 0x0302: "TLS 1.1"
        case 0x0303: "TLS 1.2"
        case 0x0304: "TLS 1.3"
        default: "0x" + String(wireValue, radix: 16, uppercase: true)
        }
    }
}
