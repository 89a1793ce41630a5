import Foundation
@testable import ServerTrust
import ServerTrustLab
import Testing

/// The declarative description of a host's requirements, the evaluators built from it, and the
/// one "at least as strict" comparison a trust update's floor check rests on (fourth review,
/// finding 1).
@Suite struct HostRequirementsTests {
    static let pinA = "sha256/" + Data(repeating: 1, count: 32).base64EncodedString()
    static let pinB = "sha256/" + Data(repeating: 2, count: 32).base64EncodedString()

    static func pins() throws -> PinSet {
        try PinSet([PinSet.Entry(pinA, label: "current"), PinSet.Entry(pinB, label: "backup")])
    }

    /// The floor of the review's reproduction: pins, and OCSP with a positive answer over the
    /// whole chain, fetched when not stapled.
    static func floor() throws -> HostRequirements {
        HostRequirements(
            pins: try pins(), revocation: RevocationOptions(methods: .ocsp, requirePositiveResponse: true, scope: .wholeChain),
            minimumTLSVersion: .tls13)
    }

    // MARK: Completeness

    /// Every stored property of HostRequirements is a field the comparison names (the
    /// memberwise initializer in the comparison fails the build for a new one; this names it).
    @Test func everyStoredPropertyIsAComparedField() {
        let labels = Mirror(reflecting: HostRequirements()).children.compactMap(\.label)
        #expect(labels == HostRequirements.Softening.Field.allCases.map(\.rawValue))
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
        let found = HostRequirements().softenings(comparedWith: HostRequirements(keyExchange: .postQuantum))
        #expect(found.map(\.field) == [.keyExchange])
        #expect(found.map(\.reason) == ["accepts any key exchange, where the floor requires postQuantum"])
        #expect(HostRequirements(keyExchange: .postQuantum).softenings(comparedWith: HostRequirements()).isEmpty)
    }

    /// A floor with its own anchors: the client's anchors, or anchors it does not list, widen
    /// who can vouch for the host; a subset of its anchors does not.
    @Test func wideningTheAnchorsIsASoftening() throws {
        let pki = try LabPKI.makeRoot(commonName: "Floor Root")
        let other = try LabPKI.makeRoot(commonName: "Other Root")
        let floor = HostRequirements(anchors: try pki.trustAnchors())
        #expect(HostRequirements().softenings(comparedWith: floor).map(\.field) == [.anchors])
        #expect(HostRequirements(anchors: try other.trustAnchors()).softenings(comparedWith: floor).map(\.field) == [.anchors])
        #expect(HostRequirements(anchors: try pki.trustAnchors()).softenings(comparedWith: floor).isEmpty)
    }

    @Test func pinsThatFallBackToDefaultValidationSoftenPinnedFloors() throws {
        var delivered = try Self.floor()
        delivered.pins = try PinSet(
            try Self.pins().entries, expiration: Date(timeIntervalSinceNow: 86_400), expiryBehaviour: .fallBackToDefaultValidation)
        #expect(delivered.softenings(comparedWith: try Self.floor()).map(\.field) == [.pins])
    }

    @Test func widerSignedResponseWindowsAreSoftenings() throws {
        let root = try SignedResponseRoot(base64: "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=")
        let floor = HostRequirements(signedResponses: .enforced(roots: [root]))
        var delivered = floor
        delivered.signedResponses?.freshnessWindow = .seconds(3_600)
        let found = delivered.softenings(comparedWith: floor)
        #expect(found.map(\.field) == [.signedResponses])
        #expect(found.first?.reason.contains("a v1 freshness window of 3600.0 seconds, not 300.0 seconds") == true, "\(found)")
        delivered.signedResponses = .informational(roots: [root])
        #expect(delivered.softenings(comparedWith: floor).map(\.reason) == ["does not enforce signed responses, where the floor does"])
    }

    // MARK: Description and construction

    /// Every evaluator ServerTrust builds is described back as the requirements it was built
    /// from; policies built in code from ServerTrust's evaluators are described too.
    @Test func evaluatorsBuiltFromRequirementsDescribeThemBack() throws {
        let cases: [HostRequirements] = [
            HostRequirements(),
            try Self.floor(),
            HostRequirements(pins: try Self.pins(), mode: .informational),
            HostRequirements(revocation: .hardFail, mode: .informational, canary: try Self.pins()),
            HostRequirements(validation: .pinnedMaterialAsAnchors, pins: try Self.pins(), revocation: .softFail),
            HostRequirements(pins: try Self.pins(), revocation: .hardFail, mode: .init(pins: .enforced, revocation: .informational)),
            HostRequirements(pins: try Self.pins(), revocation: .hardFail, mode: .init(pins: .informational, revocation: .enforced)),
            HostRequirements(anchors: nil, pins: try Self.pins(), revocation: .hardFail, mode: .informational),
        ]
        for requirements in cases {
            let described = try #require(try HostPolicy(requirements: requirements).requirements)
            #expect(described.softenings(comparedWith: requirements).isEmpty, "\(described)")
            #expect(requirements.softenings(comparedWith: described).isEmpty, "\(described)")
            #expect(described.pins == requirements.pins && described.revocation == requirements.revocation && described.mode == requirements.mode)
            #expect(described.canary == requirements.canary && described.validation == requirements.validation)
        }
        let coded = try #require(HostPolicy(evaluator: .composite([.pinnedKeyHashes([Self.pinA]), RevocationTrustEvaluator(options: .hardFail)])).requirements)
        #expect(coded.pins?.entries.map(\.pin) == [try Pin(Self.pinA)])
        #expect(coded.revocation == .hardFail)
    }

    /// Fifth review, finding 1: a trial inside a composite makes only what it wraps report-only;
    /// a description is never looser than what it describes.
    @Test func onlyWhatATrialWrapsIsDescribedAsTrialled() throws {
        let pins = try PinSetTrustEvaluator(pinSet: Self.pins())
        let revocation = RevocationTrustEvaluator(options: .hardFail)
        let trialledRevocation = try #require(HostPolicy(evaluator: try CompositeTrustEvaluator([pins, .informational(revocation)])).requirements)
        #expect(trialledRevocation.mode == HostRequirements.Enforcement(pins: .enforced, revocation: .informational))
        #expect(trialledRevocation.validation == .anchors)
        let trialledPins = try #require(
            HostPolicy(evaluator: try CompositeTrustEvaluator([.default(), .informational(pins), revocation])).requirements)
        #expect(trialledPins.mode == HostRequirements.Enforcement(pins: .informational, revocation: .enforced))
        // Trialled pins without default validation do not make the pinned material the anchors:
        // the enforced default validation beside them validates the path.
        let anchorless = try PinSetTrustEvaluator(pinSet: Self.pins(), performDefaultValidation: false)
        let trialledAnchorless = try #require(HostPolicy(evaluator: try CompositeTrustEvaluator([.default(), .informational(anchorless)])).requirements)
        #expect(trialledAnchorless.validation == .anchors)
        // Trialling its pins softens a floor that enforces them, in the mode field.
        let found = trialledPins.softenings(comparedWith: HostRequirements(pins: try Self.pins(), revocation: .hardFail))
        #expect(found.map(\.field) == [.mode])
        #expect(found.map(\.reason) == ["only trials its pins (report-only), where the floor enforces them"])
    }

    struct CustomEvaluator: ServerTrustEvaluating {
        func evaluate(_ trust: PeerTrust, forHost host: String) throws {}
    }

    /// A custom evaluator cannot be described, so a comparison cannot vouch for replacing it.
    @Test func aCustomEvaluatorIsNotDescribed() throws {
        #expect(HostPolicy(evaluator: CustomEvaluator()).requirements == nil)
        #expect(HostPolicy(evaluator: try CompositeTrustEvaluator([DefaultTrustEvaluator(), CustomEvaluator()])).requirements == nil)
    }

    @Test func requirementsThatCannotMakeAnEvaluatorSaySo() {
        #expect(throws: TrustError.invalidConfiguration) { try HostRequirements(validation: .disabled).makeEvaluator() }
        #expect(throws: TrustError.invalidConfiguration) { try HostRequirements(validation: .pinnedMaterialAsAnchors).makeEvaluator() }
        #expect(throws: TrustError.invalidConfiguration) { try HostRequirements(mode: .informational).makeEvaluator() }
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
        let manager = try ServerTrustManager(evaluators: [pattern: DefaultTrustEvaluator(), other: DefaultTrustEvaluator()])
        for host in ["api.example.com", "x.api.example.com", "example.com", "x.a.b.example.com", "192.0.2.1"]
        where try HostPattern(pattern).matches(host) && HostPattern(other).matches(host) {
            #expect(try (manager.match(forHost: host)?.pattern == HostPattern(pattern)) == takes, "\(host)")
        }
    }
}
