import Foundation
import ServerTrust
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
            "**.example.com": HostPolicy(
                evaluator: try PinnedKeyHashesTrustEvaluator(pins: [try Pin(pinA)]), minimumTLSVersion: .tls13,
                signedResponses: .enforced(roots: [root])),
            "cdn.example.net": HostPolicy(evaluator: DefaultTrustEvaluator()),
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
        #expect(try manager.match(forHost: "www.example.com")?.pattern.description == "**.example.com")
    }

    @Test func aNewerFormatIsRefusedAsSuch() {
        #expect {
            try PolicyFloor.read(Array("{\"version\": 7, \"hosts\": {}}".utf8), name: "policy.json")
        } throws: { error in
            if case .newerFormat(let version) = error as? PolicyFloor.Refusal { return version == 7 }
            return false
        }
    }
}
