import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// docs/POLICY_FILE.md, the policy-file reference, checked against the reader: its complete
/// example (docs/examples/policy.json) and its deny-list example (docs/examples/denylist.json)
/// parse to exactly the settings the page describes, and the examples shown on the page are
/// those files byte for byte, so neither can drift from the other or from the code.
@Suite struct PolicyFileReferenceTests {
    static let packageRoot = PackageFiles.root

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: packageRoot.appendingPathComponent(path))) }

    static func example() throws -> TrustPolicyFile {
        try TrustPolicyFile(data: try bytes("docs/examples/policy.json"), fileName: "policy.json")
    }

    /// The body of the fenced code block that follows the line `marker`, with a final newline
    /// (as the file has one), or nil when the page has no such block.
    static func block(after marker: String, in page: String) -> String? {
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
        guard let markerLine = lines.firstIndex(where: { $0 == marker }), markerLine + 1 < lines.count,
              lines[markerLine + 1].hasPrefix("```")
        else { return nil }
        let body = lines[(markerLine + 2)...].prefix { $0 != "```" }
        return body.joined(separator: "\n") + "\n"
    }

    static let day: TimeInterval = 86_400
    static func date(_ text: String) throws -> Date { try Date(text, strategy: Date.ISO8601FormatStyle()) }

    @Test(arguments: ["policy.json", "denylist.json"])
    func theExamplesOnThePageAreTheFilesByteForByte(name: String) throws {
        let page = String(decoding: try Self.bytes("docs/POLICY_FILE.md"), as: UTF8.self)
        let file = String(decoding: try Self.bytes("docs/examples/\(name)"), as: UTF8.self)
        let shown = try #require(
            Self.block(after: "<!-- docs/examples/\(name), verbatim -->", in: page),
            "docs/POLICY_FILE.md has no code block after the marker for docs/examples/\(name)")
        #expect(shown == file, "docs/POLICY_FILE.md shows a different \(name) than docs/examples/\(name)")
    }

    @Test func theCompleteExamplesTopLevelFields() throws {
        let policy = try Self.example()
        #expect(policy.expires == (try Self.date("2027-06-30T00:00:00Z")))
        #expect(policy.reportURIs == [URL(string: "https://reports.example.net/pins")!])
        #expect(policy.allHostsMustBeEvaluated)
        #expect(policy.hosts.map(\.pattern.description) == ["api.example.com", "accounts.example.com", "**.cdn.example.com", "static.example.com"])
        #expect(throws: TrustError(.noEvaluatorForHost, "")) { try policy.manager.resolve(host: "unlisted.example.org") }
    }

    /// api.example.com: two pins with a canary, hard-fail revocation of the whole chain, TLS 1.3,
    /// RFC 9421 signed responses with an inline key.
    @Test func theCompleteExamplesFullyConfiguredHost() throws {
        let api = try Self.example().hosts[0]
        #expect(api.policy.mode == .enforced)
        let pins = try #require(api.policy.pins)
        #expect(pins.entries.count == 2)
        #expect(pins.entries.map(\.label) == ["2026 leaf key", "backup key, offline"])
        #expect(pins.entries.map(\.notAfter) == [nil, try Self.date("2028-01-01T00:00:00Z")])
        #expect(pins.expiration == (try Self.date("2027-12-31T00:00:00Z")))
        #expect(pins.expiryBehaviour == .failClosed)
        #expect(pins.warningDays == 60)
        #expect(pins.minimumPinCount == 2)
        #expect(api.policy.canary?.entries.map(\.pin.description) == ["sha256/3eizR/h0MFv4VmYSwCljyPAMU2vsEF9KKjKTXbcrhpc="])
        #expect(api.policy.canary?.minimumPinCount == 1)
        #expect((try api.policy.makeEvaluator()) is CanaryTrustEvaluator)
        #expect(api.policy.revocation == RevocationOptions(
            methods: .preferOCSP, requirePositiveResponse: true, networkAccessDisabled: false, scope: .wholeChain,
            timeBudget: .seconds(5), shortLivedCertificateValidity: 7 * Self.day))
        #expect(api.policy.minimumTLSVersion == .tls13)
        #expect(api.policy.reportURIs == [URL(string: "https://api-reports.example.com/pins")!])
        let signed = try #require(api.policy.signedResponses)
        #expect(signed.mode == .enforced)
        #expect(signed.scheme == .rfc9421)
        #expect(signed.roots.isEmpty)
        #expect(signed.messageSignatures?.keys().keyIDs == ["2026-11"])
        #expect(signed.messageSignatures?.maximumAge == .seconds(120))
        #expect(signed.messageSignatures?.clockSkewAllowance == .seconds(30))
    }

    /// accounts.example.com: the defaults of a pin set, and a signed-response migration
    /// (`either`) with both a v1 root and an RFC 9421 key, in informational mode.
    @Test func theCompleteExamplesMigratingHostTakesTheDefaults() throws {
        let accounts = try Self.example().hosts[1]
        let pins = try #require(accounts.policy.pins)
        #expect(pins.entries.count == 2)
        #expect(pins.expiration == nil)
        #expect(pins.expiryBehaviour == .failClosed)
        #expect(pins.warningDays == 30)
        #expect(pins.minimumPinCount == 2)
        #expect(accounts.policy.canary == nil)
        #expect(accounts.policy.revocation == nil)
        #expect((try accounts.policy.makeEvaluator()) is PinSetTrustEvaluator)
        #expect(accounts.policy.minimumTLSVersion == .tls12)
        #expect(accounts.policy.reportURIs.isEmpty)
        let signed = try #require(accounts.policy.signedResponses)
        #expect(signed.mode == .informational)
        #expect(signed.scheme == .either)
        #expect(signed.roots == [try SignedResponseRoot(base64: "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=")])
        #expect(signed.messageSignatures?.keys().keyIDs == ["2026-11"])
        #expect(signed.freshnessWindow == .seconds(300))
        #expect(signed.clockSkewAllowance == .seconds(60))
    }

    /// **.cdn.example.com trials one pin and CRL checking in informational mode;
    /// static.example.com, with no fields at all, is default validation.
    @Test func theCompleteExamplesInformationalAndUnpinnedHosts() throws {
        let policy = try Self.example()
        let cdn = policy.hosts[2]
        #expect(cdn.policy.mode == .informational)
        #expect(cdn.policy.pins?.entries.count == 1)
        #expect(cdn.policy.pins?.minimumPinCount == 1)
        #expect(cdn.policy.revocation == RevocationOptions(methods: .crl, scope: .leafOnly))
        let trial = try #require((try cdn.policy.makeEvaluator()) as? CompositeTrustEvaluator)
        #expect(trial.evaluators.first is DefaultTrustEvaluator)
        #expect(trial.evaluators.last is InformationalTrustEvaluator)
        #expect(try policy.manager.resolve(host: "img.eu.cdn.example.com").pattern?.description == "**.cdn.example.com")

        let unpinned = policy.hosts[3]
        #expect(unpinned.policy.mode == .enforced)
        #expect(unpinned.policy.pins == nil)
        #expect(unpinned.policy.revocation == nil)
        #expect(unpinned.policy.signedResponses == nil)
        #expect((try unpinned.policy.makeEvaluator()) is DefaultTrustEvaluator)
    }

    @Test func theDenyListExampleParses() throws {
        let denyList = try KeyDenyList(data: try Self.bytes("docs/examples/denylist.json"))
        #expect(denyList.keys == [try Pin("sha256/CNVK2lzivjDE/Dz3ckm3O9S/8LTqy3RVQMVvMR+BixM=")])
        #expect(denyList.certificates == [try KeyDenyList.IssuerAndSerial(issuer: "CN=Example Issuing CA,O=Example", serial: "42A9F00B1")])
    }

    /// The date format the reference states: a date-time with `Z` or an offset, fractional
    /// seconds allowed; a date alone or a time without a zone is refused, naming the field.
    @Test func datesNeedATimeZone() throws {
        func expires(_ text: String) throws -> Date? {
            try TrustPolicyFile(data: Array(#"{"version": 1, "expires": "\#(text)", "hosts": {"a.example.com": {}}}"#.utf8)).expires
        }
        let midnight = try Self.date("2027-06-01T00:00:00Z")
        #expect(try expires("2027-06-01T02:00:00+02:00") == midnight)
        #expect(try expires("2027-06-01T00:00:00.5Z") == midnight.addingTimeInterval(0.5))
        for text in ["2027-06-01", "2027-06-01T00:00:00", "2027-06-01 00:00:00Z"] {
            let error = try #require(throws: TrustError.self, "\(text)") { try expires(text) }
            #expect(error.code == .invalidPolicyFile)
            #expect(error.reason.hasPrefix("policy.json:1: expires: not an ISO 8601 date-time with a time zone"), "\(error.reason)")
        }
    }
}
