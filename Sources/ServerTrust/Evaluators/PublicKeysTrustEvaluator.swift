/// Accepts a server when a certificate of its validated chain carries one of the pinned public keys.
///
/// Keys are compared as whole SubjectPublicKeyInfo encodings. Pinning a key rather than a
/// certificate survives certificate renewal with the same key.
public final class PublicKeysTrustEvaluator: ServerTrustEvaluating {
    private let keys: Set<[UInt8]>
    let core: PinningCore

    /// - Parameters:
    ///   - keys: the pinned keys; must not be empty.
    ///   - performDefaultValidation: validate the chain to the anchors first. Default `true`.
    ///     When `false` the pinned keys act as the anchors, under the rule of
    ///     ``PinnedKeyHashesTrustEvaluator/init(pins:performDefaultValidation:)``:
    ///     the presented certificate carrying a pinned key is the anchor only when it is the
    ///     leaf or that key signed it itself (verified), never an intermediate whose validity and
    ///     constraints only its unpinned issuer vouches for.
    public init(keys: [PublicKey], performDefaultValidation: Bool = true) throws {
        self.keys = Set(keys.map(\.subjectPublicKeyInfoDER))
        core = try PinningCore(
            evaluatorName: "PublicKeysTrustEvaluator", configuredPins: Array(Set(keys.map(\.pin))).sorted(),
            performDefaultValidation: performDefaultValidation, validateHost: true)
    }

    public func evaluate(_ trust: PeerTrust, forHost host: String) throws {
        try core.evaluate(trust, host: host) { keys.contains($0.subjectPublicKeyInfoDER) }
    }
}

extension ServerTrustEvaluating where Self == PublicKeysTrustEvaluator {
    /// Public-key pinning.
    public static func publicKeys(_ keys: [PublicKey], performDefaultValidation: Bool = true) throws -> PublicKeysTrustEvaluator {
        try PublicKeysTrustEvaluator(keys: keys, performDefaultValidation: performDefaultValidation)
    }
}
