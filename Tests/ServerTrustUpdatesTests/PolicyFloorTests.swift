import Foundation
import ServerTrust
import ServerTrustLab
import ServerTrustUpdates
import Testing

/// What a delivered policy may change over the compiled-in floor: each weakening is found,
/// named, and refused unless its permission is given; strengthening and adding are allowed.
@Suite struct PolicyFloorTests {
    static let pinA = "sha256/" + Data(repeating: 1, count: 32).base64EncodedString()
    static let pinB = "sha256/" + Data(repeating: 2, count: 32).base64EncodedString()

    /// RFC 8037's Ed25519 example public key, as a signed-response root.
    static let rootKey = "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="

    static func floor() throws -> ServerTrustManager {
        let root = try SignedResponseRoot(base64: rootKey)
        return try ServerTrustManager(policies: [
            try HostPattern("**.example.com"): HostPolicy(
                pins: try PinSet([PinSet.Entry(pinA, label: "A")], minimumPinCount: 1), minimumTLSVersion: .tls13,
                signedResponses: .enforced(roots: [root])),
            try HostPattern("cdn.example.net"): HostPolicy(),
        ])
    }

    static func delivered(_ hosts: String, top: String = "") throws -> TrustPolicyFile {
        try TrustPolicyFile(data: Array("{\"version\": 1, \(top)\"hosts\": {\(hosts)}}".utf8))
    }

    @Test(arguments: [
        ("\"api.example.com\": {\"minimumTLSVersion\": \"1.3\"}", TrustUpdateRules.Permissions.unpinHosts, "default validation only"),
        ("\"*.example.com\": {\"pins\": [{\"pin\": \"\(pinA)\"}, {\"pin\": \"\(pinB)\"}], \"expiration\": \"2030-01-01T00:00:00Z\", \"expiryBehaviour\": \"fallBackToDefaultValidation\", \"minimumTLSVersion\": \"1.3\"}", .unpinHosts, "fall back to default validation"),
        ("\"api.example.com\": {\"mode\": \"informational\", \"pins\": [{\"pin\": \"\(pinA)\"}, {\"pin\": \"\(pinB)\"}], \"minimumTLSVersion\": \"1.3\"}", .reportOnly, "report-only"),
        ("\"api.example.com\": {\"pins\": [{\"pin\": \"\(pinA)\"}, {\"pin\": \"\(pinB)\"}]}", .lowerTLSVersion, "accepts TLS 1.2"),
    ])
    func eachWeakeningIsFoundAndNeedsItsPermission(hosts: String, permission: TrustUpdateRules.Permissions, reason: String) throws {
        let floor = try Self.floor()
        let policy = try Self.delivered(hosts)
        let found = PolicyFloor.weakenings(of: policy, against: floor)
        #expect(found.contains { $0.permission == permission && $0.reason.contains(reason) }, "\(found)")
        #expect(throws: PolicyFloor.Refusal.self) {
            try PolicyFloor.manager(floor: floor, delivered: policy, denyList: nil, permissions: [])
        }
        let all = Set(found.map(\.permission.rawValue)).reduce(TrustUpdateRules.Permissions()) { $0.union(.init(rawValue: $1)) }
        #expect(throws: Never.self) { try PolicyFloor.manager(floor: floor, delivered: policy, denyList: nil, permissions: all) }
    }

    @Test func unlistedHostsAndWeakerSignedResponsesAreWeakenings() throws {
        let floor = try Self.floor()
        let policy = try Self.delivered(
            "\"api.example.com\": {\"pins\": [{\"pin\": \"\(Self.pinA)\"}, {\"pin\": \"\(Self.pinB)\"}], \"minimumTLSVersion\": \"1.3\"}",
            top: "\"allHostsMustBeEvaluated\": false, ")
        let permissions = Set(PolicyFloor.weakenings(of: policy, against: floor).map(\.permission.rawValue))
        #expect(permissions == [TrustUpdateRules.Permissions.unlistedHosts.rawValue, TrustUpdateRules.Permissions.weakerSignedResponses.rawValue])
    }

    /// The floor enforces v1: a delivered policy that switches the host to RFC 9421 or to
    /// `either` is a change of scheme the application must allow (each scheme binds what the
    /// other does not, and `either` accepts the weaker); keeping v1 is not a weakening.
    @Test(arguments: [("rfc9421", true), ("either", true), ("v1", false)])
    func aChangeOfSignedResponseSchemeNeedsPermission(scheme: String, weakens: Bool) throws {
        let key = try SignaturePrivateKey.generate(.ed25519)
        let jwks = SigningKeySet.jwksDocument([("k1", key.publicKey)])
        let roots = scheme == "rfc9421" ? "" : "\"roots\": [\"\(Self.rootKey)\"], "
        let keys = scheme == "v1" ? "" : "\"keys\": \(jwks), "
        let policy = try Self.delivered("""
            "api.example.com": {"pins": [{"pin": "\(Self.pinA)"}, {"pin": "\(Self.pinB)"}], "minimumTLSVersion": "1.3",
                                "signedResponses": {\(roots)\(keys)"mode": "enforced", "scheme": "\(scheme)"}}
            """)
        let found = PolicyFloor.weakenings(of: policy, against: try Self.floor())
        #expect(found.contains { $0.permission == .weakerSignedResponses && $0.reason.contains("requires \(scheme) signed responses") } == weakens, "\(found)")
        #expect(found.count == (weakens ? 1 : 0), "\(found)")
    }

    /// Rotating pins, adding a host and adding pins under a wildcard the floor leaves to
    /// default validation weaken nothing; floor hosts the policy does not name stay, and the
    /// floor's deny-list joins the delivered one.
    @Test func replacingAndAddingIsAllowedAndTheFloorStays() throws {
        let floor = try Self.floor().replacing(denyList: KeyDenyList(keys: [try Pin(Self.pinB)]))
        let policy = try Self.delivered("""
            "api.example.com": {"pins": [{"pin": "\(Self.pinA)"}, {"pin": "\(Self.pinB)"}], "minimumTLSVersion": "1.3",
                                "signedResponses": {"mode": "enforced", "roots": ["\(Self.rootKey)"]}},
            "cdn.example.net": {"pins": [{"pin": "\(Self.pinA)"}, {"pin": "\(Self.pinB)"}]},
            "new.example.org": {}
            """)
        #expect(PolicyFloor.weakenings(of: policy, against: floor).isEmpty)
        let extra = try Pin("sha256/" + Data(repeating: 3, count: 32).base64EncodedString())
        let manager = try PolicyFloor.manager(floor: floor, delivered: policy, denyList: KeyDenyList(keys: [extra]), permissions: [])
        #expect(manager.patterns.map(\.description) == ["**.example.com", "api.example.com", "cdn.example.net", "new.example.org"])
        #expect(manager.denyList.keys == [try Pin(Self.pinB), extra])
        #expect(try manager.resolve(host: "www.example.com").pattern?.description == "**.example.com")
    }

    // MARK: Fifth review

    static func pinSet() throws -> PinSet { try PinSet([PinSet.Entry(pinA, label: "current"), PinSet.Entry(pinB, label: "backup")]) }
    static let pinsJSON = "\"pins\": [{\"pin\": \"\(pinA)\"}, {\"pin\": \"\(pinB)\"}]"

    /// Finding 1: the floor enforces its pins and only trials revocation — the composition
    /// InformationalTrustEvaluator's own documentation teaches, `.composite([pinSet,
    /// .informational(revocation)])`, which this declaration compiles to. A delivered report-only policy
    /// with the same pins and revocation trials the pins too: that is the report-only
    /// weakening, refused without `.reportOnly` (before, the floor was described as report-only
    /// as a whole, so nothing softened and any trusted CA's chain was accepted).
    @Test func aFloorEnforcingPinsAndTriallingRevocationRefusesAReportOnlyPolicy() throws {
        let floor = try ServerTrustManager(policies: [
            try HostPattern("api.example.com"): HostPolicy(
                pins: try Self.pinSet(), revocation: .hardFail, mode: .init(pins: .enforced, revocation: .informational))
        ])
        let compiled = try #require(try floor.resolve(host: "api.example.com").evaluator as? CompositeTrustEvaluator)
        #expect(compiled.evaluators.count == 2)
        #expect(compiled.evaluators.first is PinSetTrustEvaluator)
        #expect((compiled.evaluators.last as? InformationalTrustEvaluator)?.evaluator is RevocationTrustEvaluator)
        let delivered = try Self.delivered(
            "\"api.example.com\": {\"mode\": \"informational\", \(Self.pinsJSON), \"revocation\": {\"requirePositiveResponse\": true}}")
        let found = PolicyFloor.weakenings(of: delivered, against: floor)
        #expect(found.map(\.permission) == [.reportOnly], "\(found)")
        #expect(found.map(\.reason) == ["api.example.com is put in report-only (informational) mode, where the floor's api.example.com enforces"])
        #expect(throws: PolicyFloor.Refusal.self) { try PolicyFloor.manager(floor: floor, delivered: delivered, denyList: nil, permissions: []) }
        // The same pins enforced and revocation trialled, as the floor: nothing softens.
        let same = try Self.delivered("\"api.example.com\": {\(Self.pinsJSON)}")
        #expect(PolicyFloor.weakenings(of: same, against: floor).isEmpty)
    }

    /// Finding 1's mirror image: the floor enforces revocation and trials its pins; a delivered
    /// report-only policy trials revocation too.
    @Test func aFloorEnforcingRevocationAndTriallingPinsRefusesAReportOnlyPolicy() throws {
        let floor = try ServerTrustManager(policies: [
            try HostPattern("api.example.com"): HostPolicy(
                pins: try Self.pinSet(), revocation: .hardFail, mode: .init(pins: .informational, revocation: .enforced))
        ])
        let delivered = try Self.delivered(
            "\"api.example.com\": {\"mode\": \"informational\", \(Self.pinsJSON), \"revocation\": {\"requirePositiveResponse\": true}}")
        let found = PolicyFloor.weakenings(of: delivered, against: floor)
        #expect(found.map(\.permission) == [.reportOnly], "\(found)")
    }

    /// Item 6: adding a fallback method to a hard-fail floor (`ocsp` → `preferOCSP`) is a
    /// weaker revocation check — an attacker who blocks OCSP gets a CRL issued before the
    /// revocation instead of a refusal; under soft-fail it only checks more.
    @Test func aFallbackMethodUnderAHardFailFloorIsAWeakerRevocationCheck() throws {
        let floor = try ServerTrustManager(policies: [
            try HostPattern("api.example.com"): HostPolicy(
                pins: try Self.pinSet(), revocation: RevocationOptions(methods: .ocsp, requirePositiveResponse: true)),
            try HostPattern("soft.example.com"): HostPolicy(revocation: RevocationOptions(methods: .ocsp)),
        ])
        let delivered = try Self.delivered("""
            "api.example.com": {\(Self.pinsJSON), "revocation": {"methods": "preferOCSP", "requirePositiveResponse": true}},
            "soft.example.com": {"revocation": {"methods": "preferOCSP"}}
            """)
        let found = PolicyFloor.weakenings(of: delivered, against: floor)
        #expect(found.map(\.permission) == [.weakerRevocation], "\(found)")
        #expect(found.first?.reason.hasPrefix("api.example.com checks revocation less strictly (falls back to preferOCSP where a hard-fail ocsp check refuses)") == true, "\(found)")
    }

    /// Item 6: a delivered pattern more specific than a floor pattern keeps the floor's client
    /// identity for the hosts it takes over (a policy file carries none); floor patterns it
    /// takes hosts from with different identities and no order between them are refused.
    @Test func aMoreSpecificDeliveredPatternKeepsTheFloorsClientIdentity() throws {
        let root = try LabPKI.makeRoot(commonName: "Client Root")
        func identity() throws -> ClientIdentity {
            let leaf = try root.issueLeaf(dnsNames: ["client.example.com"])
            return try ClientIdentity(certificatePEM: leaf.certificate.pemEncoded, privateKeyPEM: leaf.key.pemPrivateKey)
        }
        let wide = try identity(), narrow = try identity()
        let floor = try ServerTrustManager(policies: [
            try HostPattern("**.example.com"): HostPolicy(clientIdentity: wide),
            try HostPattern("*.example.com"): HostPolicy(clientIdentity: narrow),
            try HostPattern("**.example.org"): HostPolicy(clientIdentity: wide),
        ])
        let delivered = try Self.delivered(#""api.example.com": {}, "x.y.example.com": {}, "**.example.org": {}"#)
        let manager = try PolicyFloor.manager(floor: floor, delivered: delivered, denyList: nil, permissions: [])
        #expect(try manager.resolve(host: "api.example.com").policy.clientIdentity === narrow)
        #expect(try manager.resolve(host: "x.y.example.com").policy.clientIdentity === wide)
        #expect(try manager.resolve(host: "www.example.org").policy.clientIdentity === wide)
        // `**.api.example.com` takes api.example.com from `*.example.com` and deeper names
        // from `**.example.com`, which present different identities.
        let ambiguous = try Self.delivered(#""**.api.example.com": {}"#)
        #expect {
            try PolicyFloor.manager(floor: floor, delivered: ambiguous, denyList: nil, permissions: [])
        } throws: { error in
            guard let refusal = error as? PolicyFloor.Refusal, refusal.code == .unusable else { return false }
            return refusal.reason.contains("present different client identities")
        }
    }

    @Test func aNewerFormatIsRefusedAsSuch() {
        #expect {
            try PolicyFloor.read(Array("{\"version\": 7, \"hosts\": {}}".utf8), name: "policy.json")
        } throws: { error in
            guard let refusal = error as? PolicyFloor.Refusal else { return false }
            return refusal.code == .newerFormat && refusal.reason.hasPrefix("its format version 7 is newer")
        }
    }
}
