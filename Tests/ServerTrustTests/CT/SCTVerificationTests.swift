import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// SCT parsing and verification with OpenSSL's `SCT_validate`, on real SCTs from Google's test
/// log (OpenSSL's and Conscrypt's fixtures) and on SCTs signed in the test by ECDSA and RSA logs.
@Suite struct SCTVerificationTests {
    let store: CTLogStore
    init() throws { store = try CTLogStore(try CTFixtures.logList()) }

    // MARK: Real SCTs, each source

    @Test func opensslsEmbeddedSCTVerifiesOverThePrecertificateAtItsIssuanceTime() throws {
        let leaf = try CTFixtures.certificate("openssl/embeddedSCTs1.pem")
        let issuer = try CTFixtures.certificate("openssl/embeddedSCTs1_issuer.pem")
        let scts = try SignedCertificateTimestamp.embedded(in: leaf)
        #expect(scts.count == 1)
        #expect(scts[0].source == .embedded)
        #expect(scts[0].logID == CTFixtures.testLogID)
        #expect(scts[0].signatureAlgorithm == "ecdsa-with-SHA256")
        let observations = store.verify(scts, leaf: leaf, issuer: issuer, at: CTFixtures.justAfter(scts[0]))
        #expect(observations.map(\.status) == [.verified])
        #expect(observations[0].log?.operatorName == "Certificate Transparency test")
    }

    @Test func conscryptsEmbeddedSCTVerifies() throws {
        let leaf = try CTFixtures.certificate("conscrypt/files/cert-ct-embedded.pem")
        let issuer = try CTFixtures.certificate("conscrypt/files/ca-cert.pem")
        let scts = try SignedCertificateTimestamp.embedded(in: leaf)
        #expect(store.verify(scts, leaf: leaf, issuer: issuer, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.verified])
    }

    @Test func tlsExtensionSCTVerifiesOverTheCertificate() throws {
        let leaf = try CTFixtures.certificate("conscrypt/files/cert.pem")
        let scts = try SignedCertificateTimestamp.list(tlsEncoded: try CTFixtures.bytes("conscrypt/files/ct-signed-timestamp-list"), source: .tlsExtension)
        #expect(scts.count == 1)
        #expect(try SignedCertificateTimestamp.embedded(in: leaf).isEmpty)
        #expect(store.verify(scts, leaf: leaf, issuer: nil, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.verified])
    }

    @Test func stapledOCSPResponseSCTVerifiesOverTheCertificate() throws {
        let leaf = try CTFixtures.certificate("conscrypt/files/cert.pem")
        let scts = try SignedCertificateTimestamp.stapled(inOCSPResponse: try CTFixtures.bytes("conscrypt/files/ocsp-response.der"))
        #expect(scts.map(\.source) == [.ocspStaple])
        #expect(store.verify(scts, leaf: leaf, issuer: nil, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.verified])
    }

    @Test func anSCTIsOneParsedValueWhicheverWayItArrives() throws {
        let list = try SignedCertificateTimestamp.list(tlsEncoded: try CTFixtures.bytes("conscrypt/files/ct-signed-timestamp-list"), source: .tlsExtension)
        let single = try SignedCertificateTimestamp(tlsEncoded: list[0].encoded, source: .tlsExtension)
        #expect(single == list[0])
        #expect(single.version == 0)
        #expect(single.extensions.isEmpty)
    }

    // MARK: Attacks, each refused with its reason

    @Test func anSCTForAnotherCertificateIsABadSignature() throws {
        let scts = try SignedCertificateTimestamp.list(tlsEncoded: try CTFixtures.bytes("conscrypt/files/ct-signed-timestamp-list"), source: .tlsExtension)
        let other = try CTFixtures.certificate("openssl/embeddedSCTs1.pem")
        #expect(store.verify(scts, leaf: other, issuer: nil, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.badSignature])
    }

    /// The two fixture leaves share subject, key and issuer; they differ in validity and SCT.
    /// OpenSSL's precertificate SCT, presented in Conscrypt's leaf, is over another TBS.
    @Test func aPrecertificateSCTPresentedForAChangedTBSIsABadSignature() throws {
        let original = try CTFixtures.certificate("openssl/embeddedSCTs1.pem")
        let changed = try CTFixtures.certificate("conscrypt/files/cert-ct-embedded.pem")
        let issuer = try CTFixtures.certificate("openssl/embeddedSCTs1_issuer.pem")
        #expect(original.subjectPublicKeyInfoDER == changed.subjectPublicKeyInfoDER)
        let scts = try SignedCertificateTimestamp.embedded(in: original)
        #expect(store.verify(scts, leaf: changed, issuer: issuer, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.badSignature])
    }

    @Test func anEmbeddedSCTWithAnotherIssuerKeyIsABadSignature() throws {
        let leaf = try CTFixtures.certificate("openssl/embeddedSCTs1.pem")
        let stranger = try LabPKI.makeRoot(commonName: "Not The Issuer").certificate
        let scts = try SignedCertificateTimestamp.embedded(in: leaf)
        #expect(store.verify(scts, leaf: leaf, issuer: stranger, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.badSignature])
    }

    @Test func aForgedSignatureIsABadSignature() throws {
        let leaf = try CTFixtures.certificate("conscrypt/files/cert.pem")
        let genuine = try SignedCertificateTimestamp.list(tlsEncoded: try CTFixtures.bytes("conscrypt/files/ct-signed-timestamp-list"), source: .tlsExtension)[0]
        var bytes = genuine.encoded
        bytes[bytes.count - 5] ^= 0x01
        let forged = try SignedCertificateTimestamp(tlsEncoded: bytes, source: .tlsExtension)
        #expect(store.verify([forged], leaf: leaf, issuer: nil, at: CTFixtures.justAfter(forged)).map(\.status) == [.badSignature])
        let invalid = try SignedCertificateTimestamp.list(
            tlsEncoded: try CTFixtures.bytes("conscrypt/files/ct-signed-timestamp-list-invalid"), source: .tlsExtension)
        #expect(store.verify(invalid, leaf: leaf, issuer: nil, at: CTFixtures.justAfter(invalid[0])).map(\.status) == [.badSignature])
    }

    @Test func anSCTFromALogOutsideTheListIsUnknown() throws {
        let leaf = try CTFixtures.certificate("conscrypt/files/cert.pem")
        let scts = try SignedCertificateTimestamp.list(
            tlsEncoded: try CTFixtures.bytes("conscrypt/files/ct-signed-timestamp-list-unknown"), source: .tlsExtension)
        let observations = store.verify(scts, leaf: leaf, issuer: nil, at: CTFixtures.justAfter(scts[0]))
        #expect(observations.map(\.status) == [.unknownLog])
        #expect(observations[0].log == nil)
        // The same genuine SCT, with no list naming its log.
        let genuine = try SignedCertificateTimestamp.list(tlsEncoded: try CTFixtures.bytes("conscrypt/files/ct-signed-timestamp-list"), source: .tlsExtension)
        let empty = try CTLogStore(try CTLogList(timestamp: Date(), logs: []))
        #expect(empty.verify(genuine, leaf: leaf, issuer: nil, at: CTFixtures.justAfter(genuine[0])).map(\.status) == [.unknownLog])
    }

    @Test func anSCTIssuedAfterTheEvaluationTimeIsRefused() throws {
        let leaf = try CTFixtures.certificate("conscrypt/files/cert.pem")
        let scts = try SignedCertificateTimestamp.list(tlsEncoded: try CTFixtures.bytes("conscrypt/files/ct-signed-timestamp-list"), source: .tlsExtension)
        let before = scts[0].timestamp.addingTimeInterval(-1)
        #expect(store.verify(scts, leaf: leaf, issuer: nil, at: before).map(\.status) == [.timestampInFuture])
    }

    @Test func anEmbeddedSCTWithoutTheIssuerIsNotVerified() throws {
        let leaf = try CTFixtures.certificate("openssl/embeddedSCTs1.pem")
        let scts = try SignedCertificateTimestamp.embedded(in: leaf)
        #expect(store.verify(scts, leaf: leaf, issuer: nil, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.issuerUnknown])
    }

    // MARK: ECDSA and RSA logs, and signed extensions

    @Test(arguments: [TestCTLog.KeyKind.p256, .rsa2048])
    func bothECDSAAndRSALogKeysVerify(_ type: TestCTLog.KeyKind) throws {
        let (store, leaf, log) = try madeLog(type)
        let sct = try SignedCertificateTimestamp(tlsEncoded: log.sct(for: leaf, at: Date(timeIntervalSince1970: 1_700_000_000)), source: .tlsExtension)
        #expect(sct.signatureAlgorithm == (type == .rsa2048 ? "sha256WithRSAEncryption" : "ecdsa-with-SHA256"))
        #expect(store.verify([sct], leaf: leaf, issuer: nil, at: Date(timeIntervalSince1970: 1_700_000_100)).map(\.status) == [.verified])
    }

    /// A static-ct-api log (Sunlight, TesseraCT) puts a `leaf_index` extension in every SCT:
    /// type 0, a 16-bit length of 5, a 40-bit index. The signature covers it.
    @Test(arguments: [TestCTLog.KeyKind.p256, .rsa2048])
    func sctExtensionsArePartOfTheSignedData(_ type: TestCTLog.KeyKind) throws {
        let (store, leaf, log) = try madeLog(type)
        let leafIndex: [UInt8] = [0, 0, 5, 0, 0, 0, 0x12, 0x34]
        var altered = leafIndex
        altered[7] ^= 0x01
        let time = Date(timeIntervalSince1970: 1_700_000_000)
        let withIndex = try SignedCertificateTimestamp(tlsEncoded: log.sct(for: leaf, at: time, signedExtensions: leafIndex), source: .tlsExtension)
        #expect(withIndex.extensions == leafIndex)
        let tampered = try SignedCertificateTimestamp(
            tlsEncoded: log.sct(for: leaf, at: time, signedExtensions: leafIndex, presentedExtensions: altered), source: .tlsExtension)
        let stripped = try SignedCertificateTimestamp(
            tlsEncoded: log.sct(for: leaf, at: time, signedExtensions: leafIndex, presentedExtensions: []), source: .tlsExtension)
        let statuses = store.verify([withIndex, tampered, stripped], leaf: leaf, issuer: nil, at: time.addingTimeInterval(60)).map(\.status)
        #expect(statuses == [.verified, .badSignature, .badSignature])
    }

    @Test func anSCTLabelledWithAnotherAlgorithmThanItsLogKeyIsRefused() throws {
        let (store, leaf, log) = try madeLog(.rsa2048)
        let time = Date(timeIntervalSince1970: 1_700_000_000)
        let mislabelled = try SignedCertificateTimestamp(tlsEncoded: log.sct(for: leaf, at: time, signatureAlgorithm: 3), source: .tlsExtension)
        #expect(mislabelled.signatureAlgorithm == "ecdsa-with-SHA256")
        #expect(store.verify([mislabelled], leaf: leaf, issuer: nil, at: time.addingTimeInterval(60)).map(\.status) == [.badSignature])
    }

    // MARK: Parsing

    @Test func malformedSCTListsAreRefusedWithAClearError() throws {
        let genuine = try CTFixtures.bytes("conscrypt/files/ct-signed-timestamp-list")
        for bad in [[], [0x00], Array(genuine.dropLast()), genuine + [0], [0x00, 0x02, 0x00, 0x00]] as [[UInt8]] {
            #expect(throws: TrustError.unreadableInput) { try SignedCertificateTimestamp.list(tlsEncoded: bad, source: .tlsExtension) }
        }
    }

    private func madeLog(_ type: TestCTLog.KeyKind) throws -> (CTLogStore, Certificate, TestCTLog) {
        let log = TestCTLog(type)
        let list = try CTLogList(timestamp: Date(timeIntervalSince1970: 1_690_000_000), logs: [
            log.log(name: "Test \(type)", operator: "Tests", state: .usable(Date(timeIntervalSince1970: 1_600_000_000)))
        ])
        let leaf = try LabPKI.makeRoot(commonName: "CT Test CA").issueLeaf(dnsNames: ["ct.example.com"]).certificate
        return (try CTLogStore(list), leaf, log)
    }
}
