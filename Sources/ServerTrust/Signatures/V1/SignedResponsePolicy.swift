
/// Whether and how a client checks signed responses from the hosts of one pattern.
///
/// Part of a host's ``HostPolicy`` (``HostPolicy/signedResponses``):
///
/// ```swift
/// let policy = HostPolicy(signedResponses: .enforced(roots: [try SignedResponseRoot(base64: signedResponseRootKey)]))
/// ```
///
/// A policy names the signature scheme it requires (``Scheme``): the v1 format
/// (`X-ServerTrust-Signature`, root → intermediate keys; ``roots``), RFC 9421 HTTP Message
/// Signatures with RFC 9530 `Content-Digest` (a JWKS key set; ``messageSignatures``), or
/// either during a migration — named explicitly, never inferred from what a response carries.
///
/// For a matching host the session sends a fresh challenge with every request (every redirect
/// hop included): v1's nonce and request time, RFC 9421's `Accept-Signature` with a nonce, or
/// both; and it verifies the response with a `ResponseSignatureVerifier` or a
/// `MessageSignatureVerifier`. The schemes, their layouts and limits are in
/// docs/SIGNED_RESPONSES.md.
public struct SignedResponsePolicy: Sendable {
    /// The signature scheme a host's responses must carry.
    public struct Scheme: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable { case v1, rfc9421 = "rfc9421", either }
        private let base: Base

        /// Only v1 (`X-ServerTrust-Signature`), against ``SignedResponsePolicy/roots``.
        public static let v1 = Scheme(base: .v1)
        /// Only RFC 9421, against ``SignedResponsePolicy/messageSignatures``.
        public static let rfc9421 = Scheme(base: .rfc9421)
        /// A migration between the two: the client asks for both and accepts a response that
        /// verifies under either. Each is bound to the request's own nonce, so neither can be
        /// replayed into the other; but the weaker of the two decides — v1 does not cover
        /// `Content-Encoding`, so nothing is decoded for the host while it is in force.
        public static let either = Scheme(base: .either)

        public var description: String { base.rawValue }
    }

    /// Which scheme responses must carry.
    public var scheme: Scheme
    /// The RFC 9421 verification policy; required for ``Scheme/rfc9421`` and ``Scheme/either``.
    public var messageSignatures: MessageSignaturePolicy?

    /// What the session does with the verification result.
    public struct Mode: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable { case disabled, informational, enforced }
        private let base: Base

        /// Nothing is sent or checked; responses report `ResponseVerification.notRequested`.
        /// A way to switch a pattern off without deleting its roots.
        public static let disabled = Mode(base: .disabled)
        /// Every response is checked and returned; a failure is reported in
        /// `Response.verification` and to `Session.Configuration.onVerificationFailure`.
        /// - Warning: the body of a failed response is not authentic; use it only for
        ///   diagnostics, or while rolling signing out on the server.
        public static let informational = Mode(base: .informational)
        /// A response that fails verification is never returned: the session throws
        /// `SessionError.Code.responseSignatureInvalid` with the reason. Unsigned `5xx`
        /// responses included: their bodies are withheld too, but the thrown error carries
        /// their status.
        public static let enforced = Mode(base: .enforced)

        public var description: String { base.rawValue }
    }

    public var mode: Mode
    /// The trusted v1 root keys with their header versions. Required for ``Scheme/v1`` and
    /// ``Scheme/either`` unless `mode` is disabled.
    public var roots: [SignedResponseRoot]
    /// How old a request may be when its whole response has arrived; keep it above the
    /// request timeout. Default 300 s.
    public var freshnessWindow: Duration
    /// Tolerance for the wall clock stepping while a request is in flight and for intermediate
    /// expiry. Default 60 s.
    public var clockSkewAllowance: Duration

    /// A v1 policy.
    /// - Parameters:
    ///   - mode: disabled, informational or enforced.
    ///   - roots: the root keys; at least one unless disabled.
    ///   - freshnessWindow: default 300 s.
    ///   - clockSkewAllowance: default 60 s.
    public init(
        mode: Mode, roots: [SignedResponseRoot], freshnessWindow: Duration = .seconds(300), clockSkewAllowance: Duration = .seconds(60)
    ) {
        self.mode = mode
        self.roots = roots
        self.freshnessWindow = freshnessWindow
        self.clockSkewAllowance = clockSkewAllowance
        scheme = .v1
        messageSignatures = nil
    }

    /// An RFC 9421 policy (``Scheme/rfc9421``).
    /// - Parameters:
    ///   - mode: disabled, informational or enforced.
    ///   - messageSignatures: the keys, required components and windows.
    public init(mode: Mode, messageSignatures: MessageSignaturePolicy) {
        self.init(mode: mode, roots: [])
        self.messageSignatures = messageSignatures
        scheme = .rfc9421
    }

    /// A migration policy (``Scheme/either``): v1 roots and an RFC 9421 key set, either
    /// accepted.
    /// - Parameters:
    ///   - mode: disabled, informational or enforced.
    ///   - roots: the v1 root keys.
    ///   - messageSignatures: the RFC 9421 policy.
    ///   - freshnessWindow: v1's; default 300 s.
    ///   - clockSkewAllowance: v1's; default 60 s.
    public init(
        migrating mode: Mode, roots: [SignedResponseRoot], messageSignatures: MessageSignaturePolicy,
        freshnessWindow: Duration = .seconds(300), clockSkewAllowance: Duration = .seconds(60)
    ) {
        self.init(mode: mode, roots: roots, freshnessWindow: freshnessWindow, clockSkewAllowance: clockSkewAllowance)
        self.messageSignatures = messageSignatures
        scheme = .either
    }

    /// RFC 9421 signatures by a key of `keys`, enforced, with the default profile.
    public static func enforced(keys: SigningKeySet) -> SignedResponsePolicy {
        SignedResponsePolicy(mode: .enforced, messageSignatures: MessageSignaturePolicy(keys: keys))
    }

    /// RFC 9421 signatures by a key of `keys`, informational, with the default profile.
    public static func informational(keys: SigningKeySet) -> SignedResponsePolicy {
        SignedResponsePolicy(mode: .informational, messageSignatures: MessageSignaturePolicy(keys: keys))
    }

    /// Whether the scheme's signature always covers `Content-Encoding` when a response has
    /// one, so the session may decode after verifying: RFC 9421 alone, with `content-encoding`
    /// in its required fields.
    public var coversContentEncoding: Bool {
        scheme == .rfc9421 && (messageSignatures?.requiredFieldsWhenPresent.contains("content-encoding") ?? false)
    }

    /// Responses that fail verification throw.
    public static func enforced(roots: [SignedResponseRoot]) -> SignedResponsePolicy {
        SignedResponsePolicy(mode: .enforced, roots: roots)
    }

    /// Responses that fail verification are returned marked failed, and reported to the hook.
    public static func informational(roots: [SignedResponseRoot]) -> SignedResponsePolicy {
        SignedResponsePolicy(mode: .informational, roots: roots)
    }

    /// No signature is asked for or checked.
    public static let disabled = SignedResponsePolicy(mode: .disabled, roots: [])
}
