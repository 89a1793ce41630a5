import Foundation
import Testing

@Suite struct DemoCommandTests {
    @Test func everyVerdictIsAsExpected() {
        let result = CommandRunner.run(["demo"])
        #expect(result.status == 0, "\(result)")
        expectGolden(result.standardOutput, Self.golden)
        #expect(result.standardError.isEmpty, "\(result)")
    }

    @Test func jsonRowsCarryVerdictsAndCodes() throws {
        let result = CommandRunner.run(["demo", "--json"])
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(object["allAsExpected"] as? Bool == true)
        let rows = try #require(object["rows"] as? [[String: Any]])
        #expect(rows.map { $0["verdict"] as? String } == ["accepted", "accepted", "rejected", "rejected", "accepted", "rejected", "accepted"])
        #expect(rows.compactMap { $0["code"] as? String } == ["pinMismatch", "revoked", "pinMismatch"])
        #expect(rows.allSatisfy { $0["asExpected"] as? Bool == true })
        let purchases = try #require(object["purchases"] as? [[String: Any]])
        #expect(
            purchases.map { $0["verdict"] as? String }
                == ["verified", "refused", "refused", "refused", "verified", "refused", "granted", "granted", "refused", "applied", "refused"])
        #expect(purchases.compactMap { $0["code"] as? String } == ["untrustedRoot", "invalidSignature", "wrongChainLength", "invalidSignature", "replay", "revoked"])
        #expect(purchases.allSatisfy { $0["asExpected"] as? Bool == true })
        let compiled = try #require(object["compiledCertificates"] as? [[String: String]])
        #expect(compiled.first { $0["file"] == "sample-leaf.pem" }?["pin"] == "sha256/ADXzqTPD6C9iaV5wl10vCfkWwoht2ypA8Jj8agGz/lY=")
    }

    static let golden = """
        ServerTrust demo: 5 local HTTPS servers for demo.servertrust.test, made on the spot; no network.

        The client machine trusts two CAs, like a laptop behind a TLS-inspection proxy:
          CN=Demo Genuine Root CA and CN=Demo Inspection Proxy CA
        The pinned client pins the server's key and a backup key kept offline, and checks CRLs:
          current key  sha256/<pin>
          backup key   sha256/<pin>

        SERVER                      EVALUATOR      VERDICT   REASON
        genuine                     pinned + CRL   accepted  pin matched: current key (CN=demo.servertrust.test)
        impostor (proxy CA)         default only   accepted  chain validates to CN=Demo Inspection Proxy CA: without a pin, the impostor gets in
        impostor (proxy CA)         pinned + CRL   rejected  pinMismatch: No certificate of the validated chain (2 certificates) matches a configured pin.
        revoked certificate         pinned + CRL   rejected  revoked: CN=demo.servertrust.test (depth 0, serial <serial>) is revoked since <date>, reason superseded, according to the local CRL.
        rotated to backup key       pinned + CRL   accepted  pin matched: backup key (CN=demo.servertrust.test)
        rotated to unpinned key     pinned + CRL   rejected  pinMismatch: No certificate of the validated chain (3 certificates) matches a configured pin.
        sample chain (compiled in)  compiled pins  accepted  pin matched: compiled sampleIntermediatePin (CN=ServerTrust Sample Intermediate,O=ServerTrust Samples)

        Compiled in from Certificates/ by ServerTrustPinsPlugin: sample-backup.pem, sample-intermediate.pem, sample-leaf.pem, sample-root.pem

        App Store purchases from an Apple-like lab PKI, verified offline by ServerTrustPurchases, then claimed in a ServerTrustLedger on a temporary SQLite file:
        PURCHASE                              VERDICT   REASON
        genuine signed transaction            verified  transaction 2000000000000001 of com.example.app.gems.100, signed by the lab's Apple-like chain
        look-alike root in x5c                refused   untrustedRoot: The x5c root (CN=Demo Apple Root CA - G3,O=Apple Inc., sha256/<pin>) is not one of the configured roots.
        tampered payload                      refused   invalidSignature: The signature is not the leaf's over the signed transaction.
        Xcode-signed transaction              refused   wrongChainLength: The x5c chain has 1 certificates; App Store signed data carries 3 (leaf, intermediate, root).
        genuine receipt                       verified  receipt of com.example.app with 1 in-app purchase, signed by the lab's Apple-like RSA chain
        receipt with altered content          refused   invalidSignature: The signature is not the signer certificate's (CN=Lab Mac App Store and iTunes Store Receipt Signing,O=Apple Inc.) RSA PKCS#1 v1.5 SHA-256 signature over the receipt.
        claimed by alice                      granted   granted to alice: transaction 2000000000000001, on disk before the answer
        claimed again by alice (lost answer)  granted   the same grant back to alice (granted <date>): nothing granted twice
        claimed by mallory                    refused   replay: Transaction 2000000000000001 is granted to another account, alice, since <date>: refused as a replay.
        refund notification                   applied   the grant to alice revoked: the refund ends it
        claimed by alice after the refund     refused   revoked: Transaction 2000000000000001 was granted, then revoked at <date>.

        All 18 verdicts as expected.

        """
}
