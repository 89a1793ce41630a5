import Foundation
import ServerTrust
import Testing

/// Fixtures/CT/public-logs: a real certificate (cryptography.io, Let's Encrypt Authority X3,
/// 2018) with embedded SCTs from two public production logs, Google 'Icarus' and Comodo
/// 'Mammoth', verified offline against the logs' published keys at the SCTs' time — the one
/// fixture whose SCTs were not signed by a test log.
@Suite struct PublicLogSCTTests {
    static let icarus = "KTxRllTIOWW6qlD8WAfUt2+/WHopctykwwz05UVH9Hg="
    static let mammoth = "b1N2rDHwMRnYmQCkURX/dxUcEdkCwQApBo2yCJo32RM="

    let leaf: Certificate
    let issuer: Certificate
    let list: CTLogList
    let scts: [SignedCertificateTimestamp]

    init() throws {
        leaf = try CTFixtures.certificate("public-logs/cryptography-scts.pem")
        issuer = try CTFixtures.certificate("public-logs/letsencryptx3.pem")
        list = try CTLogList(json: try CTFixtures.bytes("public-logs/log_list.json"), fileName: "public-logs/log_list.json")
        scts = try SignedCertificateTimestamp.embedded(in: leaf)
    }

    /// A day after the later SCT: when the certificate was new and the list a week old.
    var checkedAt: Date { CTFixtures.justAfter(scts.max { $0.timestampMilliseconds < $1.timestampMilliseconds }!) }

    @Test func theLeafCarriesTheTwoSCTsOpenSSLPrints() throws {
        #expect(scts.map(\.logIDBase64) == [Self.icarus, Self.mammoth])
        // Timestamp : Sep 26 20:56:33.769 2018 GMT and Sep 26 20:56:33.904 2018 GMT.
        #expect(scts.map(\.timestampMilliseconds) == [1_537_995_393_769, 1_537_995_393_904])
        #expect(scts.allSatisfy { $0.version == 0 && $0.source == .embedded })
        // Each log's ID is the SHA-256 of the key the list gives it.
        #expect(Set(list.logs.values.map(\.idBase64)) == [Self.icarus, Self.mammoth])
        #expect(list.log(id: scts[0].logID)?.operatorName == "Google")
        #expect(list.log(id: scts[1].logID)?.operatorName == "Comodo CA Limited")
    }

    @Test func eachEmbeddedSCTVerifiesWithItsLogsPublishedKey() throws {
        let observations = try CTLogStore(list).verify(scts, leaf: leaf, issuer: issuer, at: checkedAt)
        #expect(observations.map(\.status) == [.verified, .verified])
        #expect(observations.map { $0.log?.name } == ["Google 'Icarus' log", "Comodo 'Mammoth' CT log"])
    }

    @Test func theCertificateMeetsThePolicyWithTwoOperatorsForItsNinetyDays() throws {
        let observations = try CTLogStore(list).verify(scts, leaf: leaf, issuer: issuer, at: checkedAt)
        // notBefore Sep 26 19:56:33 2018, notAfter Dec 25 19:56:33 2018: 90 days, so 2 SCTs.
        let notBefore = Date(timeIntervalSince1970: 1_537_991_793)
        let notAfter = Date(timeIntervalSince1970: 1_545_767_793)
        #expect(notAfter.timeIntervalSince(notBefore) == 90 * 86_400)
        let outcome = CertificateTransparencyPolicy.evaluate(
            observations, notValidBefore: notBefore, notValidAfter: notAfter, list: list, requirement: .enforced(), at: checkedAt)
        #expect(outcome.isCompliant, "\(outcome)")
        // Were it valid over 180 days, two SCTs would fall short of the three required.
        let long = CertificateTransparencyPolicy.evaluate(
            observations, notValidBefore: notBefore, notValidAfter: notBefore.addingTimeInterval(181 * 86_400), list: list,
            requirement: .enforced(), at: checkedAt)
        #expect(long.reason == .notEnoughSCTs)
        #expect(long.detail.contains("2 embedded SCTs from distinct logs counted; 3 are required"))
    }

    @Test func oneAlteredByteInTheLeafBreaksBothSignatures() throws {
        // The subject's last byte: "cryptography.io" becomes "cryptography.ip". The TBS the
        // logs signed (less the SCT list) changes; the SCTs, read from the altered leaf, do not.
        var der = leaf.derEncoded
        let name = Array("cryptography.io".utf8)
        let at = try #require((0...(der.count - name.count)).first { Array(der[$0..<($0 + name.count)]) == name })
        der[at + name.count - 1] ^= 0x06
        let altered = try Certificate(derEncoded: der)
        let alteredSCTs = try SignedCertificateTimestamp.embedded(in: altered)
        #expect(alteredSCTs.map(\.encoded) == scts.map(\.encoded))
        let observations = try CTLogStore(list).verify(alteredSCTs, leaf: altered, issuer: issuer, at: checkedAt)
        #expect(observations.map(\.status) == [.badSignature, .badSignature])
        let outcome = CertificateTransparencyPolicy.evaluate(
            observations, notValidBefore: Date(timeIntervalSince1970: 1_537_991_793), notValidAfter: Date(timeIntervalSince1970: 1_545_767_793),
            list: list, requirement: .enforced(), at: checkedAt)
        #expect(outcome.reason == .badSCTSignature)
    }

    @Test func anotherIssuerBreaksBothSignatures() throws {
        // The precertificate entry signs the issuer's key hash: the leaf itself as "issuer"
        // gives another key.
        let observations = try CTLogStore(list).verify(scts, leaf: leaf, issuer: leaf, at: checkedAt)
        #expect(observations.map(\.status) == [.badSignature, .badSignature])
    }

    @Test func theSCTsAreRefusedBeforeTheyWereIssued() throws {
        let before = Date(timeIntervalSince1970: 1_537_995_393)
        let observations = try CTLogStore(list).verify(scts, leaf: leaf, issuer: issuer, at: before)
        #expect(observations.map(\.status) == [.timestampInFuture, .timestampInFuture])
    }
}
