import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

@Suite struct SignedResponseKeyTests {
    @Test func aSigningKeyRoundTripsThroughPEMAndSignsVerifiably() throws {
        let key = try SigningKey.generate()
        let pem = key.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let reloaded = try SigningKey(pem: pem)
        #expect(reloaded.verificationKey == key.verificationKey)
        let message = Array("hello".utf8)
        let signature = try reloaded.signature(for: message)
        #expect(signature.count == 64)
        #expect(key.verificationKey.isValidSignature(signature, for: message))
        #expect(!key.verificationKey.isValidSignature(signature, for: Array("hellO".utf8)))
        #expect(!key.description.contains(pem.split(separator: "\n")[1]))
    }

    @Test func aVerificationKeyParsesRawSPKIAndPEMFormsToTheSameKey() throws {
        let key = try SigningKey.generate().verificationKey
        #expect(key.base64.count == 44)
        #expect(try VerificationKey(base64: key.base64) == key)
        #expect(try VerificationKey(base64: "  \(key.base64)\n") == key)
        let spki = Data(key.subjectPublicKeyInfoDER).base64EncodedString()
        #expect(try VerificationKey(base64: spki) == key)
        #expect(try VerificationKey(base64: "-----BEGIN PUBLIC KEY-----\n\(spki)\n-----END PUBLIC KEY-----\n") == key)
        #expect(try VerificationKey(rawRepresentation: key.rawRepresentation) == key)
        #expect(key.keyID.count == 8)
    }

    /// `SigningKey` and `VerificationKey` are the v1 format's views of `SignaturePrivateKey` and
    /// `SignaturePublicKey`: one key, signed and verified through either.
    @Test func theV1KeysAreViewsOfTheSignatureKeysRFC9421Uses() throws {
        let key = try SigningKey.generate()
        #expect(key.privateKey.kind == .ed25519)
        #expect(key.verificationKey.publicKey.isSameKey(as: key.privateKey.publicKey))
        let message = Array("one key, two formats".utf8)
        let v1Signature = try key.signature(for: message)
        #expect(key.privateKey.publicKey.isValidSignature(v1Signature, for: message, algorithm: .ed25519))
        #expect(!key.privateKey.publicKey.isValidSignature(v1Signature, for: message, algorithm: .ecdsaP256SHA256Raw))
        let rfc9421Signature = try key.privateKey.signature(for: message, algorithm: .ed25519)
        #expect(key.verificationKey.isValidSignature(rfc9421Signature, for: message))
        #expect(try VerificationKey(base64: key.verificationKey.publicKey.pemRepresentation) == key.verificationKey)
    }

    /// RFC 8032 section 7.1, TEST 2: the seed, its public key and the signature of one byte.
    @Test func aSeedGivesRFC8032sKeyAndSignature() throws {
        func bytes(_ hex: String) -> [UInt8] {
            var out: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2)
                out.append(UInt8(hex[index..<next], radix: 16)!)
                index = next
            }
            return out
        }
        let key = try SigningKey(rawRepresentation: bytes("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"))
        #expect(key.verificationKey.rawRepresentation == bytes("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"))
        let expected = bytes(
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00")
        #expect(try key.signature(for: [0x72]) == expected)
        #expect(key.verificationKey.isValidSignature(expected, for: [0x72]))
    }

    @Test func keysOpenSSLMakesAreReadAndMatch() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("servertrust-ed25519-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("key.pem").path
        try runOpenSSL(["genpkey", "-algorithm", "ed25519", "-out", keyFile])
        let publicPEM = try runOpenSSL(["pkey", "-in", keyFile, "-pubout"])
        let key = try SigningKey(pem: try String(contentsOfFile: keyFile, encoding: .utf8))
        #expect(try VerificationKey(base64: publicPEM) == key.verificationKey)

        // And OpenSSL verifies what we sign (pkeyutl -rawin: pure Ed25519 over the message).
        let message = Array("ServerTrust interop".utf8)
        let messageFile = directory.appendingPathComponent("message").path
        let signatureFile = directory.appendingPathComponent("signature").path
        let publicFile = directory.appendingPathComponent("public.pem").path
        try Data(message).write(to: URL(fileURLWithPath: messageFile))
        try Data(try key.signature(for: message)).write(to: URL(fileURLWithPath: signatureFile))
        try publicPEM.write(toFile: publicFile, atomically: true, encoding: .utf8)
        let output = try runOpenSSL(["pkeyutl", "-verify", "-pubin", "-inkey", publicFile, "-rawin", "-in", messageFile, "-sigfile", signatureFile])
        #expect(output.contains("Signature Verified Successfully"))
    }

    @Test func nonEd25519AndMalformedKeysAreRefused() throws {
        #expect(throws: ResponseSignatureError.malformedKey) { try SigningKey(pem: LabKey.ecP256().pemPrivateKey) }
        #expect(throws: ResponseSignatureError.malformedKey) { try SigningKey(pem: "not a key") }
        #expect(throws: ResponseSignatureError.malformedKey) { try SigningKey(rawRepresentation: [UInt8](repeating: 1, count: 31)) }
        let p256 = Data(LabKey.ecP256().publicKey.subjectPublicKeyInfoDER).base64EncodedString()
        let error = #expect(throws: ResponseSignatureError.malformedKey) { try VerificationKey(base64: p256) }
        #expect(error?.reason.contains("EC P-256") == true)
        #expect(throws: ResponseSignatureError.malformedKey) { try VerificationKey(base64: Data(count: 31).base64EncodedString()) }
        #expect(throws: ResponseSignatureError.malformedKey) { try VerificationKey(base64: "AAAA AAAA") }
        let raw = try SigningKey.generate().verificationKey
        let trailing = Data(raw.subjectPublicKeyInfoDER + [0]).base64EncodedString()
        #expect(throws: ResponseSignatureError.malformedKey) { try VerificationKey(base64: trailing) }
    }

    @Test func anEncryptedPrivateKeyIsRefusedWithoutPrompting() throws {
        let pem = try runOpenSSL(["genpkey", "-algorithm", "ed25519", "-aes-128-cbc", "-pass", "pass:secret"])
        #expect(pem.contains("ENCRYPTED PRIVATE KEY"))
        #expect(throws: ResponseSignatureError.malformedKey) { try SigningKey(pem: pem) }
    }

    @Test func anIntermediateCertificateRoundTripsInEveryForm() throws {
        let root = try SigningKey.generate()
        let intermediate = try SigningKey.generate().verificationKey
        let expires = Date(timeIntervalSince1970: 1_900_000_000)
        let certificate = try IntermediateKeyCertificate.issue(for: intermediate, expires: expires, signedBy: root)
        #expect(certificate.encoded.count == 113)
        #expect(certificate.base64.count == 152)
        #expect(certificate.encoded[0] == 1)
        #expect(Array(certificate.encoded[1..<9]) == root.verificationKey.keyID)
        #expect(Array(certificate.encoded[9..<41]) == intermediate.rawRepresentation)
        #expect(Array(certificate.encoded[41..<49]) == [0, 0, 0, 0, 0x71, 0x3F, 0xB3, 0x00])
        #expect(certificate.expires == expires)
        #expect(try IntermediateKeyCertificate(encoded: certificate.encoded) == certificate)
        #expect(try IntermediateKeyCertificate(base64: certificate.base64) == certificate)
        #expect(try IntermediateKeyCertificate(pem: "junk\n" + certificate.pemRepresentation + "more junk") == certificate)
        #expect(certificate.isSigned(by: root.verificationKey))
        #expect(!certificate.isSigned(by: try SigningKey.generate().verificationKey))
    }

    @Test func changingAnyByteOfAnIntermediateCertificateBreaksIt() throws {
        let root = try SigningKey.generate()
        let certificate = try IntermediateKeyCertificate.issue(for: try SigningKey.generate().verificationKey, expires: Date(), signedBy: root)
        for index in certificate.encoded.indices {
            var bytes = certificate.encoded
            bytes[index] ^= 0x01
            let parsed = try? IntermediateKeyCertificate(encoded: bytes)
            #expect(parsed.map { !$0.isSigned(by: root.verificationKey) } ?? true, "byte \(index)")
        }
        #expect(throws: ResponseSignatureError.malformedIntermediateCertificate) { try IntermediateKeyCertificate(encoded: Array(certificate.encoded.dropLast())) }
        var format = certificate.encoded
        format[0] = 2
        #expect(throws: ResponseSignatureError.malformedIntermediateCertificate) { try IntermediateKeyCertificate(encoded: format) }
        var farFuture = certificate.encoded
        farFuture.replaceSubrange(41..<49, with: [UInt8](repeating: 0xFF, count: 8))
        #expect(throws: ResponseSignatureError.malformedIntermediateCertificate) { try IntermediateKeyCertificate(encoded: farFuture) }
    }

    @Test func aSignerRefusesAKeyItsCertificateDoesNotCertifyAndLoadsTheIssuedFile() throws {
        let root = try SigningKey.generate()
        let intermediate = try SigningKey.generate()
        let certificate = try IntermediateKeyCertificate.issue(for: intermediate.verificationKey, expires: Date().addingTimeInterval(3600), signedBy: root)
        #expect(throws: ResponseSignatureError.keyMismatch) { try ResponseSigner(key: try SigningKey.generate(), certificate: certificate) }
        #expect(throws: ResponseSignatureError.invalidConfiguration) { try ResponseSigner(key: intermediate, certificate: certificate, version: 0) }
        let signer = try ResponseSigner(pem: intermediate.pemRepresentation + certificate.pemRepresentation)
        #expect(signer.certificate == certificate)
        #expect(signer.version == 1)
    }

    @Test func aSignerRefusesToSignWithAnExpiredIntermediate() throws {
        let fixture = try SigningFixture(expires: SigningFixture.now)
        let challenge = try SigningFixture.received(try fixture.challenge())
        #expect(throws: ResponseSignatureError.intermediateExpired) {
            try fixture.signer.signatureHeader(answering: challenge, status: 200, body: [], now: SigningFixture.now)
        }
    }

    @Test func aServerRefusesToSignARequestThatDidNotAskOrAskedBadly() throws {
        let signer = try SigningFixture().signer
        func sign(_ headers: [(name: String, value: String)]) throws(ResponseSignatureError) {
            _ = try signer.signatureHeaders(method: "GET", path: "/", query: nil, requestHeaders: [("Host", "api.example.com")] + headers, status: 200, body: [], now: SigningFixture.now)
        }
        let nonce = Data(repeating: 7, count: 32).base64EncodedString()
        #expect(throws: ResponseSignatureError.missingChallenge) { try sign([]) }
        #expect(throws: ResponseSignatureError.missingChallenge) { try sign([(SignedResponseHeader.nonce, nonce)]) }
        #expect(throws: ResponseSignatureError.malformedChallenge) {
            try sign([(SignedResponseHeader.nonce, Data(count: 8).base64EncodedString()), (SignedResponseHeader.requestTime, "1900000000")])
        }
        #expect(throws: ResponseSignatureError.malformedChallenge) { try sign([(SignedResponseHeader.nonce, "%%%"), (SignedResponseHeader.requestTime, "1900000000")]) }
        #expect(throws: ResponseSignatureError.malformedChallenge) { try sign([(SignedResponseHeader.nonce, nonce), (SignedResponseHeader.requestTime, "-5")]) }
        #expect(throws: ResponseSignatureError.malformedChallenge) { try sign([(SignedResponseHeader.nonce, nonce), (SignedResponseHeader.requestTime, "99999999999999")]) }
        #expect(throws: ResponseSignatureError.malformedChallenge) {
            try sign([(SignedResponseHeader.nonce, nonce), (SignedResponseHeader.nonce, nonce), (SignedResponseHeader.requestTime, "1900000000")])
        }
        try sign([(SignedResponseHeader.nonce, nonce), (SignedResponseHeader.requestTime, "1900000000")])
    }

    @Test func aHEADResponseIsSignedOverAnEmptyBody() throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge(method: "HEAD")
        let headers = try fixture.signedHeaders(for: challenge, body: Array("the GET body".utf8))
        try fixture.verifier().verify(status: 200, headers: headers, body: [], answering: challenge)
    }

    @Test func aServerBehindAProxyThatRewritesHostSignsThePublicName() throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let received = try SignatureChallenge(
            receivedMethod: "GET", target: "/v1/orders?id=42&sort=asc", headers: challenge.requestHeaders + [("Host", "backend-7.internal:8080")], body: [],
            host: "API.example.com:8443")
        let header = try fixture.signer.signatureHeader(answering: received, status: 200, body: [], now: SigningFixture.now)
        try fixture.verifier().verify(status: 200, headers: [header], body: [], answering: challenge)
    }

    @Test(arguments: [
        ("", "/"), ("/", "/"), ("/a/b", "/a/b"), ("/a/./b", "/a/b"), ("/a/../b", "/b"), ("/a/b/..", "/a/"), ("/..", "/"),
        ("/a/b/c/./../../g", "/a/g"), ("/a//b", "/a//b"), ("/%2e%2e/x", "/%2e%2e/x"), ("/a/.", "/a/"),
    ])
    func pathsAreCanonicalisedAsLibcurlSendsThem(path: String, expected: String) throws {
        let challenge = try SignatureChallenge(method: "GET", url: try #require(URL(string: "https://h.example" + path)))
        #expect(challenge.path == expected)
    }

    /// Audit #15, finding 5(c): the server normalised the path it received, so dot-segments
    /// inserted on the way (`/v1/x/../orders`, which a router may not resolve as `/v1/orders`)
    /// still signed as the path the client sent. The server now signs the bytes it received.
    @Test(arguments: ["/v1/x/../orders", "/v1/./orders", "/v1/orders/."])
    func aServerSignsThePathItReceivedNotANormalisedOne(received path: String) throws {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        let received = try SignatureChallenge(
            receivedMethod: "GET", target: path + "?id=42&sort=asc", headers: challenge.requestHeaders + [("Host", "api.example.com:8443")], body: [])
        #expect(received.path == path)
        let header = try fixture.signer.signatureHeader(answering: received, status: 200, body: [], now: SigningFixture.now)
        let error = signatureFailure { try fixture.verifier().verify(status: 200, headers: [header], body: [], answering: challenge) }
        #expect(error == .requestMismatch)
    }

    /// Audit #15, finding 5(c): the port is the effective one — explicit, or the scheme's
    /// default — on both sides, so `https://h/` and `https://h:443/` sign alike.
    @Test func thePortSignedIsTheEffectivePort() throws {
        let nonce = [UInt8](repeating: 1, count: 16)
        let headers = [(SignedResponseHeader.nonce, StrictBase64Probe.encode(nonce)), (SignedResponseHeader.requestTime, "0")]
        for (host, port) in [("api.example.com", 443), ("api.example.com:", 443), ("api.example.com:8443", 8443), ("[2001:db8::1]", 443), ("[2001:db8::1]:8443", 8443), ("127.0.0.1:80", 80)] {
            let received = try SignatureChallenge(receivedMethod: "GET", target: "/", headers: headers + [("Host", host)], body: [])
            #expect(received.port == port, "\(host)")
        }
        for (url, port) in [("https://h.example/x", 443), ("https://h.example:443/x", 443), ("HTTPS://h.example:8443/x", 8443), ("http://h.example/x", 80), ("http://[::1]:8080/x", 8080)] {
            #expect(try SignatureChallenge(method: "GET", url: try #require(URL(string: url))).port == port, "\(url)")
        }
        let explicit = try SignatureChallenge(method: "GET", url: try #require(URL(string: "https://h.example:443/x")))
        let implicit = try SignatureChallenge(
            method: "GET", host: "h.example", path: "/x", query: "", requestBody: [], nonce: explicit.nonce, requestTime: explicit.requestTime)
        #expect(explicit.requestDigest == implicit.requestDigest)
        for bad in ["h.example:0", "h.example:65536", "h.example:44x", "h.example:0443", "[::1]x", ":443"] {
            #expect(throws: ResponseSignatureError.malformedChallenge, "\(bad)") {
                try SignatureChallenge(receivedMethod: "GET", target: "/", headers: headers + [("Host", bad)], body: [])
            }
        }
        #expect(throws: ResponseSignatureError.malformedChallenge) { try SignatureChallenge(method: "GET", url: URL(string: "ftp://h.example/x")!) }
    }

    @Test func hostsAreComparedWithoutPortCaseOrBrackets() throws {
        let nonce = [UInt8](repeating: 1, count: 16)
        let headers = [(SignedResponseHeader.nonce, StrictBase64Probe.encode(nonce)), (SignedResponseHeader.requestTime, "0")]
        for (host, expected) in [("API.Example.com:443", "api.example.com"), ("[2001:DB8::1]:8443", "2001:db8::1"), ("127.0.0.1:80", "127.0.0.1"), ("example.com.", "example.com")] {
            let received = try SignatureChallenge(receivedMethod: "GET", target: "/", headers: headers + [("Host", host)], body: [])
            #expect(received.host == expected)
        }
        let url = try SignatureChallenge(method: "GET", url: URL(string: "https://[2001:db8::1]:8443/x")!)
        #expect(url.host == "2001:db8::1")
    }
}

/// Base64 through Foundation, to check the library's own encoder from outside.
enum StrictBase64Probe {
    static func encode(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}

@discardableResult
private func runOpenSSL(_ arguments: [String]) throws -> String {
    let run = try ChildProcess.run("/usr/bin/openssl", arguments)
    guard run.status == 0 else { throw CocoaError(.executableLoad) }
    return run.outputText
}
