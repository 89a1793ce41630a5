import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// A `CTLogStore` remembers the SCTs OpenSSL verified: a repeated SCT is answered from the set,
/// and only for the very same SCT bytes, source, leaf and issuer. Each attack here runs on a store
/// that has just verified the genuine SCT, so a hit would accept it.
@Suite struct VerifiedSCTCacheTests {
    let store: CTLogStore
    let leaf: Certificate
    let issuer: Certificate
    let scts: [SignedCertificateTimestamp]
    init() throws {
        store = try CTLogStore(try CTFixtures.logList())
        leaf = try CTFixtures.certificate("openssl/embeddedSCTs1.pem")
        issuer = try CTFixtures.certificate("openssl/embeddedSCTs1_issuer.pem")
        scts = try SignedCertificateTimestamp.embedded(in: leaf)
        #expect(store.verify(scts, leaf: leaf, issuer: issuer, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.verified])
        #expect(store.verifiedSCTHits == 0)
    }

    @Test func aRepeatedSCTIsAnsweredFromTheVerifiedSet() throws {
        #expect(store.verify(scts, leaf: leaf, issuer: issuer, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.verified])
        #expect(store.verifiedSCTHits == 1)
        // A new store (a replaced list) starts with none.
        let fresh = try CTLogStore(store.list)
        #expect(fresh.verify(scts, leaf: leaf, issuer: issuer, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.verified])
        #expect(fresh.verifiedSCTHits == 0)
    }

    @Test func theVerifiedSCTPresentedForAChangedTBSIsStillABadSignature() throws {
        let changed = try CTFixtures.certificate("conscrypt/files/cert-ct-embedded.pem")
        #expect(store.verify(scts, leaf: changed, issuer: issuer, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.badSignature])
        #expect(store.verifiedSCTHits == 0)
    }

    @Test func theVerifiedSCTWithAnotherIssuerIsStillABadSignature() throws {
        let stranger = try LabPKI.makeRoot(commonName: "Not The Issuer").certificate
        #expect(store.verify(scts, leaf: leaf, issuer: stranger, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.badSignature])
        #expect(store.verifiedSCTHits == 0)
    }

    @Test func theVerifiedSCTFromAnotherSourceIsStillABadSignature() throws {
        // The same bytes as a TLS-extension SCT sign over the whole certificate, not the precertificate.
        let delivered = try SignedCertificateTimestamp(tlsEncoded: scts[0].encoded, source: .tlsExtension)
        #expect(store.verify([delivered], leaf: leaf, issuer: issuer, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.badSignature])
        #expect(store.verifiedSCTHits == 0)
    }

    @Test func theVerifiedSCTIsStillInTheFutureBeforeItsTimestamp() throws {
        let before = scts[0].timestamp.addingTimeInterval(-1)
        #expect(store.verify(scts, leaf: leaf, issuer: issuer, at: before).map(\.status) == [.timestampInFuture])
        #expect(store.verifiedSCTHits == 0)
    }

    @Test func theVerifiedSCTStillNeedsItsIssuer() throws {
        #expect(store.verify(scts, leaf: leaf, issuer: nil, at: CTFixtures.justAfter(scts[0])).map(\.status) == [.issuerUnknown])
    }
}
