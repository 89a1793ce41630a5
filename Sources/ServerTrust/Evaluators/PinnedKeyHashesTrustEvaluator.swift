/// Accepts a server when a certificate of its validated chain has an SPKI SHA-256 in the pin set.
///
/// Any certificate of the chain may match (leaf, intermediate or root); the pins of a set are
/// OR'd. Pin at least two keys — the current one and a backup held offline — so a key rotation
/// does not lock clients out.
public final class PinnedKeyHashesTrustEvaluator: ServerTrustEvaluating {
    private let pins: Set<Pin>
    let core: PinningCore

    /// - Parameters:
    ///   - pins: SPKI pins; must not be empty.
    ///   - performDefaultValidation: validate the chain to the anchors first. Default `true`.
    ///     When `false` the pinned keys act as the anchors, so the chain's signatures and
    ///     validity are still checked — but a key pin knows only a key, so the presented
    ///     certificate carrying it may be the anchor only when that key signed it itself (a
    ///     self-signed root the server sends, its signature verified) or it is the leaf. An
    ///     intermediate signed by anyone else is refused (`.chainValidationFailed`): the server
    ///     could send a copy of it with a later notAfter and no constraints. Pin such an
    ///     intermediate with default validation on, or pin its certificate.
    /// - Throws: `TrustError.Code.invalidConfiguration` for an empty pin set.
    public convenience init(pins: [Pin], performDefaultValidation: Bool = true) throws {
        try self.init(pins: pins, performDefaultValidation: performDefaultValidation, checksHost: true)
    }

    /// `checksHost: false` is for the library's offline reports that judge a chain without a host.
    init(pins: [Pin], performDefaultValidation: Bool, checksHost: Bool) throws {
        self.pins = Set(pins)
        core = try PinningCore(
            evaluatorName: "PinnedKeyHashesTrustEvaluator", configuredPins: Array(Set(pins)).sorted(),
            performDefaultValidation: performDefaultValidation, validateHost: checksHost)
    }

    /// Parses `sha256/<base64>` strings.
    /// - Throws: `TrustError.Code.malformedPin` or `.unsupportedPinAlgorithm` naming the bad pin.
    public convenience init(_ pins: [String], performDefaultValidation: Bool = true) throws {
        try self.init(pins: pins.map(Pin.init), performDefaultValidation: performDefaultValidation)
    }

    public func evaluate(_ trust: PeerTrust, forHost host: String) throws {
        try core.evaluate(trust, host: host) { pins.contains($0.spkiPin) }
    }
}

extension ServerTrustEvaluating where Self == PinnedKeyHashesTrustEvaluator {
    /// SPKI-hash pinning: `.pinnedKeyHashes(["sha256/…", "sha256/…backup"])`.
    public static func pinnedKeyHashes(_ pins: [String], performDefaultValidation: Bool = true) throws -> PinnedKeyHashesTrustEvaluator {
        try PinnedKeyHashesTrustEvaluator(pins, performDefaultValidation: performDefaultValidation)
    }

    /// SPKI-hash pinning with parsed pins.
    public static func pinnedKeyHashes(_ pins: [Pin], performDefaultValidation: Bool = true) throws -> PinnedKeyHashesTrustEvaluator {
        try PinnedKeyHashesTrustEvaluator(pins: pins, performDefaultValidation: performDefaultValidation)
    }
}
