import Dispatch
public import Foundation

/// Where a verification runs when the caller awaits it.
///
/// A verification is synchronous: with revocation checking on, a chain the verifier has not
/// seen (or whose answers have gone stale) waits for its OCSP or CRL answers, up to
/// `RevocationOptions/timeBudget` (3 s by default) — on the calling thread. The `async` forms
/// run such a verification on a thread of their own (Dispatch's global queue), so a Swift
/// concurrency thread of a server is never blocked on the network; a verifier that can fetch
/// nothing (revocation off, or no fetcher) runs inline, where nothing blocks. Cancelling the
/// awaiting task does not cut a fetch short: the time budget bounds it.
enum PurchaseVerificationExecutor {
    static func run<Value: Sendable>(
        offloading: Bool, _ body: @escaping @Sendable () throws(PurchaseVerificationError) -> Value
    ) async throws(PurchaseVerificationError) -> Value {
        guard offloading else { return try body() }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, PurchaseVerificationError>, Never>) in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { () throws(PurchaseVerificationError) -> Value in try body() })
            }
        }
        return try result.get()
    }
}

extension AppStoreRevocationPolicy {
    /// Whether a verification under this policy may wait for the network.
    var mayFetch: Bool { mode?.fetcher != nil && mode?.options.networkAccessDisabled == false }
}

extension AppStoreSignedDataVerifier {
    /// `verifyTransaction(_:at:)`, never blocking the caller's thread on a revocation fetch
    /// (see <doc:VerifyingAppStorePurchases>).
    public func verifyTransaction(_ signed: String, at time: Date? = nil) async throws(PurchaseVerificationError) -> AppStoreTransaction {
        try await PurchaseVerificationExecutor.run(offloading: mayFetch) { () throws(PurchaseVerificationError) in try verifyTransaction(signed, at: time) }
    }

    /// `verifyRenewalInfo(_:at:)`, never blocking the caller's thread on a revocation fetch.
    public func verifyRenewalInfo(_ signed: String, at time: Date? = nil) async throws(PurchaseVerificationError) -> AppStoreRenewalInfo {
        try await PurchaseVerificationExecutor.run(offloading: mayFetch) { () throws(PurchaseVerificationError) in try verifyRenewalInfo(signed, at: time) }
    }

    /// `verifyNotification(_:at:)`, never blocking the caller's thread on a revocation fetch.
    public func verifyNotification(_ signed: String, at time: Date? = nil) async throws(PurchaseVerificationError) -> AppStoreNotification {
        try await PurchaseVerificationExecutor.run(offloading: mayFetch) { () throws(PurchaseVerificationError) in try verifyNotification(signed, at: time) }
    }

    /// `verifyAppTransaction(_:at:)`, never blocking the caller's thread on a revocation fetch.
    public func verifyAppTransaction(_ signed: String, at time: Date? = nil) async throws(PurchaseVerificationError) -> AppStoreAppTransaction {
        try await PurchaseVerificationExecutor.run(offloading: mayFetch) { () throws(PurchaseVerificationError) in try verifyAppTransaction(signed, at: time) }
    }
}

extension AppStoreReceiptVerifier {
    /// `verify(_:at:)`, never blocking the caller's thread on a revocation fetch.
    public func verify(_ receipt: [UInt8], at time: Date? = nil) async throws(PurchaseVerificationError) -> AppStoreReceipt {
        try await PurchaseVerificationExecutor.run(offloading: mayFetch) { () throws(PurchaseVerificationError) in try verify(receipt, at: time) }
    }

    /// `verify(base64Encoded:at:)`, never blocking the caller's thread on a revocation fetch.
    public func verify(base64Encoded text: String, at time: Date? = nil) async throws(PurchaseVerificationError) -> AppStoreReceipt {
        try await PurchaseVerificationExecutor.run(offloading: mayFetch) { () throws(PurchaseVerificationError) in try verify(base64Encoded: text, at: time) }
    }
}
