import Foundation
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport
import Testing

/// RFC 9421 against a real peer, both ways: the Python package `http-message-signatures`
/// (3.0.0, pinned in scripts/setup.sh) signs responses in `Fixtures/rfc9421_peer.py serve`, a
/// TLS server on loopback, and `Session` verifies them; `MessageSignatureSigner` signs and the
/// Python library verifies (`rfc9421_peer.py verify`). The server reads the client's nonce and
/// components from `Accept-Signature` itself (the library does not parse it). Every attack the
/// peer can stage is refused with its own reason.
@Suite(.serialized) struct RFC9421InteropTests {
    static let host = "api.servertrust.test"
    static let python = PackageFiles.python
    static let peer = PackageFiles.path("Tests/ServerTrustHTTPTests/Fixtures/rfc9421_peer.py")

    /// A PKI for the peer's TLS, a signing key of `kind` and the peer serving with both.
    final class Peer: Sendable {
        let root: LabCA
        let server: ServerProcess
        let port: Int
        let keys: SigningKeySet
        let keyID = "peer-2026-11"

        init(_ kind: SignaturePublicKey.Kind) throws {
            root = try LabPKI.makeRoot(commonName: "RFC 9421 Interop Root")
            let leaf = try root.issueLeaf(dnsNames: [RFC9421InteropTests.host], ipAddresses: ["127.0.0.1"])
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rfc9421-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let signingKey = try SignaturePrivateKey.generate(kind)
            let files = [
                "cert.pem": leaf.pemChain, "key.pem": leaf.key.pemPrivateKey, "signing.pem": signingKey.pemRepresentation,
            ]
            for (name, text) in files { try Data(text.utf8).write(to: directory.appendingPathComponent(name)) }
            let algorithm = MessageSignaturePolicy.algorithmName(for: kind)
            server = try ServerProcess(RFC9421InteropTests.python, [
                "-u", RFC9421InteropTests.peer, "serve", "--cert", directory.appendingPathComponent("cert.pem").path,
                "--key", directory.appendingPathComponent("key.pem").path, "--signing-key", directory.appendingPathComponent("signing.pem").path,
                "--keyid", keyID, "--alg", algorithm,
            ])
            guard server.firstLine.hasPrefix("PORT "), let port = Int(server.firstLine.dropFirst(5)) else {
                throw ChildProcess.SpawnError(description: "the peer said \(server.firstLine)")
            }
            self.port = port
            keys = try SigningKeySet(jwks: Array(SigningKeySet.jwksDocument([(keyID, signingKey.publicKey)]).utf8))
        }

        func session(_ policy: SignedResponsePolicy, configure: (inout Session.Configuration) -> Void = { _ in }) throws -> Session {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try root.trustAnchors())
            configuration.resolve = ["\(RFC9421InteropTests.host):\(port):127.0.0.1"]
            configuration.requestTimeout = .seconds(300)
            configure(&configuration)
            return try Session(
                configuration: configuration,
                trustManager: ServerTrustManager(policies: [try HostPattern(RFC9421InteropTests.host): HostPolicy(signedResponses: policy)]))
        }

        func url(_ path: String) -> URL { URL(string: "https://\(RFC9421InteropTests.host):\(port)\(path)")! }
    }

    @Test("Responses the Python library signs verify, with each algorithm", arguments: [SignaturePublicKey.Kind.ed25519, .ecdsaP256, .rsa])
    func pythonSignedResponsesVerify(_ kind: SignaturePublicKey.Kind) async throws {
        let peer = try Peer(kind)
        let session = try peer.session(.enforced(keys: peer.keys))
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: peer.url("/s/ok?account=7&x=%20y")))
        #expect(response.verification == .verified)
        #expect(response.text == #"{"ok":true,"path":"/s/ok"}"#)
        // A request body is bound by the client's Content-Digest, covered as "content-digest";req.
        let posted = try await session.data(for: Request(method: .post, url: peer.url("/s/ok?kind=receipt"), body: Array("receipt=42".utf8)))
        #expect(posted.verification == .verified)
        // Two signatures, one of them for another nonce: the one carrying ours is chosen.
        let two = try await session.data(for: Request(url: peer.url("/s/two-signatures")))
        #expect(two.verification == .verified)
        // A signed redirect: each hop verified under its own Accept-Signature.
        let redirected = try await session.data(for: Request(url: peer.url("/s/redirect")))
        #expect(redirected.verification == .verified)
        #expect(redirected.url.path == "/s/ok")
        #expect(redirected.hopVerifications == [.verified, .verified])
    }

    /// The third review's decoding rule, RFC 9421 side: the signature covers Content-Encoding,
    /// so the session decodes gzip only after verifying the bytes as received.
    @Test func aCoveredContentEncodingIsDecodedAfterVerification() async throws {
        let peer = try Peer(.ed25519)
        let session = try peer.session(.enforced(keys: peer.keys)) { $0.contentDecoding = [.gzip] }
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: peer.url("/s/gzip")))
        #expect(response.verification == .verified)
        #expect(response.decodedContentEncodings == [.gzip])
        #expect(response.text == #"{"ok":true,"path":"/s/gzip"}"#)
    }

    static let attacks: [(scenario: String, code: ResponseSignatureError.Code)] = [
        ("tamper-body", .bodyMismatch),
        ("tamper-body-and-digest", .badSignature),
        ("tamper-status", .badSignature),
        ("tamper-content-type", .badSignature),
        ("add-content-encoding", .missingComponent),
        ("strip-content-encoding", .absentComponent),
        ("drop-component", .missingComponent),
        ("other-nonce", .nonceMismatch),
        ("other-method", .badSignature),
        ("other-path", .badSignature),
        ("other-authority", .badSignature),
        ("expired", .expiredSignature),
        ("future", .notYetValidSignature),
        ("unknown-keyid", .unknownKey),
        ("alg-mismatch", .algorithmMismatch),
        ("duplicate-label", .malformedSignature),
        ("oversized", .malformedSignature),
        ("unsigned", .missingSignature),
    ]

    @Test func everyAttackIsRefusedWithItsReasonAndNothingOfItsBodyIsReturned() async throws {
        let peer = try Peer(.ed25519)
        let log = VerificationFailureLog()
        let session = try peer.session(.enforced(keys: peer.keys)) { configuration in
            configuration.onVerificationFailure = log.hook
            configuration.contentDecoding = [.gzip]
        }
        defer { session.shutdown() }
        for (scenario, code) in Self.attacks {
            let result = await outcome { try await session.data(for: Request(url: peer.url("/s/\(scenario)"))) }
            #expect(result.sessionError?.code == .responseSignatureInvalid, "\(scenario)")
            #expect(result.sessionError?.signatureError?.code == code, "\(scenario): \(result)")
        }
        #expect(log.failures.count == Self.attacks.count)
        #expect(log.failures.allSatisfy { $0.mode == .enforced })
    }

    @Test func informationalModeReturnsTheResponseMarkedFailed() async throws {
        let peer = try Peer(.ed25519)
        let session = try peer.session(.informational(keys: peer.keys))
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: peer.url("/s/tamper-body")))
        guard case .failed(let error) = response.verification else {
            Issue.record("not failed: \(response.verification)")
            return
        }
        #expect(error.code == .bodyMismatch)
        #expect(error.status == 200)
    }

    /// The other way: our signer's responses, checked by the Python library (which also
    /// requires a signed Content-Digest matching the body); a tampered copy fails there.
    @Test("Responses MessageSignatureSigner signs verify with the Python library", arguments: [SignaturePublicKey.Kind.ed25519, .ecdsaP256, .rsa])
    func ourSignaturesVerifyInPython(_ kind: SignaturePublicKey.Kind) throws {
        let key = try SignaturePrivateKey.generate(kind)
        let signer = try MessageSignatureSigner(key: key, keyID: "ours-1")
        let nonce = "q9x2PZkV3n0h8rWcJYb1Lw"
        let accept = #"sig1=("@status" "content-digest" "content-type" "@method";req "@authority";req "@path";req "@query";req);nonce="\#(nonce)""#
        let request = MessageSignatureRequest(
            method: "POST", scheme: "https", host: "api.example.com", path: "/v1/receipts", query: "id=42",
            headers: [("Host", "api.example.com"), ("Accept-Signature", accept)])
        let body = Array(#"{"valid":true}"#.utf8)
        let headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        let fields = try signer.signatureFields(status: 200, headers: headers, body: body, request: request)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rfc9421-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let publicPEM = directory.appendingPathComponent("public.pem")
        try Data(key.publicKey.pemRepresentation.utf8).write(to: publicPEM)

        func verify(status: Int, body: [UInt8]) throws -> ChildProcess.Result {
            let message: [String: Any] = [
                "request": ["method": "POST", "url": "https://api.example.com/v1/receipts?id=42", "headers": request.headers.map { [$0.name, $0.value] }],
                "response": ["status": status, "headers": (headers + fields).map { [$0.name, $0.value] }, "body_base64": Data(body).base64EncodedString()],
            ]
            let file = directory.appendingPathComponent("message-\(UUID().uuidString).json")
            try JSONSerialization.data(withJSONObject: message).write(to: file)
            return try ChildProcess.run(Self.python, [
                Self.peer, "verify", "--public-key", publicPEM.path, "--keyid", "ours-1", "--alg", signer.algorithm, "--message", file.path,
                "--nonce", nonce, "--required", "@status", "--required", #""@path";req"#, "--required", "content-digest",
            ])
        }
        let good = try verify(status: 200, body: body)
        #expect(good.status == 0, "\(good.outputText) \(good.errorText)")
        #expect(good.outputText.hasPrefix("verified sig1 "))
        let tamperedStatus = try verify(status: 201, body: body)
        #expect(tamperedStatus.status == 1 && tamperedStatus.outputText.hasPrefix("failed:"), "\(tamperedStatus.outputText)")
        let tamperedBody = try verify(status: 200, body: Array(#"{"valid":false}"#.utf8))
        #expect(tamperedBody.status == 1 && tamperedBody.outputText.hasPrefix("failed:"), "\(tamperedBody.outputText)")
    }
}
