import Foundation
import ServerTrust
import ServerTrustPurchases

/// One `servertrust purchases verify`: the library's verifier for the kind, configured from the
/// options — and, for what the user left out, from what the data says (reported as such, since
/// it is then not checked) — run on the material.
struct PurchaseVerificationRequest {
    let kind: AppStorePurchaseKind
    let bundleID: String?
    let appAppleID: Int64?
    let environment: AppStoreEnvironment?
    /// nil: Apple's compiled-in roots.
    let roots: [Certificate]?
    let time: Date?
    let revocation: AppStoreRevocationPolicy

    static func environment(named name: String) -> AppStoreEnvironment {
        switch name {
        case "production": .production
        case "sandbox": .sandbox
        default: .xcode
        }
    }

    /// What the command prints: as text, or as the `--json` object.
    struct Outcome: Encodable {
        enum Result {
            case verified(summary: String, payload: any Encodable)
            case refused(PurchaseVerificationError)
        }

        let kind: AppStorePurchaseKind
        let result: Result
        /// What was taken from the data rather than checked.
        let notes: [String]

        private enum CodingKeys: String, CodingKey {
            case status, kind, reason, message, payload, notes
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(kind.rawValue, forKey: .kind)
            try container.encode(notes, forKey: .notes)
            switch result {
            case .verified(_, let payload):
                try container.encode("verified", forKey: .status)
                try container.encode(AnyEncodable(payload), forKey: .payload)
            case .refused(let error):
                try container.encode("refused", forKey: .status)
                try container.encode(error.code.description, forKey: .reason)
                try container.encode(error.reason, forKey: .message)
            }
        }
    }

    func verify(_ material: [UInt8]) -> Outcome {
        var notes: [String] = []
        do throws(PurchaseVerificationError) {
            let result: Outcome.Result
            if kind == .receipt {
                result = try verifyReceipt(material, notes: &notes)
            } else {
                result = try verifySignedData(material, notes: &notes)
            }
            return Outcome(kind: kind, result: result, notes: notes)
        } catch {
            return Outcome(kind: kind, result: .refused(error), notes: notes)
        }
    }

    private func verifySignedData(_ material: [UInt8], notes: inout [String]) throws(PurchaseVerificationError) -> Outcome.Result {
        let text = String(decoding: material, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let claims = UnverifiedAppStoreClaims(jws: Array(text.utf8))
        let bundleID = try given(self.bundleID, or: "bundle ID", claims?.bundleID, &notes)
        let environment = try given(self.environment, or: "environment", claims?.environment, &notes)
        let verifier: AppStoreSignedDataVerifier
        if environment == .xcode {
            guard let storeKit = roots?.first else {
                throw PurchaseVerificationError(.invalidConfiguration, "The Xcode environment needs --root with the StoreKit test certificate.")
            }
            verifier = try .unsafeAcceptingXcodeSignedDataInReleaseBuild(storeKitCertificate: storeKit, bundleID: bundleID)
        } else {
            var appAppleID = self.appAppleID
            if appAppleID == nil, environment == .production {
                appAppleID = try taken("app Apple ID", claims?.appAppleID, &notes)
            }
            verifier = try AppStoreSignedDataVerifier(
                roots: roots ?? AppleRootCertificates.all, bundleID: bundleID, appAppleID: appAppleID, environment: environment,
                revocation: revocation)
        }
        switch kind {
        case .transaction:
            let value = try verifier.verifyTransaction(text, at: time)
            return .verified(
                summary: "transaction \(value.transactionId ?? "?") of \(value.productId ?? "?") for \(value.bundleId) (\(value.environment)), signed \(JSONText.date(value.signedDate))",
                payload: value)
        case .renewal:
            let value = try verifier.verifyRenewalInfo(text, at: time)
            return .verified(
                summary: "renewal info of \(value.originalTransactionId ?? "?") (\(value.environment)), signed \(JSONText.date(value.signedDate))",
                payload: value)
        case .notification:
            let value = try verifier.verifyNotification(text, at: time)
            return .verified(
                summary: "notification \(value.notificationType)\(value.subtype.map { "/\($0)" } ?? "") \(value.notificationUUID), signed \(JSONText.date(value.signedDate))",
                payload: value)
        case .appTransaction:
            let value = try verifier.verifyAppTransaction(text, at: time)
            return .verified(summary: "app transaction for \(value.bundleId) (\(value.receiptType)), version \(value.applicationVersion ?? "?")", payload: value)
        case .receipt:
            preconditionFailure("receipts are verified by verifyReceipt")
        }
    }

    private func verifyReceipt(_ material: [UInt8], notes: inout [String]) throws(PurchaseVerificationError) -> Outcome.Result {
        let claims = UnverifiedAppStoreReceiptClaims(material)
        let bundleID = try given(self.bundleID, or: "bundle ID", claims?.bundleID, &notes)
        let verifier: AppStoreReceiptVerifier
        if environment == .xcode {
            guard let storeKit = roots?.first else {
                throw PurchaseVerificationError(.invalidConfiguration, "The Xcode environment needs --root with the StoreKit test certificate.")
            }
            verifier = try .unsafeAcceptingXcodeSignedReceiptsInReleaseBuild(storeKitCertificate: storeKit, bundleID: bundleID)
        } else {
            verifier = try AppStoreReceiptVerifier(
                roots: roots ?? AppleRootCertificates.all, bundleID: bundleID, environment: environment, revocation: revocation)
        }
        let receipt = material.first == 0x30
            ? try verifier.verify(material, at: time) : try verifier.verify(base64Encoded: String(decoding: material, as: UTF8.self), at: time)
        return .verified(
            summary: "receipt for \(receipt.bundleID) version \(receipt.applicationVersion ?? "?") (\(receipt.receiptType ?? "?")), made \(JSONText.date(receipt.creationDate)), \(receipt.inAppPurchases.count) in-app purchase(s)",
            payload: ReceiptJSON(receipt))
    }

    /// The value the user gave, else the data's, noted as not checked.
    private func given<Value>(_ option: Value?, or what: String, _ value: Value?, _ notes: inout [String]) throws(PurchaseVerificationError) -> Value {
        if let option { return option }
        return try taken(what, value, &notes)
    }

    private func taken<Value>(_ what: String, _ value: Value?, _ notes: inout [String]) throws(PurchaseVerificationError) -> Value {
        guard let value else {
            throw PurchaseVerificationError(.invalidConfiguration, "The data names no \(what); give it on the command line.")
        }
        notes.append("The \(what) \(value) was taken from the data, not checked against one you gave.")
        return value
    }
}

/// A receipt under the names the CLI's `--json` documents.
private struct ReceiptJSON: Encodable {
    struct InApp: Encodable {
        let productId: String
        let transactionId: String
        let originalTransactionId: String?
        let quantity: Int64?
        let purchaseDate: Date?
        let originalPurchaseDate: Date?
        let expiresDate: Date?
        let cancellationDate: Date?
        let webOrderLineItemId: Int64?
        let isTrialPeriod: Bool?
        let isInIntroOfferPeriod: Bool?
    }

    let receiptType: String?
    let appItemId: Int64?
    let bundleId: String
    let applicationVersion: String?
    let originalApplicationVersion: String?
    let receiptCreationDate: Date
    let receiptExpirationDate: Date?
    let inApp: [InApp]

    init(_ receipt: AppStoreReceipt) {
        receiptType = receipt.receiptType
        appItemId = receipt.appItemID
        bundleId = receipt.bundleID
        applicationVersion = receipt.applicationVersion
        originalApplicationVersion = receipt.originalApplicationVersion
        receiptCreationDate = receipt.creationDate
        receiptExpirationDate = receipt.expirationDate
        inApp = receipt.inAppPurchases.map {
            InApp(
                productId: $0.productID, transactionId: $0.transactionID, originalTransactionId: $0.originalTransactionID, quantity: $0.quantity,
                purchaseDate: $0.purchaseDate, originalPurchaseDate: $0.originalPurchaseDate, expiresDate: $0.subscriptionExpirationDate,
                cancellationDate: $0.cancellationDate, webOrderLineItemId: $0.webOrderLineItemID, isTrialPeriod: $0.isInTrialPeriod,
                isInIntroOfferPeriod: $0.isInIntroOfferPeriod)
        }
    }
}

private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
