import Foundation
import ServerTrust
import ServerTrustLab
import ServerTrustPurchases
import ServerTrustTestSupport
import Testing

/// Legacy App Store receipts (PKCS#7 SignedData) verified against a configured root: a genuine
/// lab receipt is accepted with every field typed, in DER and in the BER forms Apple emits, and
/// each attack is refused by the check meant for it, with that check's code.
@Suite struct ReceiptTests {
    static let bundleID = "com.example.app"
    static let device = UUID(uuidString: "7F2B1C90-3A4D-4E5F-8A6B-1C2D3E4F5A6B") ?? UUID()

    let lab: ReceiptLab
    let verifier: AppStoreReceiptVerifier
    let payload: [UInt8]

    init() throws {
        lab = try ReceiptLab()
        verifier = try AppStoreReceiptVerifier(roots: [lab.root.certificate], bundleID: Self.bundleID, revocation: .disabled)
        payload = ReceiptLab.attributeSet(ReceiptLab.payloadAttributes(deviceIdentifier: Self.device))
    }

    func receipt(_ configure: (inout ReceiptLab.Options) -> Void = { _ in }) throws -> [UInt8] {
        var options = ReceiptLab.Options()
        configure(&options)
        return try lab.receipt(payload: payload, options: options)
    }

    func code(_ receipt: [UInt8], verifier: AppStoreReceiptVerifier? = nil, at time: Date? = nil) -> PurchaseVerificationError.Code? {
        refusal { try (verifier ?? self.verifier).verify(receipt, at: time) }?.code
    }

    // MARK: - Genuine receipts

    @Test func aGenuineReceiptVerifiesWithEveryFieldTyped() throws {
        let created = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 3600).rounded(.down))
        let attributes = ReceiptLab.payloadAttributes(creationDate: created, deviceIdentifier: Self.device)
        let receipt = try verifier.verify(try lab.receipt(payload: ReceiptLab.attributeSet(attributes)))
        #expect(receipt.receiptType == "Production")
        #expect(receipt.environment == .production)
        #expect(receipt.appItemID == 1_234_567_890)
        #expect(receipt.bundleID == Self.bundleID)
        #expect(receipt.bundleIDValue == LabDER.utf8String(Self.bundleID))
        #expect(receipt.applicationVersion == "42")
        #expect(receipt.opaqueValue == [0x5F, 0x3C, 0x91, 0x0A, 0x77, 0xE2, 0x10, 0x42])
        #expect(receipt.sha1Hash.count == 20)
        #expect(receipt.creationDate == created)
        #expect(receipt.originalApplicationVersion == "1.0")
        #expect(receipt.expirationDate == nil)  // Apple's empty string
        #expect(receipt.otherAttributes == [AppStoreReceiptAttribute(type: 8, version: 2, value: LabDER.ia5String(""))])
        #expect(receipt.inAppPurchases.count == 1)
        let purchase = try #require(receipt.inAppPurchases.first)
        #expect(purchase.quantity == 1)
        #expect(purchase.productID == "com.example.app.gems.100")
        #expect(purchase.transactionID == "2000000123456789")
        #expect(purchase.purchaseDate == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(purchase.originalTransactionID == "2000000000000001")
        #expect(purchase.originalPurchaseDate == Date(timeIntervalSince1970: 1_690_000_000))
        #expect(purchase.subscriptionExpirationDate == Date(timeIntervalSince1970: 1_702_592_000))
        #expect(purchase.webOrderLineItemID == 2_000_000_044_556_677)
        #expect(purchase.cancellationDate == nil)
        #expect(purchase.isInTrialPeriod == false)
        #expect(purchase.isInIntroOfferPeriod == true)
        #expect(purchase.promotionalOfferIdentifier == "intro-offer")
        #expect(purchase.otherAttributes.isEmpty)
        #expect(try verifier.verify(base64Encoded: "\n" + Data(try self.receipt()).base64EncodedString() + "\n").bundleID == Self.bundleID)
    }

    @Test func manyPurchasesAndUndocumentedAttributesAreKept() throws {
        let purchases = (0..<50).map { ReceiptLab.inAppPurchase(transactionID: "10000000\($0)") + [ReceiptLab.Attribute(1707, LabDER.integer(3))] }
        let attributes = ReceiptLab.payloadAttributes(deviceIdentifier: Self.device, inApp: purchases) + [ReceiptLab.Attribute(9999, [0xDE, 0xAD])]
        let receipt = try verifier.verify(try lab.receipt(payload: ReceiptLab.attributeSet(attributes)))
        #expect(receipt.inAppPurchases.map(\.transactionID) == (0..<50).map { "10000000\($0)" })
        #expect(receipt.inAppPurchases.allSatisfy { $0.otherAttributes == [AppStoreReceiptAttribute(type: 1707, version: 1, value: LabDER.integer(3))] })
        #expect(receipt.otherAttributes.contains(AppStoreReceiptAttribute(type: 9999, version: 1, value: [0xDE, 0xAD])))
    }

    @Test func theBERFormsAppleEmitsVerify() throws {
        let forms: [(String, (inout ReceiptLab.Options) -> Void)] = [
            ("indefinite lengths", { $0.indefiniteLengths = true }),
            ("a constructed OCTET STRING", { $0.contentSegmentSize = 100 }),
            ("an unsorted certificate SET", { $0.certificates = [lab.root.certificate, lab.signer, lab.intermediate.certificate] }),
            ("all of them, as Apple writes", {
                $0.indefiniteLengths = true
                $0.contentSegmentSize = 1
                $0.certificates = [lab.intermediate.certificate, lab.root.certificate, lab.signer]
            }),
            ("no root in the SET", { $0.certificates = [lab.signer, lab.intermediate.certificate] }),
        ]
        for (form, configure) in forms {
            #expect(code(try receipt(configure)) == nil, "\(form)")
        }
    }

    @Test func sha1SignaturesSignedAttributesAndRSAEncryptionVerify() throws {
        let variants: [(String, (inout ReceiptLab.Options) -> Void)] = [
            ("SHA-1", { $0.digest = .sha1 }),
            ("SHA-1 under rsaEncryption", {
                $0.digest = .sha1
                $0.signatureAlgorithmNamesDigest = false
            }),
            ("SHA-256 under rsaEncryption", { $0.signatureAlgorithmNamesDigest = false }),
            ("signed attributes, SHA-256", { $0.signedAttributes = true }),
            ("signed attributes, SHA-1, BER", {
                $0.signedAttributes = true
                $0.digest = .sha1
                $0.indefiniteLengths = true
            }),
        ]
        for (variant, configure) in variants {
            #expect(code(try receipt(configure)) == nil, "\(variant)")
        }
    }

    // MARK: - Attacks

    @Test func alteredContentIsAnInvalidSignature() throws {
        let altered = ReceiptLab.attributeSet(ReceiptLab.payloadAttributes(deviceIdentifier: Self.device, inApp: [ReceiptLab.inAppPurchase(quantity: 100)]))
        #expect(code(try receipt { $0.contentAfterSigning = altered }) == .invalidSignature)
        // With signed attributes, the messageDigest no longer matches.
        #expect(code(try receipt {
            $0.contentAfterSigning = altered
            $0.signedAttributes = true
        }) == .invalidSignature)
        // A messageDigest that is not the content's, signed as such.
        #expect(code(try receipt {
            $0.signedAttributes = true
            $0.messageDigestOverride = ReceiptLab.sha256(altered)
        }) == .invalidSignature)
        // A signature by another key, for the genuine signer's issuerAndSerialNumber.
        #expect(code(try receipt { $0.signingKey = .rsa(bits: 2048, variant: 49) }) == .invalidSignature)
        // SHA-256 signed, SHA-1 claimed: a signature over other bytes.
        #expect(code(try receipt { $0.digest = .sha1; $0.contentAfterSigning = altered }) == .invalidSignature)
    }

    @Test func otherThanOneSignerIsRefused() throws {
        #expect(code(try receipt { $0.signerCount = 2 }) == .wrongSignerCount)
        #expect(code(try receipt { $0.signerCount = 0 }) == .wrongSignerCount)
        #expect(code(try receipt {
            $0.signerCount = 2
            $0.indefiniteLengths = true
        }) == .wrongSignerCount)
    }

    /// The signer is identified by issuerAndSerialNumber; the receipt's signature is the
    /// genuine signer key's, but the identifier names another certificate.
    @Test func aSignerIdentifierNamingAnotherCertificateIsRefused() throws {
        // A certificate the receipt does not carry: no signer certificate at all.
        let stranger = try lab.intermediate.issue(
            CertificateSpec(
                subject: LabName(commonName: "Lab Other Receipt Signer", organization: "Apple Inc."), subjectKey: .rsa(bits: 2048, variant: 48),
                notBefore: Date(timeIntervalSinceNow: -30 * 86_400), keyUsage: [.digitalSignature], extendedKeyUsage: [], customExtensions: [CertificateSpec.CustomExtension(oid: AppStoreLab.leafMarkerOID)]))
        #expect(code(try receipt { $0.signerIdentifier = stranger }) == .signerCertificateMismatch)
        // The same certificate carried in the SET: it is found, validates, carries the marker —
        // and its key did not make the signature. invalidSignature, because issuerAndSerialNumber
        // only says which certificate to try; only the signature says who signed.
        #expect(code(try receipt {
            $0.signerIdentifier = stranger
            $0.certificates = lab.certificates + [stranger]
        }) == .invalidSignature)
        // Naming the intermediate: it validates only as a one-certificate path to the root, not
        // as a signer under an intermediate — chainValidationFailed, before any signature.
        #expect(code(try receipt { $0.signerIdentifier = lab.intermediate.certificate }) == .chainValidationFailed)
        // No certificates at all.
        #expect(code(try receipt { $0.certificates = [] }) == .signerCertificateMismatch)
    }

    /// A look-alike PKI: the same names as the lab's, other keys.
    @Test func aLookAlikeRootCarriedInTheReceiptIsNotTrusted() throws {
        let impostor = try ReceiptLab(keyVariant: 50)
        #expect(impostor.root.certificate.subject == lab.root.certificate.subject)
        let forged = try impostor.receipt(payload: payload)
        // The chain ends at a self-signed root the receipt carries and the verifier does not have.
        #expect(code(forged) == .untrustedRoot)
        // Without its root, the forged intermediate names the configured root as its issuer, but
        // the configured root did not sign it: the chain's fault, not the root's.
        #expect(code(try impostor.receipt(payload: payload, options: { var o = ReceiptLab.Options(); o.certificates = [impostor.signer, impostor.intermediate.certificate]; return o }())) == .chainValidationFailed)
        // The genuine intermediate and root carried beside the impostor's signer change nothing.
        var mixed = ReceiptLab.Options()
        mixed.certificates = [impostor.signer, lab.intermediate.certificate, lab.root.certificate]
        #expect(code(try impostor.receipt(payload: payload, options: mixed)) == .chainValidationFailed)
        // Under the impostor's own root, configured, it verifies: the root decides, not the names.
        let impostorVerifier = try AppStoreReceiptVerifier(roots: [impostor.root.certificate], bundleID: Self.bundleID, revocation: .disabled)
        #expect(code(forged, verifier: impostorVerifier) == nil)
        #expect(code(try receipt(), verifier: impostorVerifier) == .untrustedRoot)
    }

    @Test func missingOrCriticalMarkersAreRefused() throws {
        let cases: [(AppStoreLab.Marker, AppStoreLab.Marker, PurchaseVerificationError.Code)] = [
            (.absent, .present, .missingMarkerExtension), (.present, .absent, .missingMarkerExtension),
            (.critical, .present, .criticalMarkerExtension), (.present, .critical, .criticalMarkerExtension),
        ]
        for (intermediateMarker, signerMarker, expected) in cases {
            let marked = try ReceiptLab(intermediateMarker: intermediateMarker, signerMarker: signerMarker)
            let markedVerifier = try AppStoreReceiptVerifier(roots: [marked.root.certificate], bundleID: Self.bundleID, revocation: .disabled)
            let receipt = try marked.receipt(payload: payload)
            let found = refusal { try markedVerifier.verify(receipt) }
            // A critical extension OpenSSL does not know fails path validation before the marker
            // check is reached: refused either way, by the validator.
            if signerMarker == .critical || intermediateMarker == .critical {
                #expect(found?.code == expected || found?.code == .chainValidationFailed, "\(intermediateMarker) \(signerMarker): \(String(describing: found))")
            } else {
                #expect(found?.code == expected, "\(intermediateMarker) \(signerMarker)")
            }
        }
    }

    /// A receipt that says it was made before its signer existed is refused, though the chain
    /// is valid now.
    @Test func aReceiptCreatedBeforeItsSignerWasValidIsRefused() throws {
        let young = try ReceiptLab(signerNotBefore: Date(timeIntervalSinceNow: -10 * 86_400), signerNotAfter: Date(timeIntervalSinceNow: 300 * 86_400))
        let youngVerifier = try AppStoreReceiptVerifier(roots: [young.root.certificate], bundleID: Self.bundleID, revocation: .disabled)
        let backdated = try young.receipt(
            payload: ReceiptLab.attributeSet(ReceiptLab.payloadAttributes(creationDate: Date(timeIntervalSinceNow: -40 * 86_400), deviceIdentifier: Self.device)))
        let error = refusal { try youngVerifier.verify(backdated) }
        #expect(error?.code == .chainValidationFailed)
        #expect(error?.reason.contains("was not valid") == true, "\(String(describing: error))")
    }

    /// The validation-time rule of signed data, with the creation date as the signing date: a
    /// receipt created while its signer was valid, verified after the signer expired, needs a
    /// verified answer from between its creation and the expiry; offline, nothing shows the key
    /// was not revoked then.
    @Test func theChainIsJudgedAtTheCreationDateOnlyOnEvidence() throws {
        let expired = try ReceiptLab(signerNotBefore: Date(timeIntervalSinceNow: -30 * 86_400), signerNotAfter: Date(timeIntervalSinceNow: -10 * 86_400))
        let expiredVerifier = try AppStoreReceiptVerifier(roots: [expired.root.certificate], bundleID: Self.bundleID, revocation: .disabled)
        // Created after the signer expired: refused.
        let late = try expired.receipt(payload: payload)
        #expect(code(late, verifier: expiredVerifier) == .chainValidationFailed)
        // Created while the signer was valid: refused now, offline.
        let onTime = ReceiptLab.attributeSet(ReceiptLab.payloadAttributes(creationDate: Date(timeIntervalSinceNow: -20 * 86_400), deviceIdentifier: Self.device))
        let early = try expired.receipt(payload: onTime)
        #expect(refusal { try expiredVerifier.verify(early) }?.reason.contains("with revocation checking off") == true)
        // With revocation on and no responder named, nothing can show it either: retry later.
        let checking = try AppStoreReceiptVerifier(
            roots: [expired.root.certificate], bundleID: Self.bundleID,
            revocation: .softFail(fetcher: FakeRevocationFetcher(), cache: RevocationCache()))
        #expect(code(early, verifier: checking) == .revocationUnknown)
        // Unless a verification time is passed in.
        #expect(code(early, verifier: expiredVerifier, at: Date()) == .chainValidationFailed)
        #expect(code(early, verifier: expiredVerifier, at: Date(timeIntervalSinceNow: -15 * 86_400)) == nil)
    }

    @Test func anotherAppsOrEnvironmentsReceiptIsRefused() throws {
        let other = try AppStoreReceiptVerifier(roots: [lab.root.certificate], bundleID: "com.example.other", revocation: .disabled)
        #expect(code(try receipt(), verifier: other) == .bundleIDMismatch)
        let sandbox = try AppStoreReceiptVerifier(roots: [lab.root.certificate], bundleID: Self.bundleID, environment: .sandbox, revocation: .disabled)
        #expect(code(try receipt(), verifier: sandbox) == .environmentMismatch)
        let sandboxReceipt = try lab.receipt(payload: ReceiptLab.attributeSet(ReceiptLab.payloadAttributes(receiptType: "ProductionSandbox")))
        #expect(code(sandboxReceipt, verifier: sandbox) == nil)
        #expect(refusal { try AppStoreReceiptVerifier(roots: [lab.root.certificate], bundleID: Self.bundleID, environment: .xcode, revocation: .disabled) }?.code == .invalidConfiguration)
        #expect(refusal { try AppStoreReceiptVerifier(roots: [], bundleID: Self.bundleID, revocation: .disabled) }?.code == .invalidConfiguration)
        #expect(refusal { try AppStoreReceiptVerifier(roots: [lab.root.certificate], bundleID: "", revocation: .disabled) }?.code == .invalidConfiguration)
    }

    @Test func everyTruncationIsMalformedNeverACrash() throws {
        for form in [try receipt(), try receipt { $0.indefiniteLengths = true; $0.contentSegmentSize = 64 }] {
            for length in 0..<form.count {
                let found = code(Array(form.prefix(length)))
                #expect(found == .malformedReceipt, "prefix of \(length) of \(form.count) bytes: \(String(describing: found))")
            }
        }
    }

    @Test func structuralAbusesAreMalformed() throws {
        // Nesting deeper than the limit: the content wrapped in 40 indefinite SEQUENCEs.
        var deep = try receipt { $0.indefiniteLengths = true }
        for _ in 0..<40 { deep = [0x30, 0x80] + deep + [0, 0] }
        #expect(code(deep) == .malformedReceipt)
        #expect(code(try receipt { $0.trailingBytes = [0x00] }) == .malformedReceipt)
        #expect(code(try receipt { $0.trailingBytes = [0x00, 0x00] ; $0.indefiniteLengths = true }) == .malformedReceipt)
        let second = try receipt()
        #expect(code(try receipt { $0.trailingBytes = second }) == .malformedReceipt)
        #expect(code(try receipt { $0.includeCRLs = true }) == .malformedReceipt)
        #expect(code(try receipt { $0.omitContent = true }) == .malformedReceipt)
        #expect(code(try lab.receipt(payload: [])) == .malformedReceipt)
        #expect(code([]) == .malformedReceipt)
        #expect(refusal { try verifier.verify(base64Encoded: "not base64!") }?.code == .malformedReceipt)
    }

    /// The receipt is read shallowly, each value once as it is read; what the reader does not
    /// read is walked whole: an unknown signed attribute's values, and a certificate the
    /// verifier has not seen before (before OpenSSL, which accepts BER inside a certificate).
    @Test func whatTheReaderSkipsIsStillWalked() throws {
        func reason(_ receipt: [UInt8]) -> String? {
            refusal { try verifier.verify(receipt) }.flatMap { $0.code == .malformedReceipt ? $0.reason : "\($0.code)" }
        }
        // A signed attribute of a type the verifier does not read, its value an OCTET STRING
        // that claims 5 bytes and has 1: signed, so only the walk refuses it.
        let unknown = LabDER.sequence([LabDER.oid("1.2.840.113549.1.9.5"), LabDER.tlv(0x31, [0x04, 0x05, 0x01])])
        let signedAttribute = try receipt { $0.signedAttributes = true; $0.extraSignedAttributes = [unknown] }
        #expect(reason(signedAttribute)?.contains("has a length of 5 bytes, but only 1 remain") == true, "\(reason(signedAttribute) ?? "accepted")")
        #expect(try verifier.verify(try receipt { $0.signedAttributes = true; $0.extraSignedAttributes = [LabDER.sequence([LabDER.oid("1.2.840.113549.1.9.5"), LabDER.set([LabDER.null])])] }).bundleID == Self.bundleID)

        // The signer certificate with its notBefore's length in the long form (0x81 0x0D for 13
        // bytes), which DER forbids and OpenSSL's d2i_X509 reads; inside the validity, which
        // the reader steps over.
        let fields = try BERReader.parse(lab.signer.derEncoded).children(exactly: 3, what: "the certificate")
        var tbs = try fields[0].children()
        var rewritten: [[UInt8]] = []
        var index = 0
        while let field = try tbs.next() {
            var bytes = Array(field.encodedBytes)
            // version, serialNumber, signature, issuer, then validity.
            if index == 4, bytes[1] < 0x7F, bytes[3] < 0x80 {
                bytes.insert(0x81, at: 3)
                bytes[1] += 1
            }
            rewritten.append(bytes)
            index += 1
        }
        let nonDER = try Certificate(derEncoded: LabDER.sequence([LabDER.sequence(rewritten), Array(fields[1].encodedBytes), Array(fields[2].encodedBytes)]))
        let certificate = try receipt { $0.certificates = [nonDER, lab.intermediate.certificate, lab.root.certificate]; $0.signerIdentifier = nonDER }
        #expect(reason(certificate)?.contains("is in the long form, which is for 128 and up") == true, "\(reason(certificate) ?? "accepted")")
    }

    @Test func textThatIsNotUTF8IsRefused() throws {
        func refused(_ value: [UInt8]) throws -> PurchaseVerificationError? {
            let attributes = ReceiptLab.payloadAttributes().map { $0.type == 3 ? ReceiptLab.Attribute(3, LabDER.tlv(0x0C, value)) : $0 }
            return refusal { try verifier.verify(try lab.receipt(payload: ReceiptLab.attributeSet(attributes))) }
        }
        // A lone continuation byte after a lead; and a truncated 4-byte sequence whose
        // replacement (U+FFFD, 3 bytes) is as long as it: only the bytes tell them apart.
        for value: [UInt8] in [[0x61, 0xC3, 0x28], [0xF0, 0x90, 0x80], [0xED, 0xA0, 0x80], [0xC0, 0xAF]] {
            let error = try refused(value)
            #expect(error?.code == .malformedReceipt && error?.reason.contains("is not valid UTF-8") == true, "\(value): \(String(describing: error))")
        }
        #expect(try refused(Array("4.2 é ✓".utf8)) == nil)
    }

    @Test func oversizedInputIsRefusedFirst() throws {
        #expect(code([UInt8](repeating: 0x30, count: AppStoreReceiptVerifier.maximumLength + 1)) == .inputTooLarge)
        let text = String(repeating: "A", count: 6 * 1024 * 1024)
        #expect(refusal { try verifier.verify(base64Encoded: text) }?.code == .inputTooLarge)
    }

    @Test func malformedPayloadsAreRefused() throws {
        func refused(_ attributes: [ReceiptLab.Attribute]) throws -> PurchaseVerificationError.Code? {
            code(try lab.receipt(payload: ReceiptLab.attributeSet(attributes)))
        }
        let genuine = ReceiptLab.payloadAttributes()
        #expect(try refused(genuine + [.utf8(2, "com.example.app")]) == .malformedReceipt)  // bundle ID twice
        #expect(try refused(genuine + [.date(12, Date())]) == .malformedReceipt)  // creation date twice
        #expect(try refused(genuine.filter { $0.type != 2 }) == .malformedReceipt)  // no bundle ID
        #expect(try refused(genuine.filter { $0.type != 12 }) == .malformedReceipt)  // no creation date
        #expect(try refused(genuine.map { $0.type == 2 ? .ia5(2, "com.example.app") : $0 }) == .malformedReceipt)  // wrong string type
        #expect(try refused(genuine.map { $0.type == 5 ? ReceiptLab.Attribute(5, [1, 2, 3]) : $0 }) == .malformedReceipt)  // short hash
        for date in ["2023-10-19 01:45:40Z", "2023-10-19T01:45:40", "2023-10-19T01:45:40+00:00", "2023-02-29T00:00:00Z", "2023-10-19T24:00:00Z", "2023-10-19T01:45:40.Z", "２023-10-19T01:45:40Z"] {
            #expect(try refused(genuine.map { $0.type == 12 ? .ia5(12, date) : $0 }) == .malformedReceipt, "\(date)")
        }
        let purchase = ReceiptLab.inAppPurchase()
        #expect(try refused(ReceiptLab.payloadAttributes(inApp: [purchase + [.utf8(1703, "2")]])) == .malformedReceipt)  // transaction ID twice
        #expect(try refused(ReceiptLab.payloadAttributes(inApp: [purchase.filter { $0.type != 1702 }])) == .malformedReceipt)
        #expect(try refused(ReceiptLab.payloadAttributes(inApp: [purchase.map { $0.type == 1719 ? .integer(1719, 2) : $0 }])) == .malformedReceipt)
        #expect(try refused(ReceiptLab.payloadAttributes(inApp: [purchase.map { $0.type == 1701 ? ReceiptLab.Attribute(1701, [0x02, 0x00]) : $0 }])) == .malformedReceipt)
        // The value of an in-app attribute SET that is not a SET.
        #expect(try refused(genuine + [ReceiptLab.Attribute(17, LabDER.sequence([]))]) == .malformedReceipt)
    }

    @Test func datesReadAsAppleWritesThem() throws {
        let cases: [(String, Date?)] = [
            ("2023-10-19T01:45:40Z", Date(timeIntervalSince1970: 1_697_679_940)),
            ("2023-10-19T01:45:40.250Z", Date(timeIntervalSince1970: 1_697_679_940.25)),
            ("2024-02-29T00:00:00Z", Date(timeIntervalSince1970: 1_709_164_800)),
            ("1970-01-01T00:00:00Z", Date(timeIntervalSince1970: 0)),
            ("4001-01-01T00:00:00Z", Date(timeIntervalSince1970: 64_092_211_200)),
            ("", nil),
        ]
        for (text, expected) in cases {
            let attributes = ReceiptLab.payloadAttributes().map { $0.type == 21 ? .ia5(21, text) : $0 }
            let receipt = try AppStoreReceipt(payload: ReceiptLab.attributeSet(attributes))
            #expect(receipt.expirationDate == expected, "\(text)")
        }
    }

    @Test func theDeviceHashBindsTheReceiptToItsDevice() throws {
        let receipt = try verifier.verify(try receipt())
        #expect(receipt.isForDevice(identifier: Self.device))
        #expect(refusal { try receipt.checkDevice(identifier: Self.device) } == nil)
        let other = UUID(uuidString: "7F2B1C90-3A4D-4E5F-8A6B-1C2D3E4F5A6C") ?? UUID()
        #expect(!receipt.isForDevice(identifier: other))
        #expect(refusal { try receipt.checkDevice(identifier: other) }?.code == .deviceHashMismatch)
        // The hash covers the bundle ID's encoded value: another app's receipt on the same device
        // does not pass for this one.
        let otherApp = try AppStoreReceipt(payload: ReceiptLab.attributeSet(ReceiptLab.payloadAttributes(bundleID: "com.example.other", deviceIdentifier: other)))
        #expect(otherApp.isForDevice(identifier: other))
        #expect(!otherApp.isForDevice(identifier: Self.device))
    }

    // MARK: - Apple's Xcode receipts

    /// Apple's Xcode-signed receipts from app-store-server-library-swift's tests (MIT, Copyright
    /// 2023 Apple Inc.; Fixtures/apple/LICENSE.txt): BER with indefinite lengths and a
    /// constructed OCTET STRING, signed (SHA-256, no signed attributes) by a self-signed
    /// StoreKit certificate, the only certificate of the SET.
    static func appleReceipt(_ name: String) throws -> [UInt8] {
        let text = try String(contentsOfFile: PackageFiles.path("Tests/ServerTrustPurchasesTests/Fixtures/apple/\(name)"), encoding: .utf8)
        return Array(try #require(Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines))))
    }

    @Test func applesXcodeReceiptsParseAndTheirSignaturesVerify() throws {
        for name in ["xcode-app-receipt-empty", "xcode-app-receipt-with-transaction"] {
            let bytes = try Self.appleReceipt(name)
            let top = try BERReader.parse(bytes)
            #expect(top.isIndefiniteLength)
            let signedData = try PKCS7SignedData(ber: bytes)
            #expect(signedData.certificates.count == 1)
            #expect(signedData.signer.digest == .sha256)
            #expect(signedData.signer.signedAttributes == nil)
            let signer = try signedData.signerCertificate()
            #expect(signer.certificate.subject.contains("StoreKit"))
            #expect(signer.certificate.isSelfIssued)
            // Apple's signature over the content, checked with the StoreKit certificate's key.
            try signedData.verifySignature(by: signer.certificate)
            let receipt = try AppStoreReceipt(payload: signedData.content)
            #expect(receipt.receiptType == "Xcode")
            #expect(receipt.environment == .xcode)
            #expect(receipt.bundleID == "com.example.naturelab.backyardbirds.example")
            #expect(receipt.applicationVersion == "1")
            #expect(receipt.appItemID == 0)
            #expect(receipt.expirationDate == Date(timeIntervalSince1970: 64_092_211_200))  // 4001-01-01
            #expect(receipt.otherAttributes.map(\.type) == [8])
        }
        let empty = try AppStoreReceipt(payload: try PKCS7SignedData(ber: try Self.appleReceipt("xcode-app-receipt-empty")).content)
        #expect(empty.inAppPurchases.isEmpty)
        #expect(empty.creationDate == Date(timeIntervalSince1970: 1_697_678_334))  // 2023-10-19T01:18:54Z
        let withTransaction = try AppStoreReceipt(payload: try PKCS7SignedData(ber: try Self.appleReceipt("xcode-app-receipt-with-transaction")).content)
        let purchase = try #require(withTransaction.inAppPurchases.first)
        #expect(withTransaction.inAppPurchases.count == 1)
        #expect(purchase.transactionID == "0")  // ReceiptUtilityTests' APP_RECEIPT_EXPECTED_TRANSACTION_ID
        #expect(purchase.productID == "pass.premium")
        #expect(purchase.quantity == 1)
        #expect(purchase.purchaseDate == Date(timeIntervalSince1970: 1_697_679_936))  // 2023-10-19T01:45:36Z
        #expect(purchase.subscriptionExpirationDate == Date(timeIntervalSince1970: 1_700_358_336))  // 2023-11-19T01:45:36Z
        #expect(purchase.isInIntroOfferPeriod == true)
        #expect(purchase.originalTransactionID == nil)
    }

    @Test func applesXcodeReceiptsAreRefusedUnderTheDefaultRefusal() throws {
        let appleVerifier = try AppStoreReceiptVerifier(roots: [lab.root.certificate], bundleID: "com.example.naturelab.backyardbirds.example", revocation: .disabled)
        for name in ["xcode-app-receipt-empty", "xcode-app-receipt-with-transaction"] {
            let bytes = try Self.appleReceipt(name)
            // A self-signed StoreKit certificate no configured root issued.
            #expect(code(bytes, verifier: appleVerifier) == .untrustedRoot, "\(name)")
            #expect(refusal { try appleVerifier.verify(base64Encoded: String(decoding: try Self.appleReceiptText(name), as: UTF8.self)) }?.code == .untrustedRoot)
            // Even with the StoreKit certificate configured as the root, it signs as a root, with
            // no intermediate and no marker: refused.
            let storeKit = try PKCS7SignedData(ber: bytes).signerCertificate().certificate
            let storeKitVerifier = try AppStoreReceiptVerifier(roots: [storeKit], bundleID: "com.example.naturelab.backyardbirds.example", revocation: .disabled)
            #expect(code(bytes, verifier: storeKitVerifier) == .chainValidationFailed, "\(name)")
        }
    }

    /// Configured explicitly, Apple's Xcode receipts verify: the signer is byte for byte the
    /// StoreKit certificate given, its RSA key signs, and it is judged at the creation date (or
    /// the time given). Anything else configured is refused, each with its own check.
    @Test func applesXcodeReceiptsVerifyOnlyUnderTheirConfiguredStoreKitCertificate() throws {
        let bundleID = "com.example.naturelab.backyardbirds.example"
        let bytes = try Self.appleReceipt("xcode-app-receipt-with-transaction")
        let storeKit = try PKCS7SignedData(ber: bytes).signerCertificate().certificate
        let verifier = try AppStoreReceiptVerifier.xcodeTesting(storeKitCertificate: storeKit, bundleID: bundleID)
        let receipt = try verifier.verify(bytes)
        #expect(receipt.environment == .xcode)
        #expect(receipt.inAppPurchases.first?.productID == "pass.premium")
        #expect(try verifier.verify(base64Encoded: String(decoding: try Self.appleReceiptText("xcode-app-receipt-with-transaction"), as: UTF8.self)).bundleID == bundleID)
        // The StoreKit certificate is valid 2020-04-01 to 2040-03-27: judged after it, refused.
        #expect(refusal { try verifier.verify(bytes, at: Date(timeIntervalSince1970: 2_300_000_000)) }?.code == .chainValidationFailed)
        // Another bundle.
        let other = try AppStoreReceiptVerifier.xcodeTesting(storeKitCertificate: storeKit, bundleID: "com.example.other")
        #expect(refusal { try other.verify(bytes) }?.code == .bundleIDMismatch)
        // Another StoreKit certificate (RSA, as Xcode's): not the signer.
        let impostor = try LabPKI.makeRoot(commonName: "StoreKit", key: .rsa(bits: 2048))
        let elsewhere = try AppStoreReceiptVerifier.xcodeTesting(storeKitCertificate: impostor.certificate, bundleID: bundleID)
        #expect(refusal { try elsewhere.verify(bytes) }?.code == .untrustedRoot)
        // A P-256 certificate cannot sign a receipt, and Apple's roots are never a StoreKit certificate.
        let p256 = try LabPKI.makeRoot(commonName: "StoreKit")
        #expect(refusal { try AppStoreReceiptVerifier.xcodeTesting(storeKitCertificate: p256.certificate, bundleID: bundleID) }?.code == .invalidConfiguration)
        let appleRoot = try #require(AppleRootCertificates.all.first)
        #expect(refusal { try AppStoreReceiptVerifier.xcodeTesting(storeKitCertificate: appleRoot, bundleID: bundleID) }?.code == .invalidConfiguration)
    }

    static func appleReceiptText(_ name: String) throws -> [UInt8] {
        Array(try String(contentsOfFile: PackageFiles.path("Tests/ServerTrustPurchasesTests/Fixtures/apple/\(name)"), encoding: .utf8).utf8)
    }
}
