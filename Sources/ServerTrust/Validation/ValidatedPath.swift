/// A chain path validation accepted: the path OpenSSL validated, leaf first, ending at an
/// anchor, then the anchors above that anchor that issued it (``PathValidator/anchorsAbove(_:in:time:options:)``).
///
/// OpenSSL ends a path at the first anchor it reaches (partial-chain semantics), so what a chain
/// "validates to" depends on which certificates the trust store happens to hold: with the root
/// and its intermediate both anchors, the path stops at the intermediate and a pin on the root
/// would stop matching (brave-browser #52059 is the same failure in Chromium). Pins and the
/// deny-list read ``certificates``, the whole extended path, so a pin on a CA key survives a
/// trust store that gained one of that CA's intermediates; revocation reads only the
/// ``validatedCount`` certificates of the path itself, whose top is trusted by configuration.
struct ValidatedPath: Sendable {
    /// Leaf first: the validated path, then the anchors added above it.
    let certificates: [Certificate]
    /// How many of ``certificates`` OpenSSL validated as the path; the rest are anchors above
    /// its top, added by extension.
    let validatedCount: Int

    /// A path that is not extended (with pins as the only anchors, the top is the pin itself).
    init(validated chain: [Certificate]) {
        certificates = chain
        validatedCount = chain.count
    }

    init(validated chain: [Certificate], anchorsAbove: [Certificate]) {
        certificates = chain + anchorsAbove
        validatedCount = chain.count
    }

    /// Whether the certificate at `depth` was added above the validated path.
    func isAnchorExtension(_ depth: Int) -> Bool { depth >= validatedCount }
}
