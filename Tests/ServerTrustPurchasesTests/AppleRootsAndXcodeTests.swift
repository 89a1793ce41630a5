import Foundation
import ServerTrust
import ServerTrustCodeGeneration
@testable import ServerTrustPurchases
import ServerTrustTestSupport
import Testing

/// Apple's compiled-in roots, checked against the fingerprints Apple publishes and against
/// Apple's real production chain; and StoreKit Testing in Xcode's signed data (Apple's MIT test
/// resources), verified only when that environment and its certificate are configured.
@Suite struct AppleRootsAndXcodeTests {
    static let xcodeBundleID = "com.example.naturelab.backyardbirds.example"

    static func fixture(_ name: String) throws -> String {
        try AppleTestVectorTests.fixture(name)
    }

    @Test func theCompiledInRootsAreApplesByFingerprint() throws {
        let roots = AppleRootCertificates.all
        #expect(roots.count == 3)
        let fingerprints = roots.map { $0.sha256Fingerprint.map { String(format: "%02x", $0) }.joined() }
        #expect(fingerprints == AppleRootCertificates.publishedSHA256Fingerprints)
        #expect(roots.map(\.subject) == [
            "CN=Apple Root CA,OU=Apple Certification Authority,O=Apple Inc.,C=US",
            "C=US,O=Apple Inc.,OU=Apple Certification Authority,CN=Apple Root CA - G2",
            "C=US,O=Apple Inc.,OU=Apple Certification Authority,CN=Apple Root CA - G3",
        ])
    }

    /// Apple's production chain from its library's tests: WWDR G6 and a receipt-signing leaf of
    /// September 2025, validated to the compiled-in G3 with both markers, at the date Apple's
    /// test uses.
    @Test func applesRealChainValidatesToTheCompiledInG3() throws {
        let intermediate = try Certificate(base64Encoded: try Self.fixture("realAppleWWDRG6.b64"))
        let leaf = try Certificate(base64Encoded: try Self.fixture("realAppleSigningCertificate.b64"))
        let chains = SigningChainVerifier(trust: LiveAppleSigningTrust(), revocation: .disabled)
        let effective = Date(timeIntervalSince1970: 1_761_962_975)
        let verified = try chains.verify(key: [1], presented: { _ in [leaf, intermediate] }, signedAt: { nil }, at: effective, fixed: true)
        #expect(verified.chain.last == AppleRootCertificates.appleRootCAG3)
        #expect(verified.key.kind == .ecdsaP256)
        // Under another root it does not validate.
        let lab = try AppStoreLab()
        let labTrust = try AppleSigningTrust(
            roots: [lab.root.certificate], intermediateMarkerOIDs: [AppStoreLab.intermediateMarkerOID], leafMarkerOIDs: [AppStoreLab.leafMarkerOID])
        let elsewhere = SigningChainVerifier(trust: LiveAppleSigningTrust(labTrust), revocation: .disabled)
        #expect(refusal { try elsewhere.verify(key: [1], presented: { _ in [leaf, intermediate] }, signedAt: { nil }, at: effective, fixed: true) }?.code == .chainValidationFailed)
    }

    static func storeKitCertificate(of jws: String) throws -> Certificate {
        let text = jws.prefix { $0 != "." }.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let header = try #require(Data(base64Encoded: text + String(repeating: "=", count: (4 - text.count % 4) % 4)))
        let json = try #require(try JSONSerialization.jsonObject(with: header) as? [String: Any])
        let chain = try #require(json["x5c"] as? [String])
        #expect(chain.count == 1)
        return try Certificate(base64Encoded: chain[0])
    }

    @Test func xcodeSignedDataVerifiesUnderItsConfiguredCertificate() throws {
        let signed = try Self.fixture("xcode-signed-transaction")
        let verifier = try AppStoreSignedDataVerifier.xcodeTesting(storeKitCertificate: Self.storeKitCertificate(of: signed), bundleID: Self.xcodeBundleID)
        let transaction = try verifier.verifyTransaction(signed)
        #expect(transaction.productId == "pass.premium")
        #expect(transaction.environment == .xcode)
        #expect(transaction.transactionId == "0")
        let renewal = try verifier.verifyRenewalInfo(try Self.fixture("xcode-signed-renewal-info"))
        #expect(renewal.environment == .xcode)
        let app = try verifier.verifyAppTransaction(try Self.fixture("xcode-signed-app-transaction"))
        #expect(app.bundleId == Self.xcodeBundleID)
        #expect(app.receiptType == .xcode)
    }

    /// Never a silent skip: the Xcode environment is refused by the ordinary initializer, with
    /// Apple's roots as the StoreKit certificate, and Xcode's data is refused everywhere else.
    @Test func xcodeSignedDataIsRefusedUnlessConfigured() throws {
        let signed = try Self.fixture("xcode-signed-transaction")
        #expect(refusal {
            try AppStoreSignedDataVerifier(bundleID: Self.xcodeBundleID, appAppleID: nil, environment: .xcode, revocation: .disabled)
        }?.code == .invalidConfiguration)
        #expect(refusal {
            try AppStoreSignedDataVerifier.xcodeTesting(storeKitCertificate: try #require(AppleRootCertificates.appleRootCAG3), bundleID: Self.xcodeBundleID)
        }?.code == .invalidConfiguration)
        // Under Apple's roots: one x5c certificate, not Apple's three.
        let sandbox = try AppStoreSignedDataVerifier(bundleID: Self.xcodeBundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
        #expect(refusal { try sandbox.verifyTransaction(signed) }?.code == .wrongChainLength)
        // Under another StoreKit certificate: not the configured one.
        let other = try LabPKI.makeRoot(commonName: "StoreKit Testing in Xcode")
        let elsewhere = try AppStoreSignedDataVerifier.xcodeTesting(storeKitCertificate: other.certificate, bundleID: Self.xcodeBundleID)
        #expect(refusal { try elsewhere.verifyTransaction(signed) }?.code == .untrustedRoot)
        // Signed by a key other than the configured certificate's.
        let lab = try AppStoreLab()
        let forged = try lab.jws(
            payload: AppStoreLab.transactionJSON(bundleID: Self.xcodeBundleID, environment: "Xcode", signedDate: Date(timeIntervalSince1970: 1_704_067_200)),
            chain: [Self.storeKitCertificate(of: signed)])
        let verifier = try AppStoreSignedDataVerifier.xcodeTesting(storeKitCertificate: Self.storeKitCertificate(of: signed), bundleID: Self.xcodeBundleID)
        #expect(refusal { try verifier.verifyTransaction(forged) }?.code == .invalidSignature)
    }
}

/// The committed constants are exactly what the generator makes of the certificate files.
@Suite struct AppleRootCertificatesGenerationTests {
    @Test func theCompiledInRootsAreTheGeneratorsOutputForTheFiles() throws {
        let folder = URL(fileURLWithPath: PackageFiles.path("Sources/ServerTrustPurchases/Certificates"))
        let expected = try CertificateConstantsGenerator().source(forDirectory: folder)
        let committed = try String(contentsOfFile: PackageFiles.path("Sources/ServerTrustPurchases/Generated/AppleRootCertificates+Data.swift"), encoding: .utf8)
        #expect(committed == expected, "regenerate with servertrust-generate (Sources/ServerTrustPurchases/Certificates/README.md)")
    }
}
