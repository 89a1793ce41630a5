import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// A CA, a leaf it issued, and a verifier, fresh per test; responses are judged "now" unless a
/// test says otherwise.
private struct OCSPFixture {
    let root: LabCA
    let ca: LabCA
    let leaf: LabLeaf
    let now = Date()
    var verifier = OCSPVerifier()

    init(leafNotBefore: Date = .days(-1), leafNotAfter: Date = .days(30)) throws {
        root = try LabPKI.makeRoot()
        ca = try root.issueIntermediate(commonName: "Issuing CA")
        leaf = try ca.issueLeaf(dnsNames: ["api.example.com"], notBefore: leafNotBefore, notAfter: leafNotAfter)
    }

    /// A builder for a response the CA signs about the leaf.
    func response(
        _ status: OCSPResponseBuilder.CertificateStatus = .good,
        thisUpdate: Date = .days(-0.5),
        nextUpdate: Date? = .days(1)
    ) -> OCSPResponseBuilder {
        OCSPResponseBuilder(signer: ca).adding(status, for: leaf.certificate, issuedBy: ca, thisUpdate: thisUpdate, nextUpdate: nextUpdate)
    }

    func status(of der: [UInt8], at time: Date? = nil, request: OCSPRequest? = nil) -> RevocationStatus {
        result(of: der, at: time, request: request).status
    }

    func result(of der: [UInt8], at time: Date? = nil, request: OCSPRequest? = nil) -> OCSPVerificationResult {
        verifier.verify(derEncoded: der, for: leaf.certificate, issuedBy: ca.certificate, at: time ?? now, request: request)
    }
}

@Suite struct OCSPResponseTests {
    // MARK: - Statuses

    @Test func aGoodResponseSignedByTheIssuerIsGood() throws {
        let pki = try OCSPFixture()
        let result = pki.result(of: try pki.response(.good).build())
        #expect(result.status == .good)
        #expect(result.signer == pki.ca.certificate.subject)
        #expect(result.nextUpdate != nil)
    }

    @Test func aRevokedResponseCarriesItsReasonAndDate() throws {
        let pki = try OCSPFixture()
        let revokedAt = Date(timeIntervalSince1970: (Date.days(-2).timeIntervalSince1970).rounded(.down))
        let status = pki.status(of: try pki.response(.revoked(reason: .keyCompromise, date: revokedAt)).build())
        #expect(status == .revoked(reason: .keyCompromise, date: revokedAt))
    }

    @Test func aRevokedResponseWithoutAReasonHasNone() throws {
        let pki = try OCSPFixture()
        let revokedAt = Date(timeIntervalSince1970: (Date.days(-3).timeIntervalSince1970).rounded(.down))
        #expect(pki.status(of: try pki.response(.revoked(reason: nil, date: revokedAt)).build()) == .revoked(reason: nil, date: revokedAt))
    }

    @Test func anUnknownResponseIsUnknownBecauseTheResponderSaysSo() throws {
        let pki = try OCSPFixture()
        let result = pki.result(of: try pki.response(.unknown).build())
        #expect(result.status == .unknown(.responderSaysUnknown))
        #expect(result.freshUntil == nil)
    }

    @Test(arguments: [OCSPResponseStatus.malformedRequest, .internalError, .tryLater, .signatureRequired, .unauthorized])
    func anErrorResponseIsAResponderError(status: OCSPResponseStatus) throws {
        let pki = try OCSPFixture()
        let verified = pki.status(of: try OCSPResponseBuilder.errorResponse(status))
        #expect(verified == .unknown(.responderError(status)))
        if case .unknown(let reason) = verified { #expect(reason.responderStatus == status) }
    }

    // MARK: - Malformed input

    @Test func garbageIsMalformedAndDoesNotParse() throws {
        let pki = try OCSPFixture()
        let garbage = OCSPResponseBuilder.garbage()
        #expect(pki.status(of: garbage) == .unknown(.malformed))
        #expect(throws: TrustError.malformedOCSPResponse) { try OCSPResponse(derEncoded: garbage) }
        #expect(throws: TrustError.malformedOCSPResponse) { try OCSPResponse(derEncoded: []) }
    }

    @Test func anOversizedResponseIsRefusedBeforeParsing() throws {
        let pki = try OCSPFixture()
        let oversized = OCSPResponseBuilder.oversized()
        #expect(pki.status(of: oversized) == .unknown(.malformed))
        let error = try #require(throws: TrustError.self) { try OCSPResponse(derEncoded: oversized) }
        #expect(error.code == .malformedOCSPResponse)
        #expect(error.reason.contains("over the \(OCSPResponse.maximumDERSize)-byte limit"))
    }

    @Test func trailingDataAfterTheResponseIsMalformed() throws {
        let pki = try OCSPFixture()
        #expect(pki.status(of: try pki.response().build() + [0]) == .unknown(.malformed))
    }

    @Test func aParsedResponseRoundTripsAndReportsItsStatus() throws {
        let pki = try OCSPFixture()
        let der = try pki.response().build()
        let response = try OCSPResponse(derEncoded: der)
        #expect(response.derEncoded == der)
        #expect(response.responseStatus == .successful)
        #expect(try OCSPResponse(derEncoded: OCSPResponseBuilder.errorResponse(.tryLater)).responseStatus == .tryLater)
    }

    // MARK: - Signature and signer

    @Test func aResponseSignedWithTheWrongKeyHasABadSignature() throws {
        let pki = try OCSPFixture()
        let der = try pki.response().with { $0.signingKey = .ecP256() }.build()
        #expect(pki.status(of: der) == .unknown(.badSignature))
    }

    @Test func aCorruptedSignatureIsBad() throws {
        let pki = try OCSPFixture()
        #expect(pki.status(of: try pki.response().with { $0.corruptsSignature = true }.build()) == .unknown(.badSignature))
    }

    @Test func aResponseSignedByAnotherCAIsFromAnUnauthorizedSigner() throws {
        let pki = try OCSPFixture()
        let stranger = try LabPKI.makeRoot(commonName: "Stranger CA")
        let unnamed = try OCSPResponseBuilder(signer: stranger).adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca).build()
        #expect(pki.status(of: unnamed) == .unknown(.unauthorizedSigner))
        let included = try OCSPResponseBuilder(signer: stranger)
            .adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca)
            .with { $0.includedCertificates = [stranger.certificate] }
            .build()
        #expect(pki.status(of: included) == .unknown(.unauthorizedSigner))
    }

    @Test func aDelegatedResponderWithOCSPSigningIsAuthorized() throws {
        let pki = try OCSPFixture()
        let responder = try pki.ca.issueOCSPResponder()
        let result = pki.result(
            of: try OCSPResponseBuilder(delegatedResponder: responder).adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca).build())
        #expect(result.status == .good)
        #expect(result.signer == responder.certificate.subject)
    }

    @Test func aDelegatedResponderWithoutOCSPSigningIsNotAuthorized() throws {
        let pki = try OCSPFixture()
        let responder = try pki.ca.issueOCSPResponder(hasOCSPSigningEKU: false)
        let der = try OCSPResponseBuilder(delegatedResponder: responder).adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca).build()
        let result = pki.result(of: der)
        #expect(result.status == .unknown(.unauthorizedSigner))
        #expect(result.explanation.contains("id-kp-OCSPSigning"))
    }

    @Test func aResponderCertifiedByADifferentCAIsNotAuthorizedEvenWithOCSPSigning() throws {
        let pki = try OCSPFixture()
        // Same name as the real issuer's responder, OCSPSigning, but certified by the root.
        let responder = try pki.root.issueOCSPResponder()
        let der = try OCSPResponseBuilder(delegatedResponder: responder).adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca).build()
        #expect(pki.status(of: der) == .unknown(.unauthorizedSigner))
    }

    @Test func aDelegatedResponderWhoseCertificateIsMissingIsNotAuthorized() throws {
        let pki = try OCSPFixture()
        let responder = try pki.ca.issueOCSPResponder()
        let der = try OCSPResponseBuilder(delegatedResponder: responder)
            .adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca)
            .with { $0.includedCertificates = [] }
            .build()
        #expect(pki.status(of: der) == .unknown(.unauthorizedSigner))
    }

    @Test func anExpiredDelegatedResponderIsNotAuthorized() throws {
        let pki = try OCSPFixture()
        let responder = try pki.ca.issueOCSPResponder(notBefore: .days(-10), notAfter: .days(-1))
        let der = try OCSPResponseBuilder(delegatedResponder: responder).adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca).build()
        #expect(pki.status(of: der) == .unknown(.unauthorizedSigner))
    }

    @Test func aResponderIdentifiedByKeyIsFound() throws {
        let pki = try OCSPFixture()
        #expect(pki.status(of: try pki.response().with { $0.responderID = .byKey }.build()) == .good)
        let responder = try pki.ca.issueOCSPResponder()
        let delegated = try OCSPResponseBuilder(delegatedResponder: responder)
            .adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca)
            .with { $0.responderID = .byKey }
            .build()
        #expect(pki.status(of: delegated) == .good)
    }

    @Test func extraCertificatesInTheResponseDoNotMatter() throws {
        let pki = try OCSPFixture()
        let der = try pki.response().with { $0.includedCertificates = [pki.root.certificate, pki.ca.certificate] }.build()
        #expect(pki.status(of: der) == .good)
    }

    // MARK: - Certificate ID

    @Test func aResponseAboutAnotherCertificateDoesNotMatch() throws {
        let pki = try OCSPFixture()
        let other = try pki.ca.issueLeaf(dnsNames: ["other.example.com"])
        let der = try OCSPResponseBuilder(signer: pki.ca).adding(.good, for: other.certificate, issuedBy: pki.ca).build()
        #expect(pki.status(of: der) == .unknown(.certificateIDMismatch))
    }

    @Test func aResponseWhoseCertificateIDNamesAnotherIssuerDoesNotMatch() throws {
        let pki = try OCSPFixture()
        // Right serial, but the CertID hashes the root's name and key: the leaf as if the root issued it.
        let der = try OCSPResponseBuilder(signer: pki.ca).adding(.good, for: pki.leaf.certificate, issuedBy: pki.root).build()
        #expect(pki.status(of: der) == .unknown(.certificateIDMismatch))
    }

    @Test func aResponseWithNoSingleResponseDoesNotMatch() throws {
        let pki = try OCSPFixture()
        #expect(pki.status(of: try OCSPResponseBuilder(signer: pki.ca).build()) == .unknown(.certificateIDMismatch))
    }

    @Test func aSHA256CertificateIDIsAccepted() throws {
        let pki = try OCSPFixture()
        let der = try OCSPResponseBuilder(signer: pki.ca).adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca, hash: .sha256).build()
        #expect(pki.status(of: der) == .good)
    }

    @Test func aRevocationCannotHideBehindAGoodResponseForTheSameCertificate() throws {
        let pki = try OCSPFixture()
        let revokedAt = Date(timeIntervalSince1970: (Date.days(-1).timeIntervalSince1970).rounded(.down))
        let goodThenRevoked = try pki.response(.good)
            .adding(.revoked(reason: .superseded, date: revokedAt), for: pki.leaf.certificate, issuedBy: pki.ca)
            .build()
        #expect(pki.status(of: goodThenRevoked) == .revoked(reason: .superseded, date: revokedAt))
        let goodThenUnknown = try pki.response(.good).adding(.unknown, for: pki.leaf.certificate, issuedBy: pki.ca).build()
        #expect(pki.status(of: goodThenUnknown) == .unknown(.responderSaysUnknown))
    }

    // MARK: - Time

    @Test func aResponsePastItsNextUpdateIsStale() throws {
        let pki = try OCSPFixture()
        #expect(pki.status(of: try pki.response(thisUpdate: .days(-3), nextUpdate: .days(-1)).build()) == .unknown(.stale))
    }

    @Test func aResponseFromTheFutureIsNotYetValid() throws {
        let pki = try OCSPFixture()
        #expect(pki.status(of: try pki.response(thisUpdate: .days(1), nextUpdate: .days(2)).build()) == .unknown(.notYetValid))
    }

    @Test func clockSkewWithinTheToleranceIsAccepted() throws {
        let pki = try OCSPFixture()
        let skew = pki.verifier.configuration.clockSkewTolerance
        #expect(skew == 300)
        let early = try pki.response(thisUpdate: pki.now.addingTimeInterval(skew - 60), nextUpdate: .days(1)).build()
        #expect(pki.status(of: early) == .good)
        let late = try pki.response(thisUpdate: .days(-1), nextUpdate: pki.now.addingTimeInterval(-(skew - 60))).build()
        #expect(pki.status(of: late) == .good)
        let tooEarly = try pki.response(thisUpdate: pki.now.addingTimeInterval(skew + 60), nextUpdate: .days(1)).build()
        #expect(pki.status(of: tooEarly) == .unknown(.notYetValid))
    }

    @Test func aResponseWithoutNextUpdateExpiresAtTheMaximumAge() throws {
        var pki = try OCSPFixture()
        pki.verifier = OCSPVerifier(configuration: .init(maximumAge: 2 * 86400))
        #expect(pki.status(of: try pki.response(thisUpdate: .days(-1), nextUpdate: nil).build()) == .good)
        #expect(pki.status(of: try pki.response(thisUpdate: .days(-3), nextUpdate: nil).build()) == .unknown(.tooOld))
    }

    @Test func theMaximumAgeCapsResponsesWithADistantNextUpdateToo() throws {
        let pki = try OCSPFixture()
        let der = try pki.response(thisUpdate: .days(-8), nextUpdate: .days(300)).build()
        #expect(pki.status(of: der) == .unknown(.tooOld))
    }

    @Test func freshUntilIsTheEarlierOfNextUpdateAndTheMaximumAge() throws {
        let pki = try OCSPFixture()
        let thisUpdate = Date(timeIntervalSince1970: Date.days(-1).timeIntervalSince1970.rounded(.down))
        let nextUpdate = Date(timeIntervalSince1970: Date.days(2).timeIntervalSince1970.rounded(.down))
        #expect(pki.result(of: try pki.response(thisUpdate: thisUpdate, nextUpdate: nextUpdate).build()).freshUntil == nextUpdate)
        let distant = try pki.response(thisUpdate: thisUpdate, nextUpdate: .days(100)).build()
        #expect(pki.result(of: distant).freshUntil == thisUpdate.addingTimeInterval(7 * 86400))
    }

    @Test func theValidationTimeIsUsedNeverTheClock() throws {
        let past = Date(timeIntervalSince1970: 1_577_836_800)  // 2020-01-01T00:00:00Z
        let pki = try OCSPFixture(leafNotBefore: past.addingTimeInterval(-86400 * 30), leafNotAfter: .days(30))
        let der = try pki.response(thisUpdate: past.addingTimeInterval(-3600), nextUpdate: past.addingTimeInterval(86400))
            .with { $0.producedAt = past.addingTimeInterval(-3600) }
            .build()
        #expect(pki.status(of: der, at: past) == .good)
        #expect(pki.status(of: der, at: pki.now) == .unknown(.stale))
        // And a response current now is from the future at the past validation time.
        #expect(pki.status(of: try pki.response().build(), at: past) == .unknown(.notYetValid))
    }

    @Test func aResponseProducedOutsideTheCertificatesValidityIsRefused() throws {
        let pki = try OCSPFixture(leafNotBefore: .days(-1))
        let der = try pki.response().with { $0.producedAt = .days(-2) }.build()
        #expect(pki.status(of: der) == .unknown(.producedOutsideCertificateValidity))
    }

    // MARK: - Extensions

    @Test func anUnknownCriticalResponseExtensionIsUnhandled() throws {
        let pki = try OCSPFixture()
        let der = try pki.response().with { $0.criticalResponseExtensionOID = "1.3.6.1.4.1.55555.1" }.build()
        #expect(pki.status(of: der) == .unknown(.unhandledCriticalExtension))
    }

    @Test func anUnknownCriticalSingleExtensionIsUnhandled() throws {
        let pki = try OCSPFixture()
        let der = try OCSPResponseBuilder(signer: pki.ca)
            .adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca, criticalExtensionOID: "1.3.6.1.4.1.55555.2")
            .build()
        #expect(pki.status(of: der) == .unknown(.unhandledCriticalExtension))
    }

    @Test func aCriticalSCTListInASingleResponseIsAccepted() throws {
        let pki = try OCSPFixture()
        let der = try OCSPResponseBuilder(signer: pki.ca)
            .adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca, criticalExtensionOID: "1.3.6.1.4.1.11129.2.4.5")
            .build()
        #expect(pki.status(of: der) == .good)
    }

    // MARK: - Nonce

    @Test func aResponseEchoingTheRequestNonceIsGood() throws {
        let pki = try OCSPFixture()
        let request = try OCSPRequest(certificate: pki.leaf.certificate, issuer: pki.ca.certificate)
        let nonce = try #require(request.nonce)
        #expect(nonce.count == OCSPRequest.defaultNonceLength)
        #expect(pki.status(of: try pki.response().with { $0.nonce = nonce }.build(), request: request) == .good)
    }

    @Test func aResponseWithAnotherNonceIsANonceMismatch() throws {
        let pki = try OCSPFixture()
        let request = try OCSPRequest(certificate: pki.leaf.certificate, issuer: pki.ca.certificate, nonce: .bytes(Array(repeating: 7, count: 16)))
        let other = try pki.response().with { $0.nonce = Array(repeating: 8, count: 16) }.build()
        #expect(pki.status(of: other, request: request) == .unknown(.nonceMismatch))
    }

    @Test func aResponseWithoutTheRequestedNonceIsANonceMismatch() throws {
        let pki = try OCSPFixture()
        let request = try OCSPRequest(certificate: pki.leaf.certificate, issuer: pki.ca.certificate)
        #expect(pki.status(of: try pki.response().build(), request: request) == .unknown(.nonceMismatch))
        // Stapled and cached responses are checked without a request: no nonce needed.
        #expect(pki.status(of: try pki.response().build()) == .good)
    }

    @Test func aRequestWithoutANonceAcceptsAnyResponseNonce() throws {
        let pki = try OCSPFixture()
        let request = try OCSPRequest(certificate: pki.leaf.certificate, issuer: pki.ca.certificate, nonce: .omitted)
        #expect(request.nonce == nil)
        #expect(pki.status(of: try pki.response().with { $0.nonce = [1, 2, 3] }.build(), request: request) == .good)
    }

    @Test func aNonceOfABadLengthIsRefused() throws {
        let pki = try OCSPFixture()
        #expect(throws: TrustError.invalidConfiguration) {
            try OCSPRequest(certificate: pki.leaf.certificate, issuer: pki.ca.certificate, nonce: .bytes(Array(repeating: 1, count: 33)))
        }
        #expect(throws: TrustError.invalidConfiguration) {
            try OCSPRequest(certificate: pki.leaf.certificate, issuer: pki.ca.certificate, nonce: .bytes([]))
        }
    }

    @Test func aRequestEncodesAsDER() throws {
        let pki = try OCSPFixture()
        let der = try OCSPRequest(certificate: pki.leaf.certificate, issuer: pki.ca.certificate).derEncoded
        #expect(der.first == 0x30)
        #expect(der.count > 60)
    }

    // MARK: - Must-staple and the stapled response of a trust

    @Test func mustStapleIsDetectedFromTheTLSFeatureExtension() throws {
        let ca = try LabPKI.makeRoot()
        #expect(try ca.issueLeaf(dnsNames: ["a.example.com"], mustStaple: true).certificate.hasMustStaple)
        #expect(try !ca.issueLeaf(dnsNames: ["a.example.com"]).certificate.hasMustStaple)
    }

    @Test func theStapledResponseIsCheckedForTheLeafOfTheValidatedChain() throws {
        let pki = try OCSPFixture()
        let staple = try pki.response().build()
        let trust = PeerTrust(
            presentedChain: pki.leaf.chain, anchors: try TrustAnchors([pki.root.certificate]), stapledOCSPResponse: staple)
        #expect(try trust.stapledOCSPStatus().status == .good)
        let unstapled = PeerTrust(presentedChain: pki.leaf.chain, anchors: try TrustAnchors([pki.root.certificate]))
        #expect(try unstapled.stapledOCSPStatus().status == .unknown(.noResponse))
    }

    @Test func aStapleIsOnlyCheckedForAChainThatValidates() throws {
        let pki = try OCSPFixture()
        let stranger = try LabPKI.makeRoot(commonName: "Stranger CA")
        let trust = PeerTrust(
            presentedChain: pki.leaf.chain, anchors: try TrustAnchors([stranger.certificate]),
            stapledOCSPResponse: try pki.response().build())
        #expect(throws: TrustError.chainValidationFailed) { try trust.stapledOCSPStatus() }
    }

    @Test func theIssuerOfALeafThatIsItselfAnAnchorIsFoundAmongTheAnchors() throws {
        // A self-signed server certificate trusted as its own anchor: a one-certificate chain.
        let selfSigned = try LabPKI.makeRoot(
            CertificateSpec(subject: "api.example.com", subjectKey: .ecP256(), dnsNames: ["api.example.com"]))
        let staple = try OCSPResponseBuilder(signer: selfSigned)
            .adding(.revoked(reason: .cessationOfOperation, date: .days(-1)), for: selfSigned.certificate, issuedBy: selfSigned)
            .build()
        let trust = PeerTrust(
            presentedChain: [selfSigned.certificate], anchors: try TrustAnchors([selfSigned.certificate]),
            stapledOCSPResponse: staple)
        #expect(try trust.validatedChain().count == 1)
        let result = try trust.stapledOCSPStatus()
        #expect(result.status.name == "revoked", "\(result)")
    }

    @Test func theIssuerOfALeafAnchoredThroughItsCAIsTheSecondCertificate() throws {
        let pki = try OCSPFixture()
        let trust = PeerTrust(
            presentedChain: [pki.leaf.certificate], anchors: try TrustAnchors([pki.leaf.certificate, pki.ca.certificate]),
            stapledOCSPResponse: try pki.response().build())
        #expect(try trust.validatedChain().count == 2)
        #expect(try trust.stapledOCSPStatus().status == .good)
    }
}
