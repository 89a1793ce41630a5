public import Foundation
public import Logging

/// What a host requires of its servers, as data: how the chain is validated and against which
/// anchors, its pins, revocation checking, the TLS floor and key exchange, whether all of that is
/// enforced or only reported, and the signed responses it expects.
///
/// A ``HostPolicy``'s evaluator is built from this description
/// (``HostPolicy/init(requirements:clientIdentity:reportURIs:logger:)``, which a policy file
/// uses for every host), and every policy built from ServerTrust's own evaluators can be
/// described by it (``HostPolicy/requirements``). Two descriptions compare field by field with
/// one rule, "at least as strict" (``softenings(comparedWith:)``): what a trust update may
/// change over the compiled-in floor is decided there, so a requirement added to this type is
/// compared, or the package does not build.
///
/// The host name is always checked against the leaf, whatever the requirements say, except
/// under ``Validation/disabled``.
public struct HostRequirements: Sendable {
    /// How the server's chain is established, weakest first.
    public enum Validation: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// Nothing is checked: an active ``DisabledTrustEvaluator`` (debugging only).
        case disabled
        /// The pinned material is the only anchor (`performDefaultValidation: false`): a chain
        /// needs a pinned certificate or key, not a path to a trusted root.
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

    // Stored properties have no default values: `softenings(comparedWith:)` rebuilds a value
    // through the memberwise initializer, which therefore names every one of them.

    /// How the chain is validated. Default ``Validation/anchors``.
    public var validation: Validation
    /// The host's own anchors, or nil (the default) for the client's (the session's, or the
    /// trust's). Own anchors narrow who can vouch for the host.
    public var anchors: TrustAnchors?
    /// The host's pins, or nil for none (any certificate that validates).
    public var pins: PinSet?
    /// Revocation checking, or nil for none.
    public var revocation: RevocationOptions?
    /// The lowest TLS version a connection may negotiate.
    public var minimumTLSVersion: TLSProtocolVersion
    /// The key exchange a connection must use.
    public var keyExchange: KeyExchangeRequirement
    /// Whether the pins and the revocation check are each enforced or trialled (reported,
    /// never refused, beside enforced default validation). Default ``Enforcement/enforced``.
    public var mode: Enforcement
    /// A pin set trialled beside the rest (reported, never refused), or nil.
    public var canary: PinSet?
    /// The signed responses the host's responses must carry, or nil.
    public var signedResponses: SignedResponsePolicy?
    /// The host's Certificate Transparency requirement, or nil for none.
    public var certificateTransparency: CertificateTransparencyRequirement?

    /// - Parameters:
    ///   - validation: default ``Validation/anchors``.
    ///   - anchors: default nil, the client's anchors.
    ///   - pins: default none.
    ///   - revocation: default none.
    ///   - minimumTLSVersion: default TLS 1.2.
    ///   - keyExchange: default ``KeyExchangeRequirement/any``.
    ///   - mode: default enforced.
    ///   - canary: default none.
    ///   - signedResponses: default none.
    ///   - certificateTransparency: default none.
    public init(
        validation: Validation = .anchors, anchors: TrustAnchors? = nil, pins: PinSet? = nil, revocation: RevocationOptions? = nil,
        minimumTLSVersion: TLSProtocolVersion = .tls12, keyExchange: KeyExchangeRequirement = .any, mode: Enforcement = .enforced,
        canary: PinSet? = nil, signedResponses: SignedResponsePolicy? = nil, certificateTransparency: CertificateTransparencyRequirement? = nil
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
    }

    /// The evaluator these requirements make: default validation (against ``anchors`` when
    /// set) or pins, then revocation; in informational mode all of that trialled beside
    /// enforced default validation; a canary around the result.
    ///
    /// - Throws: `TrustError.Code.invalidConfiguration` for ``Validation/disabled`` (make a
    ///   ``DisabledTrustEvaluator`` yourself: it needs its explicit opt-in), for
    ///   ``Validation/pinnedMaterialAsAnchors`` without pins, or for informational mode with
    ///   neither pins nor revocation to trial.
    public func makeEvaluator(logger: Logger = TrustLogging.defaultLogger) throws -> any ServerTrustEvaluating {
        switch validation {
        case .disabled:
            throw TrustError(
                .invalidConfiguration, "Requirements cannot disable validation; use DisabledTrustEvaluator with its explicit opt-in.")
        case .pinnedMaterialAsAnchors where pins == nil:
            throw TrustError(.invalidConfiguration, "Validation against pinned material needs pins.")
        case .pinnedMaterialAsAnchors, .anchors:
            break
        }
        if mode != .enforced, !(pins != nil && mode.pins == .informational), !(revocation != nil && mode.revocation == .informational) {
            throw TrustError(.invalidConfiguration, "Informational mode trials pins or revocation, and these requirements have neither.")
        }
        return try HostPolicy.evaluator(
            pinning: try pins.map { try PinSetTrustEvaluator(pinSet: $0, performDefaultValidation: validation == .anchors, logger: logger) },
            revocation: revocation, mode: mode, canary: try canary.map { try PinSetTrustEvaluator(pinSet: $0, logger: logger) }, anchors: anchors)
    }

    /// Whether each enforceable part of a host's requirements — its pins, its revocation check —
    /// is enforced or only trialled: "pins enforced, revocation trialled" is a value, so a
    /// description is never looser than the evaluator it describes (fifth review, finding 1).
    public struct Enforcement: Sendable, Hashable, CustomStringConvertible {
        /// How the pins are applied: ``EnforcementMode/enforced`` or ``EnforcementMode/informational``.
        public var pins: EnforcementMode
        /// How the revocation check is applied: ``EnforcementMode/enforced`` or ``EnforcementMode/informational``.
        public var revocation: EnforcementMode

        /// - Parameters:
        ///   - pins: default enforced.
        ///   - revocation: default enforced.
        public init(pins: EnforcementMode = .enforced, revocation: EnforcementMode = .enforced) {
            (self.pins, self.revocation) = (pins, revocation)
        }

        /// Everything enforced: the default.
        public static let enforced = Enforcement()
        /// Pins and revocation both trialled beside enforced default validation (the policy
        /// file's `"mode": "informational"`).
        public static let informational = Enforcement(pins: .informational, revocation: .informational)

        /// The same mode for every part (the policy file's host-level `mode`).
        public init(_ mode: EnforcementMode) { self.init(pins: mode, revocation: mode) }

        public var description: String {
            pins == revocation ? pins.description : "pins \(pins), revocation \(revocation)"
        }
    }
}

extension HostPolicy {
    /// A policy whose evaluator is built from `requirements`
    /// (``HostRequirements/makeEvaluator(logger:)``).
    ///
    /// - Parameters:
    ///   - requirements: what the host requires.
    ///   - clientIdentity: default none.
    ///   - reportURIs: default none (the reporter's own URIs).
    ///   - logger: where pin-set evaluators log expiry warnings.
    /// - Throws: what ``HostRequirements/makeEvaluator(logger:)`` throws.
    public init(
        requirements: HostRequirements, clientIdentity: ClientIdentity? = nil, reportURIs: [URL] = [],
        logger: Logger = TrustLogging.defaultLogger
    ) throws {
        self.init(
            evaluator: try requirements.makeEvaluator(logger: logger), minimumTLSVersion: requirements.minimumTLSVersion,
            clientIdentity: clientIdentity, signedResponses: requirements.signedResponses, reportURIs: reportURIs,
            keyExchange: requirements.keyExchange, certificateTransparency: requirements.certificateTransparency)
    }

    /// What this policy requires, described from its evaluator and settings; nil when the
    /// evaluator is one ServerTrust cannot describe (a custom evaluator, or a composite of two
    /// pinning or two revocation evaluators), which a comparison must then treat as opaque.
    public var requirements: HostRequirements? {
        var described = HostRequirements(
            minimumTLSVersion: minimumTLSVersion, keyExchange: keyExchange, signedResponses: signedResponses,
            certificateTransparency: certificateTransparency)
        guard described.describe(evaluator, trialOnly: false) else { return nil }
        // An absent part has no enforcement of its own: it follows the present one's, so a
        // trial of pins alone reads `.informational`, as the policy file writes it.
        if described.pins == nil { described.mode.pins = described.mode.revocation }
        if described.revocation == nil { described.mode.revocation = described.mode.pins }
        return described
    }
}

extension HostRequirements {
    /// Adds what `evaluator` checks; false when it (or a part of it) cannot be described.
    mutating func describe(_ evaluator: any ServerTrustEvaluating, trialOnly: Bool) -> Bool {
        switch evaluator {
        case let composite as CompositeTrustEvaluator:
            return composite.evaluators.allSatisfy { describe($0, trialOnly: trialOnly) }
        case let informational as InformationalTrustEvaluator:
            // Only what the trial wraps is trialled: the parts described beside it keep their
            // own enforcement, so `.composite([pins, .informational(revocation)])` is
            // "pins enforced, revocation trialled", never report-only as a whole.
            return describe(informational.evaluator, trialOnly: true)
        case let canary as CanaryTrustEvaluator:
            guard describe(canary.enforced, trialOnly: trialOnly) else { return false }
            // A trial refuses nothing: a canary that is not a pin set is only not described.
            self.canary = (canary.trial as? PinSetTrustEvaluator)?.pinSet
            return true
        case let defaultValidation as DefaultTrustEvaluator:
            return adopt(anchors: defaultValidation.anchors)
        case let disabled as DisabledTrustEvaluator:
            guard disabled.isActive else { return false }
            validation = .disabled
            return true
        case let pinSet as PinSetTrustEvaluator:
            return adopt(pins: pinSet.pinSet, core: pinSet.core, trialOnly: trialOnly)
        case let pinned as PinnedKeyHashesTrustEvaluator:
            return adopt(pins: nil, core: pinned.core, trialOnly: trialOnly)
        case let pinned as PublicKeysTrustEvaluator:
            return adopt(pins: nil, core: pinned.core, trialOnly: trialOnly)
        case let pinned as PinnedCertificatesTrustEvaluator:
            return adopt(pins: nil, core: pinned.core, trialOnly: trialOnly)
        case let revocation as RevocationTrustEvaluator:
            guard self.revocation == nil else { return false }
            self.revocation = revocation.options
            mode.revocation = trialOnly ? .informational : .enforced
            return adopt(anchors: revocation.anchors)
        default:
            return false
        }
    }

    private mutating func adopt(anchors: TrustAnchors?) -> Bool {
        guard let anchors else { return true }
        if let own = self.anchors { return own === anchors }
        self.anchors = anchors
        return true
    }

    private mutating func adopt(pins set: PinSet?, core: PinningCore, trialOnly: Bool) -> Bool {
        guard pins == nil else { return false }
        guard let set = set ?? (try? PinSet(core.configuredPins.map { PinSet.Entry($0, label: "") }, minimumPinCount: 1)) else { return false }
        pins = set
        mode.pins = trialOnly ? .informational : .enforced
        // A trial validates nothing that counts: only enforced pins without default validation
        // make the pinned material the anchors (a trial's view would describe the enforced
        // default validation beside it as weaker than it is).
        if !core.performDefaultValidation, !trialOnly { validation = min(validation, .pinnedMaterialAsAnchors) }
        return true
    }
}
