
/// Whether and how a client checks signed responses from the hosts of one pattern.
///
/// Part of a host's ``HostPolicy`` (``HostPolicy/signedResponses``), or configured per host
/// pattern in ServerTrustHTTP's `Session.Configuration.signedResponses`:
///
/// ```swift
/// configuration.signedResponses = [
///     "api.example.com": .enforced(roots: [try SignedResponseRoot(base64: signedResponseRootKey)]),
///     "**.cdn.example.com": .informational(roots: [try SignedResponseRoot(base64: signedResponseRootKey)]),
/// ]
/// ```
///
/// For a matching host the session sends a fresh nonce and the request time with every request
/// (every redirect hop included) and verifies the response's `X-ServerTrust-Signature` with a
/// `ResponseSignatureVerifier`. The scheme, its byte layout and its limits are in
/// docs/SIGNED_RESPONSES.md.
public struct SignedResponsePolicy: Sendable {
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
    /// The trusted root keys with their header versions. Required unless `mode` is disabled.
    public var roots: [SignedResponseRoot]
    /// How old a request may be when its whole response has arrived; keep it above the
    /// request timeout. Default 300 s.
    public var freshnessWindow: Duration
    /// Tolerance for the wall clock stepping while a request is in flight and for intermediate
    /// expiry. Default 60 s.
    public var clockSkewAllowance: Duration

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
