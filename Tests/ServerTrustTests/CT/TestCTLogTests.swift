import COpenSSL
import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// The test CT log (ServerTrustTestSupport/CT) against OpenSSL's own CT verifier: its SCTs, its
/// precertificate issuance and its log list must be what real logs and CAs produce, or every CT
/// test built on them proves nothing.
@Suite struct TestCTLogTests {
    static let issued = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z
    static let checked = issued.addingTimeInterval(60)

    enum ExtensionsCase: String, CaseIterable, CustomTestStringConvertible {
        case none, leafIndex
        var bytes: [UInt8] { self == .none ? [] : TestCTLog.leafIndexExtension(0x01_2345_6789) }
        var testDescription: String { rawValue }
    }

    @Test(arguments: [TestCTLog.KeyKind.p256, .rsa2048], ExtensionsCase.allCases)
    func certificateSCTsVerifyWithOpenSSLFromTheTLSExtensionAndOCSP(keyKind: TestCTLog.KeyKind, extensions: ExtensionsCase) throws {
        let ca = try LabPKI.makeRoot()
        let leaf = try ca.issueLeaf(dnsNames: ["ct.example.com"])
        let log = try TestCTLog(description: "Test Log", operatorName: "Operator A", keyKind: keyKind)
        let sct = try log.certificateSCT(for: leaf.certificate.derEncoded, at: Self.issued, extensions: extensions.bytes)
        for source in [SCT_SOURCE_TLS_EXTENSION, SCT_SOURCE_OCSP_STAPLED_RESPONSE] {
            let status = try OpenSSLSCTValidation.status(
                of: sct, source: source, certificate: leaf.certificate, issuer: ca.certificate, logs: [log], at: Self.checked)
            #expect(status == SCT_VALIDATION_STATUS_VALID)
        }
    }

    @Test(arguments: [TestCTLog.KeyKind.p256, .rsa2048], ExtensionsCase.allCases)
    func embeddedPrecertificateSCTsVerifyWithOpenSSL(keyKind: TestCTLog.KeyKind, extensions: ExtensionsCase) throws {
        let ca = try LabPKI.makeRoot().issueIntermediate()
        let logs = [
            try TestCTLog(description: "Log A", operatorName: "Operator A", keyKind: keyKind),
            try TestCTLog(description: "Log B", operatorName: "Operator B", keyKind: .p256),
        ]
        let leaf = try ca.issueLeafWithEmbeddedSCTs(
            from: logs, dnsNames: ["ct.example.com"], notBefore: Self.issued, sctTimestamp: Self.issued, sctExtensions: extensions.bytes)
        let statuses = try OpenSSLSCTValidation.embeddedStatuses(
            certificate: leaf.certificate, issuer: ca.certificate, logs: logs, at: Self.checked)
        #expect(statuses == [SCT_VALIDATION_STATUS_VALID, SCT_VALIDATION_STATUS_VALID])
        #expect(leaf.signedCertificateTimestamps.count == 2)
    }

    @Test(arguments: [TestCTLog.KeyKind.p256, .rsa2048])
    func forgedSCTsAndSCTsOfUnknownLogsFailOpenSSLsCheck(keyKind: TestCTLog.KeyKind) throws {
        let ca = try LabPKI.makeRoot()
        let leaf = try ca.issueLeaf(dnsNames: ["ct.example.com"])
        let log = try TestCTLog(description: "Test Log", operatorName: "Operator A", keyKind: keyKind)
        let other = keyKind == .p256 ? LabKey.ecP256() : LabKey.rsa(bits: 2048, variant: 7)
        func status(_ sct: [UInt8], logs: [TestCTLog]) throws -> sct_validation_status_t {
            try OpenSSLSCTValidation.status(
                of: sct, source: SCT_SOURCE_TLS_EXTENSION, certificate: leaf.certificate, issuer: ca.certificate, logs: logs, at: Self.checked)
        }
        let der = leaf.certificate.derEncoded
        #expect(try status(log.certificateSCT(for: der, at: Self.issued, forgery: .signedWith(other)), logs: [log]) == SCT_VALIDATION_STATUS_INVALID)
        #expect(try status(log.certificateSCT(for: der, at: Self.issued, forgery: .flippedSignatureBit), logs: [log]) == SCT_VALIDATION_STATUS_INVALID)
        let stranger = try TestCTLog(description: "Unlisted Log", operatorName: "Operator Z")
        #expect(try status(log.certificateSCT(for: der, at: Self.issued), logs: [stranger]) == SCT_VALIDATION_STATUS_UNKNOWN_LOG)
        // The unforged control, so the three above fail for their forgery alone.
        #expect(try status(log.certificateSCT(for: der, at: Self.issued), logs: [log]) == SCT_VALIDATION_STATUS_VALID)
    }

    @Test func anSCTHasTheRFC6962Layout() throws {
        let log = try TestCTLog(description: "Test Log", operatorName: "Operator A", keyKind: .rsa2048)
        let extensions = TestCTLog.leafIndexExtension(42)
        let sct = try log.certificateSCT(for: [0x30, 0x00], at: Date(timeIntervalSince1970: 1.5), extensions: extensions)
        #expect(sct[0] == 0)  // v1
        #expect(Array(sct[1..<33]) == log.logID)
        #expect(Array(sct[33..<41]) == [0, 0, 0, 0, 0, 0, 0x05, 0xDC])  // 1500 ms
        #expect(Array(sct[41..<43]) == [0, UInt8(extensions.count)])
        #expect(Array(sct[43..<(43 + extensions.count)]) == extensions)
        let rest = Array(sct[(43 + extensions.count)...])
        #expect(Array(rest[0..<2]) == [4, 1])  // sha256, rsa
        #expect(Int(rest[2]) << 8 | Int(rest[3]) == rest.count - 4)
        #expect(rest.count - 4 == 256)
        #expect(log.publicKeyDER == log.key.publicKey.subjectPublicKeyInfoDER)
        #expect(Data(log.logID).base64EncodedString() == log.key.pin.base64)
    }

    @Test func theLeafIndexExtensionIsTypeZeroAndAFiveByteIndex() {
        #expect(TestCTLog.leafIndexExtension(0) == [0, 0, 5, 0, 0, 0, 0, 0])
        #expect(TestCTLog.leafIndexExtension(0xAB_CDEF_0123) == [0, 0, 5, 0xAB, 0xCD, 0xEF, 0x01, 0x23])
    }

    @Test func theSCTListAndItsExtensionValueAreLengthPrefixedAndWrapped() {
        let list = SCTListEncoding.list([[1, 2, 3], [4]])
        #expect(list == [0, 8, 0, 3, 1, 2, 3, 0, 1, 4])
        #expect(SCTListEncoding.extensionValue([[1, 2, 3], [4]]) == [0x04, 10] + list)
        #expect(SCTListEncoding.tlsExtension([[1, 2, 3], [4]]) == [0, 18, 0, 10] + list)
    }

    @Test func removingTheSCTListFromTheFinalTBSGivesThePrecertificateTBSWithoutPoison() throws {
        let ca = try LabPKI.makeRoot().issueIntermediate()
        let logs = [try TestCTLog(description: "Log A", operatorName: "A"), try TestCTLog(description: "Log B", operatorName: "B")]
        let leaf = try ca.issueLeafWithEmbeddedSCTs(from: logs, dnsNames: ["ct.example.com"], notBefore: Self.issued)
        // OpenSSL's own reconstruction, from each side.
        #expect(try OpenSSLSCTValidation.tbs(of: leaf.certificate, removing: NID_ct_precert_scts) == leaf.tbsWithoutPoison)
        #expect(try OpenSSLSCTValidation.tbs(of: leaf.precertificate, removing: NID_ct_precert_poison) == leaf.tbsWithoutPoison)
        // The SCT list is the final certificate's last extension, where the poison was.
        func text(_ certificate: Certificate) throws -> String {
            let path = try LabPKI.writeTemporaryFile(certificate.pemEncoded)
            defer { LabPKI.removeTemporaryFile(path) }
            return try shell("openssl x509 -noout -text -in '\(path)'")
        }
        #expect(try text(leaf.precertificate).contains("CT Precertificate Poison: critical"))
        let finalText = try text(leaf.certificate)
        #expect(finalText.contains("CT Precertificate SCTs:"))
        #expect(!finalText.contains("Poison"))
        #expect(leaf.precertificate.serialNumber == leaf.certificate.serialNumber)
    }

    @Test func aFinalCertificateWhoseTBSChangedAfterLoggingFailsOpenSSLsCheck() throws {
        let ca = try LabPKI.makeRoot()
        let log = try TestCTLog(description: "Log A", operatorName: "A")
        let leaf = try ca.issueLeafWithEmbeddedSCTs(
            from: [log], dnsNames: ["ct.example.com"], notBefore: Self.issued, serialNumber: "4C0FFEE1", finalSerialNumber: "4C0FFEE2")
        #expect(try OpenSSLSCTValidation.embeddedStatuses(certificate: leaf.certificate, issuer: ca.certificate, logs: [log], at: Self.checked)
            == [SCT_VALIDATION_STATUS_INVALID])
        let honest = try ca.issueLeafWithEmbeddedSCTs(
            from: [log], dnsNames: ["ct.example.com"], notBefore: Self.issued, serialNumber: "4C0FFEE1")
        #expect(try OpenSSLSCTValidation.embeddedStatuses(certificate: honest.certificate, issuer: ca.certificate, logs: [log], at: Self.checked)
            == [SCT_VALIDATION_STATUS_VALID])
    }

    @Test(arguments: [90.0, 180.0, 181.0, 398.0])
    func theLifetimeParameterSetsNotAfter(days: Double) throws {
        let leaf = try LabPKI.makeRoot().issueLeafWithEmbeddedSCTs(
            from: [try TestCTLog(description: "Log A", operatorName: "A")], notBefore: Self.issued, lifetime: days * 86400)
        #expect(leaf.certificate.notValidAfter.timeIntervalSince(leaf.certificate.notValidBefore) == days * 86400)
    }

    @Test(arguments: [LabKey.rsa(bits: 2048), LabKey.ecP256(), LabKey.ed25519()])
    func theLogListIsChromesV3SchemaAndItsSignatureVerifiesWithOpenSSL(key: LabKey) throws {
        let a = try TestCTLog(description: "Log A", operatorName: "Operator A")
        let b = try TestCTLog(description: "Log B", operatorName: "Operator B", keyKind: .rsa2048)
        let c = try TestCTLog(description: "Log C", operatorName: "Operator A")
        var list = TestCTLogList()
        list.add(a, state: .usable, since: Self.issued.addingTimeInterval(-86400 * 400))
        list.add(b, state: .retired, since: Self.issued, temporalInterval: Self.issued..<Self.issued.addingTimeInterval(86400 * 365))
        list.add(c, state: .qualified, since: Self.issued, tiled: true)
        let json = list.json(timestamp: Self.checked)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        #expect(root["version"] as? String == "1.0")
        #expect(root["log_list_timestamp"] as? String == "2026-01-01T00:01:00Z")
        let operators = try #require(root["operators"] as? [[String: Any]])
        #expect(operators.map { $0["name"] as? String } == ["Operator A", "Operator B"])
        let logsA = try #require(operators[0]["logs"] as? [[String: Any]])
        #expect(logsA.count == 1)
        #expect(logsA[0]["log_id"] as? String == Data(a.logID).base64EncodedString())
        #expect(logsA[0]["key"] as? String == Data(a.publicKeyDER).base64EncodedString())
        #expect((logsA[0]["state"] as? [String: [String: String]])?["usable"]?["timestamp"] == "2024-11-27T00:00:00Z")
        #expect(logsA[0]["url"] is String)
        let tiled = try #require(operators[0]["tiled_logs"] as? [[String: Any]])
        #expect(tiled.map { $0["description"] as? String } == ["Log C"])
        #expect(tiled[0]["submission_url"] is String && tiled[0]["monitoring_url"] is String)
        let logB = try #require((operators[1]["logs"] as? [[String: Any]])?.first)
        #expect(logB["temporal_interval"] as? [String: String] == ["start_inclusive": "2026-01-01T00:00:00Z", "end_exclusive": "2027-01-01T00:00:00Z"])
        #expect(logB["mmd"] as? Int == 86400)

        let signature = try list.signature(of: json, key: key)
        let directory = NSTemporaryDirectory() + "ctlist-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(json).write(to: URL(fileURLWithPath: directory + "/log_list.json"))
        try Data(signature).write(to: URL(fileURLWithPath: directory + "/log_list.sig"))
        try Data(key.publicKey.subjectPublicKeyInfoDER).write(to: URL(fileURLWithPath: directory + "/key.der"))
        let digest = key.algorithm == .ed25519 ? "-rawin" : "-rawin -digest sha256"
        let verified = try shell(
            "cd '\(directory)' && openssl pkeyutl -verify -pubin -inkey key.der -keyform DER \(digest) -in log_list.json -sigfile log_list.sig")
        #expect(verified.contains("Signature Verified Successfully"))
    }
}
