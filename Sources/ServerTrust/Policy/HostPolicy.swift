public import Foundation
public import Logging

/// Everything ServerTrust decides per host, in one declaration: how the chain is validated and
/// against which anchors, its pins and revocation checking (each enforced or trialled), the TLS
/// floor and key exchange, Certificate Transparency, signed responses, the client identity and
/// where failure reports go.
///
/// The host's evaluator is compiled from this value once per manager entry
/// (``makeEvaluator(logger:)``), the policy file produces it (``TrustPolicyFile``), and a trust
/// update's floor compares two of them field by field with one rule, "at least as strict"
/// (``softenings(comparedWith:)``): a property added here is compared there, or the package does
/// not build. A ``ServerTrustManager`` files one per ``HostPattern`` and resolves a host once
/// (``ServerTrustManager/resolve(host:)``), so every client path reads every setting from the
/// same pattern.
///
/// ```swift
/// let manager = try ServerTrustManager(policies: [
///     try HostPattern("api.example.com"): HostPolicy(
///         pins: try PinSet([.init("sha256/…", label: "current"), .init("sha256/…", label: "backup")]),
///         revocation: RevocationOptions(methods: .ocsp),
///         mode: .init(pins: .enforced, revocation: .informational),
///         minimumTLSVersion: .tls13),
///     try HostPattern("**.cdn.example.com"): HostPolicy(),
/// ])
/// ```
///
/// An evaluator of your own goes in ``custom(_:minimumTLSVersion:clientIdentity:signedResponses:reportURIs:keyExchange:certificateTransparency:)``:
/// it replaces the declared chain checks, and a trust update's floor cannot see into it
/// (replacing it needs `TrustUpdateRules.Permissions.replaceCustomEvaluators`).
///
/// The host name is always checked against the leaf, except under a ``DisabledTrustEvaluator``.
public struct HostPolicy: Sendable {
    /// How the server's chain is established, weakest first.
    public enum Validation: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// Nothing is checked: an active ``DisabledTrustEvaluator`` (debugging only, in
        /// `HostPolicy.custom`; a declaration cannot say it).
        case disabled
        /// The pinned material is the only anchor: a chain needs a pinned certificate or key,
        /// not a path to a trusted root.
        case pinnedMaterialAsAnchors
        /// A path to the anchors, validated in full: the default.
        case anchors

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

        public var description: String {
            switch self {
            case .disabled: "no validation (disabled)"
            case .pinnedMaterialAsAnchors: "pinned material as the only anchors"
            case .anchors: "path validation to the anchors"
            }
        }
    }

    /// Whether each enforceable part — the pins, the revocation check — is enforced or only
    /// trialled (reported, never refused, beside enforced default validation): "pins enforced,
    /// revocation trialled" is a value, so nothing reads a policy as looser than it is.
    public struct Enforcement: Sendable, Hashable, CustomStringConvertible {
        /// How the pins are applied.
        public var pins: EnforcementMode
        /// How the revocation check is applied.
        public var revocation: EnforcementMode

        /// - Parameters:
        ///   - pins: default enforced.
        ///   - revocation: default enforced.
        public init(pins: EnforcementMode = .enforced, revocation: EnforcementMode = .enforced) {
            (self.pins, self.revocation) = (pins, revocation)
        }

        /// The same mode for every part (the policy file's host-level `mode`).
        public init(_ mode: EnforcementMode) { self.init(pins: mode, revocation: mode) }

        /// Everything enforced: the default.
        public static let enforced = Enforcement()
        /// Pins and revocation both trialled (the policy file's `"mode": "informational"`).
        public static let informational = Enforcement(.informational)

        public var description: String {
            pins == revocation ? pins.description : "pins \(pins), revocation \(revocation)"
        }
    }

    // Stored properties have no default values: `softenings(comparedWith:)` rebuilds a value
    // through the memberwise initializer, which therefore names every one of them.

    /// How the chain is validated. Default ``Validation/anchors``.
    public var validation: Validation
    /// The host's own anchors, or nil (the default) for the client's. Own anchors narrow who
    /// can vouch for the host.
    public var anchors: TrustAnchors?
    /// The host's pins, or nil for none (any certificate that validates).
    public var pins: PinSet?
    /// Revocation checking, or nil for none.
    public var revocation: RevocationOptions?
    /// The lowest TLS version a connection may negotiate. Default ``TLSProtocolVersion/tls12``;
    /// a connection that negotiated less is refused (`TrustError.Code.tlsVersionBelowPolicy`).
    public var minimumTLSVersion: TLSProtocolVersion
    /// The key exchange a connection must use: ``KeyExchangeRequirement/any`` (the default) or
    /// ``KeyExchangeRequirement/postQuantum``, which refuses a classical group
    /// (`TrustError.Code.keyExchangeBelowPolicy`) and is refused itself, when the manager is made,
    /// on an OpenSSL older than 3.5.
    public var keyExchange: KeyExchangeRequirement
    /// Whether the pins and the revocation check are each enforced or trialled.
    public var mode: Enforcement
    /// A pin set trialled beside the rest (reported, never refused), or nil.
    public var canary: PinSet?
    /// The signed responses the host's responses must carry, or nil (not checked).
    public var signedResponses: SignedResponsePolicy?
    /// Whether the host's certificates must be publicly logged, and whether a failure refuses or
    /// is only reported; nil (the default) for not checked. Checked after the chain is accepted,
    /// against the manager's log list. A `Session` counts SCTs from the certificate, the TLS
    /// extension and the OCSP staple; swift-nio-ssl's callback (ServerTrustNIO) sees the chain
    /// only, so there the embedded SCTs are all that count.
    public var certificateTransparency: CertificateTransparencyRequirement?
    /// The certificate and key presented when the host asks for one (mutual TLS); default none.
    public var clientIdentity: ClientIdentity?
    /// Where failure reports about the host go (`https:` only), when the client has a reporter;
    /// empty (the default) for the reporter's own URIs.
    public var reportURIs: [URL]
    /// An evaluator of your own, replacing the declared chain checks (``validation``,
    /// ``anchors``, ``pins``, ``revocation``, ``mode``, ``canary``, which must then stay at their
    /// defaults); nil (the default) for the declared ones. Opaque to a trust update's floor.
    public var custom: (any ServerTrustEvaluating)?

    /// - Parameters: each defaults to "not required": default validation against the client's
    ///   anchors, no pins, no revocation check, everything enforced, no canary, TLS 1.2, any key
    ///   exchange, no CT, no signed responses, no client identity, the reporter's URIs.
    public init(
        validation: Validation = .anchors, anchors: TrustAnchors? = nil, pins: PinSet? = nil, revocation: RevocationOptions? = nil,
        mode: Enforcement = .enforced, canary: PinSet? = nil, minimumTLSVersion: TLSProtocolVersion = .tls12,
        clientIdentity: ClientIdentity? = nil, signedResponses: SignedResponsePolicy? = nil, reportURIs: [URL] = [],
        keyExchange: KeyExchangeRequirement = .any, certificateTransparency: CertificateTransparencyRequirement? = nil
    ) {
        self.init(
            validation: validation, anchors: anchors, pins: pins, revocation: revocation, minimumTLSVersion: minimumTLSVersion,
            keyExchange: keyExchange, mode: mode, canary: canary, signedResponses: signedResponses,
            certificateTransparency: certificateTransparency, clientIdentity: clientIdentity, reportURIs: reportURIs, custom: nil)
    }

    /// Every property, as `softenings(comparedWith:)` rebuilds a value.
    init(
        validation: Validation, anchors: TrustAnchors?, pins: PinSet?, revocation: RevocationOptions?,
        minimumTLSVersion: TLSProtocolVersion, keyExchange: KeyExchangeRequirement, mode: Enforcement, canary: PinSet?,
        signedResponses: SignedResponsePolicy?, certificateTransparency: CertificateTransparencyRequirement?,
        clientIdentity: ClientIdentity?, reportURIs: [URL], custom: (any ServerTrustEvaluating)?
    ) {
        self.validation = validation
        self.anchors = anchors
        self.pins = pins
        self.revocation = revocation
        self.minimumTLSVersion = minimumTLSVersion
        self.keyExchange = keyExchange
        self.mode = mode
        self.canary = canary
        self.signedResponses = signedResponses
        self.certificateTransparency = certificateTransparency
        self.clientIdentity = clientIdentity
        self.reportURIs = reportURIs
        self.custom = custom
    }

    /// A host checked by an evaluator of your own (`custom`), with the host-level settings
    /// beside it.
    public static func custom(
        _ evaluator: any ServerTrustEvaluating, minimumTLSVersion: TLSProtocolVersion = .tls12, clientIdentity: ClientIdentity? = nil,
        signedResponses: SignedResponsePolicy? = nil, reportURIs: [URL] = [], keyExchange: KeyExchangeRequirement = .any,
        certificateTransparency: CertificateTransparencyRequirement? = nil
    ) -> HostPolicy {
        var policy = HostPolicy(
            minimumTLSVersion: minimumTLSVersion, clientIdentity: clientIdentity, signedResponses: signedResponses, reportURIs: reportURIs,
            keyExchange: keyExchange, certificateTransparency: certificateTransparency)
        policy.custom = evaluator
        return policy
    }

    /// Default validation only: the policy of a host no pattern matches when the manager allows
    /// unmatched hosts.
    public static var defaultValidation: HostPolicy { HostPolicy() }

    /// The host's evaluator, compiled from the declaration: default validation (against
    /// ``anchors`` when set) or the pins, then revocation; each trialled part inside one
    /// `.informational(…)` beside enforced default validation; a canary around the result. Or
    /// `custom`, as it is.
    ///
    /// - Parameter logger: where pin-set evaluators log expiry warnings.
    /// - Throws: `TrustError.Code.invalidConfiguration` for ``Validation/disabled`` (use a
    ///   ``DisabledTrustEvaluator`` in `custom`, with its explicit opt-in), for
    ///   ``Validation/pinnedMaterialAsAnchors`` without pins, for a trial with neither pins nor
    ///   revocation to trial, for a declared chain check beside `custom`, or what a pin set's
    ///   evaluator refuses.
    public func makeEvaluator(logger: Logger = TrustLogging.defaultLogger) throws(TrustError) -> any ServerTrustEvaluating {
        if let custom {
            let declared = [
                validation != .anchors ? "validation" : nil, anchors != nil ? "anchors" : nil, pins != nil ? "pins" : nil,
                revocation != nil ? "revocation" : nil, mode != .enforced ? "mode" : nil, canary != nil ? "canary" : nil,
            ].compactMap { $0 }
            guard declared.isEmpty else {
                throw TrustError(
                    .invalidConfiguration,
                    "The custom evaluator \(custom.name) replaces the declared chain checks, and this policy also declares "
                        + declared.joined(separator: ", ") + "; declare them, or check them in the custom evaluator.")
            }
            return custom
        }
        switch validation {
        case .disabled:
            throw TrustError(
                .invalidConfiguration, "A declared policy cannot disable validation; use .custom(DisabledTrustEvaluator(…)) with its explicit opt-in.")
        case .pinnedMaterialAsAnchors where pins == nil:
            throw TrustError(.invalidConfiguration, "Validation against pinned material needs pins.")
        case .pinnedMaterialAsAnchors, .anchors:
            break
        }
        if mode != .enforced, !(pins != nil && mode.pins == .informational), !(revocation != nil && mode.revocation == .informational) {
            throw TrustError(.invalidConfiguration, "Informational mode trials pins or revocation, and this policy has neither.")
        }
        do {
            return try Self.evaluator(
                pinning: try pins.map { try PinSetTrustEvaluator(pinSet: $0, performDefaultValidation: validation == .anchors, logger: logger) },
                revocation: revocation, mode: mode, canary: try canary.map { try PinSetTrustEvaluator(pinSet: $0, logger: logger) },
                anchors: anchors)
        } catch let error as TrustError {
            throw error
        } catch {
            throw TrustError(.invalidConfiguration, "The host's evaluator could not be made: \(error)")
        }
    }

    /// Whether a TLS client should ask the server for SCTs (the TLS extension, and with OpenSSL
    /// an OCSP staple): when the host requires Certificate Transparency or a custom evaluator
    /// reads SCTs.
    public var usesSignedCertificateTimestamps: Bool {
        certificateTransparency != nil || custom?.usesSignedCertificateTimestamps == true
    }

    /// The recipe: each trialled part inside one `.informational(…)` beside enforced default
    /// validation and the enforced parts, with the host's own anchors when given.
    private static func evaluator(
        pinning: (any ServerTrustEvaluating)?, revocation: RevocationOptions?, mode: Enforcement,
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

/// A host resolved to its policy: the host, the pattern that matched, the policy and its
/// compiled evaluator, once.
public struct ResolvedHostPolicy: Sendable {
    /// The host, normalised.
    public let host: NormalizedHost
    /// The manager's pattern that matched, or nil when none did and default validation applies
    /// (or a request named its own evaluator).
    public let pattern: HostPattern?
    /// The host's policy.
    public let policy: HostPolicy
    /// The evaluator compiled from ``policy`` (``HostPolicy/makeEvaluator(logger:)``).
    public let evaluator: any ServerTrustEvaluating
    /// The manager's deny-list, checked whatever ``policy`` says.
    public let denyList: KeyDenyList
    /// The manager's CT log list, which ``HostPolicy/certificateTransparency`` is checked
    /// against; nil when the manager has none.
    public let certificateTransparencyLogs: CertificateTransparencyLogs?

    /// A resolution outside a manager, compiling `policy`'s evaluator.
    ///
    /// - Parameters:
    ///   - host: the host.
    ///   - pattern: the pattern that matched, or nil.
    ///   - policy: the policy to apply.
    ///   - denyList: keys and certificates refused whatever the policy; default none.
    ///   - certificateTransparencyLogs: the CT log list; default none (a policy requiring CT then
    ///     fails every evaluation, closed).
    /// - Throws: what ``HostPolicy/makeEvaluator(logger:)`` throws.
    public init(
        host: NormalizedHost, pattern: HostPattern?, policy: HostPolicy, denyList: KeyDenyList = KeyDenyList(),
        certificateTransparencyLogs: CertificateTransparencyLogs? = nil
    ) throws(TrustError) {
        self.init(
            host: host, pattern: pattern, policy: policy, evaluator: try policy.makeEvaluator(), denyList: denyList,
            certificateTransparencyLogs: certificateTransparencyLogs)
    }

    /// A resolution with its evaluator compiled already (a manager's entry).
    package init(
        host: NormalizedHost, pattern: HostPattern?, policy: HostPolicy, evaluator: any ServerTrustEvaluating, denyList: KeyDenyList,
        certificateTransparencyLogs: CertificateTransparencyLogs?
    ) {
        self.host = host
        self.pattern = pattern
        self.policy = policy
        self.evaluator = evaluator
        self.denyList = denyList
        self.certificateTransparencyLogs = certificateTransparencyLogs
    }

    /// Default validation for `host`, no pattern: a host no pattern matches when that is allowed.
    package static func defaultValidation(
        for host: NormalizedHost, denyList: KeyDenyList = KeyDenyList(), certificateTransparencyLogs: CertificateTransparencyLogs? = nil
    ) -> ResolvedHostPolicy {
        ResolvedHostPolicy(
            host: host, pattern: nil, policy: .defaultValidation, evaluator: defaultEvaluator, denyList: denyList,
            certificateTransparencyLogs: certificateTransparencyLogs)
    }

    /// The evaluator of ``HostPolicy/defaultValidation``, made once.
    private static let defaultEvaluator: any ServerTrustEvaluating = DefaultTrustEvaluator()

    /// A resolution whose evaluator, when `policy` cannot be compiled, refuses every server with
    /// the reason it cannot: for callers that report rather than throw (an audit).
    static func failingClosed(host: NormalizedHost, pattern: HostPattern?, policy: HostPolicy) -> ResolvedHostPolicy {
        let evaluator: any ServerTrustEvaluating
        do {
            evaluator = try policy.makeEvaluator()
        } catch {
            evaluator = Uncompilable(error: error)
        }
        return ResolvedHostPolicy(
            host: host, pattern: pattern, policy: policy, evaluator: evaluator, denyList: KeyDenyList(), certificateTransparencyLogs: nil)
    }

    /// The evaluator of a policy that could not be compiled: it refuses with the reason.
    private struct Uncompilable: ServerTrustEvaluating {
        let error: TrustError
        func evaluate(_ trust: PeerTrust, forHost host: String) throws { throw error }
    }

    /// Whether a TLS client should ask the server for SCTs: when the host requires CT or its
    /// evaluator reads SCTs.
    public var usesSignedCertificateTimestamps: Bool {
        policy.certificateTransparency != nil || evaluator.usesSignedCertificateTimestamps
    }
}
