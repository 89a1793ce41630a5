import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// Conscrypt's `PolicyImplTest` cases (Fixtures/CT/conscrypt/cases.json, with ours) fed through
/// ``CertificateTransparencyPolicy/evaluate(_:notValidBefore:notValidAfter:list:requirement:at:)``:
/// each case's `reason` is the outcome our policy must give, and where it is not Conscrypt's the
/// case's note (and the folder's README) says why.
@Suite struct ConscryptPolicyCaseTests {
    let root: [String: Any]
    let logs: [String: CTLogList.Log]
    let signers: [String: TestCTLog]
    let certificate: Certificate

    init() throws {
        root = try ConscryptCaseTests.cases()
        let definitions = try #require(root["logs"] as? [String: [String: Any]])
        var logs: [String: CTLogList.Log] = [:]
        var signers: [String: TestCTLog] = [:]
        for (name, definition) in definitions {
            let signer = TestCTLog(.p256)
            let operatorName = try #require(definition["operator"] as? String)
            var state: CTLogList.State?
            if let stateName = definition["state"] as? String {
                let since = Self.date(try #require(definition["state_timestamp"] as? Int))
                switch stateName {
                case "pending": state = .pending(since)
                case "qualified": state = .qualified(since)
                case "usable": state = .usable(since)
                case "readonly": state = .readOnly(since)
                case "retired": state = .retired(since)
                case "rejected": state = .rejected(since)
                default: Issue.record("\(name): unknown state \(stateName)")
                }
            }
            logs[name] = CTLogList.Log(
                name: name, key: signer.publicKeyDER, operatorName: operatorName, state: state, temporalInterval: nil,
                isTiled: definition["type"] as? String == "static_ct_api")
            signers[name] = signer
        }
        self.logs = logs
        self.signers = signers
        certificate = try LabPKI.makeRoot(commonName: "Conscrypt policy cases").certificate
    }

    static func date(_ milliseconds: Int) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    static func reason(_ value: Any?) throws -> CertificateTransparencyOutcome.Reason? {
        if value is NSNull { return nil }
        let name = try #require(value as? String)
        return try #require(CertificateTransparencyOutcome.Reason(rawValue: name), "no reason \(name)")
    }

    /// The observations a case describes: each SCT signed by its log's test key (an unknown
    /// log's by a key outside the list), with the verifier's verdict the case gives.
    func observations(_ policyCase: [String: Any]) throws -> [SCTObservation] {
        try (try #require(policyCase["scts"] as? [[String: Any]])).map { sct in
            let logName = try #require(sct["log"] as? String)
            let source: SignedCertificateTimestamp.Source =
                switch try #require(sct["source"] as? String) {
                case "embedded": .embedded
                case "tls": .tlsExtension
                default: .ocspStaple
                }
            let signer = signers[logName] ?? TestCTLog(.p256)
            let encoded = signer.sct(for: certificate, at: Self.date(try #require(sct["timestamp"] as? Int)))
            let parsed = try SignedCertificateTimestamp(tlsEncoded: encoded, source: source)
            guard let log = logs[logName] else { return SCTObservation(sct: parsed, log: nil, status: .unknownLog) }
            return SCTObservation(sct: parsed, log: log, status: try #require(sct["valid"] as? Bool) ? .verified : .badSignature)
        }
    }

    @Test func everyPolicyCaseGivesTheReasonTheDataExpect() throws {
        let cases = try #require(root["policy_cases"] as? [[String: Any]])
        #expect(cases.count == 31)
        let listTimestamp = Self.date(try #require((root["times"] as? [String: [String: Any]])?["DEC2023"]?["ms"] as? Int))
        let list = try CTLogList(timestamp: listTimestamp, logs: Array(logs.values))
        for policyCase in cases {
            let name = try #require(policyCase["name"] as? String)
            let checkedAt = Self.date(try #require(policyCase["checked_at"] as? Int))
            let lifetime = Double(try #require((policyCase["certificate"] as? [String: Any])?["lifetime_ms"] as? Int)) / 1000
            let notBefore = Self.date(1_672_567_200_000)  // the SCTs' day; only the lifetime matters
            let outcome = CertificateTransparencyPolicy.evaluate(
                try observations(policyCase), notValidBefore: notBefore, notValidAfter: notBefore.addingTimeInterval(lifetime), list: list,
                requirement: .enforced(staleLogList: .failClosed), at: checkedAt)
            let reason = try Self.reason(policyCase["reason"])
            #expect(outcome.reason == reason, "\(name): \(outcome)")
            // `expected`, in Conscrypt's words, agrees with `reason`.
            let expected = try #require(policyCase["expected"] as? String)
            switch expected {
            case "compliant": #expect(reason == nil, "\(name)")
            case "notEnoughDiverseSCTs": #expect(reason == .notEnoughOperators, "\(name)")
            default: #expect([.notEnoughSCTs, .badSCTSignature, .unknownLog].contains(reason), "\(name)")
            }
        }
    }

    @Test func theLogListCasesAreRefusedAsStaleOrAccepted() throws {
        let cases = try #require(root["log_list_cases"] as? [[String: Any]])
        let maximumDays = try #require(root["log_list_max_age_days"] as? Int)
        let requirement = CertificateTransparencyRequirement.enforced(staleLogList: .failClosed, maximumLogListAge: Double(maximumDays) * 86_400)
        let (op1, op2) = (try #require(logs["usableOp1Log1"]), try #require(logs["usableOp2Log"]))
        let scts = try [op1, op2].map { log in
            let encoded = signers[log.name]!.sct(for: certificate, at: Self.date(1_672_567_200_000))
            return SCTObservation(sct: try SignedCertificateTimestamp(tlsEncoded: encoded, source: .embedded), log: log, status: .verified)
        }
        for listCase in cases {
            let name = try #require(listCase["name"] as? String)
            let list = try CTLogList(timestamp: Self.date(try #require(listCase["log_list_timestamp"] as? Int)), logs: Array(logs.values))
            let notBefore = Self.date(1_672_567_200_000)
            let outcome = CertificateTransparencyPolicy.evaluate(
                scts, notValidBefore: notBefore, notValidAfter: notBefore.addingTimeInterval(1), list: list, requirement: requirement,
                at: Self.date(try #require(listCase["checked_at"] as? Int)))
            #expect(outcome.reason == (try Self.reason(listCase["reason"])), "\(name): \(outcome)")
            if outcome.reason == .staleLogList { #expect(outcome.isEnforceable, "\(name)") }
        }
    }
}
