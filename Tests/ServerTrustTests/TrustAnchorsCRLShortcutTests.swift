import COpenSSL
import Foundation
@testable import ServerTrust
import ServerTrustTestSupport
import Testing

/// `TrustAnchors(revocationLists:)` checks CRLs at constant cost (``PathCRLShortcut``, the
/// per-certificate engine's lookup) only where OpenSSL's path-level processing would accept the
/// same chain; where the two engines judge a CRL differently, OpenSSL's verdict must stand. Each
/// of those tests fails if the shortcut accepts what plain ``CRLVerifier`` accepts.
@Suite struct TrustAnchorsCRLShortcutTests {
    let site: SitePKI

    init() throws { site = try SitePKI() }

    private func validate(intermediateCRL: CertificateRevocationList, at time: Date = Date()) throws -> [Certificate] {
        let anchors = try site.root.trustAnchors(revocationLists: [site.root.makeCRL(), intermediateCRL])
        return try PeerTrust(presentedChain: site.leaf.chain, anchors: anchors, validationTime: time).validatedChain()
    }

    @Test func aChainOneCRLPerIssuerShowsUnrevokedIsAcceptedAtConstantCost() throws {
        let anchors = try site.root.trustAnchors(revocationLists: [site.root.makeCRL(), site.intermediate.makeCRL()])
        let chain = try PeerTrust(presentedChain: site.leaf.chain, anchors: anchors).validatedChain()
        #expect(chain.count == 3)
        #expect(anchors.store.crlShortcut?.showsNoneRevoked(chain, at: Date()) == true)
    }

    @Test func aRevokedLeafIsLeftToOpenSSLAndRefusedWithItsErrorAndDepth() throws {
        let crl = try site.intermediate.makeCRL(revoked: [RevokedCertificate(site.leaf.certificate)])
        let anchors = try site.root.trustAnchors(revocationLists: [site.root.makeCRL(), crl])
        #expect(anchors.store.crlShortcut?.showsNoneRevoked(site.leaf.chain, at: Date()) == false)
        let error = #expect(throws: TrustError.revoked) { try validate(intermediateCRL: crl) }
        #expect(error?.evidence.verifyResult == X509_V_ERR_CERT_REVOKED)
        #expect(error?.evidence.depth == 0)
    }

    /// OpenSSL's CRL has expired at its nextUpdate second; CRLVerifier's only after it.
    @Test func aCRLWhoseNextUpdateIsTheValidationSecondHasExpired() throws {
        let second = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 86400).rounded(.down))
        let crl = try site.intermediate.makeCRL(nextUpdate: second)
        let error = #expect(throws: TrustError.chainValidationFailed) { try validate(intermediateCRL: crl, at: second) }
        #expect(error?.evidence.verifyResult == X509_V_ERR_CRL_HAS_EXPIRED)
    }

    /// CRLVerifier allows 300 seconds of clock skew by default; OpenSSL allows none.
    @Test func aCRLExpiredAMinuteAgoHasExpiredWithoutSkew() throws {
        let crl = try site.intermediate.makeCRL(thisUpdate: .days(-1), nextUpdate: Date(timeIntervalSinceNow: -60))
        let error = #expect(throws: TrustError.chainValidationFailed) { try validate(intermediateCRL: crl) }
        #expect(error?.evidence.verifyResult == X509_V_ERR_CRL_HAS_EXPIRED)
    }

    /// CRLVerifier processes a critical cRLNumber; OpenSSL processes only issuingDistributionPoint,
    /// authorityKeyIdentifier and deltaCRLIndicator critical, and refuses the CRL.
    @Test func aCRLWithACriticalCRLNumberIsRefusedAsOpenSSLRefusesIt() throws {
        let crl = try CRLSpec(criticalExtensionOID: "2.5.29.20").crl(by: site.intermediate)
        let error = #expect(throws: TrustError.chainValidationFailed) { try validate(intermediateCRL: crl) }
        #expect(error?.evidence.verifyResult == X509_V_ERR_UNHANDLED_CRITICAL_CRL_EXTENSION)
    }

    /// CRLVerifier processes a critical invalidityDate on an entry; OpenSSL refuses the CRL.
    @Test func aCRLWithACriticalEntryInvalidityDateIsRefusedAsOpenSSLRefusesIt() throws {
        let other = RevokedCertificate(serialNumber: "01")
        let crl = try CRLSpec(revoked: [other], criticalEntryExtensionOID: "2.5.29.24").crl(by: site.intermediate)
        let error = #expect(throws: TrustError.chainValidationFailed) { try validate(intermediateCRL: crl) }
        #expect(error?.evidence.verifyResult == X509_V_ERR_UNHANDLED_CRITICAL_CRL_EXTENSION)
    }

    /// A delta CRL may be combined with its base for one certificate: OpenSSL's to decide.
    @Test func anchorsWithADeltaCRLTakeNoShortcut() throws {
        let delta = try CRLSpec(number: 2, deltaBase: 1).crl(by: site.intermediate)
        let anchors = try site.root.trustAnchors(revocationLists: [site.root.makeCRL(), site.intermediate.makeCRL(), delta])
        #expect(anchors.store.crlShortcut == nil)
        #expect(try PeerTrust(presentedChain: site.leaf.chain, anchors: anchors).validatedChain().count == 3)
    }
}
