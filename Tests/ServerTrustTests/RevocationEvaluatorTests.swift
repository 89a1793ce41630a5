import COpenSSL
import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// Root → issuing CA → leaf, where the leaf names an OCSP responder and a CRL distribution
/// point of the CA, and the CA names ones of the root (for whole-chain checks).
struct RevocationPKI {
    static let leafOCSP = "http://ocsp.ca.test"
    static let leafCRL = "http://crl.ca.test/ca.crl"
    static let caOCSP = "http://ocsp.root.test"
    static let caCRL = "http://crl.root.test/root.crl"
    static let host = "api.example.com"

    let root: LabCA
    let ca: LabCA
    let leaf: LabLeaf

    init(leafOCSP: String? = Self.leafOCSP, leafCRL: String? = Self.leafCRL, mustStaple: Bool = false) throws {
        root = try LabPKI.makeRoot(commonName: "Revocation Root CA")
        ca = try root.issueSigner(
            CertificateSpec(
                subject: "Revocation Issuing CA", subjectKey: .ecP256(), notBefore: .days(-1), notAfter: .days(365),
                isCA: true, extendedKeyUsage: [], ocspURL: Self.caOCSP, crlURL: Self.caCRL))
        leaf = try ca.issueLeaf(dnsNames: [Self.host], ocspURL: leafOCSP, crlURL: leafCRL, mustStaple: mustStaple)
    }

    func trust(staple: [UInt8]? = nil, at time: Date = Date(), fetcher: (any RevocationFetcher)? = nil) throws -> PeerTrust {
        PeerTrust(
            presentedChain: leaf.chain, anchors: try TrustAnchors([root.certificate]), validationTime: time,
            stapledOCSPResponse: staple, revocationFetcher: fetcher)
    }

    /// A response the CA signs about the leaf.
    func leafOCSP(
        _ status: OCSPResponseBuilder.CertificateStatus = .good, thisUpdate: Date = .days(-0.5), nextUpdate: Date? = .days(1)
    ) throws -> [UInt8] {
        try ca.makeOCSPResponseDER(status, for: leaf.certificate, thisUpdate: thisUpdate, nextUpdate: nextUpdate)
    }

    /// A response the root signs about the CA.
    func caOCSP(_ status: OCSPResponseBuilder.CertificateStatus = .good) throws -> [UInt8] {
        try root.makeOCSPResponseDER(status, for: ca.certificate, thisUpdate: .days(-0.5), nextUpdate: .days(1))
    }

    /// The CA's CRL.
    func leafCRL(revoking revoked: [RevokedCertificate] = [], thisUpdate: Date = .days(-0.5), nextUpdate: Date? = .days(7)) throws -> [UInt8] {
        try ca.makeCRLDER(revoked: revoked, thisUpdate: thisUpdate, nextUpdate: nextUpdate)
    }

    /// A fetcher serving good answers from both of the CA's sources and the root's.
    func goodFetcher() throws -> FakeRevocationFetcher {
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(Self.leafOCSP, try leafOCSP(.good))
        fetcher.serve(Self.leafCRL, try leafCRL())
        fetcher.serve(Self.caOCSP, try caOCSP(.good))
        fetcher.serve(Self.caCRL, try root.makeCRLDER())
        return fetcher
    }

    /// An evaluator with its own fresh cache, so tests never share answers.
    func evaluator(
        _ options: RevocationOptions = RevocationOptions(), fetcher: FakeRevocationFetcher?,
        cache: RevocationCache = RevocationCache(failureBackoff: .zero)
    ) -> RevocationTrustEvaluator {
        RevocationTrustEvaluator(options: options, fetcher: fetcher, cache: cache)
    }
}

extension RevocationOptions {
    static func soft(_ change: (inout RevocationOptions) -> Void = { _ in }) -> RevocationOptions {
        var options = RevocationOptions()
        change(&options)
        return options
    }

    static func hard(_ change: (inout RevocationOptions) -> Void = { _ in }) -> RevocationOptions {
        var options = RevocationOptions(requirePositiveResponse: true)
        change(&options)
        return options
    }
}

/// Evaluates and returns the leaf's recorded status (the server was accepted).
@discardableResult
func leafStatus(_ evaluator: RevocationTrustEvaluator, _ trust: PeerTrust, sourceLocation: SourceLocation = #_sourceLocation) throws -> RevocationStatus {
    try evaluator.evaluate(trust, forHost: RevocationPKI.host)
    let status = try #require(trust.revocationResults?.first?.status, sourceLocation: sourceLocation)
    return status
}

@Suite struct RevocationEvaluatorTests {
    // MARK: - Good

    @Test(arguments: [false, true])
    func aVerifiedGoodOCSPAnswerIsAccepted(hardFail: Bool) throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        let trust = try pki.trust()
        #expect(try leafStatus(pki.evaluator(hardFail ? .hard() : .soft(), fetcher: fetcher), trust) == .good)
        let result = try #require(trust.revocationResults?.first)
        #expect(result.source == .ocsp(RevocationPKI.leafOCSP))
        #expect(result.fromCache == false)
        #expect(result.depth == 0)
        #expect(fetcher.count == 1)
    }

    /// A responder that cannot decode a GET (OpenSSL 3.0's `openssl ocsp` answers a GET whose
    /// URL has a path with HTTP 400 or malformedRequest) is asked again by POST, once.
    @Test(arguments: ["http400", "malformedRequest"])
    func aRefusedGETIsRetriedOnceAsPOST(refusal: String) throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        let good = try pki.leafOCSP(.good)
        let malformed = try OCSPResponseBuilder.errorResponse(.malformedRequest)
        fetcher.route(RevocationPKI.leafOCSP) { request, _ in
            if request.method == "POST" { return .success(good) }
            return refusal == "http400" ? .failure(.fetchHTTPStatus(400, "Bad Request")) : .success(malformed)
        }
        let trust = try pki.trust()
        #expect(try leafStatus(pki.evaluator(.hard(), fetcher: fetcher), trust) == .good)
        #expect(fetcher.requests.map(\.method) == ["GET", "POST"])
        #expect(fetcher.requests.last?.url == RevocationPKI.leafOCSP)
        #expect(trust.revocationResults?.first?.source == .ocsp(RevocationPKI.leafOCSP))
    }

    /// A server error or a definite answer is not a refused request: no second query.
    @Test func aServerErrorOnGETIsNotRetriedAsPOST() throws {
        let pki = try RevocationPKI()
        let fetcher = FakeRevocationFetcher()
        fetcher.fail(RevocationPKI.leafOCSP, .fetchHTTPStatus(503, "Service Unavailable"))
        let trust = try pki.trust()
        let status = try leafStatus(pki.evaluator(RevocationOptions(methods: .ocsp), fetcher: fetcher), trust)
        #expect(status == .unknown(.fetchFailed("fetchHTTPStatus(503)")))
        #expect(fetcher.requests.map(\.method) == ["GET"])
    }

    @Test func aGoodStapleIsUsedWithoutAnyFetch() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        let trust = try pki.trust(staple: pki.leafOCSP(.good))
        #expect(try leafStatus(pki.evaluator(.hard(), fetcher: fetcher), trust) == .good)
        #expect(trust.revocationResults?.first?.source == .stapledOCSP)
        #expect(fetcher.count == 0)
    }

    @Test func theRevocationEvaluatorComposesWithDefaultValidation() throws {
        let pki = try RevocationPKI()
        let trust = try pki.trust()
        let policy = try CompositeTrustEvaluator([.default(), pki.evaluator(.hard(), fetcher: try pki.goodFetcher())])
        try policy.evaluate(trust, forHost: RevocationPKI.host)
        #expect(trust.revocationResults?.map(\.status) == [.good])
    }

    @Test func aChainThatDoesNotValidateIsRejectedBeforeAnyRevocationCheck() throws {
        let pki = try RevocationPKI()
        let stranger = try LabPKI.makeRoot(commonName: "Stranger Root")
        let fetcher = try pki.goodFetcher()
        let trust = PeerTrust(presentedChain: pki.leaf.chain, anchors: try TrustAnchors([stranger.certificate]))
        #expect(throws: TrustError.chainValidationFailed) { try pki.evaluator(fetcher: fetcher).evaluate(trust, forHost: "") }
        #expect(fetcher.count == 0)
        #expect(trust.revocationResults == nil)
    }

    // MARK: - Revoked: rejects in every mode

    @Test(arguments: [false, true])
    func aRevokedOCSPAnswerRejectsInSoftAndHardMode(hardFail: Bool) throws {
        let pki = try RevocationPKI()
        let revokedAt = Date(timeIntervalSince1970: Date.days(-2).timeIntervalSince1970.rounded(.down))
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, try pki.leafOCSP(.revoked(reason: .keyCompromise, date: revokedAt)))
        let trust = try pki.trust()
        let error = #expect(throws: TrustError.revoked) {
            try pki.evaluator(hardFail ? .hard() : .soft(), fetcher: fetcher).evaluate(trust, forHost: RevocationPKI.host)
        }
        #expect(error?.reason.contains(pki.leaf.certificate.subject) == true)
        #expect(error?.reason.contains("keyCompromise") == true)
        #expect(error?.reason.contains(revokedAt.formatted(.iso8601)) == true)
        #expect(error?.evaluator == "RevocationTrustEvaluator")
        #expect(error?.evidence.revocation.first?.status == .revoked(reason: .keyCompromise, date: revokedAt))
        #expect(error?.evidence.revocation.first?.certificate == pki.leaf.certificate)
        #expect(trust.revocationResults?.first?.status == .revoked(reason: .keyCompromise, date: revokedAt))
    }

    @Test func aRevokedStapleRejectsEvenWithoutNetworkAccess() throws {
        let pki = try RevocationPKI()
        let fetcher = FakeRevocationFetcher()
        let trust = try pki.trust(staple: pki.leafOCSP(.revoked(reason: nil, date: .days(-1))))
        #expect(throws: TrustError.revoked) {
            try pki.evaluator(.soft { $0.networkAccessDisabled = true }, fetcher: fetcher).evaluate(trust, forHost: RevocationPKI.host)
        }
        #expect(trust.revocationResults?.first?.source == .stapledOCSP)
        #expect(fetcher.count == 0)
    }

    @Test(arguments: [false, true])
    func aCertificateListedOnTheCRLIsRejectedInSoftAndHardMode(hardFail: Bool) throws {
        let pki = try RevocationPKI()
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafCRL, try pki.leafCRL(revoking: [RevokedCertificate(pki.leaf.certificate, reason: 4)]))
        let options: RevocationOptions = hardFail ? .hard { $0.methods = .crl } : .soft { $0.methods = .crl }
        let trust = try pki.trust()
        let error = #expect(throws: TrustError.revoked) {
            try pki.evaluator(options, fetcher: fetcher).evaluate(trust, forHost: RevocationPKI.host)
        }
        #expect(error?.reason.contains("superseded") == true)
        #expect(trust.revocationResults?.first?.source == .crl(RevocationPKI.leafCRL))
    }

    // MARK: - Unknown: soft accepts and records, hard rejects

    @Test func aResponderThatSaysUnknownIsAcceptedSoftWithTheResultRecorded() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, try pki.leafOCSP(.unknown))
        let trust = try pki.trust()
        #expect(try leafStatus(pki.evaluator(.soft(), fetcher: fetcher), trust) == .unknown(.responderSaysUnknown))
        #expect(trust.revocationResults?.first?.source == CertificateRevocationResult.Source.none)
    }

    @Test func aResponderThatSaysUnknownIsRejectedHard() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, try pki.leafOCSP(.unknown))
        let trust = try pki.trust()
        let error = #expect(throws: TrustError.revocationStatusUnknown) {
            try pki.evaluator(.hard(), fetcher: fetcher).evaluate(trust, forHost: RevocationPKI.host)
        }
        #expect(error?.reason.contains("responderSaysUnknown") == true)
        #expect(trust.revocationResults?.first?.status == .unknown(.responderSaysUnknown))
    }

    @Test(arguments: [TrustError.fetchHTTPStatus(503), .fetchFailed("connection refused")])
    func aResponderThatIsDownGivesUnknownNeverGood(failure: TrustError) throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.fail(RevocationPKI.leafOCSP, failure)
        let soft = try pki.trust()
        #expect(try leafStatus(pki.evaluator(.soft(), fetcher: fetcher), soft) == .unknown(.fetchFailed(failure.fetchOutcome)))
        let hard = try pki.trust()
        #expect(throws: TrustError.revocationStatusUnknown) {
            try pki.evaluator(.hard(), fetcher: fetcher).evaluate(hard, forHost: RevocationPKI.host)
        }
        #expect(hard.revocationResults?.first?.status == .unknown(.fetchFailed(failure.fetchOutcome)))
    }

    @Test func aSlowResponderTimesOutWithinTheBudget() throws {
        let pki = try RevocationPKI()
        let fetcher = FakeRevocationFetcher()
        fetcher.hang(RevocationPKI.leafOCSP)
        fetcher.serve(RevocationPKI.leafCRL, try pki.leafCRL())
        let budget = Duration.milliseconds(150)
        let trust = try pki.trust()
        let started = ContinuousClock.now
        let status = try leafStatus(pki.evaluator(.soft { $0.timeBudget = budget }, fetcher: fetcher), trust)
        #expect(status == .unknown(.timeout))
        // The fetcher was told to be done within the budget, and nothing was started after it ran out.
        let given = started.duration(to: try #require(fetcher.deadlines.first))
        #expect(given >= budget && given < budget + .milliseconds(100))
        #expect(fetcher.count(RevocationPKI.leafCRL) == 0)
        #expect(throws: TrustError.revocationStatusUnknown) {
            try pki.evaluator(.hard { $0.timeBudget = budget }, fetcher: fetcher).evaluate(try pki.trust(), forHost: RevocationPKI.host)
        }
    }

    @Test func aFetcherTimeoutIsATimeout() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.fail(RevocationPKI.leafOCSP, .fetchTimedOut())
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.timeout))
    }

    @Test func aLeafTrustedDirectlyHasNoIssuerToAsk() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        // The leaf itself is the anchor (partial chain): nothing identifies it to a responder.
        let trust = PeerTrust(presentedChain: [pki.leaf.certificate], anchors: try TrustAnchors([pki.leaf.certificate]))
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), trust) == .unknown(.issuerUnavailable))
        #expect(throws: TrustError.revocationStatusUnknown) {
            try pki.evaluator(.hard(), fetcher: fetcher).evaluate(trust, forHost: "")
        }
        #expect(fetcher.count == 0)
    }

    /// Every way a response can fail to verify is unknown: accepted (and recorded) soft,
    /// rejected hard — never good.
    @Test(arguments: BadOCSPAnswer.allCases)
    func everyUnverifiableAnswerIsUnknownAcceptedSoftAndRejectedHard(answer: BadOCSPAnswer) throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        try answer.install(in: fetcher, pki: pki)
        let soft = try pki.trust()
        #expect(try leafStatus(pki.evaluator(.soft { $0.ocspNonce = answer.needsNonce }, fetcher: fetcher), soft) == .unknown(answer.reason))
        let hard = try pki.trust()
        let error = #expect(throws: TrustError.revocationStatusUnknown) {
            try pki.evaluator(.hard { $0.ocspNonce = answer.needsNonce }, fetcher: fetcher).evaluate(hard, forHost: "")
        }
        #expect(error?.reason.contains(answer.reason.identifier) == true)
        #expect(error?.evidence.revocation.first?.status == .unknown(answer.reason))
    }

    // MARK: - Bad responses

    @Test func garbageFromTheResponderIsMalformed() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, OCSPResponseBuilder.garbage())
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.malformed))
    }

    @Test func anOversizedResponseIsRefused() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, OCSPResponseBuilder.oversized(count: 70_000))
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.responseTooLarge))
        #expect(fetcher.requests.first?.maximumSize == RevocationOptions().maximumResponseSize)

        fetcher.fail(RevocationPKI.leafOCSP, .fetchTooLarge())
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.responseTooLarge))
    }

    @Test func anOversizedStapleIsRefused() throws {
        let pki = try RevocationPKI(leafOCSP: nil, leafCRL: nil)
        let trust = try pki.trust(staple: OCSPResponseBuilder.oversized(count: 70_000))
        #expect(try leafStatus(pki.evaluator(fetcher: nil), trust) == .unknown(.responseTooLarge))
    }

    @Test func anErrorResponseFromTheResponderIsAResponderError() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, try OCSPResponseBuilder.errorResponse(.tryLater))
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.responderError(.tryLater)))
    }

    @Test func aResponseSignedByTheWrongKeyIsNeverGood() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        let forged = try OCSPResponseBuilder(signer: pki.ca).adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca)
            .with { $0.signingKey = .ecP256() }.build()
        fetcher.serve(RevocationPKI.leafOCSP, forged)
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.badSignature))
    }

    @Test func aResponseFromAnUnauthorisedSignerIsNeverGood() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        // The root's own delegated responder may not answer for the CA's certificates.
        let foreign = try pki.root.issueOCSPResponder()
        let response = try OCSPResponseBuilder(delegatedResponder: foreign)
            .adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca).build()
        fetcher.serve(RevocationPKI.leafOCSP, response)
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.unauthorizedSigner))
    }

    @Test func anExpiredResponseIsStale() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, try pki.leafOCSP(.good, thisUpdate: .days(-3), nextUpdate: .days(-1)))
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.stale))
    }

    @Test func aResponseFromTheFutureIsNotYetValid() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, try pki.leafOCSP(.good, thisUpdate: .days(1), nextUpdate: .days(2)))
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.notYetValid))
    }

    @Test func aResponseOlderThanTheMaximumAgeIsTooOld() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, try pki.leafOCSP(.good, thisUpdate: .days(-0.5), nextUpdate: .days(5)))
        let options = RevocationOptions.soft { $0.maximumResponseAge = 3600 }
        #expect(try leafStatus(pki.evaluator(options, fetcher: fetcher), pki.trust()) == .unknown(.tooOld))
    }

    @Test func aResponseAboutAnotherCertificateDoesNotCountForThisOne() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let other = try pki.ca.issueLeaf(dnsNames: ["other.example.com"])
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, try pki.ca.makeOCSPResponseDER(.good, for: other.certificate))
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.certificateIDMismatch))
    }

    // MARK: - Nonces and request shape

    @Test func withoutANonceTheQueryIsACacheableGET() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = try pki.goodFetcher()
        try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust())
        let request = try #require(fetcher.requests.first)
        #expect(request.method == "GET")
        #expect(request.kind == .ocsp)
        #expect(request.url.hasPrefix(RevocationPKI.leafOCSP + "/"))
        #expect(!request.url.dropFirst(RevocationPKI.leafOCSP.count + 1).contains("/"))
        #expect(request.acceptedContentType == "application/ocsp-response")
    }

    @Test func aNonceMustBeEchoed() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        let ca = pki.ca
        let leaf = pki.leaf.certificate
        fetcher.route(RevocationPKI.leafOCSP) { request, _ in
            let nonce = request.body.flatMap(nonceOfOCSPRequest)
            let response = try? OCSPResponseBuilder(signer: ca).adding(.good, for: leaf, issuedBy: ca)
                .with { $0.nonce = nonce }.build()
            return response.map { .success($0) } ?? .failure(.fetchFailed("cannot build"))
        }
        let options = RevocationOptions.hard { $0.ocspNonce = true }
        #expect(try leafStatus(pki.evaluator(options, fetcher: fetcher), pki.trust()) == .good)
        let request = try #require(fetcher.requests.first)
        #expect(request.method == "POST")
        #expect(request.contentType == "application/ocsp-request")
        #expect(request.url == RevocationPKI.leafOCSP)
    }

    @Test func aResponseWithTheWrongNonceIsNotGood() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        let replayed = try OCSPResponseBuilder(signer: pki.ca).adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca)
            .with { $0.nonce = Array(repeating: 7, count: 32) }.build()
        fetcher.serve(RevocationPKI.leafOCSP, replayed)
        let options = RevocationOptions.soft { $0.ocspNonce = true }
        #expect(try leafStatus(pki.evaluator(options, fetcher: fetcher), pki.trust()) == .unknown(.nonceMismatch))
        // Without nonces the same (fresh, signed) response is good.
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .good)
    }

    // MARK: - CRL failures

    @Test func aCRLSignedByTheWrongKeyIsNeverGood() throws {
        let pki = try RevocationPKI(leafOCSP: nil)
        // Same name as the CA, different key.
        let impostor = try pki.root.issueIntermediate(commonName: "Revocation Issuing CA")
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafCRL, try impostor.makeCRLDER())
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.badSignature))
    }

    @Test func aStaleCRLIsNeverGood() throws {
        let pki = try RevocationPKI(leafOCSP: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafCRL, try pki.leafCRL(thisUpdate: .days(-10), nextUpdate: .days(-3)))
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.stale))
    }

    @Test func garbageFromTheDistributionPointIsMalformed() throws {
        let pki = try RevocationPKI(leafOCSP: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafCRL, Array("<html>moved</html>".utf8))
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.malformed))
    }

    @Test func aCRLOverTheSizeLimitIsRefused() throws {
        let pki = try RevocationPKI(leafOCSP: nil)
        let fetcher = FakeRevocationFetcher()
        let crl = try pki.leafCRL(revoking: (0..<100).map { RevokedCertificate(serialNumber: String(format: "%04X", $0 + 1)) })
        fetcher.serve(RevocationPKI.leafCRL, crl)
        let options = RevocationOptions.soft { $0.maximumCRLSize = 1000 }
        #expect(try leafStatus(pki.evaluator(options, fetcher: fetcher), pki.trust()) == .unknown(.responseTooLarge))
        #expect(fetcher.requests.first?.maximumSize == 1000)
    }

    @Test func aDeltaCRLNamedByTheCompleteCRLIsFetchedAndApplied() throws {
        let pki = try RevocationPKI(leafOCSP: nil)
        let deltaURL = "http://crl.ca.test/delta.crl"
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafCRL, try CRLSpec(number: 20, freshestCRL: "URI:\(deltaURL)").der(by: pki.ca))
        fetcher.serve(deltaURL, try CRLSpec(revoked: [RevokedCertificate(pki.leaf.certificate, reason: 1)], number: 21, deltaBase: 20).der(by: pki.ca))
        let trust = try pki.trust()
        #expect(throws: TrustError.revoked) { try pki.evaluator(.soft { $0.methods = .crl }, fetcher: fetcher).evaluate(trust, forHost: "") }
        #expect(fetcher.count(deltaURL) == 1)
    }

    @Test func aCRLTheApplicationSuppliedAnswersWithoutNetwork() throws {
        let pki = try RevocationPKI()
        let crl = try CertificateRevocationList(bytes: pki.leafCRL(revoking: [RevokedCertificate(pki.leaf.certificate)]))
        let evaluator = RevocationTrustEvaluator(
            options: .soft { $0.methods = .crl; $0.networkAccessDisabled = true }, cache: RevocationCache(), revocationLists: [crl])
        let trust = try pki.trust()
        #expect(throws: TrustError.revoked) { try evaluator.evaluate(trust, forHost: "") }
        #expect(trust.revocationResults?.first?.source == .localCRL)
    }

    // MARK: - Where to look

    @Test func withNetworkAccessDisabledNothingIsFetched() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        let soft = try pki.trust()
        let options = RevocationOptions.soft { $0.networkAccessDisabled = true }
        #expect(try leafStatus(pki.evaluator(options, fetcher: fetcher), soft) == .unknown(.networkAccessDisabled))
        #expect(throws: TrustError.revocationStatusUnknown) {
            try pki.evaluator(.hard { $0.networkAccessDisabled = true }, fetcher: fetcher).evaluate(try pki.trust(), forHost: "")
        }
        #expect(fetcher.count == 0)
    }

    @Test func withoutAnyFetcherALiveQueryCannotHappen() throws {
        let pki = try RevocationPKI()
        #expect(try leafStatus(pki.evaluator(fetcher: nil), pki.trust()) == .unknown(.networkAccessDisabled))
    }

    @Test func theTrustsOwnFetcherIsUsedWhenTheEvaluatorHasNone() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        #expect(try leafStatus(pki.evaluator(fetcher: nil), pki.trust(fetcher: fetcher)) == .good)
        #expect(fetcher.count == 1)
    }

    @Test func aCertificateWithoutResponderOrDistributionPointHasNowhereToAsk() throws {
        let pki = try RevocationPKI(leafOCSP: nil, leafCRL: nil)
        let fetcher = try pki.goodFetcher()
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.noResponderURL))
        #expect(throws: TrustError.revocationStatusUnknown) {
            try pki.evaluator(.hard(), fetcher: fetcher).evaluate(try pki.trust(), forHost: "")
        }
        #expect(fetcher.count == 0)
    }

    @Test func ldapDistributionPointsAreNotFetched() throws {
        let pki = try RevocationPKI(leafOCSP: nil, leafCRL: "ldap://directory.example.test/cn=CA?certificateRevocationList")
        let fetcher = try pki.goodFetcher()
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .unknown(.noResponderURL))
        #expect(fetcher.count == 0)
    }

    @Test func methodOCSPNeverDownloadsCRLs() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        fetcher.fail(RevocationPKI.leafOCSP, .fetchHTTPStatus(500))
        #expect(try leafStatus(pki.evaluator(.soft { $0.methods = .ocsp }, fetcher: fetcher), pki.trust()) == .unknown(.fetchFailed("fetchHTTPStatus(500)")))
        #expect(fetcher.count(RevocationPKI.leafCRL) == 0)
    }

    @Test func methodCRLIgnoresStaplesAndResponders() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        let trust = try pki.trust(staple: pki.leafOCSP(.revoked(reason: nil, date: .days(-1))))
        #expect(try leafStatus(pki.evaluator(.soft { $0.methods = .crl }, fetcher: fetcher), trust) == .good)
        #expect(trust.revocationResults?.first?.source == .crl(RevocationPKI.leafCRL))
        #expect(fetcher.count(RevocationPKI.leafOCSP) == 0)
    }

    @Test func preferOCSPFallsBackToTheCRLWhenOCSPGivesNoAnswer() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        fetcher.fail(RevocationPKI.leafOCSP, .fetchFailed("refused"))
        let trust = try pki.trust()
        #expect(try leafStatus(pki.evaluator(.hard(), fetcher: fetcher), trust) == .good)
        let result = try #require(trust.revocationResults?.first)
        #expect(result.source == .crl(RevocationPKI.leafCRL))
        #expect(result.attempts.first?.contains("refused") == true)
        #expect(fetcher.requests.map(\.kind) == [.ocsp, .crl])
    }

    @Test func preferCRLAsksTheDistributionPointFirst() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        let trust = try pki.trust()
        #expect(try leafStatus(pki.evaluator(.soft { $0.methods = .preferCRL }, fetcher: fetcher), trust) == .good)
        #expect(fetcher.requests.map(\.kind) == [.crl])
    }

    @Test func anInvalidStapleFallsBackToALiveQuery() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        let trust = try pki.trust(staple: pki.leafOCSP(.good, thisUpdate: .days(-3), nextUpdate: .days(-1)))
        #expect(try leafStatus(pki.evaluator(.hard(), fetcher: fetcher), trust) == .good)
        let result = try #require(trust.revocationResults?.first)
        #expect(result.source == .ocsp(RevocationPKI.leafOCSP))
        #expect(result.attempts.first?.hasPrefix("Stapled OCSP response") == true)
    }

    // MARK: - Scope

    @Test func leafOnlyScopeDoesNotAskAboutTheIntermediate() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        fetcher.serve(RevocationPKI.caOCSP, try pki.caOCSP(.revoked(reason: .caCompromise, date: .days(-1))))
        let trust = try pki.trust()
        #expect(try leafStatus(pki.evaluator(.hard(), fetcher: fetcher), trust) == .good)
        #expect(trust.revocationResults?.count == 1)
        #expect(fetcher.count(RevocationPKI.caOCSP) == 0)
    }

    @Test func wholeChainScopeChecksTheIntermediateToo() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        let trust = try pki.trust()
        try pki.evaluator(.hard { $0.scope = .wholeChain }, fetcher: fetcher).evaluate(trust, forHost: "")
        #expect(trust.revocationResults?.map(\.certificate) == [pki.leaf.certificate, pki.ca.certificate])
        #expect(trust.revocationResults?.map(\.status) == [.good, .good])
        #expect(trust.revocationResults?.map(\.depth) == [0, 1])
    }

    @Test func wholeChainScopeRejectsARevokedIntermediate() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        fetcher.serve(RevocationPKI.caOCSP, try pki.caOCSP(.revoked(reason: .caCompromise, date: .days(-1))))
        let trust = try pki.trust()
        let error = #expect(throws: TrustError.revoked) {
            try pki.evaluator(.soft { $0.scope = .wholeChain }, fetcher: fetcher).evaluate(trust, forHost: "")
        }
        #expect(error?.reason.contains("Revocation Issuing CA") == true)
        #expect(error?.reason.contains("depth 1") == true)
    }

    @Test func wholeChainScopeHardFailsOnAnUnknownIntermediate() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        fetcher.fail(RevocationPKI.caOCSP, .fetchHTTPStatus(502))
        fetcher.fail(RevocationPKI.caCRL, .fetchHTTPStatus(502))
        let soft = try pki.trust()
        try pki.evaluator(.soft { $0.scope = .wholeChain }, fetcher: fetcher).evaluate(soft, forHost: "")
        #expect(soft.revocationResults?.map(\.status) == [.good, .unknown(.fetchFailed("fetchHTTPStatus(502)"))])
        #expect(throws: TrustError.revocationStatusUnknown) {
            try pki.evaluator(.hard { $0.scope = .wholeChain }, fetcher: fetcher).evaluate(try pki.trust(), forHost: "")
        }
    }

    // MARK: - Must-staple

    @Test(arguments: [false, true])
    func aMustStapleLeafWithoutAStapleIsRejectedInEveryMode(hardFail: Bool) throws {
        let pki = try RevocationPKI(mustStaple: true)
        let fetcher = try pki.goodFetcher()
        let trust = try pki.trust()
        let error = #expect(throws: TrustError.revocationStatusUnknown) {
            try pki.evaluator(hardFail ? .hard() : .soft(), fetcher: fetcher).evaluate(trust, forHost: "")
        }
        #expect(error?.reason.contains("must-staple") == true)
        #expect(trust.revocationResults?.first?.status == .unknown(.noResponse))
        // Only a staple will do, so nothing is fetched.
        #expect(fetcher.count == 0)
    }

    @Test func aMustStapleLeafWithAnInvalidStapleIsRejected() throws {
        let pki = try RevocationPKI(mustStaple: true)
        let trust = try pki.trust(staple: pki.leafOCSP(.good, thisUpdate: .days(-3), nextUpdate: .days(-1)))
        #expect(throws: TrustError.revocationStatusUnknown) { try pki.evaluator(fetcher: nil).evaluate(trust, forHost: "") }
        #expect(trust.revocationResults?.first?.status == .unknown(.stale))
    }

    @Test func aMustStapleLeafWithAGoodStapleIsAccepted() throws {
        let pki = try RevocationPKI(mustStaple: true)
        let trust = try pki.trust(staple: pki.leafOCSP(.good))
        #expect(try leafStatus(pki.evaluator(.soft { $0.methods = .crl }, fetcher: nil), trust) == .good)
        #expect(trust.revocationResults?.first?.source == .stapledOCSP)
    }

    @Test func aMustStapleLeafWithARevokedStapleIsRevoked() throws {
        let pki = try RevocationPKI(mustStaple: true)
        let trust = try pki.trust(staple: pki.leafOCSP(.revoked(reason: .keyCompromise, date: .days(-1))))
        #expect(throws: TrustError.revoked) { try pki.evaluator(fetcher: nil).evaluate(trust, forHost: "") }
    }

    // MARK: - Presets

    @Test func thePresetsSayWhatTheyDo() {
        #expect(RevocationOptions.softFail == RevocationOptions())
        #expect(RevocationOptions.hardFail.requirePositiveResponse)
        #expect(RevocationOptions.ocspStapled.networkAccessDisabled && !RevocationOptions.ocspStapled.requirePositiveResponse)
        #expect(RevocationOptions.stapleRequired.networkAccessDisabled && RevocationOptions.stapleRequired.requirePositiveResponse)
        let defaults = RevocationOptions()
        #expect(defaults.methods == .preferOCSP)
        #expect(defaults.scope == .leafOnly)
        #expect(defaults.timeBudget == .seconds(3))
        #expect(!defaults.requirePositiveResponse && !defaults.networkAccessDisabled && !defaults.ocspNonce)
    }
}

/// The nonce of a DER OCSP request, as the responder must echo it.
func nonceOfOCSPRequest(_ der: [UInt8]) -> [UInt8]? {
    der.withUnsafeBufferPointer { buffer -> [UInt8]? in
        var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
        guard let request = d2i_OCSP_REQUEST(nil, &cursor, buffer.count) else { return nil }
        defer { OCSP_REQUEST_free(request) }
        let index = OCSP_REQUEST_get_ext_by_NID(request, NID_id_pkix_OCSP_Nonce, -1)
        guard index >= 0, let ext = OCSP_REQUEST_get_ext(request, index), let value = X509_EXTENSION_get_data(ext),
            let data = ASN1_STRING_get0_data(value)
        else { return nil }
        // The extension value is the DER OCTET STRING holding the nonce: skip its two-byte header.
        let bytes = Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(value))))
        return bytes.count > 2 ? Array(bytes.dropFirst(2)) : nil
    }
}

/// Answers from an OCSP responder that must never count as good.
enum BadOCSPAnswer: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case responderSaysUnknown, responderError, down, timeout, garbage, oversized, wrongKey, unauthorisedSigner
    case otherCertificate, expired, fromTheFuture, nonceMismatch

    var testDescription: String { rawValue }
    var needsNonce: Bool { self == .nonceMismatch }

    var reason: RevocationStatus.UnknownReason {
        switch self {
        case .responderSaysUnknown: .responderSaysUnknown
        case .responderError: .responderError(.internalError)
        case .down: .fetchFailed("fetchHTTPStatus(503)")
        case .timeout: .timeout
        case .garbage: .malformed
        case .oversized: .responseTooLarge
        case .wrongKey: .badSignature
        case .unauthorisedSigner: .unauthorizedSigner
        case .otherCertificate: .certificateIDMismatch
        case .expired: .stale
        case .fromTheFuture: .notYetValid
        case .nonceMismatch: .nonceMismatch
        }
    }

    func install(in fetcher: FakeRevocationFetcher, pki: RevocationPKI) throws {
        let url = RevocationPKI.leafOCSP
        let leaf = pki.leaf.certificate
        switch self {
        case .responderSaysUnknown: fetcher.serve(url, try pki.leafOCSP(.unknown))
        case .responderError: fetcher.serve(url, try OCSPResponseBuilder.errorResponse(.internalError))
        case .down: fetcher.fail(url, .fetchHTTPStatus(503))
        case .timeout: fetcher.fail(url, .fetchTimedOut())
        case .garbage: fetcher.serve(url, OCSPResponseBuilder.garbage())
        case .oversized: fetcher.serve(url, OCSPResponseBuilder.oversized(count: 100_000))
        case .wrongKey:
            fetcher.serve(url, try OCSPResponseBuilder(signer: pki.ca).adding(.good, for: leaf, issuedBy: pki.ca).with { $0.signingKey = .ecP256() }.build())
        case .unauthorisedSigner:
            let stranger = try LabPKI.makeRoot(commonName: "Stranger").issueOCSPResponder()
            fetcher.serve(url, try OCSPResponseBuilder(delegatedResponder: stranger).adding(.good, for: leaf, issuedBy: pki.ca).build())
        case .otherCertificate:
            fetcher.serve(url, try pki.ca.makeOCSPResponseDER(.good, for: pki.ca.issueLeaf(dnsNames: ["other.example"]).certificate))
        case .expired: fetcher.serve(url, try pki.leafOCSP(.good, thisUpdate: .days(-3), nextUpdate: .days(-1)))
        case .fromTheFuture: fetcher.serve(url, try pki.leafOCSP(.good, thisUpdate: .days(1), nextUpdate: .days(2)))
        case .nonceMismatch:
            fetcher.serve(url, try OCSPResponseBuilder(signer: pki.ca).adding(.good, for: leaf, issuedBy: pki.ca).with { $0.nonce = [1, 2, 3, 4] }.build())
        }
    }
}
