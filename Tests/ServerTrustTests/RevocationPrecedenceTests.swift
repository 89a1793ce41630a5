import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// Second audit, finding 2: a definite "revoked" from any source wins, and the cache never rolls
/// back. Before the fix the checker returned the first definite answer, the staple first, and
/// stored every verified staple unconditionally — so a still-valid "good" staple obtained before
/// the revocation outranked the application's own CRL and a cached "revoked", and overwrote it.
@Suite struct RevocationPrecedenceTests {
    private func revokedOCSP(_ pki: RevocationPKI, producedAt: Date? = nil) throws -> [UInt8] {
        try OCSPResponseBuilder(signer: pki.ca)
            .adding(.revoked(reason: .keyCompromise, date: .days(-0.2)), for: pki.leaf.certificate, issuedBy: pki.ca,
                    thisUpdate: .days(-0.1), nextUpdate: .days(1))
            .with { $0.producedAt = producedAt }
            .build()
    }

    private func goodOCSP(_ pki: RevocationPKI, producedAt: Date? = nil, nextUpdate: Date = .days(1)) throws -> [UInt8] {
        try OCSPResponseBuilder(signer: pki.ca)
            .adding(.good, for: pki.leaf.certificate, issuedBy: pki.ca, thisUpdate: .days(-0.5), nextUpdate: nextUpdate)
            .with { $0.producedAt = producedAt }
            .build()
    }

    @Test(arguments: [RevocationOptions.Methods.ocsp, .preferOCSP, .crl])
    func finding2TheApplicationsCRLOutranksAGoodStaple(methods: RevocationOptions.Methods) throws {
        let pki = try RevocationPKI()
        let crl = try CertificateRevocationList(bytes: pki.leafCRL(revoking: [RevokedCertificate(pki.leaf.certificate, reason: 1)]))
        let evaluator = RevocationTrustEvaluator(
            options: .soft { $0.methods = methods; $0.networkAccessDisabled = true }, cache: RevocationCache(),
            revocationLists: [crl])
        let trust = try pki.trust(staple: goodOCSP(pki))
        let error = #expect(throws: TrustError.revoked) { try evaluator.evaluate(trust, forHost: RevocationPKI.host) }
        #expect(error?.evaluator == "RevocationTrustEvaluator")
        #expect(trust.revocationResults?.first?.source == .localCRL)
    }

    @Test func finding2ACachedRevokedOutranksAGoodStaple() throws {
        let pki = try RevocationPKI()
        let cache = RevocationCache(failureBackoff: .zero)
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, try revokedOCSP(pki))
        // A live query learns of the revocation…
        #expect(throws: TrustError.revoked) {
            try pki.evaluator(.soft { $0.methods = .ocsp }, fetcher: fetcher, cache: cache).evaluate(try pki.trust(), forHost: "")
        }
        // …and the server's older "good" staple, still within its validity, does not undo it.
        let trust = try pki.trust(staple: goodOCSP(pki))
        #expect(throws: TrustError.revoked) {
            try pki.evaluator(.soft(), fetcher: fetcher, cache: cache).evaluate(trust, forHost: "")
        }
        let result = try #require(trust.revocationResults?.first)
        #expect(result.fromCache)
        #expect(fetcher.count == 1)
    }

    @Test func finding2TheCacheNeverReplacesRevokedWithGood() throws {
        let pki = try RevocationPKI()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rollback-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = RevocationCache(directory: directory, failureBackoff: .zero)
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, try revokedOCSP(pki, producedAt: .days(-0.02)))
        #expect(throws: TrustError.revoked) {
            try pki.evaluator(.soft { $0.methods = .ocsp }, fetcher: fetcher, cache: cache).evaluate(try pki.trust(), forHost: "")
        }
        // A verified "good" staple, even a newer one, whose handshake completes: not cached over "revoked".
        let trust = try pki.trust(staple: goodOCSP(pki, producedAt: .days(-0.01)))
        #expect(throws: TrustError.revoked) { try pki.evaluator(.soft(), fetcher: nil, cache: cache).evaluate(trust, forHost: "") }
        trust.handshakeCompleted()

        // Neither the memory entry nor the file on disk rolled back.
        for cache in [cache, RevocationCache(directory: directory)] {
            #expect(throws: TrustError.revoked) {
                try pki.evaluator(.soft { $0.networkAccessDisabled = true }, fetcher: nil, cache: cache).evaluate(try pki.trust(), forHost: "")
            }
        }
    }

    @Test func finding2TheCacheNeverReplacesAnEntryWithAnOlderOne() throws {
        let pki = try RevocationPKI()
        let cache = RevocationCache(failureBackoff: .zero)
        // producedAt within the leaf's validity (it was issued an hour ago). The older response expires sooner, so which one the cache kept shows later.
        let newer = try goodOCSP(pki, producedAt: .days(-0.01), nextUpdate: .days(2))
        let older = try goodOCSP(pki, producedAt: .days(-0.03), nextUpdate: .days(0.5))
        for staple in [newer, older] {
            let trust = try pki.trust(staple: staple)
            try pki.evaluator(.soft { $0.networkAccessDisabled = true }, fetcher: nil, cache: cache).evaluate(trust, forHost: "")
            trust.handshakeCompleted()
        }
        // A day later, without a staple: only the newer response still answers.
        let trust = try pki.trust(at: .days(1))
        try pki.evaluator(.soft { $0.networkAccessDisabled = true }, fetcher: nil, cache: cache).evaluate(trust, forHost: "")
        let result = try #require(trust.revocationResults?.first)
        #expect(result.status == .good)
        #expect(result.fromCache)
        #expect(cache.statistics.entries == 1)
    }

    @Test func finding2AStapleIsCachedOnlyOnceTheHandshakeHasCompleted() throws {
        let pki = try RevocationPKI()
        let cache = RevocationCache(failureBackoff: .zero)
        let trust = try pki.trust(staple: goodOCSP(pki))
        #expect(try leafStatus(pki.evaluator(.soft(), fetcher: nil, cache: cache), trust) == .good)
        #expect(cache.statistics.entries == 0)  // the server has not proven it holds the key yet
        trust.handshakeCompleted()
        #expect(cache.statistics.entries == 1)
        trust.handshakeCompleted()  // idempotent
        #expect(cache.statistics.entries == 1)
    }
}

/// Second audit, finding 7: application-supplied CRLs were matched to the issuer by formatted
/// name string, so a CRL (here a delta) from another CA of the same name could stand in for the
/// issuer's own. They are matched by DER name and authority key identifier now.
@Suite struct LocalCRLIssuerMatchingTests {
    @Test func finding7ACRLFromAnotherCAOfTheSameNameIsNotTheIssuersCRL() throws {
        let pki = try RevocationPKI()
        let namesake = try pki.root.issueSigner(
            CertificateSpec(
                subject: "Revocation Issuing CA", subjectKey: .ecP256(), notBefore: .days(-1), notAfter: .days(365),
                isCA: true, extendedKeyUsage: []))
        #expect(namesake.certificate.subject == pki.ca.certificate.subject)
        let complete = try CertificateRevocationList(bytes: CRLSpec(number: 20).der(by: pki.ca))
        let foreignDelta = try CertificateRevocationList(bytes: CRLSpec(number: 21, deltaBase: 20).der(by: namesake))
        let delta = try CertificateRevocationList(
            bytes: CRLSpec(revoked: [RevokedCertificate(pki.leaf.certificate, reason: 1)], number: 21, deltaBase: 20).der(by: pki.ca))
        let evaluator = RevocationTrustEvaluator(
            options: .soft { $0.methods = .crl; $0.networkAccessDisabled = true }, cache: RevocationCache(),
            revocationLists: [complete, foreignDelta, delta])
        let trust = try pki.trust()
        let error = #expect(throws: TrustError.revoked) { try evaluator.evaluate(trust, forHost: RevocationPKI.host) }
        #expect(error?.evaluator == "RevocationTrustEvaluator")
        #expect(trust.revocationResults?.first?.source == .localCRL)
    }
}
