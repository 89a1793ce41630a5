/// A certificate of the validated chain that satisfied a pinning evaluator's pins: what a
/// report names so a reader can tell which pin carried the connection.
///
/// ``isAnchorExtension`` tells a match on an anchor above the path OpenSSL validated — a root
/// pinned while the trust store also holds its intermediate, so the path stopped at the
/// intermediate and was extended upward through the anchors that issued it
/// (``PeerTrust/validatedChain()``).
public struct PinMatch: Sendable, Hashable, CustomStringConvertible {
    /// The pinning evaluator whose pins matched.
    public let evaluator: String
    /// The certificate that matched.
    public let certificate: Certificate
    /// Its position in the validated chain: 0 for the leaf.
    public let depth: Int
    /// Whether it is an anchor added above the validated path rather than a certificate of the
    /// path itself.
    public let isAnchorExtension: Bool

    /// The matched certificate's SPKI pin (for a certificate or public-key pin as well: the
    /// form every report lists).
    public var pin: Pin { certificate.spkiPin }
    /// The matched certificate's subject, RFC 2253.
    public var subject: String { certificate.subject }

    public init(evaluator: String, certificate: Certificate, depth: Int, isAnchorExtension: Bool) {
        self.evaluator = evaluator
        self.certificate = certificate
        self.depth = depth
        self.isAnchorExtension = isAnchorExtension
    }

    /// `sha256/…: CN=… (depth 2, an anchor above the validated path)`.
    public var description: String {
        "\(pin): \(subject) (depth \(depth)\(isAnchorExtension ? ", an anchor above the validated path" : ""))"
    }
}
