import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// `servertrust purchases verify`, the interface issue #52 specifies: exit 0 verified, 1
/// refused, 2 usage or unreadable input; `--json` with `status`, `reason` and `payload` under
/// Apple's names; the kind inferred; `--root` replacing Apple's roots; `--at` never moved.
@Suite struct PurchasesCommandTests {
    let lab: AppStoreLab
    let folder: URL
    let rootPath: String

    init() throws {
        lab = try AppStoreLab()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("purchases-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        rootPath = folder.appendingPathComponent("root.pem").path
        try lab.root.certificate.pemEncoded.write(toFile: rootPath, atomically: true, encoding: .utf8)
    }

    func write(_ text: String, _ name: String) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func json(_ result: CommandResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any], "\(result)")
    }

    @Test func aGenuineTransactionVerifiesWithItsFieldsUnderApplesNames() throws {
        let path = try write(try lab.jws(payload: AppStoreLab.transactionJSON(transactionID: "2000000000000042")), "transaction.jws")
        let result = CommandRunner.run([
            "purchases", "verify", "--bundle-id", "com.example.app", "--environment", "sandbox", "--root", rootPath, "--no-revocation", "--json", path,
        ])
        #expect(result.status == 0, "\(result)")
        let object = try json(result)
        #expect(object["status"] as? String == "verified")
        #expect(object["kind"] as? String == "transaction")
        let payload = try #require(object["payload"] as? [String: Any])
        #expect(payload["transactionId"] as? String == "2000000000000042")
        #expect(payload["bundleId"] as? String == "com.example.app")
        #expect(payload["environment"] as? String == "Sandbox")
        #expect(payload["productId"] as? String == "com.example.app.gems.100")
        #expect(payload["signedDate"] is String)
        let text = CommandRunner.run(["purchases", "verify", "--bundle-id", "com.example.app", "--root", rootPath, "--no-revocation", path])
        #expect(text.status == 0, "\(text)")
        #expect(text.standardOutput.hasPrefix("verified: transaction 2000000000000042 of com.example.app.gems.100 for com.example.app (Sandbox)"))
        // The environment was not given: taken from the data, and said so.
        #expect(text.standardError.contains("The environment Sandbox was taken from the data"), "\(text)")
    }

    @Test func aForgeryIsRefusedWithItsCode() throws {
        let genuine = try lab.jws(payload: AppStoreLab.transactionJSON())
        let parts = genuine.split(separator: ".").map(String.init)
        let forged = [parts[0], AppStoreLab.base64URL(Array(AppStoreLab.transactionJSON(transactionID: "9").utf8)), parts[2]].joined(separator: ".")
        let path = try write(forged, "forged.jws")
        let result = CommandRunner.run(["purchases", "verify", "--bundle-id", "com.example.app", "--root", rootPath, "--no-revocation", "--json", path])
        #expect(result.status == 1, "\(result)")
        let object = try json(result)
        #expect(object["status"] as? String == "refused")
        #expect(object["reason"] as? String == "invalidSignature")
        #expect(object["payload"] == nil)
        let text = CommandRunner.run(["purchases", "verify", "--bundle-id", "com.example.app", "--root", rootPath, "--no-revocation", path])
        #expect(text.status == 1)
        #expect(text.standardError.contains("refused: transaction: invalidSignature: The signature is not the leaf's"), "\(text)")
    }

    /// Without --root, Apple's compiled-in roots: the lab's chain is not Apple's.
    @Test func applesRootsAreTheDefault() throws {
        let path = try write(try lab.jws(payload: AppStoreLab.transactionJSON()), "transaction.jws")
        let result = CommandRunner.run(["purchases", "verify", "--bundle-id", "com.example.app", "--no-revocation", "--json", path])
        #expect(result.status == 1, "\(result)")
        #expect(try json(result)["reason"] as? String == "untrustedRoot")
    }

    @Test func theKindIsInferredAndANotificationVerifiesWithItsNestedTransaction() throws {
        let transaction = try lab.jws(payload: AppStoreLab.transactionJSON())
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let notification = try lab.jws(payload: """
            {"notificationType":"ONE_TIME_CHARGE","notificationUUID":"6a3b1c5e-0000-4000-8000-000000000001","version":"2.0","signedDate":\(now),\
            "data":{"bundleId":"com.example.app","environment":"Sandbox","signedTransactionInfo":"\(transaction)"}}
            """)
        let path = try write(notification, "notification.jws")
        let result = CommandRunner.run(["purchases", "verify", "--bundle-id", "com.example.app", "--root", rootPath, "--no-revocation", "--json", path])
        #expect(result.status == 0, "\(result)")
        let object = try json(result)
        #expect(object["kind"] as? String == "notification")
        let payload = try #require(object["payload"] as? [String: Any])
        #expect(payload["notificationType"] as? String == "ONE_TIME_CHARGE")
        #expect(payload["notificationUUID"] as? String == "6a3b1c5e-0000-4000-8000-000000000001")
        let data = try #require(payload["data"] as? [String: Any])
        #expect((data["transaction"] as? [String: Any])?["transactionId"] as? String == "2000000123456789")
    }

    /// --at is the time: a chain expired then is refused, whatever the signing date.
    @Test func atJudgesTheChainAtThatTime() throws {
        let expired = try AppStoreLab(leafNotBefore: Date(timeIntervalSinceNow: -10 * 86_400), leafNotAfter: Date(timeIntervalSinceNow: -86_400))
        let root = try write(expired.root.certificate.pemEncoded, "expired-root.pem")
        let signedAt = Date(timeIntervalSinceNow: -2 * 86_400)
        let path = try write(try expired.jws(payload: AppStoreLab.transactionJSON(signedDate: signedAt)), "old.jws")
        let now = CommandRunner.run(["purchases", "verify", "--bundle-id", "com.example.app", "--root", root, "--no-revocation", "--json", "--at", Date().formatted(.iso8601), path])
        #expect(now.status == 1, "\(now)")
        #expect(try json(now)["reason"] as? String == "chainValidationFailed")
        let then = CommandRunner.run([
            "purchases", "verify", "--bundle-id", "com.example.app", "--root", root, "--no-revocation", "--json", "--at",
            signedAt.addingTimeInterval(60).formatted(.iso8601), path,
        ])
        #expect(then.status == 0, "\(then)")
    }

    @Test func aReceiptVerifiesAsBase64WithItsPurchases() throws {
        let receiptLab = try ReceiptLab()
        let receipt = try receiptLab.receipt(payload: ReceiptLab.attributeSet(ReceiptLab.payloadAttributes()))
        let root = try write(receiptLab.root.certificate.pemEncoded, "receipt-root.pem")
        let path = try write(Data(receipt).base64EncodedString(), "receipt.b64")
        let result = CommandRunner.run(["purchases", "verify", "--bundle-id", "com.example.app", "--root", root, "--no-revocation", "--json", path])
        #expect(result.status == 0, "\(result)")
        let object = try json(result)
        #expect(object["kind"] as? String == "receipt")
        let payload = try #require(object["payload"] as? [String: Any])
        #expect(payload["bundleId"] as? String == "com.example.app")
        #expect(payload["applicationVersion"] as? String == "42")
        #expect(payload["receiptCreationDate"] is String)
        let inApp = try #require(payload["inApp"] as? [[String: Any]])
        #expect(inApp.first?["productId"] as? String == "com.example.app.gems.100")
        #expect(inApp.first?["transactionId"] as? String == "2000000123456789")
        #expect(inApp.first?["quantity"] as? Int == 1)
        // Altered after signing: refused.
        var altering = ReceiptLab.Options()
        altering.contentAfterSigning = ReceiptLab.attributeSet(ReceiptLab.payloadAttributes(bundleID: "com.example.app", inApp: []))
        let altered = try write(Data(try receiptLab.receipt(payload: ReceiptLab.attributeSet(ReceiptLab.payloadAttributes()), options: altering)).base64EncodedString(), "altered.b64")
        let refused = CommandRunner.run(["purchases", "verify", "--bundle-id", "com.example.app", "--root", root, "--no-revocation", "--json", altered])
        #expect(refused.status == 1, "\(refused)")
        #expect(try json(refused)["reason"] as? String == "invalidSignature")
    }

    @Test func usageErrorsExitTwo() throws {
        let path = try write(try lab.jws(payload: AppStoreLab.transactionJSON()), "transaction.jws")
        #expect(CommandRunner.run(["purchases", "verify", "--kind", "coupon", path]).status == 2)
        #expect(CommandRunner.run(["purchases", "verify", "--environment", "staging", path]).status == 2)
        #expect(CommandRunner.run(["purchases", "verify", "--at", "yesterday", path]).status == 2)
        #expect(CommandRunner.run(["purchases", "verify", folder.appendingPathComponent("missing").path]).status == 2)
        #expect(CommandRunner.run(["purchases", "verify", try write("not purchase material", "junk.txt")]).status == 2)
        // Xcode's data needs the StoreKit certificate as the one root.
        let xcode = CommandRunner.run(["purchases", "verify", "--environment", "xcode", path])
        #expect(xcode.status == 2, "\(xcode)")
        #expect(xcode.standardError.contains("--environment xcode needs exactly one --root"), "\(xcode)")
    }
}
