import Foundation
import ServerTrust
import Testing

/// A root, an intermediate it certified, a signer, and a client clock, at a fixed instant.
struct SigningFixture {
    static let now = Date(timeIntervalSince1970: 1_900_000_000)
    static let url = URL(string: "https://api.example.com:8443/v1/orders?id=42&sort=asc")!

    let root: SigningKey
    let intermediate: SigningKey
    let certificate: IntermediateKeyCertificate
    let signer: ResponseSigner

    init(root: SigningKey? = nil, expires: Date = SigningFixture.now.addingTimeInterval(30 * 86_400), version: Int = 1) throws {
        let root = try root ?? SigningKey.generate()
        self.root = root
        intermediate = try SigningKey.generate()
        certificate = try IntermediateKeyCertificate.issue(for: intermediate.verificationKey, expires: expires, signedBy: root)
        signer = try ResponseSigner(key: intermediate, certificate: certificate, version: version)
    }

    var rootEntry: SignedResponseRoot { SignedResponseRoot(root.verificationKey) }

    func verifier(at clock: Date = SigningFixture.now, roots: [SignedResponseRoot]? = nil) throws -> ResponseSignatureVerifier {
        try ResponseSignatureVerifier(roots: roots ?? [rootEntry], clock: { clock })
    }

    /// What the client sends: a fresh challenge for `url`.
    func challenge(method: String = "GET", url: URL = SigningFixture.url, body: [UInt8] = [], at time: Date = SigningFixture.now) throws -> SignatureChallenge {
        try SignatureChallenge(method: method, url: url, requestBody: body, now: time)
    }

    /// What the server sees for `challenge`'s request: its headers plus `Host`.
    static func received(_ challenge: SignatureChallenge, url: URL = SigningFixture.url, body: [UInt8] = [], method: String? = nil) throws -> SignatureChallenge {
        let target = url.path + (url.query.map { "?" + $0 } ?? "")
        return try SignatureChallenge(
            receivedMethod: method ?? challenge.method, target: target, headers: challenge.requestHeaders + [("Host", "\(url.host!):\(url.port ?? 443)")],
            body: body)
    }

    /// The response headers a server sends for `challenge`.
    func signedHeaders(
        for challenge: SignatureChallenge, status: Int = 200, etag: String? = nil, location: String? = nil, body: [UInt8],
        signer: ResponseSigner? = nil, at time: Date = SigningFixture.now
    ) throws -> [(name: String, value: String)] {
        let received = try Self.received(challenge)
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if let etag { headers.append(("ETag", etag)) }
        if let location { headers.append(("Location", location)) }
        headers.append(try (signer ?? self.signer).signatureHeader(answering: received, status: status, etag: etag, location: location, body: body, now: time))
        return headers
    }
}

func signatureValue(_ headers: [(name: String, value: String)]) -> String {
    headers.first { $0.name == SignedResponseHeader.signature }!.value
}

func replacingSignature(_ headers: [(name: String, value: String)], with values: [String]) -> [(name: String, value: String)] {
    headers.filter { $0.name != SignedResponseHeader.signature } + values.map { (SignedResponseHeader.signature, $0) }
}

/// The ResponseSignatureError `body` throws, or nil when it succeeds.
func signatureFailure(_ body: () throws -> Void) -> ResponseSignatureError? {
    do {
        try body()
        return nil
    } catch let error as ResponseSignatureError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

@Suite struct SignedResponseVerifierTests {
    let body = Array(#"{"order":42,"total":"19.99"}"#.utf8)

    @Test func aResponseSignedForTheRequestVerifies() throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let headers = try fixture.signedHeaders(for: challenge, etag: "\"v7\"", body: body)
        let verified = try fixture.verifier().verify(status: 200, headers: headers, body: body, answering: challenge)
        #expect(verified.version == 1)
        #expect(verified.root == fixture.root.verificationKey)
        #expect(verified.intermediate == fixture.certificate)
    }

    @Test func theClientSendsA32ByteNonceAndTheRequestTimeInSeconds() throws {
        let challenge = try SigningFixture().challenge()
        let fields = Dictionary(uniqueKeysWithValues: challenge.requestHeaders.map { ($0.name, $0.value) })
        #expect(Data(base64Encoded: fields[SignedResponseHeader.nonce]!)?.count == 32)
        #expect(fields[SignedResponseHeader.requestTime] == "1900000000")
        #expect(try SigningFixture().challenge().nonce != challenge.nonce)
    }

    @Test func aTamperedBodyIsABodyMismatch() throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let headers = try fixture.signedHeaders(for: challenge, body: body)
        var tampered = body
        tampered[10] ^= 1
        let error = signatureFailure { try fixture.verifier().verify(status: 200, headers: headers, body: tampered, answering: challenge) }
        #expect(error == .bodyMismatch)
        #expect(error?.status == 200)
        #expect(signatureFailure { try fixture.verifier().verify(status: 200, headers: headers, body: body + [0x20], answering: challenge) } == .bodyMismatch)
        #expect(signatureFailure { try fixture.verifier().verify(status: 200, headers: headers, body: [], answering: challenge) } == .bodyMismatch)
    }

    @Test func aResponseSignedForAnotherNonceIsANonceMismatch() throws {
        let fixture = try SigningFixture()
        let sent = try fixture.challenge()
        let other = try fixture.challenge()
        let headers = try fixture.signedHeaders(for: other, body: body)
        #expect(signatureFailure { try fixture.verifier().verify(status: 200, headers: headers, body: body, answering: sent) } == .nonceMismatch)
    }

    @Test func aResponseAcceptedOnceIsAReplayTheSecondTimeAndForTheNextRequest() throws {
        let fixture = try SigningFixture()
        let verifier = try fixture.verifier()
        let first = try fixture.challenge()
        let headers = try fixture.signedHeaders(for: first, body: body)
        try verifier.verify(status: 200, headers: headers, body: body, answering: first)
        #expect(signatureFailure { try verifier.verify(status: 200, headers: headers, body: body, answering: first) } == .replayedResponse)
        let next = try fixture.challenge()
        #expect(signatureFailure { try verifier.verify(status: 200, headers: headers, body: body, answering: next) } == .replayedResponse)
        // Another verifier (another session) has not seen the nonce: the mismatch still fails it.
        #expect(signatureFailure { try fixture.verifier().verify(status: 200, headers: headers, body: body, answering: next) } == .nonceMismatch)
    }

    @Test func concurrentVerificationsOfOneResponseAcceptItOnce() async throws {
        let fixture = try SigningFixture()
        let verifier = try fixture.verifier()
        let challenge = try fixture.challenge()
        let headers = try fixture.signedHeaders(for: challenge, body: body)
        let body = self.body
        let accepted = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 {
                group.addTask { signatureFailure { try verifier.verify(status: 200, headers: headers, body: body, answering: challenge) } == nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(accepted == 1)
    }

    @Test func aResponseOlderThanTheWindowPlusSkewIsStale() throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let headers = try fixture.signedHeaders(for: challenge, body: body)
        let edge = SigningFixture.now.addingTimeInterval(300 + 60)
        let stale = signatureFailure { try fixture.verifier(at: edge.addingTimeInterval(1)).verify(status: 200, headers: headers, body: body, answering: challenge) }
        #expect(stale == .staleRequestTime)
        #expect(stale?.reason.contains("361 s ago") == true)
        try fixture.verifier(at: edge).verify(status: 200, headers: headers, body: body, answering: challenge)
    }

    @Test func aClockSteppedBackWithinTheSkewAllowanceIsAcceptedAndBeyondItIsNot() throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let headers = try fixture.signedHeaders(for: challenge, body: body)
        try fixture.verifier(at: SigningFixture.now.addingTimeInterval(-60)).verify(status: 200, headers: headers, body: body, answering: challenge)
        let ahead = signatureFailure {
            try fixture.verifier(at: SigningFixture.now.addingTimeInterval(-61)).verify(status: 200, headers: headers, body: body, answering: challenge)
        }
        #expect(ahead == .staleRequestTime)
        #expect(ahead?.reason.contains("ahead of the clock") == true)
    }

    @Test func theSkewAllowanceAndWindowAreConfigurable() throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let headers = try fixture.signedHeaders(for: challenge, body: body)
        let strict = try ResponseSignatureVerifier(
            roots: [fixture.rootEntry], freshnessWindow: .seconds(10), clockSkewAllowance: .zero, clock: { SigningFixture.now.addingTimeInterval(11) })
        #expect(signatureFailure { try strict.verify(status: 200, headers: headers, body: body, answering: challenge) } == .staleRequestTime)
    }

    @Test func anExpiredIntermediateIsRejectedAfterTheSkewAllowance() throws {
        let expiry = SigningFixture.now.addingTimeInterval(3600)
        let fixture = try SigningFixture(expires: expiry)
        let signedAt = expiry.addingTimeInterval(-10)
        for (offset, expected) in [(59.0, nil), (61.0, ResponseSignatureError.intermediateExpired)] {
            let clock = expiry.addingTimeInterval(offset)
            let challenge = try fixture.challenge(at: clock)
            let headers = try fixture.signedHeaders(for: challenge, body: body, at: signedAt)
            #expect(signatureFailure { try fixture.verifier(at: clock).verify(status: 200, headers: headers, body: body, answering: challenge) } == expected)
        }
    }

    @Test func anIntermediateSignedByAnotherRootIsUntrusted() throws {
        let genuine = try SigningFixture()
        let impostor = try SigningFixture()
        let challenge = try genuine.challenge()
        let headers = try impostor.signedHeaders(for: challenge, body: body)
        let error = signatureFailure { try genuine.verifier().verify(status: 200, headers: headers, body: body, answering: challenge) }
        #expect(error == .untrustedIntermediate)
        #expect(error?.reason.contains(impostor.root.verificationKey.keyIDHex) == true)
        #expect(error?.reason.contains(genuine.root.verificationKey.keyIDHex) == true)
    }

    @Test func anIntermediateClaimingOurRootsKeyIDButSignedByAnotherIsUntrusted() throws {
        let genuine = try SigningFixture()
        let impostor = try SigningFixture()
        var forged = impostor.certificate.encoded
        forged.replaceSubrange(1..<9, with: genuine.root.verificationKey.keyID)
        // The forged certificate parses, names our root, and carries the impostor's signature.
        let certificate = try IntermediateKeyCertificate(encoded: forged)
        #expect(!certificate.isSigned(by: genuine.root.verificationKey))
        let challenge = try genuine.challenge()
        var headers = try impostor.signedHeaders(for: challenge, body: body)
        let value = signatureValue(headers).replacingOccurrences(of: impostor.certificate.base64, with: certificate.base64)
        headers = replacingSignature(headers, with: [value])
        let error = signatureFailure { try genuine.verifier().verify(status: 200, headers: headers, body: body, answering: challenge) }
        #expect(error == .untrustedIntermediate)
        #expect(error?.reason.contains("does not verify") == true)
    }

    @Test func aMissingSignatureIsReportedWithTheStatus() throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let error = signatureFailure { try fixture.verifier().verify(status: 503, headers: [("Content-Type", "text/plain")], body: Array("busy".utf8), answering: challenge) }
        #expect(error == .missingSignature)
        #expect(error?.status == 503)
    }

    @Test func aTruncatedSignatureIsMalformedAtEveryLength() throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let headers = try fixture.signedHeaders(for: challenge, body: body)
        let value = signatureValue(headers)
        let verifier = try fixture.verifier()
        for length in 1..<value.utf8.count {
            let cut = String(decoding: value.utf8.prefix(length), as: UTF8.self)
            let error = signatureFailure { try verifier.verify(status: 200, headers: replacingSignature(headers, with: [cut]), body: body, answering: challenge) }
            #expect(error == .malformedSignature, "prefix of \(length) bytes: \(String(describing: error))")
        }
        let empty = signatureFailure { try verifier.verify(status: 200, headers: replacingSignature(headers, with: [""]), body: body, answering: challenge) }
        #expect(empty == .malformedSignature)
    }

    @Test(arguments: [
        "garbage", "v1", "v1;", "v01; cert=", "V1; cert=AAAA", "v1 cert=AAAA", "v1; cert", "v1; =AAAA", "v0; cert=AAAA",
        "v1000; cert=AAAA", "v1; CERT=AAAA", "v1; cert=AAAA; cert=AAAA", "v1; what=AAAA", "\u{0}v1", "v1;\u{0}",
        "v1; cert=" + String(repeating: "A", count: 2000),
    ])
    func aGarbledSignatureIsMalformed(value: String) throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let headers: [(name: String, value: String)] = [(SignedResponseHeader.signature, value)]
        #expect(signatureFailure { try fixture.verifier().verify(status: 200, headers: headers, body: body, answering: challenge) } == .malformedSignature)
    }

    @Test func nonCanonicalBase64AndRepeatedParametersAreMalformed() throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let headers = try fixture.signedHeaders(for: challenge, body: body)
        let value = signatureValue(headers)
        let salt = value.components(separatedBy: "salt=")[1].prefix(24)
        #expect(salt.hasSuffix("=="))
        // The last character before "==" carries 4 unused bits: setting one gives another
        // spelling of the same salt, which a strict decoder must refuse.
        let last = salt[salt.index(salt.startIndex, offsetBy: 21)]
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        let index = alphabet.firstIndex(of: last)!
        let sibling = alphabet[index ^ 1]
        let variant = value.replacingOccurrences(of: "salt=" + salt, with: "salt=" + salt.prefix(21) + String(sibling) + "==")
        let verifier = try fixture.verifier()
        for bad in [
            variant, value.replacingOccurrences(of: "salt=" + salt, with: "salt=" + salt.dropLast(2)),
            value + "; salt=" + salt, value.replacingOccurrences(of: "; ", with: ";\n"),
            value.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"),
        ] where bad != value {
            #expect(signatureFailure { try verifier.verify(status: 200, headers: replacingSignature(headers, with: [bad]), body: body, answering: challenge) } == .malformedSignature)
        }
    }

    @Test func optionalWhitespaceAndParameterOrderDoNotMatter() throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let headers = try fixture.signedHeaders(for: challenge, body: body)
        let parts = signatureValue(headers).components(separatedBy: "; ")
        let reordered = ([parts[0]] + parts.dropFirst().reversed()).joined(separator: " ;\t")
        try fixture.verifier().verify(status: 200, headers: replacingSignature(headers, with: ["  " + reordered + " "]), body: body, answering: challenge)
    }

    @Test func twoV1SignaturesAreMalformedButAV2FieldBesideV1IsIgnoredByAV1Client() throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let headers = try fixture.signedHeaders(for: challenge, body: body)
        let value = signatureValue(headers)
        #expect(signatureFailure { try fixture.verifier().verify(status: 200, headers: replacingSignature(headers, with: [value, value]), body: body, answering: challenge) } == .malformedSignature)

        let successor = try SigningFixture(version: 2)
        let v2 = signatureValue(try successor.signedHeaders(for: challenge, body: body))
        #expect(v2.hasPrefix("v2; "))
        // Separate fields, and fields an intermediary joined with a comma.
        try fixture.verifier().verify(status: 200, headers: replacingSignature(headers, with: [v2, value]), body: body, answering: challenge)
        try fixture.verifier().verify(status: 200, headers: replacingSignature(headers, with: [v2 + ", " + value]), body: body, answering: challenge)
    }

    @Test func aClientWithOnlyTheNewRootRefusesAResponseSignedUnderTheOldVersion() throws {
        let old = try SigningFixture()
        let new = try SigningFixture(version: 2)
        let challenge = try old.challenge()
        let headers = try old.signedHeaders(for: challenge, body: body)
        let error = signatureFailure {
            try new.verifier(roots: [SignedResponseRoot(new.root.verificationKey, version: 2)]).verify(status: 200, headers: headers, body: body, answering: challenge)
        }
        #expect(error == .unsupportedVersion)
        #expect(error?.reason.contains("v1") == true)
    }

    @Test func theHighestConfiguredVersionIsReadAndAFailureThereIsNotRescuedByALowerOne() throws {
        let old = try SigningFixture()
        let new = try SigningFixture(version: 2)
        let roots = [old.rootEntry, SignedResponseRoot(new.root.verificationKey, version: 2)]
        let challenge = try old.challenge()
        let v1 = signatureValue(try old.signedHeaders(for: challenge, body: body))
        let v2 = signatureValue(try new.signedHeaders(for: challenge, body: body))
        try old.verifier(roots: roots).verify(status: 200, headers: [(SignedResponseHeader.signature, v1), (SignedResponseHeader.signature, v2)], body: body, answering: challenge)
        // A v2 entry made with a key the v2 root never certified: the valid v1 entry must not rescue it.
        let forgedV2 = signatureValue(try SigningFixture(version: 2).signedHeaders(for: challenge, body: body))
        let error = signatureFailure {
            try old.verifier(roots: roots).verify(
                status: 200, headers: [(SignedResponseHeader.signature, v1), (SignedResponseHeader.signature, forgedV2)], body: body, answering: challenge)
        }
        #expect(error == .untrustedIntermediate)
    }

    @Test func anAlteredStatusETagOrLocationBreaksTheSignature() throws {
        let fixture = try SigningFixture()
        let verifier = try fixture.verifier()
        let challenge = try fixture.challenge()
        let headers = try fixture.signedHeaders(for: challenge, status: 302, etag: "\"v7\"", location: "https://api.example.com/next", body: body)
        #expect(signatureFailure { try verifier.verify(status: 200, headers: headers, body: body, answering: challenge) } == .badSignature)
        let otherETag = headers.map { $0.name == "ETag" ? ($0.name, "\"v8\"") : $0 }
        #expect(signatureFailure { try verifier.verify(status: 302, headers: otherETag, body: body, answering: challenge) } == .badSignature)
        let otherLocation = headers.map { $0.name == "Location" ? ($0.name, "https://evil.example/next") : $0 }
        #expect(signatureFailure { try verifier.verify(status: 302, headers: otherLocation, body: body, answering: challenge) } == .badSignature)
        let addedETag = headers + [("ETag", "\"v9\"")]
        #expect(signatureFailure { try verifier.verify(status: 302, headers: addedETag, body: body, answering: challenge) } == .duplicateSignedField)
        try verifier.verify(status: 302, headers: headers, body: body, answering: challenge)
    }

    /// Audit #15, finding 5(b): fields were signed joined with ", ", so a proxy could split a
    /// signed `ETag: "a, b"` into two fields — the application reads the first, `"a` — and the
    /// signature still verified.
    @Test func duplicateETagFieldsFailVerification() throws {
        let fixture = try SigningFixture()
        let verifier = try fixture.verifier()
        let challenge = try fixture.challenge()
        let signed = try fixture.signedHeaders(for: challenge, etag: "\"a, b\"", body: body)
        let split = signed.flatMap { $0.name == "ETag" ? [("ETag", "\"a"), ("etag", "b\"")] : [$0] }
        let error = signatureFailure { try verifier.verify(status: 200, headers: split, body: body, answering: challenge) }
        #expect(error == .duplicateSignedField)
        #expect(error?.reason.contains("2 ETag fields") == true)
        #expect(error?.status == 200)
        // Unsplit, the one field is what the server signed and what an application reads.
        try verifier.verify(status: 200, headers: signed, body: body, answering: challenge)
        #expect(signed.filter { $0.name == "ETag" }.map(\.value) == ["\"a, b\""])
    }

    /// Audit #15, finding 5(b), for `Location`: a redirect must name one target, the signed one.
    @Test func duplicateLocationFieldsFailVerification() throws {
        let fixture = try SigningFixture()
        let verifier = try fixture.verifier()
        let challenge = try fixture.challenge()
        let signed = try fixture.signedHeaders(for: challenge, status: 302, location: "https://evil.example/x, /next", body: body)
        let split = signed.flatMap { $0.name == "Location" ? [("Location", "https://evil.example/x"), ("Location", "/next")] : [$0] }
        let error = signatureFailure { try verifier.verify(status: 302, headers: split, body: body, answering: challenge) }
        #expect(error == .duplicateSignedField)
        #expect(error?.reason.contains("2 Location fields") == true)
        let repeated = signed + [("Location", "https://api.example.com/next")]
        #expect(signatureFailure { try verifier.verify(status: 302, headers: repeated, body: body, answering: challenge) } == .duplicateSignedField)
    }

    @Test func aRequestAlteredOnTheWayIsARequestMismatch() throws {
        let fixture = try SigningFixture()
        let verifier = try fixture.verifier()
        let upload = Array("amount=10".utf8)
        let challenge = try fixture.challenge(method: "POST", body: upload)
        let alterations: [SignatureChallenge] = [
            try SigningFixture.received(challenge, body: Array("amount=9999".utf8)),
            try SigningFixture.received(challenge, url: URL(string: "https://api.example.com:8443/v1/orders?id=43&sort=asc")!, body: upload),
            try SigningFixture.received(challenge, url: URL(string: "https://api.example.com:8443/v1/refunds?id=42&sort=asc")!, body: upload),
            try SigningFixture.received(challenge, url: URL(string: "https://staging.example.com:8443/v1/orders?id=42&sort=asc")!, body: upload),
            try SigningFixture.received(challenge, body: upload, method: "PUT"),
        ]
        for received in alterations {
            let header = try fixture.signer.signatureHeader(answering: received, status: 200, body: body, now: SigningFixture.now)
            let error = signatureFailure { try verifier.verify(status: 200, headers: [header], body: body, answering: challenge) }
            #expect(error == .requestMismatch)
        }
    }

    /// Audit #15, finding 5(c): the request digest left the port out, so a response another
    /// service on the same host signed (`:9443`, or the default `:443`) verified for a request
    /// to `:8443`. A different port is a different origin.
    @Test func signatureForAnotherPortDoesNotVerify() throws {
        let fixture = try SigningFixture()
        let verifier = try fixture.verifier()
        let challenge = try fixture.challenge()  // https://api.example.com:8443/…
        for other in ["https://api.example.com:9443/v1/orders?id=42&sort=asc", "https://api.example.com/v1/orders?id=42&sort=asc"] {
            let received = try SigningFixture.received(challenge, url: try #require(URL(string: other)))
            #expect(received.host == challenge.host && received.path == challenge.path && received.query == challenge.query)
            let header = try fixture.signer.signatureHeader(answering: received, status: 200, body: body, now: SigningFixture.now)
            let error = signatureFailure { try verifier.verify(status: 200, headers: [header], body: body, answering: challenge) }
            #expect(error == .requestMismatch, "\(other)")
        }
        let sameService = try SigningFixture.received(challenge)
        let header = try fixture.signer.signatureHeader(answering: sameService, status: 200, body: body, now: SigningFixture.now)
        try verifier.verify(status: 200, headers: [header], body: body, answering: challenge)
    }

    @Test func aServerEchoingAnotherRequestTimeIsARequestMismatch() throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let echoed = try SignatureChallenge(
            method: challenge.method, host: challenge.host, path: challenge.path, query: challenge.query, requestBody: [],
            nonce: challenge.nonce, requestTime: challenge.requestTime - 30)
        let header = try fixture.signer.signatureHeader(answering: echoed, status: 200, body: body, now: SigningFixture.now)
        let error = signatureFailure { try fixture.verifier().verify(status: 200, headers: [header], body: body, answering: challenge) }
        #expect(error == .requestMismatch)
        #expect(error?.reason.contains("request time") == true)
    }

    @Test func aVerifierNeedsARootAndSaneSettings() {
        #expect(throws: ResponseSignatureError.invalidConfiguration) { try ResponseSignatureVerifier(roots: []) }
        #expect(throws: ResponseSignatureError.invalidConfiguration) {
            try ResponseSignatureVerifier(roots: [SignedResponseRoot(try SigningKey.generate().verificationKey, version: 0)])
        }
        #expect(throws: ResponseSignatureError.invalidConfiguration) {
            try ResponseSignatureVerifier(roots: [SignedResponseRoot(try SigningKey.generate().verificationKey)], freshnessWindow: .seconds(-1))
        }
    }
}
