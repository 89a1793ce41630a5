import Foundation
@testable import ServerTrust
import ServerTrustTestSupport
import Testing

/// The per-host requirement in the one evaluation entry point: after chain validation, beside
/// pins, report-only or enforced, fail-open or fail-closed on a stale list; in the policy file;
/// and its softenings under a trust update's floor.
@Suite struct CertificateTransparencyEvaluationTests {
    static let host = "ct.example.com"
    let root: LabCA
    let leaf: LabLeaf
    let google = TestCTLog(.p256), cloudflare = TestCTLog(.rsa2048), google2 = TestCTLog(.p256)
    let now = Date()

    init() throws {
        root = try LabPKI.makeRoot(commonName: "CT Root")
        leaf = try root.issueLeaf(dnsNames: [Self.host])
    }

    func logs(listAge: TimeInterval = 86_400) throws -> CertificateTransparencyLogs {
        let since = now.addingTimeInterval(-365 * 86_400)
        return try CertificateTransparencyLogs(try CTLogList(timestamp: now.addingTimeInterval(-listAge), logs: [
            google.log(name: "Google A", operator: "Google", state: .usable(since)),
            google2.log(name: "Google B", operator: "Google", state: .usable(since)),
            cloudflare.log(name: "Cloudflare", operator: "Cloudflare", state: .usable(since)),
        ]))
    }

    func evaluate(
        _ requirement: CertificateTransparencyRequirement?, sctsFrom signers: [TestCTLog], evaluator: any ServerTrustEvaluating = DefaultTrustEvaluator(),
        logs: CertificateTransparencyLogs? = nil
    ) throws -> TrustEvaluation {
        let policy = HostPolicy.custom(evaluator, certificateTransparency: requirement)
        let manager = try ServerTrustManager(policies: [try HostPattern(Self.host): policy], certificateTransparencyLogs: logs ?? (try self.logs()))
        let scts = signers.map { $0.sct(for: leaf.certificate, at: now.addingTimeInterval(-3600)) }
        let context = TrustEvaluationContext(anchors: try TrustAnchors([root.certificate]), clock: { [now] in now })
        return try manager.resolve(host: Self.host).evaluate(leaf.chain, handshake: HandshakeEvidence(signedCertificateTimestamps: scts), in: context)
    }

    @Test func aCompliantServerIsAcceptedAndItsSCTsReported() throws {
        let evaluation = try evaluate(.enforced(), sctsFrom: [google, cloudflare])
        #expect(evaluation.isTrusted)
        let outcome = try #require(evaluation.certificateTransparency)
        #expect(outcome.isCompliant)
        #expect(outcome.observations.map(\.status) == [.verified, .verified])
        #expect(Set(outcome.observations.compactMap(\.log?.operatorName)) == ["Google", "Cloudflare"])
        #expect(outcome.observations.allSatisfy { $0.sct.source == .tlsExtension })
    }

    @Test func anEnforcedHostRefusesNamingWhatWasMissing() throws {
        let one = try evaluate(.enforced(), sctsFrom: [google])
        #expect(one.failure?.code == .certificateTransparency)
        #expect(one.failure?.reason.contains("Certificate Transparency (notEnoughSCTs)") == true)
        #expect(one.certificateTransparency?.reason == .notEnoughSCTs)
        let sameOperator = try evaluate(.enforced(), sctsFrom: [google, google2])
        #expect(sameOperator.failure?.code == .certificateTransparency)
        #expect(sameOperator.certificateTransparency?.reason == .notEnoughOperators)
        let none = try evaluate(.enforced(), sctsFrom: [])
        #expect(none.certificateTransparency?.reason == .notEnoughSCTs)
        #expect(!none.isTrusted)
    }

    @Test func anSCTFromALogOutsideTheListIsIgnoredAndNamed() throws {
        let stranger = TestCTLog(.p256)
        let evaluation = try evaluate(.enforced(), sctsFrom: [google, stranger])
        #expect(evaluation.certificateTransparency?.reason == .unknownLog)
        #expect(evaluation.certificateTransparency?.observations.map(\.status) == [.verified, .unknownLog])
        #expect(evaluation.failure?.code == .certificateTransparency)
    }

    @Test func reportOnlyNeverRefusesButRecordsTheOutcome() throws {
        let evaluation = try evaluate(.reportOnly(), sctsFrom: [google])
        #expect(evaluation.isTrusted)
        #expect(evaluation.certificateTransparency?.reason == .notEnoughSCTs)
        #expect(evaluation.findings.map(\.error.code) == [.certificateTransparency])
        #expect(evaluation.findings.first?.mode == .informational)
        #expect(evaluation.outcome?.code == .certificateTransparency)
    }

    @Test func aStaleListFailsOpenWithAFindingOrClosedWhenAsked() throws {
        let stale = try logs(listAge: 71 * 86_400)
        let open = try evaluate(.enforced(), sctsFrom: [google, cloudflare], logs: stale)
        #expect(open.isTrusted)
        #expect(open.certificateTransparency?.reason == .staleLogList)
        #expect(open.findings.map(\.error.code) == [.certificateTransparency])
        let closed = try evaluate(.enforced(staleLogList: .failClosed), sctsFrom: [google, cloudflare], logs: stale)
        #expect(closed.failure?.code == .certificateTransparency)
        #expect(closed.certificateTransparency?.reason == .staleLogList)
    }

    @Test func replacingTheListTakesEffectForTheNextEvaluation() throws {
        let logs = try logs()
        #expect(try evaluate(.enforced(), sctsFrom: [google, cloudflare], logs: logs).isTrusted)
        try logs.replace(with: try CTLogList(timestamp: now, logs: [google.log(name: "Google A", operator: "Google", state: .usable(.distantPast))]))
        let after = try evaluate(.enforced(), sctsFrom: [google, cloudflare], logs: logs)
        #expect(after.certificateTransparency?.reason == .unknownLog)
    }

    /// CT runs after the evaluator: a pin mismatch is the failure, and CT is not judged.
    @Test func pinsAreCheckedFirstAndComposeWithCT() throws {
        let otherKey = try LabPKI.makeRoot(commonName: "Other").certificate.spkiPin.description
        let pinned = try PinnedKeyHashesTrustEvaluator([otherKey, "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()])
        let mismatch = try evaluate(.enforced(), sctsFrom: [google, cloudflare], evaluator: pinned)
        #expect(mismatch.failure?.code == .pinMismatch)
        #expect(mismatch.certificateTransparency == nil)
        let matching = try PinnedKeyHashesTrustEvaluator([leaf.certificate.spkiPin.description, otherKey])
        #expect(try evaluate(.enforced(), sctsFrom: [google, cloudflare], evaluator: matching).isTrusted)
        #expect(try evaluate(.enforced(), sctsFrom: [google], evaluator: matching).failure?.code == .certificateTransparency)
    }

    @Test func aHostRequiringCTAsksTheServerForSCTs() throws {
        #expect(HostPolicy(certificateTransparency: .reportOnly()).usesSignedCertificateTimestamps)
        #expect(!HostPolicy().usesSignedCertificateTimestamps)
    }

    @Test func aManagerRequiringCTWithoutALogListIsNotMade() throws {
        let error = try #require(throws: TrustError.self) {
            try ServerTrustManager(policies: [try HostPattern(Self.host): HostPolicy(certificateTransparency: .enforced())])
        }
        #expect(error.code == .invalidConfiguration)
        #expect(error.reason.contains("requires Certificate Transparency (enforced), and the manager has no CT log list"))
    }

    /// A resolution made without a manager has no list: an enforced host refuses with `noLogList`.
    @Test func anEvaluationWithoutAListFailsClosedWhenEnforced() throws {
        let resolved = try ResolvedHostPolicy(
            host: NormalizedHost(Self.host), pattern: nil, policy: HostPolicy(certificateTransparency: .enforced()))
        let context = TrustEvaluationContext(anchors: try TrustAnchors([root.certificate]))
        let evaluation = resolved.evaluate(leaf.chain, in: context)
        #expect(evaluation.failure?.code == .certificateTransparency)
        #expect(evaluation.certificateTransparency?.reason == .noLogList)
    }

    // MARK: Policy file

    @Test func thePolicyFileReadsTheRequirement() throws {
        let json = #"{"version": 1, "hosts": {"ct.example.com": {"certificateTransparency": {"mode": "enforced", "staleLogList": "failClosed", "maximumLogListAgeDays": 30}}}}"#
        let file = try TrustPolicyFile(data: Array(json.utf8), certificateTransparencyLogs: try logs())
        let requirement = try #require(file.hosts.first?.policy.certificateTransparency)
        #expect(requirement == .enforced(staleLogList: .failClosed, maximumLogListAge: 30 * 86_400))
        #expect(file.hosts.first?.policy.certificateTransparency == requirement)
        #expect(file.manager.certificateTransparencyLogs != nil)
    }

    @Test(arguments: [
        (#"{"mode": "always"}"#, #"policy.json:1: hosts["ct.example.com"].certificateTransparency.mode: "always" is not one of enforced, reportOnly"#),
        (#"{}"#, #"missing field "mode""#),
        (#"{"mode": "enforced", "staleList": "failOpen"}"#, "certificateTransparency.staleList: unknown field"),
        (#"{"mode": "enforced", "maximumLogListAgeDays": 0}"#, "maximumLogListAgeDays: 0 is out of range"),
    ])
    func thePolicyFileRefusesAMalformedRequirement(body: String, expected: String) throws {
        let json = #"{"version": 1, "hosts": {"ct.example.com": {"certificateTransparency": \#(body)}}}"#
        let error = try #require(throws: TrustError.self) { try TrustPolicyFile(data: Array(json.utf8), certificateTransparencyLogs: try logs()) }
        #expect(error.reason.contains(expected), "\(error.reason)")
    }

    @Test func aPolicyFileRequiringCTWithoutALogListIsRefused() throws {
        let json = #"{"version": 1, "hosts": {"ct.example.com": {"certificateTransparency": {"mode": "reportOnly"}}}}"#
        let error = try #require(throws: TrustError.self) { try TrustPolicyFile(data: Array(json.utf8)) }
        #expect(error.code == .invalidPolicyFile)
        #expect(error.reason.contains("has no CT log list"))
    }

    // MARK: Softening under the floor

    @Test func everyRequirementSettingIsCompared() {
        let labels = Set(Mirror(reflecting: CertificateTransparencyRequirement()).children.compactMap(\.label))
        #expect(labels == CertificateTransparencyRequirement.comparedFields)
    }

    @Test(arguments: [
        ("dropped", "does not require Certificate Transparency, where the floor does"),
        ("reportOnly", "only reports it, where it was enforced"),
        ("failOpen", "fails open on a stale log list"),
        ("olderList", "accepts a log list 90 days old, not 70"),
    ])
    func eachWeakerRequirementIsASoftening(change: String, reason: String) throws {
        let floor = HostPolicy(certificateTransparency: .enforced(staleLogList: .failClosed))
        var mine = floor
        switch change {
        case "dropped": mine.certificateTransparency = nil
        case "reportOnly": mine.certificateTransparency?.mode = .reportOnly
        case "failOpen": mine.certificateTransparency?.staleLogList = .failOpen
        default: mine.certificateTransparency?.maximumLogListAge = 90 * 86_400
        }
        let softenings = mine.softenings(comparedWith: floor)
        #expect(softenings.map(\.field) == [.certificateTransparency])
        #expect(softenings.first?.reason.contains(reason) == true, "\(softenings)")
    }

    @Test func addingOrTighteningCTIsNotASoftening() throws {
        let none = HostPolicy()
        #expect(HostPolicy(certificateTransparency: .reportOnly()).softenings(comparedWith: none).isEmpty)
        let reportOnly = HostPolicy(certificateTransparency: .reportOnly())
        #expect(HostPolicy(certificateTransparency: .enforced(staleLogList: .failClosed, maximumLogListAge: 30 * 86_400))
            .softenings(comparedWith: reportOnly).isEmpty)
    }
}
