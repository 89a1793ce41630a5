import Dispatch
import Foundation
import ServerTrust
import ServerTrustLab
@testable import ServerTrustPurchases
import ServerTrustTestSupport
import Testing

/// The `async` forms: a verification that waits for a revocation fetch runs on a thread of its
/// own, so Swift concurrency's threads (one per core) are never all blocked on the network.
@Suite struct AsyncVerificationTests {
    static let bundleID = "com.example.app"

    /// More verifications than the cooperative pool has threads, each of a different chain (so
    /// no single flight joins them), whose responders all answer only once every one of them
    /// has been asked: the answers can come only if every verification is waiting at once, on a
    /// thread of its own. Run inline on the pool, they would fill it and wait in vain; the
    /// responders then give up (after 20 s, a deadlock guard, not a timing) and hard-fail
    /// refuses. Receipts go the same way (one code path).
    @Test func concurrentVerificationsWaitingForRevocationNeverFillTheCooperativePool() async throws {
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let asked = Locked(0)
        let everyoneAsked = DispatchSemaphore(value: 0)
        let fetcher = FakeRevocationFetcher()
        var verifiers: [(AppStoreSignedDataVerifier, String)] = []
        for index in 0..<count {
            let url = "http://ocsp.apple.test/\(index)"
            let lab = try AppStoreLab(leafOCSPURL: url, intermediateOCSPURL: url + "/wwdr")
            let good = try OCSPResponseBuilder(signer: lab.intermediate).adding(.good, for: lab.leaf, issuedBy: lab.intermediate).build()
            fetcher.route(url) { _, _ in
                let arrived = asked.withLock { count in
                    count += 1
                    return count
                }
                if arrived == count {
                    for _ in 0..<count { everyoneAsked.signal() }
                }
                guard everyoneAsked.wait(timeout: .now() + 20) == .success else { return .failure(.fetchFailed("not everyone was asked")) }
                return .success(good)
            }
            // The intermediate's answer comes at once (a later route wins for its longer prefix).
            fetcher.serve(url + "/wwdr", try OCSPResponseBuilder(signer: lab.root).adding(.good, for: lab.intermediate.certificate, issuedBy: lab.root).build())
            var options = RevocationOptions.hardFail
            options.timeBudget = .seconds(30)
            let verifier = try AppStoreSignedDataVerifier(
                roots: [lab.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox,
                revocation: AppStoreRevocationPolicy(options: options, fetcher: fetcher, cache: RevocationCache()))
            #expect(verifier.mayFetch)
            verifiers.append((verifier, try lab.jws(payload: AppStoreLab.transactionJSON(transactionID: "\(index)"))))
        }
        let verified = try await withThrowingTaskGroup(of: String.self) { group in
            for (verifier, jws) in verifiers {
                group.addTask { try await verifier.verifyTransaction(jws).transactionId ?? "" }
            }
            var ids: [String] = []
            for try await id in group { ids.append(id) }
            return ids
        }
        #expect(Set(verified) == Set((0..<count).map(String.init)))
        #expect(asked.withLock { $0 } == count)
    }

    /// Offline, nothing can block: the `async` form runs inline, and gives what the
    /// synchronous one does, refusals included.
    @Test func offlineVerificationRunsInlineWithTheSameResults() async throws {
        let lab = try AppStoreLab()
        let verifier = try AppStoreSignedDataVerifier(
            roots: [lab.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
        #expect(!verifier.mayFetch)
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON(transactionID: "7"))
        #expect(try await verifier.verifyTransaction(jws).transactionId == "7")
        do {
            _ = try await verifier.verifyTransaction(jws + "A")
            Issue.record("bytes after the signature were accepted")
        } catch {
            #expect(error.code == .invalidSignature || error.code == .malformedJWS)
        }
        let receipts = try ReceiptLab()
        let receiptVerifier = try AppStoreReceiptVerifier(roots: [receipts.root.certificate], bundleID: Self.bundleID, revocation: .disabled)
        #expect(!receiptVerifier.mayFetch)
        let receipt = try receipts.receipt(payload: ReceiptLab.attributeSet(ReceiptLab.payloadAttributes(bundleID: Self.bundleID)))
        #expect(try await receiptVerifier.verify(receipt).bundleID == Self.bundleID)
    }
}
