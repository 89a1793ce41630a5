import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

@Suite struct RevocationCacheTests {
    @Test func aSecondEvaluationIsAnsweredFromTheCacheWithoutAFetch() throws {
        let pki = try RevocationPKI()
        let fetcher = try pki.goodFetcher()
        let cache = RevocationCache()
        let evaluator = pki.evaluator(.hard(), fetcher: fetcher, cache: cache)
        try leafStatus(evaluator, pki.trust())
        #expect(fetcher.count == 1)

        let second = try pki.trust()
        #expect(try leafStatus(evaluator, second) == .good)
        #expect(fetcher.count == 1)
        #expect(second.revocationResults?.first?.fromCache == true)
        #expect(second.revocationResults?.first?.source == .ocsp(RevocationPKI.leafOCSP))
        #expect(cache.statistics.fetches == 1)
        #expect(cache.statistics.hits == 1)
    }

    @Test func aCachedAnswerServesEvenWithNetworkAccessDisabled() throws {
        let pki = try RevocationPKI()
        let cache = RevocationCache()
        try leafStatus(pki.evaluator(fetcher: try pki.goodFetcher(), cache: cache), pki.trust())
        let offline = pki.evaluator(.hard { $0.networkAccessDisabled = true }, fetcher: nil, cache: cache)
        #expect(try leafStatus(offline, pki.trust()) == .good)
    }

    @Test func aVerifiedStapleIsCachedForLaterHandshakesWithoutOne() throws {
        let pki = try RevocationPKI()
        let cache = RevocationCache()
        let evaluator = pki.evaluator(.hard { $0.networkAccessDisabled = true }, fetcher: nil, cache: cache)
        let stapled = try pki.trust(staple: pki.leafOCSP(.good))
        try leafStatus(evaluator, stapled)
        stapled.handshakeCompleted()  // a staple is cached once the server has proven it holds the key
        let later = try pki.trust()
        #expect(try leafStatus(evaluator, later) == .good)
        #expect(later.revocationResults?.first?.source == .stapledOCSP)
        #expect(later.revocationResults?.first?.fromCache == true)
    }

    @Test func theSameStapleAgainReusesTheCachedResponse() throws {
        let pki = try RevocationPKI()
        let cache = RevocationCache()
        let staple = try pki.leafOCSP(.good)
        let evaluator = pki.evaluator(.hard { $0.networkAccessDisabled = true }, fetcher: nil, cache: cache)
        for _ in 0..<3 {
            let trust = try pki.trust(staple: staple)
            #expect(try leafStatus(evaluator, trust) == .good)
            trust.handshakeCompleted()
        }
        #expect(cache.statistics.entries == 1)
    }

    @Test func aCachedRevocationStillRejects() throws {
        let pki = try RevocationPKI()
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, try pki.leafOCSP(.revoked(reason: .keyCompromise, date: .days(-1))))
        let cache = RevocationCache()
        for _ in 0..<2 {
            #expect(throws: TrustError.revoked) {
                try pki.evaluator(fetcher: fetcher, cache: cache).evaluate(try pki.trust(), forHost: "")
            }
        }
        #expect(fetcher.count == 1)
    }

    @Test func oneCRLAnswersForEveryCertificateOfItsIssuer() throws {
        let pki = try RevocationPKI(leafOCSP: nil)
        let sibling = try pki.ca.issueLeaf(dnsNames: ["www.example.com"], crlURL: RevocationPKI.leafCRL)
        let fetcher = try pki.goodFetcher()
        let cache = RevocationCache()
        let evaluator = pki.evaluator(.hard(), fetcher: fetcher, cache: cache)
        try leafStatus(evaluator, pki.trust())
        let siblingTrust = PeerTrust(presentedChain: sibling.chain, anchors: try TrustAnchors([pki.root.certificate]))
        #expect(try leafStatus(evaluator, siblingTrust) == .good)
        #expect(fetcher.count(RevocationPKI.leafCRL) == 1)
    }

    @Test func anEntryPastItsNextUpdateIsFetchedAgain() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, try pki.leafOCSP(.good, thisUpdate: .days(-0.5), nextUpdate: .days(0.5)))
        let cache = RevocationCache()
        let evaluator = pki.evaluator(fetcher: fetcher, cache: cache)
        try leafStatus(evaluator, pki.trust())
        // A day later the cached response has expired: it no longer answers, and a new fetch happens.
        #expect(try leafStatus(evaluator, pki.trust(at: .days(1))) == .unknown(.stale))
        #expect(fetcher.count == 2)
    }

    @Test func concurrentEvaluationsNeedingTheSameAnswerCauseOneFetch() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let cache = RevocationCache()
        let good = try pki.leafOCSP(.good)
        let waiters = 7
        let fetcher = FakeRevocationFetcher()
        fetcher.route(RevocationPKI.leafOCSP) { _, deadline in
            // Hold the fetch until every other evaluation is waiting for it (or the deadline nears).
            while cache.statistics.waiting < waiters && ContinuousClock.now < deadline - .milliseconds(500) {
                Thread.sleep(forTimeInterval: 0.005)
            }
            return .success(good)
        }
        let evaluator = pki.evaluator(.hard { $0.timeBudget = .seconds(10) }, fetcher: fetcher, cache: cache)
        let statuses = Locked<[RevocationStatus]>([])
        let finished = DispatchGroup()
        for _ in 0...waiters {
            finished.enter()
            Thread {
                defer { finished.leave() }
                guard let trust = try? pki.trust(), (try? evaluator.evaluate(trust, forHost: "")) != nil,
                    let status = trust.revocationResults?.first?.status
                else { return }
                statuses.withLock { $0.append(status) }
            }.start()
        }
        #expect(finished.wait(timeout: .now() + 30) == .success)
        #expect(statuses.withLock { $0 } == Array(repeating: .good, count: waiters + 1))
        #expect(fetcher.count == 1)
        #expect(cache.statistics.coalescedWaits == waiters)
    }

    @Test func aFailedFetchIsNotRepeatedWithinTheBackoff() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.fail(RevocationPKI.leafOCSP, .fetchFailed("connection refused"))
        let cache = RevocationCache(failureBackoff: .seconds(60))
        let evaluator = pki.evaluator(fetcher: fetcher, cache: cache)
        #expect(try leafStatus(evaluator, pki.trust()) == .unknown(.fetchFailed("fetchFailed")))
        #expect(try leafStatus(evaluator, pki.trust()) == .unknown(.fetchFailed("fetchFailed")))
        #expect(fetcher.count == 1)
        #expect(cache.statistics.suppressedFetches == 1)

        let eager = RevocationCache(failureBackoff: .zero)
        try leafStatus(pki.evaluator(fetcher: fetcher, cache: eager), pki.trust())
        try leafStatus(pki.evaluator(fetcher: fetcher, cache: eager), pki.trust())
        #expect(fetcher.count == 3)
    }

    @Test func theCacheStaysWithinItsBounds() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let cache = RevocationCache(maximumEntries: 2)
        for index in 0..<3 {
            let leaf = try pki.ca.issueLeaf(dnsNames: ["host\(index).example.com"], ocspURL: RevocationPKI.leafOCSP)
            let fetcher = FakeRevocationFetcher()
            fetcher.serve(RevocationPKI.leafOCSP, try pki.ca.makeOCSPResponseDER(.good, for: leaf.certificate))
            let trust = PeerTrust(presentedChain: leaf.chain, anchors: try TrustAnchors([pki.root.certificate]))
            #expect(try leafStatus(pki.evaluator(fetcher: fetcher, cache: cache), trust) == .good)
        }
        #expect(cache.statistics.entries == 2)
        #expect(cache.statistics.evictions == 1)
    }

    // MARK: - On disk

    private func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("RevocationCacheTests-\(UUID().uuidString)", isDirectory: true)
    }

    @Test func aDiskCacheSurvivesANewCacheInstance() throws {
        let pki = try RevocationPKI()
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fetcher = try pki.goodFetcher()
        try leafStatus(pki.evaluator(fetcher: fetcher, cache: RevocationCache(directory: directory)), pki.trust())
        #expect(fetcher.count == 1)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.count == 1)
        #expect(files.first?.hasPrefix("ocsp-") == true && files.first?.hasSuffix(".der") == true)

        let reopened = RevocationCache(directory: directory)
        let trust = try pki.trust()
        #expect(try leafStatus(pki.evaluator(.hard(), fetcher: fetcher, cache: reopened), trust) == .good)
        #expect(fetcher.count == 1)
        #expect(reopened.statistics.diskHits == 1)
        #expect(trust.revocationResults?.first?.fromCache == true)
    }

    @Test func aCRLOnDiskIsVerifiedAgainWhenLoaded() throws {
        let pki = try RevocationPKI(leafOCSP: nil)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fetcher = try pki.goodFetcher()
        try leafStatus(pki.evaluator(fetcher: fetcher, cache: RevocationCache(directory: directory)), pki.trust())
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first)
        #expect(file.hasPrefix("crl-"))

        // Replace the file with a CRL of the same name signed by another key: never trusted.
        let impostor = try pki.root.issueIntermediate(commonName: "Revocation Issuing CA")
        try Data(impostor.makeCRLDER()).write(to: directory.appendingPathComponent(file))
        let reopened = RevocationCache(directory: directory)
        try leafStatus(pki.evaluator(fetcher: fetcher, cache: reopened), pki.trust())
        #expect(reopened.statistics.diskHits == 0)
        #expect(fetcher.count == 2)
    }

    @Test func aFileThatIsNotARevocationResponseIsDeleted() throws {
        let pki = try RevocationPKI()
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fetcher = try pki.goodFetcher()
        try leafStatus(pki.evaluator(fetcher: fetcher, cache: RevocationCache(directory: directory)), pki.trust())
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first)
        try Data("tampered".utf8).write(to: directory.appendingPathComponent(file))

        let reopened = RevocationCache(directory: directory, failureBackoff: .zero)
        let offline = pki.evaluator(.soft { $0.networkAccessDisabled = true }, fetcher: nil, cache: reopened)
        #expect(try leafStatus(offline, pki.trust()) == .unknown(.networkAccessDisabled))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(file).path))
    }
}
