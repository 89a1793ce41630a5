import COpenSSL
import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// Fixtures/CT/conscrypt: Conscrypt's CT policy and verifier tests as data. These tests keep the
/// data honest — every case well-formed, every verifier case's files giving OpenSSL's
/// `SCT_validate` the outcome Conscrypt asserts — so the policy tests that read them start from
/// true inputs.
@Suite struct ConscryptCaseTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/CT/conscrypt")
    static let outcomes: Set<String> = ["compliant", "notEnoughSCTs", "notEnoughDiverseSCTs"]

    static func cases() throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent("cases.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func file(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(path)))
    }

    @Test func theLicenceAndNoticeTravelWithTheData() throws {
        #expect(String(decoding: try Self.file("LICENSE"), as: UTF8.self).contains("Apache License"))
        #expect(String(decoding: try Self.file("NOTICE"), as: UTF8.self).contains("The Android Open Source Project"))
        #expect(String(decoding: try Self.file("README.md"), as: UTF8.self).contains("3869db7b83a5c8d489aeb98dc194d993ec375cd8"))
    }

    @Test func everyPolicyCaseIsWellFormedAndEveryDifferenceFromConscryptIsExplained() throws {
        let root = try Self.cases()
        let logs = try #require(root["logs"] as? [String: [String: Any]])
        let cases = try #require(root["policy_cases"] as? [[String: Any]])
        // PolicyImplTest's 16 result cases, then ours.
        #expect(cases.filter { $0["added"] == nil }.count == 16)
        for policyCase in cases {
            let name = policyCase["name"] as? String ?? "?"
            let expected = try #require(policyCase["expected"] as? String)
            let conscrypt = try #require(policyCase["conscrypt"] as? String)
            #expect(Self.outcomes.contains(expected) && Self.outcomes.contains(conscrypt), "\(name)")
            if expected != conscrypt { #expect((policyCase["note"] as? String)?.hasPrefix("DIFFERS") == true, "\(name)") }
            #expect(policyCase["checked_at"] is Int, "\(name)")
            #expect((policyCase["certificate"] as? [String: Any])?["lifetime_ms"] is Int, "\(name)")
            for sct in try #require(policyCase["scts"] as? [[String: Any]]) {
                let log = try #require(sct["log"] as? String)
                #expect(logs[log] != nil || log == "unknown", "\(name): \(log)")
                #expect(["embedded", "tls", "ocsp"].contains(sct["source"] as? String ?? ""), "\(name)")
                #expect(sct["timestamp"] is Int && sct["valid"] is Bool, "\(name)")
            }
        }
        let listCases = try #require(root["log_list_cases"] as? [[String: Any]])
        #expect(listCases.count == 3)
    }

    /// Each VerifierTest case, through OpenSSL with Conscrypt's log key: the data say what
    /// Conscrypt's verifier finds, and OpenSSL agrees.
    @Test func theVerifierCasesFilesGiveOpenSSLTheOutcomesConscryptAsserts() throws {
        let root = try Self.cases()
        let log = try #require(root["verifier_log"] as? [String: Any])
        let key = try PublicKey(pemOrBase64: String(decoding: try Self.file(try #require(log["key_file"] as? String)), as: UTF8.self))
        let keys = [key.subjectPublicKeyInfoDER]
        let time = Date(timeIntervalSince1970: 1_451_606_400)  // 2016-01-01, after every SCT of the files
        let cases = try #require(root["verifier_cases"] as? [[String: Any]])
        #expect(cases.count == 9)
        for verifierCase in cases {
            let name = try #require(verifierCase["name"] as? String)
            let chain = try (try #require(verifierCase["chain"] as? [String])).map {
                try Certificate(pemEncoded: String(decoding: try Self.file($0), as: UTF8.self))
            }
            func bytes(_ field: String) throws -> [UInt8]? {
                guard let input = verifierCase[field] as? [String: String] else { return nil }
                if let path = input["file"] { return try Self.file(path) }
                let hex = try #require(input["hex"])
                return stride(from: 0, to: hex.count, by: 2).map {
                    UInt8(hex[hex.index(hex.startIndex, offsetBy: $0)..<hex.index(hex.startIndex, offsetBy: $0 + 2)], radix: 16)!
                }
            }
            var found: [(source: String, status: sct_validation_status_t)] = []
            if let list = try bytes("tls_extension") {
                let statuses = try OpenSSLSCTValidation.statuses(
                    ofList: list, source: SCT_SOURCE_TLS_EXTENSION, certificate: chain[0], issuer: chain[1], logKeys: keys, at: time)
                found += (statuses ?? []).map { ("tls", $0) }
            }
            if let response = try bytes("ocsp_response") {
                let statuses = try OpenSSLSCTValidation.statuses(
                    ofOCSPResponse: response, certificate: chain[0], issuer: chain[1], logKeys: keys, at: time)
                found += (statuses ?? []).map { ("ocsp", $0) }
            }
            // Embedded SCTs are looked for in every leaf, as Conscrypt's verifier does.
            if try OpenSSLSCTValidation.hasEmbeddedSCTs(chain[0]) {
                found += try OpenSSLSCTValidation.embeddedStatuses(certificate: chain[0], issuer: chain[1], logKeys: keys, at: time)
                    .map { ("embedded", $0) }
            }
            let expected = try #require(verifierCase["expected"] as? [String: [[String: String]]])
            let valid = found.filter { $0.status == SCT_VALIDATION_STATUS_VALID }.map(\.source)
            #expect(valid == (expected["valid"] ?? []).map { $0["source"]! }, "\(name)")
            let invalid = found.filter { $0.status != SCT_VALIDATION_STATUS_VALID }
            let expectedInvalid = expected["invalid"] ?? []
            #expect(invalid.map(\.source) == expectedInvalid.map { $0["source"]! }, "\(name)")
            for (seen, wanted) in zip(invalid, expectedInvalid) {
                let status = wanted["status"] == "unknownLog" ? SCT_VALIDATION_STATUS_UNKNOWN_LOG : SCT_VALIDATION_STATUS_INVALID
                #expect(seen.status == status, "\(name)")
            }
        }
    }
}
