import Foundation
import ServerTrust
import ServerTrustLab
import ServerTrustLedger
import ServerTrustPurchases

/// The demo's purchase scenes: App Store signed data and a receipt from an Apple-like lab PKI
/// (ServerTrustLab's `AppStoreLab` and `ReceiptLab`), verified offline by ServerTrustPurchases
/// against the lab's root as the configured root — a genuine purchase, and the forgeries an
/// on-device proxy or a patched app would send; then the genuine transaction claimed in a
/// ServerTrustLedger on a temporary SQLite file — by its buyer, by its buyer again (a lost
/// answer), by another account (a replay), and after a refund notification.
struct DemoPurchases {
    static let bundleID = "com.example.app"

    /// One scene: what was sent, the refusal's code expected (nil: none), and what happened.
    struct Scene {
        let purchase: String
        let expected: String?
        /// The refusal's code, nil when it went through.
        let code: String?
        let verdict: String
        let reason: String

        var asExpected: Bool { code == expected }
    }

    let scenes: [Scene]

    init(ledgerPath: String) async throws {
        let lab = try AppStoreLab(rootName: "Demo Apple Root CA - G3")
        let verifier = try AppStoreSignedDataVerifier(
            roots: [lab.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
        let genuine = try lab.jws(payload: AppStoreLab.transactionJSON(bundleID: Self.bundleID, transactionID: "2000000000000001"))

        // A look-alike root: the same name, a key of the forger's own, carried in x5c.
        let lookAlike = try AppStoreLab(rootName: "Demo Apple Root CA - G3")
        let forgedRoot = try lookAlike.jws(payload: AppStoreLab.transactionJSON(bundleID: Self.bundleID, transactionID: "2000000000000002"))

        // The genuine signature over a payload whose transaction was changed on the way.
        let parts = genuine.split(separator: ".").map(String.init)
        let changed = AppStoreLab.base64URL(Array(AppStoreLab.transactionJSON(bundleID: Self.bundleID, transactionID: "2000000099999999").utf8))
        let tampered = [parts[0], changed, parts[2]].joined(separator: ".")

        // Signed as StoreKit Testing in Xcode signs: one self-signed certificate.
        let storeKitKey = LabKey.ecP256()
        let storeKit = try LabPKI.makeRoot(
            CertificateSpec(
                subject: LabName(commonName: "StoreKit Testing in Xcode"), subjectKey: storeKitKey, isCA: false, keyUsage: [.digitalSignature],
                extendedKeyUsage: []))
        let xcode = try lab.jws(
            payload: AppStoreLab.transactionJSON(bundleID: Self.bundleID, environment: "Xcode", transactionID: "0"), chain: [storeKit.certificate],
            signingKey: storeKitKey)

        // A receipt from the lab's Apple-like RSA chain, and one whose content was changed after
        // it was signed: a purchase added to it.
        let receiptLab = try ReceiptLab(rootName: "Demo Apple Root CA")
        let receiptVerifier = try AppStoreReceiptVerifier(roots: [receiptLab.root.certificate], bundleID: Self.bundleID, revocation: .disabled)
        let payload = ReceiptLab.attributeSet(ReceiptLab.payloadAttributes(bundleID: Self.bundleID))
        let genuineReceipt = try receiptLab.receipt(payload: payload)
        var altering = ReceiptLab.Options()
        altering.contentAfterSigning = ReceiptLab.attributeSet(
            ReceiptLab.payloadAttributes(bundleID: Self.bundleID, inApp: [ReceiptLab.inAppPurchase(), ReceiptLab.inAppPurchase()]))
        let alteredReceipt = try receiptLab.receipt(payload: payload, options: altering)

        scenes = [
            Self.scene("genuine signed transaction", expected: nil) {
                let value = try verifier.verifyTransaction(genuine)
                return "transaction \(value.transactionId ?? "?") of \(value.productId ?? "?"), signed by the lab's Apple-like chain"
            },
            Self.scene("look-alike root in x5c", expected: .untrustedRoot) { try verifier.verifyTransaction(forgedRoot).bundleId },
            Self.scene("tampered payload", expected: .invalidSignature) { try verifier.verifyTransaction(tampered).bundleId },
            Self.scene("Xcode-signed transaction", expected: .wrongChainLength) { try verifier.verifyTransaction(xcode).bundleId },
            Self.scene("genuine receipt", expected: nil) {
                let receipt = try receiptVerifier.verify(genuineReceipt)
                return "receipt of \(receipt.bundleID) with \(receipt.inAppPurchases.count) in-app purchase, signed by the lab's Apple-like RSA chain"
            },
            Self.scene("receipt with altered content", expected: .invalidSignature) { try receiptVerifier.verify(alteredReceipt).bundleID },
        ] + (await Self.ledgerScenes(path: ledgerPath, verifier: verifier, genuine: genuine))
    }

    /// The genuine transaction claimed, claimed again, replayed and refunded.
    private static func ledgerScenes(path: String, verifier: AppStoreSignedDataVerifier, genuine: String) async -> [Scene] {
        let ledger: PurchaseLedger
        let purchase: LedgerPurchase
        do {
            ledger = try PurchaseLedger.sqlite(path: path)
            purchase = try LedgerPurchase(appStore: try await verifier.verifyTransaction(genuine))
        } catch {
            return [Scene(purchase: "ledger", expected: nil, code: "\((error as? LedgerError)?.code.rawValue ?? "error")", verdict: "failed", reason: "\(error)")]
        }
        func claim(_ account: String) async throws -> String {
            switch try await ledger.claim(purchase, for: LedgerAccount(account)) {
            case .granted(let grant): "granted to \(grant.account): transaction \(grant.purchase.transactionID), on disk before the answer"
            case .alreadyGranted(let grant): "the same grant back to \(grant.account) (granted \(grant.grantedAt.formatted(.iso8601))): nothing granted twice"
            }
        }
        return [
            await ledgerScene("claimed by alice", verdict: "granted", expected: nil) { try await claim("alice") },
            await ledgerScene("claimed again by alice (lost answer)", verdict: "granted", expected: nil) { try await claim("alice") },
            await ledgerScene("claimed by mallory", verdict: "granted", expected: .replay) { try await claim("mallory") },
            await ledgerScene("refund notification", verdict: "applied", expected: nil) {
                var refunded = purchase
                refunded.revocationDate = Date()
                refunded.revocationReason = "0"
                let notification = LedgerNotification(
                    store: .appStore, id: UUID().uuidString, signedDate: Date(), effect: .revocation, purchase: refunded)
                guard case .applied(let grants) = try await ledger.apply(notification) else { return "nothing changed" }
                return "the grant to \(grants.map(\.account).joined(separator: ", ")) revoked: the refund ends it"
            },
            await ledgerScene("claimed by alice after the refund", verdict: "granted", expected: .revoked) { try await claim("alice") },
        ]
    }

    private static func scene(_ purchase: String, expected: PurchaseVerificationError.Code?, _ run: () throws -> String) -> Scene {
        do {
            return Scene(purchase: purchase, expected: expected?.description, code: nil, verdict: "verified", reason: try run())
        } catch {
            let refusal = error as? PurchaseVerificationError ?? PurchaseVerificationError(.invalidConfiguration, "\(error)")
            return Scene(
                purchase: purchase, expected: expected?.description, code: refusal.code.description, verdict: "refused",
                reason: "\(refusal.code): \(Self.firstSentence(refusal.reason))")
        }
    }

    private static func ledgerScene(_ purchase: String, verdict: String, expected: LedgerError.Code?, _ run: () async throws -> String) async -> Scene {
        do {
            return Scene(purchase: purchase, expected: expected?.rawValue, code: nil, verdict: verdict, reason: try await run())
        } catch {
            let refusal = error as? LedgerError ?? LedgerError(.storeFailed, "\(error)")
            return Scene(
                purchase: purchase, expected: expected?.rawValue, code: refusal.code.rawValue, verdict: "refused",
                reason: "\(refusal.code.rawValue): \(Self.firstSentence(refusal.reason))")
        }
    }

    private static func firstSentence(_ text: String) -> String {
        guard let end = text.range(of: ". ") else { return text }
        return String(text[..<end.lowerBound]) + "."
    }
}
