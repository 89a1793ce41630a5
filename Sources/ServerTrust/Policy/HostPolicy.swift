public import Foundation

/// Everything ServerTrust decides per host, in one value: the evaluator, the TLS floor, the
/// client identity, the signed-response policy and where failure reports go.
///
/// A ``ServerTrustManager`` holds one per host pattern, in one table, and resolves a host once
/// (``ServerTrustManager/resolve(host:)``); every client path — `Session` and the URLSession and
/// OpenAPI adapters over it, ServerTrustNIO and grpc-swift, the `servertrust` commands — then
/// reads the host's settings from that one resolution, so no setting can come from another
/// pattern than the evaluator's. A policy file (``TrustPolicyFile``) maps onto it one to one, and
/// a trust update replaces a host's whole policy at once.
///
/// ```swift
/// let manager = try ServerTrustManager(policies: [
///     "api.example.com": HostPolicy(
///         evaluator: .pinnedKeyHashes(["sha256/…", "sha256/…backup"]),
///         minimumTLSVersion: .tls13,
///         signedResponses: .enforced(roots: [try SignedResponseRoot(base64: rootKey)])),
///     "**.cdn.example.com": HostPolicy(evaluator: .default()),
/// ])
/// ```
///
/// New per-host settings (a trust-update source, RFC 9421 keys, Certificate Transparency) are
/// added here as properties with defaults, so existing code keeps compiling.
public struct HostPolicy: Sendable {
    /// The evaluator of the host's servers. The host itself is always checked against the leaf
    /// after it (``ServerTrustEvaluating/evaluateAsPolicy(_:forHost:)``).
    public var evaluator: any ServerTrustEvaluating
    /// The lowest TLS version a connection to the host may use. Default ``TLSProtocolVersion/tls12``,
    /// ServerTrust's floor for every connection; ``TLSProtocolVersion/tls13`` for "TLS 1.3 only".
    /// A connection that negotiated less is refused (`TrustError.Code.tlsVersionBelowPolicy`).
    public var minimumTLSVersion: TLSProtocolVersion
    /// The certificate and key presented when the host asks for one (mutual TLS); default none.
    public var clientIdentity: ClientIdentity?
    /// Whether the host's responses must be signed; default `nil`, not checked.
    public var signedResponses: SignedResponsePolicy?
    /// Where failure reports about the host go (`https:` only), when the client has a reporter
    /// (ServerTrustHTTP's `TrustFailureReporter`); empty (the default) for the reporter's own URIs.
    public var reportURIs: [URL]
    /// The key exchange a connection to the host must use: ``KeyExchangeRequirement/any`` (the
    /// default) or ``KeyExchangeRequirement/postQuantum``, which refuses a connection whose
    /// negotiated group is classical (`TrustError.Code.keyExchangeBelowPolicy`) and is refused
    /// itself, when the manager is made, on an OpenSSL older than 3.5.
    public var keyExchange: KeyExchangeRequirement
    /// Whether the host's certificates must be publicly logged (Certificate Transparency), and
    /// whether a failure refuses or is only reported; default `nil`, not checked. Checked after
    /// the evaluator has validated the chain, against the manager's log list
    /// (`ServerTrustManager(…, certificateTransparencyLogs:)`).
    ///
    /// What counts depends on what the transport sees: a `Session` (and the URLSession and
    /// OpenAPI adapters over it) asks the server for SCTs and passes the TLS extension's and the
    /// staple's; swift-nio-ssl's verification callback (ServerTrustNIO, grpc-swift) gets the chain
    /// only, so there the SCTs embedded in the certificate are all that count.
    public var certificateTransparency: CertificateTransparencyRequirement?

    /// - Parameters:
    ///   - evaluator: the host's evaluator.
    ///   - minimumTLSVersion: default TLS 1.2.
    ///   - clientIdentity: default none.
    ///   - signedResponses: default `nil` (responses not checked).
    ///   - reportURIs: default none (the reporter's own URIs).
    ///   - keyExchange: default ``KeyExchangeRequirement/any``.
    ///   - certificateTransparency: default `nil`, not checked.
    public init(
        evaluator: any ServerTrustEvaluating, minimumTLSVersion: TLSProtocolVersion = .tls12, clientIdentity: ClientIdentity? = nil,
        signedResponses: SignedResponsePolicy? = nil, reportURIs: [URL] = [], keyExchange: KeyExchangeRequirement = .any,
        certificateTransparency: CertificateTransparencyRequirement? = nil
    ) {
        self.evaluator = evaluator
        self.minimumTLSVersion = minimumTLSVersion
        self.clientIdentity = clientIdentity
        self.signedResponses = signedResponses
        self.reportURIs = reportURIs
        self.keyExchange = keyExchange
        self.certificateTransparency = certificateTransparency
    }

    /// Whether a TLS client should ask the server for SCTs (the TLS extension, and with OpenSSL
    /// an OCSP staple): when the host requires Certificate Transparency or its evaluator reads SCTs.
    public var usesSignedCertificateTimestamps: Bool {
        certificateTransparency != nil || evaluator.usesSignedCertificateTimestamps
    }

    /// Default validation only: the policy of a host no pattern matches when the manager allows
    /// unmatched hosts.
    public static var defaultValidation: HostPolicy { HostPolicy(evaluator: DefaultTrustEvaluator()) }
}

/// A host resolved to its policy: the host, the pattern that matched and the policy, once.
public struct ResolvedHostPolicy: Sendable {
    /// The host, normalised.
    public let host: NormalizedHost
    /// The manager's pattern that matched, or nil when none did and default validation applies
    /// (or a request named its own evaluator).
    public let pattern: HostPattern?
    /// The host's policy.
    public let policy: HostPolicy
    /// The manager's deny-list, checked whatever ``policy`` says.
    public let denyList: KeyDenyList
    /// The manager's CT log list, which ``HostPolicy/certificateTransparency`` is checked
    /// against; nil when the manager has none.
    public let certificateTransparencyLogs: CertificateTransparencyLogs?

    /// - Parameters:
    ///   - host: the host.
    ///   - pattern: the pattern that matched, or nil.
    ///   - policy: the policy to apply.
    ///   - denyList: keys and certificates refused whatever the policy; default none.
    ///   - certificateTransparencyLogs: the CT log list; default none (a policy requiring CT then
    ///     fails every evaluation, closed).
    public init(
        host: NormalizedHost, pattern: HostPattern?, policy: HostPolicy, denyList: KeyDenyList = KeyDenyList(),
        certificateTransparencyLogs: CertificateTransparencyLogs? = nil
    ) {
        self.host = host
        self.pattern = pattern
        self.policy = policy
        self.denyList = denyList
        self.certificateTransparencyLogs = certificateTransparencyLogs
    }

    /// The host's evaluator.
    public var evaluator: any ServerTrustEvaluating { policy.evaluator }
}

extension HostPolicy {
    /// The evaluator a host gets from its pins, revocation checking, enforcement mode and
    /// canary: the one recipe the policy file (``TrustPolicyFile``), `servertrust fetch` and your
    /// own configuration code share, so a host configured any of these ways is evaluated the same.
    ///
    /// Pins (or default validation when there are none), then a ``RevocationTrustEvaluator``
    /// with `revocation`; in ``EnforcementMode/informational`` mode all of that is trialled
    /// beside enforced default validation (`.composite([.default(), .informational(…)])`); a
    /// `canary` wraps the result in a ``CanaryTrustEvaluator``.
    ///
    /// - Parameters:
    ///   - pinning: the pinning evaluator (``PinSetTrustEvaluator``, ``PinnedKeyHashesTrustEvaluator``…),
    ///     or nil for default validation.
    ///   - revocation: revocation options, or nil for no revocation check.
    ///   - mode: enforced (the default) or informational.
    ///   - canary: an evaluator trialled beside the result, or nil.
    /// - Throws: what ``CompositeTrustEvaluator/init(_:)`` throws.
    public static func evaluator(
        pinning: (any ServerTrustEvaluating)?, revocation: RevocationOptions? = nil, mode: EnforcementMode = .enforced,
        canary: (any ServerTrustEvaluating)? = nil
    ) throws -> any ServerTrustEvaluating {
        try evaluator(pinning: pinning, revocation: revocation, mode: HostRequirements.Enforcement(mode), canary: canary, anchors: nil)
    }

    /// The recipe, each part enforced or trialled on its own (``HostRequirements/Enforcement``),
    /// with the host's own anchors (``HostRequirements/anchors``) for default validation and
    /// revocation when given. Every trialled part runs inside one `.informational(…)` beside
    /// enforced default validation and the enforced parts.
    static func evaluator(
        pinning: (any ServerTrustEvaluating)?, revocation: RevocationOptions?, mode: HostRequirements.Enforcement,
        canary: (any ServerTrustEvaluating)?, anchors: TrustAnchors?
    ) throws -> any ServerTrustEvaluating {
        let revocation = revocation.map { RevocationTrustEvaluator(options: $0, anchors: anchors) as any ServerTrustEvaluating }
        let trialsPins = pinning != nil && mode.pins == .informational
        let trialsRevocation = revocation != nil && mode.revocation == .informational
        var evaluator: any ServerTrustEvaluating
        if (trialsPins || pinning == nil) && (trialsRevocation || revocation == nil) && (trialsPins || trialsRevocation) {
            // All of it trialled: the checks as enforced, inside one trial beside enforced
            // default validation.
            let trial = try checks(default: anchors != nil || pinning == nil, anchors: anchors, [pinning, revocation])
            evaluator = try CompositeTrustEvaluator([DefaultTrustEvaluator(anchors: anchors), InformationalTrustEvaluator(trial)])
        } else if trialsPins || trialsRevocation {
            // Some enforced, some trialled: default validation is enforced unless enforced pins
            // carry it, and only the trialled part is report-only.
            var parts = [trialsPins ? nil : pinning, trialsRevocation ? nil : revocation]
            parts.append(InformationalTrustEvaluator(trialsPins ? pinning! : revocation!))
            evaluator = try checks(default: anchors != nil || trialsPins, anchors: anchors, parts)
        } else {
            evaluator = try checks(default: anchors != nil || pinning == nil, anchors: anchors, [pinning, revocation])
        }
        if let canary { evaluator = CanaryTrustEvaluator(enforced: evaluator, trial: canary) }
        return evaluator
    }

    /// Default validation when `default`, then `parts`: one evaluator, or their composite.
    private static func checks(
        default: Bool, anchors: TrustAnchors?, _ parts: [(any ServerTrustEvaluating)?]
    ) throws -> any ServerTrustEvaluating {
        let base: [any ServerTrustEvaluating] = `default` ? [DefaultTrustEvaluator(anchors: anchors)] : []
        let checks = base + parts.compactMap { $0 }
        return checks.count == 1 ? checks[0] : try CompositeTrustEvaluator(checks)
    }
}
