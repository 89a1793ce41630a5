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
    ///     ``PinnedKeyHashesTrustEvaluator/init(pins:performDefaultValidation:validateHost:)``:
    ///     the presented certificate carrying a pinned key is the anchor only when it is the
    ///     leaf or that key signed it itself (verified), never an intermediate whose validity and
    ///     constraints only its unpinned issuer vouches for.
    public convenience init(keys: [PublicKey], performDefaultValidation: Bool = true) throws {
        try self.init(keys: keys, performDefaultValidation: performDefaultValidation, checksHost: true)
    }

    /// With the deprecated `validateHost`.
    ///
    /// - Parameters:
    ///   - keys: the pinned keys; must not be empty.
    ///   - performDefaultValidation: as in ``init(keys:performDefaultValidation:)``.
    ///   - validateHost: whether this evaluator checks the host name itself when called
    ///     directly. It no longer switches the check off on a client: every client path checks
    ///     the host against the leaf whatever this says
    ///     (``ServerTrustEvaluating/evaluateAsPolicy(_:forHost:)``).
    @available(*, deprecated, message: "validateHost no longer turns the host check off: every client path checks the host against the leaf (evaluateAsPolicy). Remove the argument.")
    public convenience init(keys: [PublicKey], performDefaultValidation: Bool = true, validateHost: Bool) throws {
        try self.init(keys: keys, performDefaultValidation: performDefaultValidation, checksHost: validateHost)
    }

    private init(keys: [PublicKey], performDefaultValidation: Bool, checksHost: Bool) throws {
        self.keys = Set(keys.map(\.subjectPublicKeyInfoDER))
        core = try PinningCore(
            evaluatorName: "PublicKeysTrustEvaluator", configuredPins: Array(Set(keys.map(\.pin))).sorted(),
            performDefaultValidation: performDefaultValidation, validateHost: checksHost)
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

    /// Public-key pinning, with the deprecated `validateHost` (see
    /// ``PublicKeysTrustEvaluator/init(keys:performDefaultValidation:validateHost:)``).
    @available(*, deprecated, message: "validateHost no longer turns the host check off: every client path checks the host against the leaf (evaluateAsPolicy). Remove the argument.")
    public static func publicKeys(
        _ keys: [PublicKey], performDefaultValidation: Bool = true, validateHost: Bool
    ) throws -> PublicKeysTrustEvaluator {
        try PublicKeysTrustEvaluator(keys: keys, performDefaultValidation: performDefaultValidation, validateHost: validateHost)
    }
}
