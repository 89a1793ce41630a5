import Foundation
import ServerTrust
@testable import ServerTrustPurchases
import ServerTrustTestSupport
import Testing

/// The revocation of the App Store's signing chain, through ServerTrust's revocation machinery,
/// and the validation-time rule: a chain judged now, or at `signedDate` once it has expired —
/// then only on a verified answer given since the data was signed.
@Suite struct RevocationAndValidationTimeTests {
    static let bundleID = "com.example.app"
    static let leafOCSP = "http://ocsp.apple.test/leaf"
    static let intermediateOCSP = "http://ocsp.apple.test/wwdr"

    /// A lab whose leaf and intermediate name OCSP responders, and a fetcher answering "good"
    /// for both, fresh for a day.
    struct Setup {
        let lab: AppStoreLab
        let fetcher = FakeRevocationFetcher()
        var cache = RevocationCache()

        init(leafNotBefore: Date = Date(timeIntervalSinceNow: -86_400), leafNotAfter: Date = Date(timeIntervalSinceNow: 365 * 86_400)) throws {
            lab = try AppStoreLab(
                leafNotBefore: leafNotBefore, leafNotAfter: leafNotAfter, leafOCSPURL: RevocationAndValidationTimeTests.leafOCSP,
                intermediateOCSPURL: RevocationAndValidationTimeTests.intermediateOCSP)
            try answer(leaf: .good, intermediate: .good)
        }

        /// Answers for the leaf and the intermediate, produced at `thisUpdate`, fresh for a day.
        func answer(
            leaf: OCSPResponseBuilder.CertificateStatus, intermediate: OCSPResponseBuilder.CertificateStatus,
            thisUpdate: Date = Date(timeIntervalSinceNow: -60)
        ) throws {
            func response(_ status: OCSPResponseBuilder.CertificateStatus, for certificate: Certificate, by issuer: LabCA) throws -> [UInt8] {
                var builder = OCSPResponseBuilder(signer: issuer)
                    .adding(status, for: certificate, issuedBy: issuer, thisUpdate: thisUpdate, nextUpdate: thisUpdate.addingTimeInterval(86_400))
                builder.producedAt = thisUpdate
                return try builder.build()
            }
            fetcher.serve(RevocationAndValidationTimeTests.leafOCSP, try response(leaf, for: lab.leaf, by: lab.intermediate))
            fetcher.serve(
                RevocationAndValidationTimeTests.intermediateOCSP, try response(intermediate, for: lab.intermediate.certificate, by: lab.root))
        }

        func verifier(_ options: RevocationOptions = .softFail, useFetcher: Bool = true) throws -> AppStoreSignedDataVerifier {
            try AppStoreSignedDataVerifier(
                roots: [lab.root.certificate], bundleID: RevocationAndValidationTimeTests.bundleID, appAppleID: nil, environment: .sandbox,
                revocation: AppStoreRevocationPolicy(options: options, fetcher: useFetcher ? fetcher : nil, cache: cache))
        }

        func transaction(signedAt date: Date = Date(), id: String = "2000000000000001") throws -> String {
            try lab.jws(payload: AppStoreLab.transactionJSON(signedDate: date, transactionID: id))
        }
    }

    @Test func aGoodChainIsAskedOnceThenVerifiedFromWhatTheVerifierRemembers() throws {
        let setup = try Setup()
        let verifier = try setup.verifier(.hardFail)
        #expect(try verifier.verifyTransaction(setup.transaction(id: "1")).transactionId == "1")
        // The leaf and the intermediate, each asked once.
        #expect(setup.fetcher.count(Self.leafOCSP) == 1)
        #expect(setup.fetcher.count(Self.intermediateOCSP) == 1)
        for id in 2...5 {
            #expect(try verifier.verifyTransaction(setup.transaction(id: String(id))).transactionId == String(id))
        }
        // New transactions from the same signing certificate: no query, no path built again.
        #expect(setup.fetcher.count == 2)
        #expect(verifier.chainValidations == 1)
    }

    @Test func aRevokedLeafIsRefusedEvenInSoftFail() throws {
        let setup = try Setup()
        try setup.answer(leaf: .revoked(reason: .keyCompromise, date: Date(timeIntervalSinceNow: -3600)), intermediate: .good)
        let error = refusal { try setup.verifier(.softFail).verifyTransaction(setup.transaction()) }
        #expect(error?.code == .revoked)
        #expect(error?.reason.contains("leaf certificate") == true)
        #expect(error?.reason.contains("keyCompromise") == true, "\(String(describing: error))")
        #expect(error?.isRetryable == false)
    }

    @Test func aRevokedIntermediateIsRefused() throws {
        let setup = try Setup()
        try setup.answer(leaf: .good, intermediate: .revoked(reason: .caCompromise, date: Date(timeIntervalSinceNow: -3600)))
        let error = refusal { try setup.verifier(.softFail).verifyTransaction(setup.transaction()) }
        #expect(error?.code == .revoked)
        #expect(error?.reason.contains("intermediate certificate") == true, "\(String(describing: error))")
    }

    @Test func aResponderThatIsDownIsRetryableInHardFailAndAcceptedInSoftFail() throws {
        let setup = try Setup()
        setup.fetcher.fail(Self.leafOCSP, .fetchFailed("connection refused"))
        setup.fetcher.fail(Self.intermediateOCSP, .fetchFailed("connection refused"))
        let error = refusal { try setup.verifier(.hardFail).verifyTransaction(setup.transaction()) }
        #expect(error?.code == .revocationUnknown)
        #expect(error?.isRetryable == true)
        #expect(error?.reason.contains("hard-fail") == true)
        #expect(try setup.verifier(.softFail).verifyTransaction(setup.transaction()).bundleId == Self.bundleID)
    }

    /// Apple's rule, stated: a certificate that names no responder and no CRL has nothing to
    /// check — unknown, so accepted in soft-fail and refused in hard-fail.
    @Test func aChainNamingNoResponderIsUnknown() throws {
        let lab = try AppStoreLab()
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON())
        func verifier(_ options: RevocationOptions) throws -> AppStoreSignedDataVerifier {
            try AppStoreSignedDataVerifier(
                roots: [lab.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox,
                revocation: AppStoreRevocationPolicy(options: options, fetcher: FakeRevocationFetcher(), cache: RevocationCache()))
        }
        #expect(try verifier(.softFail).verifyTransaction(jws).bundleId == Self.bundleID)
        let error = refusal { try verifier(.hardFail).verifyTransaction(jws) }
        #expect(error?.code == .revocationUnknown)
        #expect(error?.reason.contains("noResponderURL") == true || error?.reason.contains("names no") == true, "\(String(describing: error))")
    }

    // MARK: - The validation time

    /// Data signed while the leaf was valid, verified after it expired: refused offline, since
    /// nothing shows the key was not revoked when it signed.
    @Test func dataFromAnExpiredChainIsRefusedWithRevocationOff() throws {
        let setup = try Setup(leafNotBefore: Date(timeIntervalSinceNow: -10 * 86_400), leafNotAfter: Date(timeIntervalSinceNow: -86_400))
        let jws = try setup.transaction(signedAt: Date(timeIntervalSinceNow: -2 * 86_400))
        let verifier = try AppStoreSignedDataVerifier(
            roots: [setup.lab.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
        let error = refusal { try verifier.verifyTransaction(jws) }
        #expect(error?.code == .chainValidationFailed)
        #expect(error?.reason.contains("with revocation checking off") == true, "\(String(describing: error))")
    }

    /// A responder does not vouch for a certificate past its expiry (ServerTrust refuses an OCSP
    /// response produced after it), so the evidence for old data is an answer produced between
    /// its signing and the expiry: here, the one the revocation cache kept on disk from a check
    /// made while the leaf was valid, read by a new cache after a restart, the responder gone.
    @Test func dataFromAnExpiredChainVerifiesOnTheAnswerCachedWhileItWasValid() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("purchases-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var setup = try Setup(leafNotBefore: Date(timeIntervalSinceNow: -10 * 86_400), leafNotAfter: Date(timeIntervalSinceNow: -86_400))
        setup.cache = RevocationCache(directory: directory)
        let signedAt = Date(timeIntervalSinceNow: -2 * 86_400)
        let checkedAt = Date(timeIntervalSinceNow: -1.5 * 86_400)
        try setup.answer(leaf: .good, intermediate: .good, thisUpdate: checkedAt.addingTimeInterval(-60))
        // A check made a day and a half ago, while the leaf was valid.
        #expect(try setup.verifier(.hardFail).verifyTransaction(setup.transaction(signedAt: signedAt), at: checkedAt).bundleId == Self.bundleID)
        // Now: the leaf has expired, the process restarted, the responder is gone.
        setup.fetcher.fail(Self.leafOCSP, .fetchFailed("gone"))
        setup.fetcher.fail(Self.intermediateOCSP, .fetchFailed("gone"))
        setup.cache = RevocationCache(directory: directory)
        let transaction = try setup.verifier(.softFail).verifyTransaction(setup.transaction(signedAt: signedAt))
        #expect(abs(transaction.signedDate.timeIntervalSince(signedAt)) < 0.01)
        // Data signed after that answer is not covered by it.
        let error = refusal { try setup.verifier(.softFail).verifyTransaction(setup.transaction(signedAt: checkedAt.addingTimeInterval(3600))) }
        #expect(error?.code == .revocationUnknown, "\(String(describing: error))")
    }

    /// A "good" produced before the signing date says nothing about the key when it signed.
    @Test func dataFromAnExpiredChainIsRefusedOnAnAnswerOlderThanItsSigning() throws {
        let setup = try Setup(leafNotBefore: Date(timeIntervalSinceNow: -10 * 86_400), leafNotAfter: Date(timeIntervalSinceNow: -86_400))
        try setup.answer(leaf: .good, intermediate: .good, thisUpdate: Date(timeIntervalSinceNow: -3 * 86_400))
        let error = refusal { try setup.verifier(.softFail).verifyTransaction(setup.transaction(signedAt: Date(timeIntervalSinceNow: -2 * 86_400))) }
        #expect(error?.code == .revocationUnknown)
        #expect(error?.reason.contains("no verified answer given between then and the expiry") == true, "\(String(describing: error))")
    }

    /// Soft-fail does not stretch to expired chains: a responder that is down leaves old data
    /// retryable, not accepted.
    @Test func dataFromAnExpiredChainIsRetryableWhenTheResponderIsDownEvenInSoftFail() throws {
        let setup = try Setup(leafNotBefore: Date(timeIntervalSinceNow: -10 * 86_400), leafNotAfter: Date(timeIntervalSinceNow: -86_400))
        setup.fetcher.fail(Self.leafOCSP, .fetchFailed("connection refused"))
        let error = refusal { try setup.verifier(.softFail).verifyTransaction(setup.transaction(signedAt: Date(timeIntervalSinceNow: -2 * 86_400))) }
        #expect(error?.code == .revocationUnknown)
        #expect(error?.isRetryable == true)
    }

    /// A revoked leaf stays refused for data signed before the revocation — a compromised key
    /// can sign any date — here known from the last answer cached while the leaf was valid.
    @Test func dataFromARevokedExpiredChainIsRefused() throws {
        let setup = try Setup(leafNotBefore: Date(timeIntervalSinceNow: -10 * 86_400), leafNotAfter: Date(timeIntervalSinceNow: -86_400))
        let checkedAt = Date(timeIntervalSinceNow: -1.5 * 86_400)
        try setup.answer(
            leaf: .revoked(reason: .keyCompromise, date: checkedAt.addingTimeInterval(-3600)), intermediate: .good,
            thisUpdate: checkedAt.addingTimeInterval(-60))
        let jws = try setup.transaction(signedAt: Date(timeIntervalSinceNow: -2 * 86_400))
        #expect(refusal { try setup.verifier(.softFail).verifyTransaction(jws, at: checkedAt) }?.code == .revoked)
        setup.fetcher.fail(Self.leafOCSP, .fetchFailed("gone"))
        let error = refusal { try setup.verifier(.softFail).verifyTransaction(jws) }
        #expect(error?.code == .revoked)
        #expect(error?.reason.contains("last OCSP answer cached") == true, "\(String(describing: error))")
    }

    /// The answer the verifier saw while the chain was valid still covers data signed before
    /// it, once the chain has expired and the responder is gone.
    @Test func theLastGoodAnswerSeenWhileValidCoversOlderDataAfterExpiry() throws {
        let setup = try Setup(leafNotBefore: Date(timeIntervalSinceNow: -10 * 86_400), leafNotAfter: Date(timeIntervalSinceNow: 3600))
        var verifier = try setup.verifier(.softFail)
        let early = Date(timeIntervalSinceNow: -2 * 86_400)
        #expect(try verifier.verifyTransaction(setup.transaction(signedAt: early, id: "1")).transactionId == "1")
        // Two hours later: the leaf has expired, its responder answers nothing.
        setup.fetcher.fail(Self.leafOCSP, .fetchFailed("gone"))
        setup.fetcher.fail(Self.intermediateOCSP, .fetchFailed("gone"))
        let later = Date(timeIntervalSinceNow: 7200)
        verifier.clock = { later }
        // The answer (produced a minute ago) covers data signed two days ago…
        #expect(try verifier.verifyTransaction(setup.transaction(signedAt: early, id: "2"), at: nil).transactionId == "2")
        // …not data signed after it.
        let error = refusal { try verifier.verifyTransaction(setup.transaction(signedAt: Date(timeIntervalSinceNow: 1800), id: "3")) }
        #expect(error?.code == .revocationUnknown, "\(String(describing: error))")
    }

    /// A time given is the time: nothing moves it, so an expired chain is refused at it.
    @Test func aGivenTimeIsNeverMovedToTheSigningDate() throws {
        let setup = try Setup(leafNotBefore: Date(timeIntervalSinceNow: -10 * 86_400), leafNotAfter: Date(timeIntervalSinceNow: -86_400))
        let jws = try setup.transaction(signedAt: Date(timeIntervalSinceNow: -2 * 86_400))
        let error = refusal { try setup.verifier(.softFail).verifyTransaction(jws, at: Date()) }
        #expect(error?.code == .chainValidationFailed)
        // At a time the chain was valid, it verifies (offline material, checked as of then)…
        let offline = try AppStoreSignedDataVerifier(
            roots: [setup.lab.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
        #expect(try offline.verifyTransaction(jws, at: Date(timeIntervalSinceNow: -2 * 86_400 + 60)).bundleId == Self.bundleID)
        // …and the chain it remembers is still judged at the time given, not at the signing date.
        let later = refusal { try offline.verifyTransaction(jws, at: Date()) }
        #expect(later?.code == .chainValidationFailed)
        #expect(later?.reason.contains("is not valid at") == true, "\(String(describing: later))")
    }

    /// A chain that was never valid at the signing date is not saved by it.
    @Test func aChainNotYetValidAtTheSigningDateIsRefused() throws {
        let setup = try Setup(leafNotBefore: Date(timeIntervalSinceNow: -3 * 86_400), leafNotAfter: Date(timeIntervalSinceNow: -86_400))
        let error = refusal { try setup.verifier(.softFail).verifyTransaction(setup.transaction(signedAt: Date(timeIntervalSinceNow: -5 * 86_400))) }
        #expect(error?.code == .chainValidationFailed)
    }
}
