import Foundation
import ServerTrust
import ServerTrustLab
import ServerTrustPurchases

/// The demo's purchase scenes: App Store signed data and a receipt from an Apple-like lab PKI
/// (ServerTrustLab's `AppStoreLab` and `ReceiptLab`), verified offline by ServerTrustPurchases
/// against the lab's root as the configured root — a genuine purchase, and the forgeries an
/// on-device proxy or a patched app would send.
struct DemoPurchases {
    static let bundleID = "com.example.app"

    /// One scene: what was sent, the refusal expected (nil: verified), and what happened.
    struct Scene {
        let purchase: String
        let expected: PurchaseVerificationError.Code?
        let refusal: PurchaseVerificationError?
        let reason: String

        var asExpected: Bool { refusal?.code == expected }
        var verdict: String { refusal == nil ? "verified" : "refused" }
    }

    let scenes: [Scene]

    init() throws {
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
        ]
    }

    private static func scene(_ purchase: String, expected: PurchaseVerificationError.Code?, _ run: () throws -> String) -> Scene {
        do {
            return Scene(purchase: purchase, expected: expected, refusal: nil, reason: try run())
        } catch {
            let refusal = error as? PurchaseVerificationError ?? PurchaseVerificationError(.invalidConfiguration, "\(error)")
            return Scene(purchase: purchase, expected: expected, refusal: refusal, reason: "\(refusal.code): \(Self.firstSentence(refusal.reason))")
        }
    }

    private static func firstSentence(_ text: String) -> String {
        guard let end = text.range(of: ". ") else { return text }
        return String(text[..<end.lowerBound]) + "."
    }
}
