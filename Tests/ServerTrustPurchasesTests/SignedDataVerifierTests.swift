import Foundation
import ServerTrust
import ServerTrustLab
import ServerTrustPurchases
import ServerTrustTestSupport
import Testing

/// App Store signed transactions and renewal info, verified against a configured root: a
/// genuine value is accepted with its fields, and each attack is refused by the check meant for
/// it, with that check's code.
@Suite struct SignedDataVerifierTests {
    static let bundleID = "com.example.app"

    let lab: AppStoreLab
    let verifier: AppStoreSignedDataVerifier

    init() throws {
        lab = try AppStoreLab()
        verifier = try AppStoreSignedDataVerifier(roots: [lab.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
    }

    @Test func aGenuineTransactionIsVerifiedWithItsFields() throws {
        // Milliseconds exactly: signed a minute ago, at .123 s.
        let signedDate = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 60).rounded(.down) + 0.123)
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON(signedDate: signedDate, extra: ["\"appAccountToken\":\"7e3fb20b-4cdb-47cc-936d-99d65f608138\""]))
        let transaction = try verifier.verifyTransaction(jws, at: signedDate.addingTimeInterval(10))
        #expect(transaction.transactionId == "2000000123456789")
        #expect(transaction.bundleId == Self.bundleID)
        #expect(transaction.productId == "com.example.app.gems.100")
        #expect(transaction.environment == .sandbox)
        #expect(transaction.type == .consumable)
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.price == 1990)
        #expect(transaction.quantity == 1)
        #expect(transaction.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(abs(transaction.signedDate.timeIntervalSince(signedDate)) < 0.000_5)
    }

    @Test func unknownEnumerationValuesAreKeptNotRefused() throws {
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON(extra: ["\"offerType\":9", "\"offerDiscountType\":\"NEW_KIND\""]).replacingOccurrences(of: "\"Consumable\"", with: "\"Future Kind\""))
        let transaction = try verifier.verifyTransaction(jws)
        #expect(transaction.type?.rawValue == "Future Kind")
        #expect(transaction.offerType?.rawValue == 9)
        #expect(transaction.offerDiscountType?.rawValue == "NEW_KIND")
    }

    @Test(arguments: ["none", "HS256", "ES384", "es256", "RS256"])
    func anAlgorithmOtherThanES256IsRefused(algorithm: String) throws {
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON(), algorithm: algorithm)
        #expect(refusal { try verifier.verifyTransaction(jws) }?.code == .unsupportedAlgorithm)
    }

    /// HS256 with the leaf's public key as the HMAC secret: the classic confusion attack. The
    /// signature segment is an HMAC, the header says HS256; it is refused before any key is used.
    @Test func anHMACSignedWithThePublicKeyAsSecretIsRefused() throws {
        let genuine = try lab.jws(payload: AppStoreLab.transactionJSON(), algorithm: "HS256")
        let parts = genuine.split(separator: ".")
        let forged = parts[0] + "." + parts[1] + "." + AppStoreLab.base64URL(Array(repeating: 0x41, count: 32))
        #expect(refusal { try verifier.verifyTransaction(String(forged)) }?.code == .unsupportedAlgorithm)
    }

    /// A look-alike root: the same name as the configured root, another key, and a chain issued
    /// under it. The x5c root is compared by bytes, so it is refused before any validation.
    @Test func aLookAlikeRootInX5CIsRefused() throws {
        let impostor = try AppStoreLab(rootName: "Lab Apple Root CA - G3")
        let jws = try impostor.jws(payload: AppStoreLab.transactionJSON())
        let error = refusal { try verifier.verifyTransaction(jws) }
        #expect(error?.code == .untrustedRoot, "\(String(describing: error))")
        // The control: the impostor's own root configured, the same data verifies.
        let trusting = try AppStoreSignedDataVerifier(roots: [impostor.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
        #expect(try trusting.verifyTransaction(jws).bundleId == Self.bundleID)
    }

    /// The genuine root sent as x5c[2] does not make a chain from elsewhere valid: the
    /// intermediate is a foreign CA's.
    @Test func aForeignIntermediateUnderTheGenuineRootBytesIsRefused() throws {
        let foreign = try AppStoreLab()
        let jws = try foreign.jws(payload: AppStoreLab.transactionJSON(), chain: [foreign.leaf, foreign.intermediate.certificate, lab.root.certificate])
        #expect(refusal { try verifier.verifyTransaction(jws) }?.code == .chainValidationFailed)
    }

    @Test(arguments: [1, 2, 4])
    func aChainOfOtherThanThreeCertificatesIsRefused(length: Int) throws {
        let chain = Array((lab.chain + [lab.root.certificate]).prefix(length))
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON(), chain: chain)
        #expect(refusal { try verifier.verifyTransaction(jws) }?.code == .wrongChainLength)
    }

    @Test func aMissingLeafMarkerIsRefused() throws {
        let unmarked = try AppStoreLab(leafMarker: .absent)
        let verifier = try AppStoreSignedDataVerifier(roots: [unmarked.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
        let error = refusal { try verifier.verifyTransaction(try unmarked.jws(payload: AppStoreLab.transactionJSON())) }
        #expect(error?.code == .missingMarkerExtension)
        #expect(error?.reason.contains(AppStoreSignedDataVerifier.leafMarkerOID) == true)
    }

    @Test func aMissingIntermediateMarkerIsRefused() throws {
        let unmarked = try AppStoreLab(intermediateMarker: .absent)
        let verifier = try AppStoreSignedDataVerifier(roots: [unmarked.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
        let error = refusal { try verifier.verifyTransaction(try unmarked.jws(payload: AppStoreLab.transactionJSON())) }
        #expect(error?.code == .missingMarkerExtension)
        #expect(error?.reason.contains(AppStoreSignedDataVerifier.intermediateMarkerOID) == true)
    }

    /// A marker marked critical is an extension OpenSSL does not know marked critical: path
    /// validation refuses it (RFC 5280 section 4.2) before the marker check, whose criticality
    /// test stays as defence in depth behind it.
    @Test func aCriticalMarkerIsRefusedByPathValidation() throws {
        for critical in [try AppStoreLab(intermediateMarker: .critical), try AppStoreLab(leafMarker: .critical)] {
            let verifier = try AppStoreSignedDataVerifier(roots: [critical.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
            let error = refusal { try verifier.verifyTransaction(try critical.jws(payload: AppStoreLab.transactionJSON())) }
            #expect(error?.code == .chainValidationFailed)
            #expect(error?.reason.contains("critical extension") == true, "\(String(describing: error))")
        }
    }

    /// A leaf the root signed directly, with the leaf marker, sent with the genuine intermediate
    /// beside it: the path OpenSSL builds skips the intermediate, so the intermediate's marker
    /// proves nothing about it. Refused: the path must run through the x5c intermediate.
    @Test func aLeafTheRootSignedDirectlyIsRefusedThoughTheGenuineIntermediateIsSent() throws {
        let key = LabKey.ecP256()
        let direct = try lab.root.issue(
            CertificateSpec(
                subject: LabName(commonName: "Signed by the root itself"), subjectKey: key, keyUsage: [.digitalSignature], extendedKeyUsage: [],
                includeKeyIdentifiers: false, customExtensions: [CertificateSpec.CustomExtension(oid: AppStoreLab.leafMarkerOID)]))
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON(), chain: [direct, lab.intermediate.certificate, lab.root.certificate], signingKey: key)
        let error = refusal { try verifier.verifyTransaction(jws) }
        #expect(error?.code == .chainValidationFailed)
        #expect(error?.reason.contains("through the intermediate sent with it") == true, "\(String(describing: error))")
    }

    @Test func aTamperedPayloadIsRefused() throws {
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON())
        let parts = jws.split(separator: ".").map(String.init)
        let tampered = AppStoreLab.base64URL(Array(AppStoreLab.transactionJSON(transactionID: "2000000999999999").utf8))
        let forged = [parts[0], tampered, parts[2]].joined(separator: ".")
        #expect(refusal { try verifier.verifyTransaction(forged) }?.code == .invalidSignature)
    }

    @Test func aSignatureByAnotherKeyIsRefused() throws {
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON(), signingKey: .ecP256())
        #expect(refusal { try verifier.verifyTransaction(jws) }?.code == .invalidSignature)
    }

    @Test func anExpiredLeafIsRefused() throws {
        let expired = try AppStoreLab(leafNotBefore: Date(timeIntervalSinceNow: -10 * 86_400), leafNotAfter: Date(timeIntervalSinceNow: -86_400))
        let verifier = try AppStoreSignedDataVerifier(roots: [expired.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
        let jws = try expired.jws(payload: AppStoreLab.transactionJSON(signedDate: Date(timeIntervalSinceNow: -2 * 86_400)))
        #expect(refusal { try verifier.verifyTransaction(jws) }?.code == .chainValidationFailed)
        // At a time the leaf was valid, the same data verifies.
        #expect(try verifier.verifyTransaction(jws, at: Date(timeIntervalSinceNow: -2 * 86_400 + 60)).bundleId == Self.bundleID)
    }

    @Test func aSignedDateInTheFutureIsRefused() throws {
        let now = Date()
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON(signedDate: now.addingTimeInterval(3600)))
        #expect(refusal { try verifier.verifyTransaction(jws, at: now) }?.code == .signedInTheFuture)
        // Within the clock skew it is accepted.
        let skewed = try lab.jws(payload: AppStoreLab.transactionJSON(signedDate: now.addingTimeInterval(30)))
        #expect(try verifier.verifyTransaction(skewed, at: now).bundleId == Self.bundleID)
    }

    @Test func dataOlderThanTheMaximumAgeIsRefused() throws {
        var verifier = verifier
        verifier.maximumAge = 3600
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON(signedDate: Date(timeIntervalSinceNow: -7200)))
        #expect(refusal { try verifier.verifyTransaction(jws) }?.code == .tooOld)
    }

    @Test func anotherBundleIsRefused() throws {
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON(bundleID: "com.example.other"))
        let error = refusal { try verifier.verifyTransaction(jws) }
        #expect(error?.code == .bundleIDMismatch)
        #expect(error?.reason.contains("com.example.other") == true)
    }

    @Test func anotherEnvironmentIsRefused() throws {
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON(environment: "Production"))
        #expect(refusal { try verifier.verifyTransaction(jws) }?.code == .environmentMismatch)
    }

    @Test func aDuplicateKeyInThePayloadIsRefused() throws {
        // A second "bundleId" that a lenient parser would take as the last one.
        let payload = AppStoreLab.transactionJSON(bundleID: "com.example.other", extra: ["\"bundleId\":\"\(Self.bundleID)\""])
        let error = refusal { try verifier.verifyTransaction(try lab.jws(payload: payload)) }
        #expect(error?.code == .malformedPayload)
        #expect(error?.reason.contains("duplicate") == true, "\(String(describing: error))")
    }

    @Test func aDuplicateKeyInTheHeaderIsRefused() throws {
        let x5c = lab.chain.map { "\"" + Data($0.derEncoded).base64EncodedString() + "\"" }.joined(separator: ",")
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON(), header: "{\"alg\":\"none\",\"alg\":\"ES256\",\"x5c\":[\(x5c)]}")
        #expect(refusal { try verifier.verifyTransaction(jws) }?.code == .malformedJWS)
    }

    @Test func aFieldOfTheWrongTypeIsRefusedByName() throws {
        let payload = AppStoreLab.transactionJSON().replacingOccurrences(of: "\"quantity\":1", with: "\"quantity\":\"1\"")
        let error = refusal { try verifier.verifyTransaction(try lab.jws(payload: payload)) }
        #expect(error?.code == .malformedPayload)
        #expect(error?.reason.contains("\"quantity\"") == true)
    }

    @Test func aRequiredFieldMissingIsRefused() throws {
        let payload = AppStoreLab.transactionJSON().replacingOccurrences(of: "\"environment\":\"Sandbox\",", with: "")
        let error = refusal { try verifier.verifyTransaction(try lab.jws(payload: payload)) }
        #expect(error?.code == .malformedPayload)
        #expect(error?.reason.contains("\"environment\"") == true)
    }

    @Test func paddingStrayCharactersAndTrailingSegmentsAreRefused() throws {
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON())
        let parts = jws.split(separator: ".").map(String.init)
        for variant in [
            parts[0] + "=." + parts[1] + "." + parts[2],  // padding
            parts[0] + "." + parts[1] + " ." + parts[2],  // a space
            parts[0] + "." + parts[1] + "." + parts[2] + ".",  // a fourth segment
            parts[0] + "." + parts[1] + "." + parts[2] + "AA",  // bytes after the signature
            parts[0] + "." + parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "." + parts[2] + "+",  // standard alphabet
            parts[0] + "." + parts[1],  // two segments
        ] {
            let code = refusal { try verifier.verifyTransaction(variant) }?.code
            #expect(code == .malformedJWS || code == .invalidSignature, "\(variant.suffix(12)): \(String(describing: code))")
            #expect(code != nil)
        }
        #expect(refusal { try verifier.verifyTransaction(parts[0] + "." + parts[1] + "." + parts[2] + ".") }?.code == .malformedJWS)
        #expect(refusal { try verifier.verifyTransaction(parts[0] + "=." + parts[1] + "." + parts[2]) }?.code == .malformedJWS)
    }

    @Test func aTenMegabyteInputIsRefusedBeforeItIsRead() throws {
        let huge = String(repeating: "A", count: 10 * 1024 * 1024)
        #expect(refusal { try verifier.verifyTransaction(huge) }?.code == .inputTooLarge)
    }

    @Test func renewalInfoIsVerifiedForItsEnvironment() throws {
        let milliseconds = Int64(Date().timeIntervalSince1970 * 1000)
        let payload = "{\"originalTransactionId\":\"1000000\",\"autoRenewProductId\":\"com.example.app.monthly\",\"productId\":\"com.example.app.monthly\",\"autoRenewStatus\":1,\"signedDate\":\(milliseconds),\"environment\":\"Sandbox\",\"renewalDate\":\(milliseconds + 86_400_000),\"eligibleWinBackOfferIds\":[\"a\",\"b\"]}"
        let renewal = try verifier.verifyRenewalInfo(try lab.jws(payload: payload))
        #expect(renewal.autoRenewStatus == 1)
        #expect(renewal.eligibleWinBackOfferIds == ["a", "b"])
        let production = payload.replacingOccurrences(of: "\"Sandbox\"", with: "\"Production\"")
        #expect(refusal { try verifier.verifyRenewalInfo(try lab.jws(payload: production)) }?.code == .environmentMismatch)
    }

    @Test func configurationsThatWouldSkipAppleSignaturesAreRefused() throws {
        for environment in [AppStoreEnvironment.xcode, .localTesting] {
            #expect(refusal { try AppStoreSignedDataVerifier(roots: [lab.root.certificate], bundleID: Self.bundleID, appAppleID: 1, environment: environment, revocation: .disabled) }?.code == .invalidConfiguration)
        }
        #expect(refusal { try AppStoreSignedDataVerifier(roots: [lab.root.certificate], bundleID: Self.bundleID, appAppleID: nil, environment: .production, revocation: .disabled) }?.code == .invalidConfiguration)
        #expect(refusal { try AppStoreSignedDataVerifier(roots: [], bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled) }?.code == .invalidConfiguration)
    }
}
