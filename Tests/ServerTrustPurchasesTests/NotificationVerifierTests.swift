import Foundation
import ServerTrust
import ServerTrustLab
import ServerTrustPurchases
import ServerTrustTestSupport
import Testing

/// App Store Server Notifications v2 and app transactions: the app and environment they name
/// are checked, and a notification's nested transaction and renewal info are verified as JWS of
/// their own.
@Suite struct NotificationVerifierTests {
    static let bundleID = "com.example.app"
    static let appAppleID: Int64 = 1_234_567_890

    let lab: AppStoreLab
    let production: AppStoreSignedDataVerifier

    init() throws {
        lab = try AppStoreLab()
        production = try AppStoreSignedDataVerifier(
            roots: [lab.root.certificate], bundleID: Self.bundleID, appAppleID: Self.appAppleID, environment: .production, revocation: .disabled)
    }

    static var milliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    func notification(data: String) -> String {
        "{\"notificationType\":\"DID_RENEW\",\"subtype\":\"BILLING_RECOVERY\",\"notificationUUID\":\"0a1b2c3d-0000-4000-8000-000000000001\",\"version\":\"2.0\",\"signedDate\":\(Self.milliseconds),\"data\":{\(data)}}"
    }

    func data(bundleID: String = bundleID, appAppleID: Int64 = appAppleID, environment: String = "Production", transaction: String? = nil, renewal: String? = nil) -> String {
        var members = ["\"appAppleId\":\(appAppleID)", "\"bundleId\":\"\(bundleID)\"", "\"bundleVersion\":\"42\"", "\"environment\":\"\(environment)\"", "\"status\":1"]
        if let transaction { members.append("\"signedTransactionInfo\":\"\(transaction)\"") }
        if let renewal { members.append("\"signedRenewalInfo\":\"\(renewal)\"") }
        return members.joined(separator: ",")
    }

    func renewalJSON(environment: String = "Production") -> String {
        "{\"originalTransactionId\":\"1000\",\"autoRenewProductId\":\"monthly\",\"productId\":\"monthly\",\"autoRenewStatus\":1,\"signedDate\":\(Self.milliseconds),\"environment\":\"\(environment)\"}"
    }

    @Test func aNotificationIsVerifiedWithItsNestedTransactionAndRenewalInfo() throws {
        let transaction = try lab.jws(payload: AppStoreLab.transactionJSON(bundleID: Self.bundleID, environment: "Production"))
        let renewal = try lab.jws(payload: renewalJSON())
        let signed = try lab.jws(payload: notification(data: data(transaction: transaction, renewal: renewal)))
        let verified = try production.verifyNotification(signed)
        #expect(verified.notificationType == .didRenew)
        #expect(verified.subtype == "BILLING_RECOVERY")
        #expect(verified.notificationUUID == "0a1b2c3d-0000-4000-8000-000000000001")
        #expect(verified.data?.appAppleId == Self.appAppleID)
        #expect(verified.data?.transaction?.transactionId == "2000000123456789")
        #expect(verified.data?.renewalInfo?.autoRenewProductId == "monthly")
    }

    /// The outer JWS is genuine, the nested transaction is signed by a chain under a root the
    /// verifier does not trust: refused, with the field named.
    @Test func aNestedTransactionFromAForeignChainIsRefused() throws {
        let foreign = try AppStoreLab()
        let transaction = try foreign.jws(payload: AppStoreLab.transactionJSON(bundleID: Self.bundleID, environment: "Production"))
        let signed = try lab.jws(payload: notification(data: data(transaction: transaction)))
        let error = refusal { try production.verifyNotification(signed) }
        #expect(error?.code == .untrustedRoot)
        #expect(error?.reason.contains("signedTransactionInfo") == true)
    }

    @Test func aNestedTransactionForAnotherBundleIsRefused() throws {
        let transaction = try lab.jws(payload: AppStoreLab.transactionJSON(bundleID: "com.example.other", environment: "Production"))
        let signed = try lab.jws(payload: notification(data: data(transaction: transaction)))
        let error = refusal { try production.verifyNotification(signed) }
        #expect(error?.code == .bundleIDMismatch)
        #expect(error?.reason.contains("signedTransactionInfo") == true)
    }

    @Test func aNestedRenewalInfoFromAnotherEnvironmentIsRefused() throws {
        let signed = try lab.jws(payload: notification(data: data(renewal: try lab.jws(payload: renewalJSON(environment: "Sandbox")))))
        let error = refusal { try production.verifyNotification(signed) }
        #expect(error?.code == .environmentMismatch)
        #expect(error?.reason.contains("signedRenewalInfo") == true)
    }

    @Test func theAppItNamesIsChecked() throws {
        #expect(refusal { try production.verifyNotification(try lab.jws(payload: notification(data: data(bundleID: "com.example.other")))) }?.code == .bundleIDMismatch)
        #expect(refusal { try production.verifyNotification(try lab.jws(payload: notification(data: data(appAppleID: 1)))) }?.code == .appAppleIDMismatch)
        #expect(refusal { try production.verifyNotification(try lab.jws(payload: notification(data: data(environment: "Sandbox")))) }?.code == .environmentMismatch)
        // Sandbox does not compare the app Apple ID (Apple assigns none before release).
        let sandbox = try AppStoreSignedDataVerifier(roots: [lab.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
        #expect(try sandbox.verifyNotification(try lab.jws(payload: notification(data: data(appAppleID: 1, environment: "Sandbox")))).data?.appAppleId == 1)
    }

    @Test func aSummaryOrAppDataNamesTheAppWhenThereIsNoData() throws {
        let summary = "{\"notificationType\":\"RENEWAL_EXTENSION\",\"subtype\":\"SUMMARY\",\"notificationUUID\":\"u\",\"signedDate\":\(Self.milliseconds),\"summary\":{\"requestIdentifier\":\"r\",\"environment\":\"Production\",\"appAppleId\":\(Self.appAppleID),\"bundleId\":\"\(Self.bundleID)\",\"productId\":\"monthly\",\"storefrontCountryCodes\":[\"USA\"],\"failedCount\":0,\"succeededCount\":5}}"
        #expect(try production.verifyNotification(try lab.jws(payload: summary)).summary?.succeededCount == 5)
        let appData = "{\"notificationType\":\"TEST\",\"notificationUUID\":\"u\",\"signedDate\":\(Self.milliseconds),\"appData\":{\"appAppleId\":\(Self.appAppleID),\"bundleId\":\"com.example.other\",\"environment\":\"Production\"}}"
        #expect(refusal { try production.verifyNotification(try lab.jws(payload: appData)) }?.code == .bundleIDMismatch)
        let none = "{\"notificationType\":\"TEST\",\"notificationUUID\":\"u\",\"signedDate\":\(Self.milliseconds)}"
        #expect(refusal { try production.verifyNotification(try lab.jws(payload: none)) }?.code == .bundleIDMismatch)
    }

    @Test func anAppTransactionIsCheckedForItsAppAndReceiptType() throws {
        func appTransaction(bundleID: String = Self.bundleID, appAppleID: Int64 = Self.appAppleID, receiptType: String = "Production") -> String {
            "{\"receiptType\":\"\(receiptType)\",\"appAppleId\":\(appAppleID),\"bundleId\":\"\(bundleID)\",\"applicationVersion\":\"1.2\",\"versionExternalIdentifier\":1,\"receiptCreationDate\":\(Self.milliseconds),\"originalPurchaseDate\":\(Self.milliseconds),\"originalApplicationVersion\":\"1.0\",\"originalPlatform\":\"iOS\",\"signedDate\":\(Self.milliseconds)}"
        }
        let verified = try production.verifyAppTransaction(try lab.jws(payload: appTransaction()))
        #expect(verified.originalApplicationVersion == "1.0")
        #expect(verified.receiptType == .production)
        #expect(refusal { try production.verifyAppTransaction(try lab.jws(payload: appTransaction(bundleID: "x"))) }?.code == .bundleIDMismatch)
        #expect(refusal { try production.verifyAppTransaction(try lab.jws(payload: appTransaction(appAppleID: 2))) }?.code == .appAppleIDMismatch)
        #expect(refusal { try production.verifyAppTransaction(try lab.jws(payload: appTransaction(receiptType: "Sandbox"))) }?.code == .environmentMismatch)
    }

    /// Apple's mock TEST notification (app-store-server-library-swift, MIT): verified under the
    /// root its x5c carries, with Apple's own app Apple ID check.
    @Test func applesMockTestNotificationVerifies() throws {
        let signed = try AppleTestVectorTests.fixture("testNotification")
        let root = try AppleTestVectorTests.x5cRoot(of: signed)
        let verifier = try AppStoreSignedDataVerifier(roots: [root], bundleID: "com.example", appAppleID: 1234, environment: .sandbox, revocation: .disabled)
        let verified = try verifier.verifyNotification(signed)
        #expect(verified.notificationType == .test)
        #expect(verified.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(verified.data?.bundleId == "com.example")
        let other = try AppStoreSignedDataVerifier(roots: [root], bundleID: "com.example.other", appAppleID: 1234, environment: .sandbox, revocation: .disabled)
        #expect(refusal { try other.verifyNotification(signed) }?.code == .bundleIDMismatch)
    }
}
