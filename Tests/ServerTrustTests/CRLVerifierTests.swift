import COpenSSL
import Foundation
import ServerTrust
@testable import ServerTrustTestSupport
import Testing

/// A CRL with the extensions `LabCA.makeCRLDER` does not write: issuing distribution point,
/// delta CRL indicator, freshestCRL, unknown critical extensions, a foreign signing key.
struct CRLSpec {
    var revoked: [RevokedCertificate] = []
    var thisUpdate: Date = .days(-1.0 / 24)
    var nextUpdate: Date? = .days(7)
    var number = 1
    /// Makes it a delta CRL based on this CRL number.
    var deltaBase: Int?
    /// issuingDistributionPoint in OpenSSL's configuration syntax, e.g. `fullname:URI:http://x,onlyuser:TRUE`.
    var issuingDistributionPoint: String?
    /// freshestCRL in OpenSSL's configuration syntax, e.g. `URI:http://x/delta.crl`.
    var freshestCRL: String?
    /// A critical CRL extension with this OID and empty content.
    var criticalExtensionOID: String?
    /// A critical extension with this OID on the first entry.
    var criticalEntryExtensionOID: String?
    /// Signs with this key instead of the CA's (the issuer name stays the CA's).
    var signingKey: LabKey?

    func der(by ca: LabCA) throws -> [UInt8] {
        let crl = try check(X509_CRL_new(), "X509_CRL_new")
        defer { X509_CRL_free(crl) }
        try check(X509_CRL_set_version(crl, 1), "X509_CRL_set_version")
        try setTime(thisUpdate) { X509_CRL_set1_lastUpdate(crl, openSSLPointer($0)) }
        if let nextUpdate { try setTime(nextUpdate) { X509_CRL_set1_nextUpdate(crl, openSSLPointer($0)) } }
        for (index, entry) in revoked.enumerated() {
            try add(entry, to: crl, criticalOID: index == 0 ? criticalEntryExtensionOID : nil)
        }
        try check(X509_CRL_sort(crl), "X509_CRL_sort")
        try CertificateBuilder.withX509(ca.certificate) { issuer in
            try check(X509_CRL_set_issuer_name(crl, X509_get_subject_name(issuer)), "X509_CRL_set_issuer_name")
            var ctx = X509V3_CTX()
            X509V3_set_ctx(&ctx, issuer, nil, nil, crl, 0)
            func add(_ nid: Int32, _ value: String) throws {
                let ext = try check(X509V3_EXT_conf_nid(nil, &ctx, nid, value), "CRL extension \(nid) \(value)")
                defer { X509_EXTENSION_free(ext) }
                try check(X509_CRL_add_ext(crl, ext, -1), "X509_CRL_add_ext")
            }
            try add(NID_authority_key_identifier, "keyid:always")
            if let issuingDistributionPoint { try add(NID_issuing_distribution_point, "critical," + issuingDistributionPoint) }
            if let freshestCRL { try add(NID_freshest_crl, freshestCRL) }
        }
        try addInteger(number, nid: NID_crl_number, critical: false, to: crl)
        if let deltaBase { try addInteger(deltaBase, nid: NID_delta_crl, critical: true, to: crl) }
        if let criticalExtensionOID {
            let ext = try criticalExtension(criticalExtensionOID)
            defer { X509_EXTENSION_free(ext) }
            try check(X509_CRL_add_ext(crl, ext, -1), "X509_CRL_add_ext")
        }
        let key = signingKey ?? ca.key
        guard X509_CRL_sign(crl, key.pkey, key.signingDigest) > 0 else { throw LabPKIError("signing a CRL") }
        return try OpenSSLEncoding.der { i2d_X509_CRL(crl, $0) }
    }

    func crl(by ca: LabCA) throws -> CertificateRevocationList { try CertificateRevocationList(bytes: der(by: ca)) }

    private func addInteger(_ value: Int, nid: Int32, critical: Bool, to crl: OpaquePointer) throws {
        let number = try check(ASN1_INTEGER_new(), "ASN1_INTEGER_new")
        defer { ASN1_INTEGER_free(number) }
        try check(ASN1_INTEGER_set(number, value), "ASN1_INTEGER_set")
        try check(X509_CRL_add1_ext_i2d(crl, nid, number.openSSLRaw, critical ? 1 : 0, 0), "adding integer extension \(nid)")
    }

    private func add(_ entry: RevokedCertificate, to crl: OpaquePointer, criticalOID: String?) throws {
        let revoked = try check(X509_REVOKED_new(), "X509_REVOKED_new")
        let serial = try OpenSSLEncoding.serialNumber(hex: entry.serialNumber)
        defer { ASN1_INTEGER_free(openSSLPointer(serial)) }
        try check(X509_REVOKED_set_serialNumber(revoked, openSSLPointer(serial)), "X509_REVOKED_set_serialNumber")
        try setTime(entry.revocationDate) { X509_REVOKED_set_revocationDate(revoked, openSSLPointer($0)) }
        if let reason = entry.reason {
            let code = try check(ASN1_ENUMERATED_new(), "ASN1_ENUMERATED_new")
            defer { ASN1_ENUMERATED_free(code) }
            try check(ASN1_ENUMERATED_set(code, reason), "ASN1_ENUMERATED_set")
            try check(X509_REVOKED_add1_ext_i2d(revoked, NID_crl_reason, code.openSSLRaw, 0, 0), "adding CRLReason")
        }
        if let criticalOID {
            let ext = try criticalExtension(criticalOID)
            defer { X509_EXTENSION_free(ext) }
            try check(X509_REVOKED_add_ext(revoked, ext, -1), "X509_REVOKED_add_ext")
        }
        try check(X509_CRL_add0_revoked(crl, revoked), "X509_CRL_add0_revoked")
    }

    private func criticalExtension(_ oid: String) throws -> OpaquePointer {
        let object = try check(OBJ_txt2obj(oid, 1), "OBJ_txt2obj")
        defer { ASN1_OBJECT_free(object) }
        let value = try check(ASN1_OCTET_STRING_new(), "ASN1_OCTET_STRING_new")
        defer { ASN1_OCTET_STRING_free(value) }
        let content: [UInt8] = [0x05, 0x00]
        try check(ASN1_OCTET_STRING_set(value, content, Int32(content.count)), "ASN1_OCTET_STRING_set")
        return try check(X509_EXTENSION_create_by_OBJ(nil, object, 1, value), "X509_EXTENSION_create_by_OBJ")
    }

    private func setTime(_ date: Date, _ set: (UnsafeMutableRawPointer) -> Int32) throws {
        let time = try check(ASN1_TIME_set(nil, OpenSSLEncoding.timeT(date)), "ASN1_TIME_set")
        defer { ASN1_TIME_free(time) }
        try check(set(time.openSSLRaw), "setting a CRL time")
    }
}

/// A root, an issuing CA whose certificate names a CRL distribution point, and a leaf that
/// names one too.
private struct CRLFixture {
    static let leafPoint = "http://crl.example.test/issuing.crl"
    let root: LabCA
    let ca: LabCA
    let leaf: LabLeaf
    let verifier = CRLVerifier()

    init(caKeyUsage: [CertificateSpec.KeyUsage]? = nil) throws {
        root = try LabPKI.makeRoot(commonName: "CRL Root CA")
        ca = try root.issueSigner(
            CertificateSpec(
                subject: "CRL Issuing CA", subjectKey: .ecP256(), notBefore: .days(-1), notAfter: .days(365), isCA: true,
                keyUsage: caKeyUsage, extendedKeyUsage: [], crlURL: "http://crl.example.test/root.crl"))
        leaf = try ca.issueLeaf(dnsNames: ["api.example.com"], crlURL: Self.leafPoint)
    }

    func status(_ spec: CRLSpec, delta: CRLSpec? = nil, at time: Date = Date()) throws -> RevocationStatus {
        try result(spec, delta: delta, at: time).status
    }

    func result(_ spec: CRLSpec, delta: CRLSpec? = nil, at time: Date = Date()) throws -> CRLVerificationResult {
        verifier.verify(
            try spec.crl(by: ca), delta: try delta?.crl(by: ca), for: leaf.certificate, issuedBy: ca.certificate, at: time)
    }
}

@Suite struct CRLVerifierTests {
    // MARK: - Status

    @Test func aCurrentCRLThatDoesNotListTheCertificateSaysGood() throws {
        let pki = try CRLFixture()
        let result = try pki.result(CRLSpec(revoked: [RevokedCertificate(serialNumber: "0BADBEEF")], number: 42))
        #expect(result.status == .good)
        #expect(result.crlNumber == "2A")
        #expect(result.explanation.contains(pki.leaf.certificate.serialNumber))
    }

    @Test func aListedCertificateIsRevokedWithItsReasonAndDate() throws {
        let pki = try CRLFixture()
        let revokedAt = Date(timeIntervalSince1970: Date.days(-2).timeIntervalSince1970.rounded(.down))
        let spec = CRLSpec(revoked: [RevokedCertificate(pki.leaf.certificate, revocationDate: revokedAt, reason: 1)])
        #expect(try pki.status(spec) == .revoked(reason: .keyCompromise, date: revokedAt))
    }

    @Test func aListedCertificateWithoutAReasonIsRevokedWithNone() throws {
        let pki = try CRLFixture()
        let revokedAt = Date(timeIntervalSince1970: Date.days(-2).timeIntervalSince1970.rounded(.down))
        let spec = CRLSpec(revoked: [RevokedCertificate(pki.leaf.certificate, revocationDate: revokedAt)])
        #expect(try pki.status(spec) == .revoked(reason: nil, date: revokedAt))
    }

    // MARK: - Authenticity

    @Test func aCRLSignedByTheWrongKeyHasABadSignature() throws {
        let pki = try CRLFixture()
        let spec = CRLSpec(revoked: [RevokedCertificate(pki.leaf.certificate)], signingKey: .ecP256())
        #expect(try pki.status(spec) == .unknown(.badSignature))
    }

    @Test func aCRLFromAnotherIssuerIsNotAuthorised() throws {
        let pki = try CRLFixture()
        let other = try pki.root.issueIntermediate(commonName: "Some Other CA")
        let result = pki.verifier.verify(
            try CRLSpec().crl(by: other), for: pki.leaf.certificate, issuedBy: pki.ca.certificate, at: Date())
        #expect(result.status == .unknown(.unauthorizedSigner))
    }

    @Test func anIssuerWhoseKeyUsageLacksCRLSignCannotSignCRLs() throws {
        let pki = try CRLFixture(caKeyUsage: [.keyCertSign, .digitalSignature])
        #expect(try pki.status(CRLSpec()) == .unknown(.unauthorizedSigner))
    }

    @Test func anUnknownCriticalCRLExtensionMakesTheCRLUnusable() throws {
        let pki = try CRLFixture()
        #expect(try pki.status(CRLSpec(criticalExtensionOID: "1.3.6.1.4.1.55555.1")) == .unknown(.unhandledCriticalExtension))
    }

    @Test func anUnknownCriticalEntryExtensionMakesTheWholeCRLUnusable() throws {
        let pki = try CRLFixture()
        let spec = CRLSpec(revoked: [RevokedCertificate(serialNumber: "01")], criticalEntryExtensionOID: "1.3.6.1.4.1.55555.2")
        #expect(try pki.status(spec) == .unknown(.unhandledCriticalExtension))
    }

    // MARK: - Time

    @Test func aCRLPastItsNextUpdateIsStale() throws {
        let pki = try CRLFixture()
        #expect(try pki.status(CRLSpec(thisUpdate: .days(-10), nextUpdate: .days(-3))) == .unknown(.stale))
    }

    @Test func aCRLFromTheFutureIsNotYetValid() throws {
        let pki = try CRLFixture()
        #expect(try pki.status(CRLSpec(thisUpdate: .days(1), nextUpdate: .days(8))) == .unknown(.notYetValid))
    }

    @Test func clockSkewWithinTheToleranceIsAccepted() throws {
        let pki = try CRLFixture()
        #expect(try pki.status(CRLSpec(thisUpdate: Date(timeIntervalSinceNow: 120), nextUpdate: .days(7))) == .good)
        #expect(try pki.status(CRLSpec(thisUpdate: .days(-8), nextUpdate: Date(timeIntervalSinceNow: -120))) == .good)
    }

    @Test func aCRLWithoutNextUpdateExpiresAfterTheMaximumAge() throws {
        let pki = try CRLFixture()
        #expect(try pki.status(CRLSpec(thisUpdate: .days(-1), nextUpdate: nil)) == .good)
        #expect(try pki.status(CRLSpec(thisUpdate: .days(-8), nextUpdate: nil)) == .unknown(.tooOld))
    }

    // MARK: - Scope (issuing distribution point)

    @Test func aCRLForTheCertificatesDistributionPointCoversIt() throws {
        let pki = try CRLFixture()
        #expect(try pki.status(CRLSpec(issuingDistributionPoint: "fullname:URI:\(CRLFixture.leafPoint)")) == .good)
    }

    @Test func aCRLForAnotherDistributionPointDoesNotCoverTheCertificate() throws {
        let pki = try CRLFixture()
        let spec = CRLSpec(issuingDistributionPoint: "fullname:URI:http://crl.example.test/partition-2.crl")
        #expect(try pki.status(spec) == .unknown(.notCoveredByCRL))
    }

    @Test func aCRLOfCACertificatesOnlyDoesNotCoverALeaf() throws {
        let pki = try CRLFixture()
        #expect(try pki.status(CRLSpec(issuingDistributionPoint: "onlyCA:TRUE")) == .unknown(.notCoveredByCRL))
    }

    @Test func aCRLOfEndEntitiesOnlyDoesNotCoverACA() throws {
        let pki = try CRLFixture()
        let result = pki.verifier.verify(
            try CRLSpec(issuingDistributionPoint: "onlyuser:TRUE").crl(by: pki.root), for: pki.ca.certificate,
            issuedBy: pki.root.certificate, at: Date())
        #expect(result.status == .unknown(.notCoveredByCRL))
        #expect(try pki.status(CRLSpec(issuingDistributionPoint: "onlyuser:TRUE")) == .good)
    }

    @Test func aCRLOfSomeReasonsProvesRevocationButNotItsAbsence() throws {
        let pki = try CRLFixture()
        let partial = "onlysomereasons:keyCompromise"
        #expect(try pki.status(CRLSpec(issuingDistributionPoint: partial)) == .unknown(.notCoveredByCRL))
        let revoked = CRLSpec(revoked: [RevokedCertificate(pki.leaf.certificate, reason: 1)], issuingDistributionPoint: partial)
        #expect(try pki.status(revoked).name == "revoked")
    }

    // MARK: - Delta CRLs

    @Test func aDeltaCRLRevokesWhatTheCompleteCRLDoesNotYetList() throws {
        let pki = try CRLFixture()
        let base = CRLSpec(number: 10)
        let delta = CRLSpec(revoked: [RevokedCertificate(pki.leaf.certificate, reason: 4)], number: 11, deltaBase: 10)
        #expect(try pki.status(base, delta: delta).name == "revoked")
        #expect(try pki.status(base, delta: CRLSpec(number: 11, deltaBase: 10)) == .good)
    }

    @Test func removeFromCRLInADeltaLiftsAHold() throws {
        let pki = try CRLFixture()
        let base = CRLSpec(revoked: [RevokedCertificate(pki.leaf.certificate, reason: 6)], number: 10)
        #expect(try pki.status(base).name == "revoked")
        let delta = CRLSpec(revoked: [RevokedCertificate(pki.leaf.certificate, reason: 8)], number: 11, deltaBase: 10)
        #expect(try pki.status(base, delta: delta) == .good)
    }

    @Test func aDeltaThatFailsIsIgnoredAndTheCompleteCRLAnswers() throws {
        let pki = try CRLFixture()
        let base = CRLSpec(number: 10)
        let revoking = [RevokedCertificate(pki.leaf.certificate)]
        let wrongKey = CRLSpec(revoked: revoking, number: 11, deltaBase: 10, signingKey: .ecP256())
        let stale = CRLSpec(revoked: revoking, thisUpdate: .days(-9), nextUpdate: .days(-2), number: 11, deltaBase: 10)
        let olderThanBase = CRLSpec(revoked: revoking, number: 9, deltaBase: 8)
        let basedOnNewer = CRLSpec(revoked: revoking, number: 12, deltaBase: 11)
        for delta in [wrongKey, stale, olderThanBase, basedOnNewer] {
            let result = try pki.result(base, delta: delta)
            #expect(result.status == .good)
            #expect(result.explanation.contains("delta CRL was ignored"))
        }
    }

    @Test func aDeltaCRLIsNotAcceptedAsACompleteCRL() throws {
        let pki = try CRLFixture()
        #expect(try pki.status(CRLSpec(number: 11, deltaBase: 10)) == .unknown(.malformed))
    }

    // MARK: - Cost

    /// 200,000 entries, as a large CA's CRL: the verifier reads the entries once (critical
    /// extensions) and verifies the signature once per issuer key; each lookup is OpenSSL's
    /// binary search. A thousand lookups stay far below what one verification of the whole
    /// list would cost each time.
    @Test func lookupsInALargeCRLAreCheap() throws {
        let pki = try CRLFixture()
        let entries = (0..<200_000).map { RevokedCertificate(serialNumber: String(format: "%08X", 0x1000_0000 + $0), reason: 1) }
        let crl = try CRLSpec(revoked: entries).crl(by: pki.ca)
        let listed = try pki.ca.issueLeaf(dnsNames: ["listed.example.com"], crlURL: CRLFixture.leafPoint, serialNumber: "10001234")
        let evaluator = RevocationTrustEvaluator(
            options: RevocationOptions(methods: .crl, networkAccessDisabled: true), revocationLists: [crl])
        var statuses: [String] = []
        do {
            for index in 0..<1000 {
                let leaf = index.isMultiple(of: 2) ? listed : pki.leaf
                let trust = PeerTrust(presentedChain: leaf.chain, anchors: try TrustAnchors([pki.root.certificate]))
                do {
                    try evaluator.evaluate(trust, forHost: "")
                    statuses.append(trust.revocationResults?.first?.status.name ?? "none")
                } catch let error as TrustError {
                    #expect(error.code == .revoked)
                    statuses.append("revoked")
                }
            }
        }
        #expect(statuses.filter { $0 == "revoked" }.count == 500)
        #expect(statuses.filter { $0 == "good" }.count == 500)
        // Lookup cost is measured in Benchmarks/ (tests never assert wall-clock time).
    }
}
