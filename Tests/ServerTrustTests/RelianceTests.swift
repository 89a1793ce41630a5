import Foundation
import Testing
import ServerTrust
import ServerTrustTestSupport

/// `PeerTrust.reliedOnUntil` (audit finding 6): the first instant something an acceptance
/// relied on stops holding, which a session uses as the end of the connection's life.
@Suite struct RelianceTests {
    @Test func itIsTheValidatedChainsFirstNotAfterWithoutDatedPins() throws {
        let root = try LabPKI.makeRoot()
        let intermediate = try root.issueIntermediate(commonName: "Issuing CA")
        let leafEnd = Date(timeIntervalSinceNow: 5 * 86_400).rounded
        let leaf = try intermediate.issueLeaf(dnsNames: [SitePKI.host], notAfter: leafEnd)
        let trust = PeerTrust(presentedChain: leaf.chain, anchors: try TrustAnchors([root.certificate]))
        #expect(trust.reliedOnUntil == leafEnd)  // nothing evaluated yet: the leaf alone
        try DefaultTrustEvaluator().evaluate(trust, forHost: SitePKI.host)
        #expect(trust.reliedOnUntil == leafEnd)
    }

    @Test func aPinSetContributesItsExpirationAndTheLastDateOfThePinsThatMatched() throws {
        let site = try SitePKI()
        let now = Date()
        let matchedEnd = (now + 3 * 86_400).rounded
        let set = try PinSet(
            [.init(site.intermediate.certificate.spkiPin, label: "issuing CA", notAfter: matchedEnd), .init(PinSetTests.spare, label: "backup")],
            expiration: now + 10 * 86_400)
        let trust = try site.trust(at: now)
        try PinSetTrustEvaluator(pinSet: set).evaluate(trust, forHost: SitePKI.host)
        // The backup has no date, but it is not in this chain: after the matched pin's date no
        // pin vouches for this chain.
        #expect(trust.reliedOnUntil == matchedEnd)

        let setEnd = (now + 2 * 86_400).rounded
        let earlier = try PinSet(set.entries, expiration: setEnd)
        let second = try site.trust(at: now)
        try PinSetTrustEvaluator(pinSet: earlier).evaluate(second, forHost: SitePKI.host)
        #expect(second.reliedOnUntil == setEnd)
    }

    @Test func aStapledOCSPAnswerContributesItsNextUpdatePlusTheClockSkew() throws {
        let site = try SitePKI()
        let nextUpdate = Date(timeIntervalSinceNow: 3600).rounded
        let staple = try OCSPResponseBuilder(signer: site.intermediate)
            .adding(.good, for: site.leaf.certificate, issuedBy: site.intermediate, nextUpdate: nextUpdate).build()
        let trust = PeerTrust(presentedChain: site.leaf.chain, anchors: try TrustAnchors([site.root.certificate]), stapledOCSPResponse: staple)
        try RevocationTrustEvaluator(options: .stapleRequired, cache: RevocationCache()).evaluate(trust, forHost: SitePKI.host)
        #expect(trust.revocationResults?.first?.validUntil == nextUpdate + 300)
        #expect(trust.reliedOnUntil == nextUpdate + 300)
    }
}

private extension Date {
    /// Whole seconds, as certificates and OCSP responses store times.
    var rounded: Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}
