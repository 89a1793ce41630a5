import Foundation
import Testing
import ServerTrust
import ServerTrustTestSupport

/// The declarative policy file: what a valid file builds, and the exact line and field of every
/// kind of error.
@Suite struct TrustPolicyFileTests {
    static let pinA = "sha256/" + Data(repeating: 1, count: 32).base64EncodedString()
    static let pinB = "sha256/" + Data(repeating: 2, count: 32).base64EncodedString()
    static let pinC = "sha256/" + Data(repeating: 3, count: 32).base64EncodedString()

    static func load(_ text: String) throws -> TrustPolicyFile {
        try TrustPolicyFile(data: Array(text.utf8), fileName: "policy.json")
    }

    // MARK: Valid files

    @Test func aValidFileBuildsOneEvaluatorPerHostAsDocumented() throws {
        let policy = try Self.load("""
            {
              "version": 1,
              "reportURIs": ["https://reports.example.net/pins"],
              "hosts": {
                "api.example.com": {
                  "pins": [
                    { "pin": "\(Self.pinA)", "label": "2026 key" },
                    { "pin": "\(Self.pinB)", "label": "backup", "notAfter": "2028-01-01T00:00:00Z" }
                  ],
                  "expiration": "2027-12-31T00:00:00Z",
                  "expiryBehaviour": "fallBackToDefaultValidation",
                  "warningDays": 45,
                  "canary": { "pins": [{ "pin": "\(Self.pinC)", "label": "2027 key" }], "minimumPinCount": 1 },
                  "revocation": { "methods": "crl", "requirePositiveResponse": true, "scope": "wholeChain", "timeBudgetSeconds": 5 },
                  "reportURIs": ["https://pins.example.com/report"]
                },
                "**.cdn.example.com": {
                  "mode": "informational",
                  "pins": [{ "pin": "\(Self.pinA)" }, { "pin": "\(Self.pinB)" }]
                },
                "static.example.com": {}
              }
            }
            """)
        #expect(policy.hosts.map(\.pattern.description) == ["api.example.com", "**.cdn.example.com", "static.example.com"])
        #expect(policy.hosts.map(\.line) == [5, 17, 21])
        #expect(policy.allHostsMustBeEvaluated)
        #expect(policy.reportURIs == [URL(string: "https://reports.example.net/pins")!])
        #expect(policy.hosts.map(\.policy.reportURIs) == [[URL(string: "https://pins.example.com/report")!], [], []])

        let api = policy.hosts[0]
        #expect(api.policy.mode == .enforced)
        #expect(api.policy.pins?.entries.map(\.label) == ["2026 key", "backup"])
        #expect(api.policy.pins?.entries[1].notAfter == Date(timeIntervalSince1970: 1_830_297_600))
        #expect(api.policy.pins?.expiration == Date(timeIntervalSince1970: 1_830_211_200))
        #expect(api.policy.pins?.expiryBehaviour == .fallBackToDefaultValidation)
        #expect(api.policy.pins?.warningDays == 45)
        #expect(api.policy.canary?.entries.map(\.pin.description) == [Self.pinC])
        #expect(api.policy.revocation == RevocationOptions(methods: .crl, requirePositiveResponse: true, scope: .wholeChain, timeBudget: .seconds(5)))
        let canary = try #require((try api.policy.makeEvaluator()) as? CanaryTrustEvaluator)
        let enforced = try #require(canary.enforced as? CompositeTrustEvaluator)
        #expect(enforced.evaluators.map(\.name) == ["PinSetTrustEvaluator", "RevocationTrustEvaluator"])
        #expect(canary.trial is PinSetTrustEvaluator)

        let cdn = policy.hosts[1]
        #expect(cdn.policy.mode == .informational)
        #expect((try cdn.policy.makeEvaluator()).name == "CompositeTrustEvaluator(DefaultTrustEvaluator, InformationalTrustEvaluator(PinSetTrustEvaluator))")
        #expect((try policy.hosts[2].policy.makeEvaluator()) is DefaultTrustEvaluator)

        #expect(try policy.manager.resolve(host: "img.cdn.example.com").pattern?.description == "**.cdn.example.com")
        #expect(throws: TrustError.noEvaluatorForHost) { try policy.manager.resolve(host: "other.example.com") }
    }

    /// Third security review, finding 5: the short-lived exemption's threshold is a policy
    /// setting too: days, 0 turns it off, more than 10 (the Baseline Requirements' limit before
    /// March 2026) is refused with the field's line.
    @Test func finding5TheShortLivedThresholdIsReadInDaysAndZeroTurnsItOff() throws {
        func revocation(_ value: String) throws -> RevocationOptions? {
            try Self.load("""
                { "version": 1, "hosts": { "api.example.com": { "revocation": { "shortLivedCertificateValidityDays": \(value) } } } }
                """).hosts[0].policy.revocation
        }
        #expect(try revocation("4")?.shortLivedCertificateValidity == 4 * 86_400)
        #expect(try revocation("0")?.shortLivedCertificateValidity == nil)
        #expect(try Self.load("""
            { "version": 1, "hosts": { "api.example.com": { "revocation": {} } } }
            """).hosts[0].policy.revocation?.shortLivedCertificateValidity == 7 * 86_400)
        let error = #expect(throws: TrustError.invalidPolicyFile) { try revocation("11") }
        #expect(error?.reason == "policy.json:1: hosts[\"api.example.com\"].revocation.shortLivedCertificateValidityDays: 11 is out of range 0…10", "\(String(describing: error))")
    }

    @Test func theLoadedEvaluatorsEnforceAndTrialThePinsOfTheFile() throws {
        let site = try SitePKI()
        let genuine = site.intermediate.certificate.spkiPin.description
        let policy = try Self.load("""
            { "version": 1, "hosts": {
                "api.example.com": { "pins": [{ "pin": "\(genuine)" }, { "pin": "\(Self.pinA)" }] },
                "*.example.com": { "mode": "informational", "pins": [{ "pin": "\(Self.pinA)" }, { "pin": "\(Self.pinB)" }] },
                "pinned.example.com": { "pins": [{ "pin": "\(Self.pinA)" }, { "pin": "\(Self.pinB)" }] }
            } }
            """)
        try policy.manager.resolve(host: SitePKI.host).evaluator.evaluate(try site.trust(), forHost: SitePKI.host)

        let other = try SitePKI(host: "www.example.com")
        let trust = try other.trust()
        try policy.manager.resolve(host: "www.example.com").evaluator.evaluate(trust, forHost: "www.example.com")
        #expect(trust.findings.map(\.error.code) == [.pinMismatch])
        #expect(trust.findings.map(\.mode) == [.informational])

        let pinned = try SitePKI(host: "pinned.example.com")
        #expect(throws: TrustError.pinMismatch) {
            try policy.manager.resolve(host: "pinned.example.com").evaluator.evaluate(try pinned.trust(), forHost: "pinned.example.com")
        }
    }

    @Test func aFileIsReadFromDiskAndNamedByItsFileName() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("servertrust-\(UUID().uuidString)-pins.json")
        try Data(#"{ "version": 1, "hosts": { "*.com": {} } }"#.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let error = #expect(throws: TrustError.invalidPolicyFile) { try TrustPolicyFile(contentsOf: url) }
        #expect(error?.reason.hasPrefix("\(url.lastPathComponent):1: hosts[\"*.com\"]: Host pattern") == true)
        #expect(throws: TrustError.unreadableInput) { try TrustPolicyFile(contentsOf: url.appendingPathExtension("missing")) }
    }

    /// RFC 9421 in a policy file: the scheme named, its keys inline (errors naming the policy
    /// file's lines) or from the key set a trust update delivers beside it.
    @Test func signedResponsesNameTheirSchemeAndRFC9421KeysComeInlineOrDelivered() throws {
        let key = try SignaturePrivateKey.generate(.ed25519)
        let jwks = SigningKeySet.jwksDocument([("k1", key.publicKey)])
        let inline = try Self.load("""
            { "version": 1, "hosts": { "api.example.com": {
                "signedResponses": { "mode": "enforced", "scheme": "rfc9421", "keys": \(jwks), "freshnessSeconds": 120 } } } }
            """)
        let policy = try #require(inline.hosts.first?.policy.signedResponses)
        #expect(policy.scheme == .rfc9421 && policy.mode == .enforced && policy.coversContentEncoding)
        #expect(policy.messageSignatures?.keys().keyIDs == ["k1"])
        #expect(policy.messageSignatures?.maximumAge == .seconds(120))

        let text = """
            { "version": 1, "hosts": { "api.example.com": {
                "signedResponses": { "mode": "informational", "scheme": "rfc9421" } } } }
            """
        let error = #expect(throws: TrustError.invalidPolicyFile) { try Self.load(text) }
        #expect(error?.reason.contains("policy.json:2") == true && error?.reason.contains("jwks.json") == true, "\(String(describing: error))")
        let delivered = try TrustPolicyFile(data: Array(text.utf8), signingKeys: { SigningKeySet(keys: ["d1": key.publicKey]) })
        #expect(delivered.hosts.first?.policy.signedResponses?.messageSignatures?.keys().keyIDs == ["d1"])

        let badKey = #expect(throws: TrustError.invalidPolicyFile) {
            try Self.load("""
                { "version": 1, "hosts": { "api.example.com": {
                    "signedResponses": { "mode": "enforced", "scheme": "either", "roots": ["11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="],
                      "keys": { "keys": [ { "kty": "OKP", "crv": "Ed448", "x": "AA", "kid": "k" } ] } } } } }
                """)
        }
        #expect(badKey?.reason.hasPrefix("policy.json:3:") == true, "\(String(describing: badKey))")
        let wrongScheme = #expect(throws: TrustError.invalidPolicyFile) {
            try Self.load(#"{ "version": 1, "hosts": { "a.example": { "signedResponses": { "mode": "enforced", "scheme": "v2" } } } }"#)
        }
        #expect(wrongScheme?.reason.contains("scheme") == true)
    }

    // MARK: Errors

    struct BadFile: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        let message: String
        var testDescription: String { name }
    }

    static let badFiles: [BadFile] = [
        BadFile(name: "malformed pin", text: """
            {
              "version": 1,
              "hosts": {
                "api.example.com": {
                  "pins": [
                    { "pin": "\(pinA)" },
                    { "pin": "sha256/not base64!" }
                  ]
                }
              }
            }
            """, message: #"policy.json:7: hosts["api.example.com"].pins[1].pin: not a sha256/ pin: Pin "sha256/not base64!" is not valid base64 (standard alphabet with = padding)."#),
        BadFile(name: "weak pin algorithm", text: """
            { "version": 1, "hosts": { "api.example.com": { "pins": [
                { "pin": "sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA=" }, { "pin": "\(pinA)" } ] } } }
            """, message: #"policy.json:2: hosts["api.example.com"].pins[0].pin: not a sha256/ pin: Pin "sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA=" uses sha1, which is too weak; use sha256/<base64>."#),
        BadFile(name: "unknown host field", text: """
            { "version": 1,
              "hosts": { "api.example.com": {
                "pinz": [] } } }
            """, message: #"policy.json:3: hosts["api.example.com"].pinz: unknown field; expected one of canary, certificateTransparency, expiration, expiryBehaviour, keyExchange, minimumPinCount, minimumTLSVersion, mode, pins, reportURIs, revocation, signedResponses, warningDays"#),
        BadFile(name: "unknown top-level field", text: """
            { "version": 1, "hosts": { "a.example.com": {} },
              "allHostMustBeEvaluated": false }
            """, message: "policy.json:2: allHostMustBeEvaluated: unknown field; expected one of allHostsMustBeEvaluated, expires, hosts, reportURIs, version"),
        BadFile(name: "unknown pin field", text: """
            { "version": 1, "hosts": { "a.example.com": { "pins": [
                { "pin": "\(pinA)", "lable": "x" }, { "pin": "\(pinB)" } ] } } }
            """, message: #"policy.json:2: hosts["a.example.com"].pins[0].lable: unknown field; expected one of label, notAfter, pin"#),
        BadFile(name: "public-suffix wildcard", text: """
            { "version": 1, "hosts": {
                "*.co.uk": {} } }
            """, message: #"policy.json:2: hosts["*.co.uk"]: Host pattern "*.co.uk" covers every name under "co.uk", a public suffix (a top-level domain or a Public Suffix List entry); put the wildcard under a registrable domain, as in "*.example.com"."#),
        BadFile(name: "wildcard in the middle", text: """
            { "version": 1, "hosts": {
                "a.*.example.com": {} } }
            """, message: #"policy.json:2: hosts["a.*.example.com"]: Host pattern "a.*.example.com" uses "*" inside a label or to the right; a wildcard must be the whole leftmost label, as in "*.example.com" (one label) or "**.example.com" (any depth)."#),
        BadFile(name: "same pattern twice", text: """
            { "version": 1, "hosts": {
                "api.example.com": {},
                "API.example.com.": {} } }
            """, message: #"policy.json:3: hosts["API.example.com."]: the same pattern as "api.example.com" after normalisation; keep one"#),
        BadFile(name: "duplicate key", text: """
            { "version": 1, "hosts": { "api.example.com": {
                "pins": [{ "pin": "\(pinA)" }, { "pin": "\(pinB)" }],
                "pins": [] } } }
            """, message: #"policy.json:3: duplicate key "pins""#),
        BadFile(name: "a single pin", text: """
            { "version": 1, "hosts": { "api.example.com": {
                "pins": [{ "pin": "\(pinA)" }] } } }
            """, message: #"policy.json:2: hosts["api.example.com"].pins: An enforcing pin set needs at least 2 pins (it has 1): pin the current key and a backup key kept offline, so a lost or compromised key does not lock clients out. To trial a single pin in informational mode, pass minimumPinCount: 1."#),
        BadFile(name: "date without a time zone", text: """
            { "version": 1, "hosts": { "api.example.com": {
                "pins": [{ "pin": "\(pinA)" }, { "pin": "\(pinB)" }],
                "expiration": "2027-12-31" } } }
            """, message: #"policy.json:3: hosts["api.example.com"].expiration: not an ISO 8601 date-time with a time zone (e.g. 2027-06-01T00:00:00Z): "2027-12-31""#),
        BadFile(name: "wrong type", text: """
            { "version": 1, "hosts": { "api.example.com": {
                "pins": [{ "pin": "\(pinA)" }, { "pin": "\(pinB)" }],
                "warningDays": "30" } } }
            """, message: #"policy.json:3: hosts["api.example.com"].warningDays: expected a whole number, found the string "30""#),
        BadFile(name: "unknown mode", text: """
            { "version": 1, "hosts": { "api.example.com": {
                "mode": "reportOnly", "pins": [{ "pin": "\(pinA)" }, { "pin": "\(pinB)" }] } } }
            """, message: #"policy.json:2: hosts["api.example.com"].mode: "reportOnly" is not one of enforced, informational"#),
        BadFile(name: "plain-http report URI", text: """
            { "version": 1, "hosts": { "api.example.com": {} },
              "reportURIs": ["http://reports.example.net/pins"] }
            """, message: #"policy.json:2: reportURIs[0]: not an https: URL with a host: "http://reports.example.net/pins""#),
        BadFile(name: "pin-set field without pins", text: """
            { "version": 1, "hosts": { "api.example.com": {
                "expiration": "2027-12-31T00:00:00Z" } } }
            """, message: #"policy.json:2: hosts["api.example.com"].expiration: applies to a pin set, and this host has no "pins""#),
        BadFile(name: "missing version", text: """
            { "hosts": { "api.example.com": {} } }
            """, message: #"policy.json:1: missing field "version" (1)"#),
        BadFile(name: "future version", text: """
            { "version": 2, "hosts": { "api.example.com": {} } }
            """, message: "policy.json:1: version: unsupported version; this library reads version 1"),
        BadFile(name: "invalid JSON", text: """
            { "version": 1,
              "hosts": { "api.example.com": {} }
              "reportURIs": [] }
            """, message: #"policy.json:3: invalid JSON: expected "," or "}""#),
        BadFile(name: "not an object", text: "[]", message: "policy.json:1: expected an object, found an array"),
    ]

    @Test(arguments: badFiles) func eachErrorNamesItsLineAndField(_ file: BadFile) {
        let error = #expect(throws: TrustError.invalidPolicyFile) { try Self.load(file.text) }
        #expect(error?.reason == file.message)
    }

    @Test func hostileInputIsRefusedWithoutParsingIt() {
        let deep = #"{ "version": 1, "hosts": "# + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + " }"
        #expect(throws: TrustError.invalidPolicyFile) { try Self.load(deep) }
        let huge = Array(repeating: UInt8(ascii: " "), count: (1 << 20) + 1)
        let error = #expect(throws: TrustError.invalidPolicyFile) { try TrustPolicyFile(data: huge) }
        #expect(error?.reason == "policy.json:1: the file is larger than 1048576 bytes")
        let error2 = #expect(throws: TrustError.invalidPolicyFile) { try TrustPolicyFile(data: [0x7B, 0xFF, 0x7D]) }
        #expect(error2?.reason == "policy.json:1: the file is not UTF-8 text")
    }
}
