import Foundation
@testable import ServerTrust
import ServerTrustLab
import Testing

/// A host's declaration (``HostPolicy``), the evaluator compiled from it, and the one "at least
/// as strict" comparison a trust update's floor check rests on (fourth review, finding 1; fifth
/// review, finding 1).
@Suite struct HostPolicyComparisonTests {
    static let pinA = "sha256/" + Data(repeating: 1, count: 32).base64EncodedString()
    static let pinB = "sha256/" + Data(repeating: 2, count: 32).base64EncodedString()

    static func pins() throws -> PinSet {
        try PinSet([PinSet.Entry(pinA, label: "current"), PinSet.Entry(pinB, label: "backup")])
    }

    /// The floor of the review's reproduction: pins, and OCSP with a positive answer over the
    /// whole chain, fetched when not stapled.
    static func floor() throws -> HostPolicy {
        HostPolicy(
            pins: try pins(), revocation: RevocationOptions(methods: .ocsp, requirePositiveResponse: true, scope: .wholeChain),
            minimumTLSVersion: .tls13)
    }

    // MARK: Completeness

    /// Every stored property of HostPolicy is a field the comparison names, but the two that
    /// decide no verdict (the memberwise initializer in the comparison fails the build for a new
    /// one; this names it).
    @Test func everyStoredPropertyIsAComparedField() {
        let labels = Mirror(reflecting: HostPolicy()).children.compactMap(\.label)
        #expect(labels.filter { !["clientIdentity", "reportURIs"].contains($0) } == HostPolicy.Softening.Field.allCases.map(\.rawValue))
    }

    @Test func everyRevocationOptionIsCompared() {
        let labels = Set(Mirror(reflecting: RevocationOptions()).children.compactMap(\.label))
        #expect(labels == RevocationOptions.comparedFields)
    }

    @Test func everySignedResponseSettingIsCompared() throws {
        let keys = SigningKeySet.jwksDocument([("k1", try SignaturePrivateKey.generate(.ed25519).publicKey)])
        let policy = SignedResponsePolicy.enforced(keys: try SigningKeySet(jwks: Array(keys.utf8)))
        #expect(Set(Mirror(reflecting: policy).children.compactMap(\.label)) == SignedResponsePolicy.comparedFields)
        let messageSignatures = try #require(policy.messageSignatures)
        #expect(Set(Mirror(reflecting: messageSignatures).children.compactMap(\.label)) == SignedResponsePolicy.comparedMessageSignatureFields)
    }

    // MARK: The rule

    /// Each way of checking revocation less strictly names itself, under the revocation field.
    @Test(arguments: [
        ("dropped", "has no revocation checking, where the floor checks ocsp, wholeChain, hard-fail, network"),
        ("softFail", "accepts an unknown status (soft-fail)"),
        ("leafOnly", "checks the leaf only, not the whole chain"),
        ("noNetwork", "never fetches (staples and local CRLs only)"),
        ("crl", "checks by crl only, not ocsp"),
        ("skew", "allows 3600 s of clock skew, not 300 s"),
        ("age", "accepts answers up to 2592000 s old"),
        ("shortLived", "skips leaves valid for 10 days or less, not 7"),
    ])
    func eachWeakerRevocationIsASoftening(change: String, reason: String) throws {
        var delivered = try Self.floor()
        switch change {
        case "dropped": delivered.revocation = nil
        case "softFail": delivered.revocation?.requirePositiveResponse = false
        case "leafOnly": delivered.revocation?.scope = .leafOnly
        case "noNetwork": delivered.revocation?.networkAccessDisabled = true
        case "crl": delivered.revocation?.methods = .crl
        case "skew": delivered.revocation?.clockSkew = 3_600
        case "age": delivered.revocation?.maximumResponseAge = 30 * 86_400
        default: delivered.revocation?.shortLivedCertificateValidity = 10 * 86_400
        }
        let found = delivered.softenings(comparedWith: try Self.floor())
        #expect(found.map(\.field) == [.revocation], "\(found)")
        #expect(found.first?.reason.contains(reason) == true, "\(found)")
    }

    /// Checking more (another method too, a nonce, every leaf, hard-fail where the floor is
    /// soft) or budgeting differently is not a softening, and neither is a revocation check the
    /// floor does not have.
    @Test func strongerOrOperationalRevocationChangesAreNotSoftenings() throws {
        var delivered = try Self.floor()
        delivered.revocation?.ocspNonce = true
        delivered.revocation?.shortLivedCertificateValidity = nil
        delivered.revocation?.timeBudget = .seconds(1)
        delivered.revocation?.maximumResponseSize = 1024
        #expect(delivered.softenings(comparedWith: try Self.floor()).isEmpty)
        var floorWithout = try Self.floor()
        floorWithout.revocation = nil
        #expect(try Self.floor().softenings(comparedWith: floorWithout).isEmpty)
    }

    @Test func theOtherFieldsSoftenByTheSameRule() throws {
        let floor = try Self.floor()
        var delivered = floor
        delivered.pins = nil
        delivered.minimumTLSVersion = .tls12
        delivered.mode = .informational
        let found = delivered.softenings(comparedWith: floor)
        #expect(found.map(\.field) == [.pins, .minimumTLSVersion, .mode], "\(found)")
        #expect(found.map(\.reason) == [
            "gets default validation only, where the floor pins",
            "accepts TLS 1.2, where the floor requires TLS 1.3",
            "is put in report-only (informational) mode, where the floor enforces",
        ])
    }

    /// Dropping a post-quantum key-exchange requirement is a softening of its own field.
    @Test func droppingPostQuantumKeyExchangeIsASoftening() {
        let found = HostPolicy().softenings(comparedWith: HostPolicy(keyExchange: .postQuantum))
        #expect(found.map(\.field) == [.keyExchange])
        #expect(found.map(\.reason) == ["accepts any key exchange, where the floor requires postQuantum"])
        #expect(HostPolicy(keyExchange: .postQuantum).softenings(comparedWith: HostPolicy()).isEmpty)
    }

    /// A floor with its own anchors: the client's anchors, or anchors it does not list, widen
    /// who can vouch for the host; a subset of its anchors does not.
    @Test func wideningTheAnchorsIsASoftening() throws {
        let pki = try LabPKI.makeRoot(commonName: "Floor Root")
        let other = try LabPKI.makeRoot(commonName: "Other Root")
        let floor = HostPolicy(anchors: try pki.trustAnchors())
        #expect(HostPolicy().softenings(comparedWith: floor).map(\.field) == [.anchors])
        #expect(HostPolicy(anchors: try other.trustAnchors()).softenings(comparedWith: floor).map(\.field) == [.anchors])
        #expect(HostPolicy(anchors: try pki.trustAnchors()).softenings(comparedWith: floor).isEmpty)
    }

    @Test func pinsThatFallBackToDefaultValidationSoftenPinnedFloors() throws {
        var delivered = try Self.floor()
        delivered.pins = try PinSet(
            try Self.pins().entries, expiration: Date(timeIntervalSinceNow: 86_400), expiryBehaviour: .fallBackToDefaultValidation)
        #expect(delivered.softenings(comparedWith: try Self.floor()).map(\.field) == [.pins])
    }

    @Test func widerSignedResponseWindowsAreSoftenings() throws {
        let root = try SignedResponseRoot(base64: "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=")
        let floor = HostPolicy(signedResponses: .enforced(roots: [root]))
        var delivered = floor
        delivered.signedResponses?.freshnessWindow = .seconds(3_600)
        let found = delivered.softenings(comparedWith: floor)
        #expect(found.map(\.field) == [.signedResponses])
        #expect(found.first?.reason.contains("a v1 freshness window of 3600.0 seconds, not 300.0 seconds") == true, "\(found)")
        delivered.signedResponses = .informational(roots: [root])
        #expect(delivered.softenings(comparedWith: floor).map(\.reason) == ["does not enforce signed responses, where the floor does"])
    }

    // MARK: Compilation

    /// The evaluator tree, by kind: what a declaration compiles to.
    static func shape(_ evaluator: any ServerTrustEvaluating) -> String {
        switch evaluator {
        case let composite as CompositeTrustEvaluator: "Composite[" + composite.evaluators.map(shape).joined(separator: ", ") + "]"
        case let trial as InformationalTrustEvaluator: "Informational(\(shape(trial.evaluator)))"
        case let canary as CanaryTrustEvaluator: "Canary(\(shape(canary.enforced)), \(shape(canary.trial)))"
        case let pins as PinSetTrustEvaluator: pins.core.performDefaultValidation ? "PinSet" : "PinSet(as anchors)"
        case is DefaultTrustEvaluator: "Default"
        case is RevocationTrustEvaluator: "Revocation"
        default: evaluator.name
        }
    }

    /// Each declaration compiles to the evaluator it says: only what a part's enforcement trials
    /// runs inside a trial (fifth review, finding 1: "pins enforced, revocation trialled" is the
    /// value `mode`, and `.composite([pinSet, .informational(revocation)])` is what it compiles to).
    @Test(arguments: [
        ("default", "Default"),
        ("floor", "Composite[PinSet, Revocation]"),
        ("pinsTrialled", "Composite[Default, Informational(PinSet)]"),
        ("revocationTrialledWithCanary", "Canary(Composite[Default, Informational(Composite[Default, Revocation])], PinSet)"),
        ("pinnedMaterial", "Composite[PinSet(as anchors), Revocation]"),
        ("pinsEnforcedRevocationTrialled", "Composite[PinSet, Informational(Revocation)]"),
        ("pinsTrialledRevocationEnforced", "Composite[Default, Revocation, Informational(PinSet)]"),
    ])
    func aDeclarationCompilesToTheEvaluatorItSays(name: String, shape: String) throws {
        let policy: HostPolicy = switch name {
        case "default": HostPolicy()
        case "floor": try Self.floor()
        case "pinsTrialled": HostPolicy(pins: try Self.pins(), mode: .informational)
        case "revocationTrialledWithCanary": HostPolicy(revocation: .hardFail, mode: .informational, canary: try Self.pins())
        case "pinnedMaterial": HostPolicy(validation: .pinnedMaterialAsAnchors, pins: try Self.pins(), revocation: .softFail)
        case "pinsEnforcedRevocationTrialled":
            HostPolicy(pins: try Self.pins(), revocation: .hardFail, mode: .init(pins: .enforced, revocation: .informational))
        default: HostPolicy(pins: try Self.pins(), revocation: .hardFail, mode: .init(pins: .informational, revocation: .enforced))
        }
        #expect(Self.shape(try policy.makeEvaluator()) == shape)
    }

    /// Trialling one part softens a floor that enforces it, in the mode field, naming the part.
    @Test func triallingOnePartSoftensAFloorThatEnforcesIt() throws {
        let trialledPins = HostPolicy(pins: try Self.pins(), revocation: .hardFail, mode: .init(pins: .informational, revocation: .enforced))
        let found = trialledPins.softenings(comparedWith: HostPolicy(pins: try Self.pins(), revocation: .hardFail))
        #expect(found.map(\.field) == [.mode])
        #expect(found.map(\.reason) == ["only trials its pins (report-only), where the floor enforces them"])
    }

    struct CustomEvaluator: ServerTrustEvaluating {
        func evaluate(_ trust: PeerTrust, forHost host: String) throws {}
    }

    /// A custom evaluator cannot be compared: replacing a floor's, or bringing one over a
    /// declared floor, is a softening of its own field; the floor's own evaluator is not.
    @Test func aCustomEvaluatorIsOpaqueToTheComparison() throws {
        let custom = HostPolicy.custom(try PinnedKeyHashesTrustEvaluator([Self.pinA]))
        let replaced = try Self.floor().softenings(comparedWith: custom)
        #expect(replaced.map(\.field) == [.custom])
        #expect(replaced.map(\.reason) == ["replaces the floor's custom evaluator PinnedKeyHashesTrustEvaluator, which cannot be compared"])
        #expect(custom.softenings(comparedWith: HostPolicy()).map(\.field) == [.custom])
        #expect(custom.softenings(comparedWith: custom).isEmpty)
    }

    @Test func policiesThatCannotMakeAnEvaluatorSaySo() throws {
        #expect(throws: TrustError.invalidConfiguration) { try HostPolicy(validation: .disabled).makeEvaluator() }
        #expect(throws: TrustError.invalidConfiguration) { try HostPolicy(validation: .pinnedMaterialAsAnchors).makeEvaluator() }
        #expect(throws: TrustError.invalidConfiguration) { try HostPolicy(mode: .informational).makeEvaluator() }
        var both = HostPolicy.custom(CustomEvaluator())
        both.pins = try Self.pins()
        let error = #expect(throws: TrustError.invalidConfiguration) { try both.makeEvaluator() }
        #expect(error?.reason.contains("replaces the declared chain checks, and this policy also declares pins") == true)
    }

    // MARK: Which patterns a pattern takes hosts from

    @Test(arguments: [
        ("api.example.com", "**.example.com", true),
        ("api.example.com", "*.example.com", true),
        ("api.example.com", "api.example.com", true),
        ("api.example.com", "www.example.com", false),
        ("*.example.com", "api.example.com", false),
        ("*.example.com", "**.example.com", true),
        ("**.example.com", "*.example.com", false),
        ("*.example.com", "*.example.com", true),
        ("*.api.example.com", "**.example.com", true),
        ("*.api.example.com", "*.example.com", false),
        ("**.api.example.com", "*.example.com", true),
        ("**.api.example.com", "**.example.com", true),
        ("**.example.com", "**.api.example.com", false),
        ("**.a.b.example.com", "*.example.com", false),
        ("**.example.org", "**.example.com", false),
        ("192.0.2.1", "192.0.2.1", true),
        ("192.0.2.1", "**.example.com", false),
    ])
    func aPatternTakesHostsFromThePatternsItOutranks(pattern: String, other: String, takes: Bool) throws {
        #expect(try HostPattern(pattern).takesHosts(from: HostPattern(other)) == takes)
        // The rule agrees with the manager's lookup for a host both patterns match.
        guard pattern != other else { return }
        let manager = try ServerTrustManager(evaluators: [try HostPattern(pattern): DefaultTrustEvaluator(), try HostPattern(other): DefaultTrustEvaluator()])
        for host in ["api.example.com", "x.api.example.com", "example.com", "x.a.b.example.com", "192.0.2.1"]
        where try HostPattern(pattern).matches(host) && HostPattern(other).matches(host) {
            #expect(try (manager.resolve(host: host).pattern == HostPattern(pattern)) == takes, "\(host)")
        }
    }
}
