import Foundation
import FuzzSupport
import ServerTrust
import ServerTrustPurchases

/// Apple's mock signed transaction from app-store-server-library-swift's tests (MIT, Copyright
/// 2023 Apple Inc.; Tests/ServerTrustPurchasesTests/Fixtures/apple/LICENSE.txt): a genuine JWS
/// under Apple's test chain, which the fuzzer mutates.
let genuine = "eyJ4NWMiOlsiTUlJQm9EQ0NBVWFnQXdJQkFnSUJDekFLQmdncWhrak9QUVFEQWpCTk1Rc3dDUVlEVlFRR0V3SlZVekVUTUJFR0ExVUVDQXdLUTJGc2FXWnZjbTVwWVRFU01CQUdBMVVFQnd3SlEzVndaWEowYVc1dk1SVXdFd1lEVlFRS0RBeEpiblJsY20xbFpHbGhkR1V3SGhjTk1qTXdNVEEwTVRZek56TXhXaGNOTXpJeE1qTXhNVFl6TnpNeFdqQkZNUXN3Q1FZRFZRUUdFd0pWVXpFVE1CRUdBMVVFQ0F3S1EyRnNhV1p2Y201cFlURVNNQkFHQTFVRUJ3d0pRM1Z3WlhKMGFXNXZNUTB3Q3dZRFZRUUtEQVJNWldGbU1Ga3dFd1lIS29aSXpqMENBUVlJS29aSXpqMERBUWNEUWdBRTRyV0J4R21GYm5QSVBRSTB6c0JLekx4c2o4cEQydnFicjB5UElTVXgyV1F5eG1yTnFsOWZoSzhZRUV5WUZWNysrcDVpNFlVU1Ivbzl1UUlnQ1BJaHJLTWZNQjB3Q1FZRFZSMFRCQUl3QURBUUJnb3Foa2lHOTJOa0Jnc0JCQUlUQURBS0JnZ3Foa2pPUFFRREFnTklBREJGQWlFQWtpRVprb0ZNa2o0Z1huK1E5alhRWk1qWjJnbmpaM2FNOE5ZcmdmVFVpdlFDSURKWVowRmFMZTduU0lVMkxXTFRrNXRYVENjNEU4R0pTWWYvc1lSeEVGaWUiLCJNSUlCbHpDQ0FUMmdBd0lCQWdJQkJqQUtCZ2dxaGtqT1BRUURBakEyTVFzd0NRWURWUVFHRXdKVlV6RVRNQkVHQTFVRUNBd0tRMkZzYVdadmNtNXBZVEVTTUJBR0ExVUVCd3dKUTNWd1pYSjBhVzV2TUI0WERUSXpNREV3TkRFMk1qWXdNVm9YRFRNeU1USXpNVEUyTWpZd01Wb3dUVEVMTUFrR0ExVUVCaE1DVlZNeEV6QVJCZ05WQkFnTUNrTmhiR2xtYjNKdWFXRXhFakFRQmdOVkJBY01DVU4xY0dWeWRHbHViekVWTUJNR0ExVUVDZ3dNU1c1MFpYSnRaV1JwWVhSbE1Ga3dFd1lIS29aSXpqMENBUVlJS29aSXpqMERBUWNEUWdBRUZRM2xYMnNxTjlHSXdBaWlNUURRQy9reW5TZ1g0N1J3dmlET3RNWFh2eUtkUWU2Q1BzUzNqbzJ1UkR1RXFBeFdlT2lDcmpsRFdzeXo1d3dkVTBndGFxTWxNQ013RHdZRFZSMFRCQWd3QmdFQi93SUJBREFRQmdvcWhraUc5Mk5rQmdJQkJBSVRBREFLQmdncWhrak9QUVFEQWdOSUFEQkZBaUVBdm56TWNWMjY4Y1JiMS9GcHlWMUVoVDNXRnZPenJCVVdQNi9Ub1RoRmF2TUNJRmJhNXQ2WUt5MFIySkR0eHF0T2pKeTY2bDZWN2QvUHJBRE5wa21JUFcraSIsIk1JSUJYRENDQVFJQ0NRQ2ZqVFVHTERuUjlqQUtCZ2dxaGtqT1BRUURBekEyTVFzd0NRWURWUVFHRXdKVlV6RVRNQkVHQTFVRUNBd0tRMkZzYVdadmNtNXBZVEVTTUJBR0ExVUVCd3dKUTNWd1pYSjBhVzV2TUI0WERUSXpNREV3TkRFMk1qQXpNbG9YRFRNek1ERXdNVEUyTWpBek1sb3dOakVMTUFrR0ExVUVCaE1DVlZNeEV6QVJCZ05WQkFnTUNrTmhiR2xtYjNKdWFXRXhFakFRQmdOVkJBY01DVU4xY0dWeWRHbHViekJaTUJNR0J5cUdTTTQ5QWdFR0NDcUdTTTQ5QXdFSEEwSUFCSFB2d1pmb0tMS2FPclgvV2U0cU9iWFNuYTVUZFdIVlo2aElSQTF3MG9jM1FDVDBJbzJwbHlEQjMvTVZsazJ0YzRLR0U4VGlxVzdpYlE2WmM5VjY0azB3Q2dZSUtvWkl6ajBFQXdNRFNBQXdSUUloQU1USGhXdGJBUU4waFN4SVhjUDRDS3JEQ0gvZ3N4V3B4NmpUWkxUZVorRlBBaUIzNW53azVxMHpjSXBlZnZZSjBNVS95R0dIU1dlejBicTBwRFlVTy9ubUR3PT0iXSwidHlwIjoiSldUIiwiYWxnIjoiRVMyNTYifQ.eyJlbnZpcm9ubWVudCI6IlNhbmRib3giLCJidW5kbGVJZCI6ImNvbS5leGFtcGxlIiwic2lnbmVkRGF0ZSI6MTY3Mjk1NjE1NDAwMH0.PnHWpeIJZ8f2Q218NSGLo_aR0IBEJvC6PxmxKXh-qfYTrZccx2suGl223OSNAX78e4Ylf2yJCG2N-FfU-NIhZQ"

/// The root the genuine JWS carries as x5c[2], configured as the only root.
let root: Certificate = {
    let header = String(genuine.prefix { $0 != "." }).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    let padded = header + String(repeating: "=", count: (4 - header.count % 4) % 4)
    let json = try! JSONSerialization.jsonObject(with: Data(base64Encoded: padded)!) as! [String: Any]
    return try! Certificate(base64Encoded: (json["x5c"] as! [String])[2])
}()
let verifier = try! AppStoreSignedDataVerifier(roots: [root], bundleID: "com.example", appAppleID: 1234, environment: .sandbox, revocation: .disabled)
/// Inside the test chain's validity (2023–2032), after the genuine data's signedDate.
let time = Date(timeIntervalSince1970: 1_800_000_000)

/// `SERVERTRUST_FUZZ_WRITE_SEED=path` writes the genuine JWS there (Fuzz/make-seeds.sh).
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    writeSeedIfAsked(genuine)
    return 0
}

/// The refusal's code, or nil when `body` verified.
func refusalCode<T>(_ body: () throws -> T) -> (T?, PurchaseVerificationError.Code?) {
    do {
        return (try body(), nil)
    } catch let error as PurchaseVerificationError {
        require(!error.reason.isEmpty, "a refusal without a reason: \(error.code)")
        return (nil, error.code)
    } catch {
        fatalError("a verifier threw something other than PurchaseVerificationError: \(error)")
    }
}

/// Input: text as a compact JWS, to every `AppStoreSignedDataVerifier` entry point
/// (transaction, renewal info, notification, app transaction).
///
/// Properties: every refusal is a `PurchaseVerificationError` with a reason; whatever verifies
/// is for the configured app (`com.example`) in the sandbox — a nested transaction or renewal
/// info of a notification too — and was signed by the chain under the configured root: the same
/// text never verifies under another root.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAppStoreJWS(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let text = FuzzInput.text(FuzzInput.bytes(start, count))
    var verified = false
    if let transaction = refusalCode({ try verifier.verifyTransaction(text, at: time) }).0 {
        require(transaction.bundleId == "com.example" && transaction.environment == .sandbox, "verified a transaction for \(transaction.bundleId)")
        verified = true
    }
    if let renewal = refusalCode({ try verifier.verifyRenewalInfo(text, at: time) }).0 {
        require(renewal.environment == .sandbox, "verified renewal info from \(renewal.environment)")
        verified = true
    }
    if let notification = refusalCode({ try verifier.verifyNotification(text, at: time) }).0 {
        require(notification.data?.bundleId == "com.example" || notification.summary?.bundleId == "com.example"
            || notification.externalPurchaseToken?.bundleId == "com.example" || notification.appData?.bundleId == "com.example",
            "verified a notification for another app")
        require(notification.data?.transaction.map { $0.bundleId == "com.example" } ?? true, "verified a nested transaction for another app")
        verified = true
    }
    if let appTransaction = refusalCode({ try verifier.verifyAppTransaction(text, at: time) }).0 {
        require(appTransaction.bundleId == "com.example" && appTransaction.receiptType == .sandbox, "verified an app transaction for another app")
        verified = true
    }
    if verified {
        require(refusalCode({ try elsewhere.verifyTransaction(text, at: time) }).1 != nil, "verified under a root it does not carry")
    }
    return 0
}

/// A verifier whose only root is the fuzz fixture's, not Apple's test chain's.
let elsewhere = try! AppStoreSignedDataVerifier(roots: [Fixtures.root], bundleID: "com.example", appAppleID: 1234, environment: .sandbox, revocation: .disabled)
