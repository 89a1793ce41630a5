import Foundation
import ServerTrust
import ServerTrustPurchases
import ServerTrustTestSupport
import Testing

/// Apple's own mock signed data from app-store-server-library-swift's tests (MIT, Copyright 2023
/// Apple Inc.; Fixtures/apple/LICENSE.txt): a transaction and a renewal info signed by Apple's
/// test chain, whose leaf and intermediate carry the marker extensions and whose CAs mark
/// basicConstraints non-critical with no key identifiers.
@Suite struct AppleTestVectorTests {
    static func fixture(_ name: String) throws -> String {
        try String(contentsOfFile: PackageFiles.path("Tests/ServerTrustPurchasesTests/Fixtures/apple/\(name)"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The root Apple's mock data carries as x5c[2]: a version 1 certificate with the test CA's
    /// name and key, but not the test CA's bytes.
    static func x5cRoot(of jws: String) throws -> Certificate {
        let text = jws.prefix { $0 != "." }.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let header = try #require(Data(base64Encoded: text + String(repeating: "=", count: (4 - text.count % 4) % 4)))
        let json = try #require(try JSONSerialization.jsonObject(with: header) as? [String: Any])
        let chain = try #require(json["x5c"] as? [String])
        return try Certificate(base64Encoded: chain[2])
    }

    @Test func applesMockTransactionVerifiesUnderTheRootItCarries() throws {
        let jws = try Self.fixture("transactionInfo")
        let verifier = try AppStoreSignedDataVerifier(roots: [try Self.x5cRoot(of: jws)], bundleID: "com.example", appAppleID: nil, environment: .sandbox, revocation: .disabled)
        let transaction = try verifier.verifyTransaction(jws)
        #expect(transaction.bundleId == "com.example")
        #expect(transaction.environment == .sandbox)
        #expect(transaction.signedDate == Date(timeIntervalSince1970: 1_672_956_154))
        // Each of Apple's files carries a chain of its own, under a root of its own bytes.
        let signedRenewal = try Self.fixture("renewalInfo")
        #expect(try Self.x5cRoot(of: signedRenewal) != Self.x5cRoot(of: jws))
        #expect(refusal { try verifier.verifyRenewalInfo(signedRenewal) }?.code == .untrustedRoot)
        let renewalVerifier = try AppStoreSignedDataVerifier(roots: [try Self.x5cRoot(of: signedRenewal)], bundleID: "com.example", appAppleID: nil, environment: .sandbox, revocation: .disabled)
        let renewal = try renewalVerifier.verifyRenewalInfo(signedRenewal)
        #expect(renewal.environment == .sandbox)
        #expect(renewal.signedDate == Date(timeIntervalSince1970: 1_672_956_154))
    }

    /// Apple's library trusts the test CA (testCA.der) for this data and never reads x5c[2];
    /// ServerTrust compares x5c[2] with the configured roots by bytes, and the mock data's is
    /// another certificate (same name and key, version 1): refused.
    @Test func applesTestCAIsNotTheRootTheMockDataCarries() throws {
        let testCA = try Certificate(derEncoded: Array(try Data(contentsOf: URL(fileURLWithPath: PackageFiles.path("Tests/ServerTrustPurchasesTests/Fixtures/apple/testCA.der")))))
        let jws = try Self.fixture("transactionInfo")
        #expect(try Self.x5cRoot(of: jws).spkiPin == testCA.spkiPin)
        let verifier = try AppStoreSignedDataVerifier(roots: [testCA], bundleID: "com.example", appAppleID: nil, environment: .sandbox, revocation: .disabled)
        #expect(refusal { try verifier.verifyTransaction(jws) }?.code == .untrustedRoot)
    }

    @Test func applesMockDataIsRefusedForAnotherBundleOrEnvironment() throws {
        let jws = try Self.fixture("transactionInfo")
        let root = try Self.x5cRoot(of: jws)
        let other = try AppStoreSignedDataVerifier(roots: [root], bundleID: "com.example.other", appAppleID: nil, environment: .sandbox, revocation: .disabled)
        #expect(refusal { try other.verifyTransaction(jws) }?.code == .bundleIDMismatch)
        let production = try AppStoreSignedDataVerifier(roots: [root], bundleID: "com.example", appAppleID: 1234, environment: .production, revocation: .disabled)
        #expect(refusal { try production.verifyTransaction(jws) }?.code == .environmentMismatch)
    }

    @Test func applesMockDataWithoutX5CIsRefused() throws {
        let verifier = try AppStoreSignedDataVerifier(
            roots: [try Self.x5cRoot(of: try Self.fixture("transactionInfo"))], bundleID: "com.example", appAppleID: nil, environment: .sandbox, revocation: .disabled)
        let error = refusal { try verifier.verifyTransaction(try Self.fixture("missingX5CHeaderClaim")) }
        #expect(error?.code == .malformedJWS)
        #expect(error?.reason.contains("x5c") == true)
    }
}
