#if HummingbirdSigning
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ServerTrust
import ServerTrustHTTP
import ServerTrustHummingbird
import ServerTrustTestSupport
import Testing

/// `ResponseSigningMiddleware` on a live Hummingbird server on loopback, checked by a real
/// `Session` with a signed-response policy: what it signs verifies, what is changed after it
/// signed does not, and its failures never produce a response that looks signed.
@Suite struct ResponseSigningMiddlewareTests {
    static let balance = #"{"balance":"100.00"}"#

    /// Replaces the body after the signing middleware ran: an outer middleware, standing in for
    /// anything between the signer and the client.
    struct BodyRewritingMiddleware<Context: RequestContext>: RouterMiddleware {
        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            var response = try await next(request, context)
            response.body = ResponseBody(byteBuffer: ByteBuffer(string: #"{"balance":"999999.00"}"#))
            return response
        }
    }

    static func router(signer: ResponseSigner, rewriting: Bool = false, maximumResponseBodySize: Int = 16 << 20) -> Router<BasicRequestContext> {
        router(ResponseSigningMiddleware(signer: signer, maximumRequestBodySize: 64, maximumResponseBodySize: maximumResponseBodySize), rewriting: rewriting)
    }

    static func router(_ signing: ResponseSigningMiddleware<BasicRequestContext>, rewriting: Bool = false) -> Router<BasicRequestContext> {
        let router = Router()
        if rewriting { router.add(middleware: BodyRewritingMiddleware()) }
        router.add(middleware: signing)
        router.get("/v1/balance") { _, _ in
            Response(status: .ok, headers: [.eTag: "\"b7\"", .contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: balance)))
        }
        router.post("/v1/echo") { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 64)
            return Response(status: .created, body: ResponseBody(byteBuffer: body))
        }
        router.get("/v1/stream") { _, _ in
            let parts = AsyncStream<ByteBuffer> { continuation in
                for part in ["one ", "two ", "three"] { continuation.yield(ByteBuffer(string: part)) }
                continuation.finish()
            }
            return Response(status: .ok, body: ResponseBody(asyncSequence: parts))
        }
        router.get("/v1/moved") { _, _ in
            Response(status: .found, headers: [.location: "/v1/balance"])
        }
        router.get("/v1/refuse") { _, _ -> Response in
            throw HTTPError(.forbidden, message: "no access to this account")
        }
        router.get("/v1/large") { _, _ in
            Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(repeating: UInt8(ascii: "x"), count: 4096)))
        }
        return router
    }

    static func application(_ router: Router<BasicRequestContext>) -> some ApplicationProtocol {
        Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    static func session(_ policy: SignedResponsePolicy, failures: FailureLog = FailureLog()) throws -> Session {
        var configuration = Session.Configuration()
        configuration.allowsPlainHTTP = true
        configuration.redirectPolicy = .disallow
        configuration.onVerificationFailure = failures.hook
        let manager = try ServerTrustManager(
            policies: [try HostPattern("127.0.0.1"): HostPolicy(signedResponses: policy)], allHostsMustBeEvaluated: false)
        return try Session(configuration: configuration, trustManager: manager)
    }

    final class FailureLog: Sendable {
        private let entries = Locked<[ResponseVerificationFailure]>([])
        var hook: @Sendable (ResponseVerificationFailure) -> Void { { [self] failure in entries.withLock { $0.append(failure) } } }
        var codes: [ResponseSignatureError.Code] { entries.withLock { $0.map(\.error.code) } }
    }

    static func sessionError(_ body: () async throws -> ServerTrustHTTP.Response) async -> SessionError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? SessionError
        }
    }

    // MARK: What the middleware signs verifies

    @Test func getPostStreamedRedirectAndErrorResponsesVerifyInEnforcedMode() async throws {
        let keys = try SigningKeys()
        try await Self.application(Self.router(signer: keys.signer)).test(.live) { client in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            let session = try Self.session(.enforced(roots: keys.roots))
            defer { session.shutdown() }

            let balance = try await session.get(base + "/v1/balance?account=7&currency=EUR")
            #expect(balance.status == 200)
            #expect(balance.verification == .verified)
            #expect(balance.text == Self.balance)
            #expect(balance.header("ETag") == "\"b7\"")
            #expect(balance.header(SignedResponseHeader.signature)?.hasPrefix("v1;") == true)

            // The signature covers the request body too: the route still reads it.
            let echo = try await session.post(base + "/v1/echo", body: Array("amount=5".utf8))
            #expect(echo.status == 201)
            #expect(echo.verification == .verified)
            #expect(echo.text == "amount=5")

            // A streamed body is collected, signed and sent whole.
            let stream = try await session.get(base + "/v1/stream")
            #expect(stream.verification == .verified)
            #expect(stream.text == "one two three")

            // A redirect's Location is signed: the client may trust where it is sent.
            let moved = try await session.get(base + "/v1/moved")
            #expect(moved.status == 302)
            #expect(moved.verification == .verified)

            // Errors are signed too: a route's thrown HTTPError and the router's own 404.
            let refused = try await session.get(base + "/v1/refuse")
            #expect(refused.status == 403)
            #expect(refused.verification == .verified)
            let missing = try await session.get(base + "/v1/no-such-route")
            #expect(missing.status == 404)
            #expect(missing.verification == .verified)
        }
    }

    @Test func aRequestThatDidNotAskForASignatureIsPassedThroughUnsigned() async throws {
        let keys = try SigningKeys()
        try await Self.application(Self.router(signer: keys.signer)).test(.live) { client in
            let response = try await client.execute(uri: "/v1/balance", method: .get)
            #expect(response.status == .ok)
            #expect(String(buffer: response.body) == Self.balance)
            #expect(response.headers[HTTPField.Name(SignedResponseHeader.signature)!] == nil)
        }
    }

    // MARK: RFC 9421

    static func messageSigner() throws -> (signer: MessageSignatureSigner, keys: SigningKeySet) {
        let key = try SignaturePrivateKey.generate(.ed25519)
        return (try MessageSignatureSigner(key: key, keyID: "hb-1"), SigningKeySet(keys: ["hb-1": key.publicKey]))
    }

    @Test func rfc9421ResponsesVerifyAndABodyRewrittenAfterSigningIsRefused() async throws {
        let (signer, keys) = try Self.messageSigner()
        try await Self.application(Self.router(ResponseSigningMiddleware(messageSigner: signer))).test(.live) { client in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            let session = try Self.session(.enforced(keys: keys))
            defer { session.shutdown() }
            let balance = try await session.get(base + "/v1/balance?account=7&currency=EUR")
            #expect(balance.verification == .verified)
            #expect(balance.text == Self.balance)
            #expect(balance.header("Signature-Input")?.contains(#""@status""#) == true)
            #expect(balance.header("Content-Digest")?.hasPrefix("sha-256=:") == true)
            #expect(balance.header(SignedResponseHeader.signature) == nil)
            for path in ["/v1/stream", "/v1/moved", "/v1/refuse", "/v1/no-such-route"] {
                let response = try await session.get(base + path)
                #expect(response.verification == .verified, "\(path)")
            }
            let echo = try await session.post(base + "/v1/echo", body: Array("amount=5".utf8))
            #expect(echo.verification == .verified)
            #expect(echo.text == "amount=5")
        }
        try await Self.application(Self.router(ResponseSigningMiddleware(messageSigner: signer), rewriting: true)).test(.live) { client in
            let session = try Self.session(.enforced(keys: keys))
            defer { session.shutdown() }
            let error = await Self.sessionError { try await session.get("http://127.0.0.1:\(try #require(client.port))/v1/balance") }
            #expect(error?.signatureError?.code == .bodyMismatch)
        }
    }

    /// The client binds its body with Content-Digest; a body that no longer matches it (altered
    /// on the way) is refused with 400, never signed for.
    @Test func aRequestBodyThatDoesNotMatchItsContentDigestIsRefusedNotSigned() async throws {
        let (signer, _) = try Self.messageSigner()
        try await Self.application(Self.router(ResponseSigningMiddleware(messageSigner: signer))).test(.live) { client in
            let sent = ContentDigest.fieldValue(of: Array("amount=5".utf8))
            let headers: HTTPFields = [
                HTTPField.Name("Accept-Signature")!: #"sig=("@status" "content-digest";req);nonce="AAAAAAAAAAAAAAAAAAAAAA""#,
                HTTPField.Name("Content-Digest")!: sent,
            ]
            let altered = try await client.execute(uri: "/v1/echo", method: .post, headers: headers, body: ByteBuffer(string: "amount=500"))
            #expect(altered.status == .badRequest)
            #expect(altered.headers[HTTPField.Name("Signature")!] == nil)
            let genuine = try await client.execute(uri: "/v1/echo", method: .post, headers: headers, body: ByteBuffer(string: "amount=5"))
            #expect(genuine.status == .created)
            #expect(genuine.headers[HTTPField.Name("Signature-Input")!]?.contains(#""content-digest";req"#) == true)
        }
    }

    /// A migration: the middleware holds both signers and answers each client in its scheme;
    /// a client on scheme `either` accepts the RFC 9421 signature.
    @Test func duringAMigrationEachClientGetsTheSchemeItAsksFor() async throws {
        let (signer, keys) = try Self.messageSigner()
        let v1 = try SigningKeys()
        try await Self.application(Self.router(ResponseSigningMiddleware(messageSigner: signer, signer: v1.signer))).test(.live) { client in
            let url = "http://127.0.0.1:\(try #require(client.port))/v1/balance"
            let policies: [SignedResponsePolicy] = [
                .enforced(roots: v1.roots), .enforced(keys: keys),
                SignedResponsePolicy(migrating: .enforced, roots: v1.roots, messageSignatures: MessageSignaturePolicy(keys: keys)),
            ]
            for policy in policies {
                let session = try Self.session(policy)
                defer { session.shutdown() }
                let response = try await session.get(url)
                #expect(response.verification == .verified, "\(policy.scheme)")
                #expect((response.header("Signature-Input") != nil) == (policy.scheme != .v1), "\(policy.scheme)")
                #expect((response.header(SignedResponseHeader.signature) != nil) == (policy.scheme != .rfc9421), "\(policy.scheme)")
            }
        }
    }

    // MARK: What is changed after it signed does not

    @Test func aBodyRewrittenAfterSigningIsRejectedWhenEnforcedAndMarkedFailedWhenInformational() async throws {
        let keys = try SigningKeys()
        try await Self.application(Self.router(signer: keys.signer, rewriting: true)).test(.live) { client in
            let url = "http://127.0.0.1:\(try #require(client.port))/v1/balance"
            let enforcedFailures = FailureLog()
            let enforced = try Self.session(.enforced(roots: keys.roots), failures: enforcedFailures)
            defer { enforced.shutdown() }
            let error = await Self.sessionError { try await enforced.get(url) }
            #expect(error?.code == .responseSignatureInvalid)
            #expect(error?.signatureError?.code == .bodyMismatch)
            #expect(enforcedFailures.codes == [.bodyMismatch])

            let informational = try Self.session(.informational(roots: keys.roots))
            defer { informational.shutdown() }
            let marked = try await informational.get(url)
            #expect(marked.verification == .failed(.bodyMismatch))
            #expect(marked.text == #"{"balance":"999999.00"}"#)
        }
    }

    @Test func aSignatureFromAnotherRootIsRejected() async throws {
        let keys = try SigningKeys(), other = try SigningKeys()
        try await Self.application(Self.router(signer: keys.signer)).test(.live) { client in
            let session = try Self.session(.enforced(roots: other.roots))
            defer { session.shutdown() }
            let error = await Self.sessionError { try await session.get("http://127.0.0.1:\(try #require(client.port))/v1/balance") }
            #expect(error?.code == .responseSignatureInvalid)
            #expect(error?.signatureError?.code == .untrustedIntermediate)
        }
    }

    // MARK: Failures never look signed

    @Test func anExpiredIntermediateSendsTheResponseUnsignedWhichEnforcedClientsReject() async throws {
        let keys = try SigningKeys(expires: Date().addingTimeInterval(-60))
        try await Self.application(Self.router(signer: keys.signer)).test(.live) { client in
            let session = try Self.session(.enforced(roots: keys.roots))
            defer { session.shutdown() }
            let error = await Self.sessionError { try await session.get("http://127.0.0.1:\(try #require(client.port))/v1/balance") }
            #expect(error?.code == .responseSignatureInvalid)
            #expect(error?.signatureError?.code == .missingSignature)
        }
    }

    @Test func bodiesOverTheLimitsAreRefusedNotSentUnsigned() async throws {
        let keys = try SigningKeys()
        try await Self.application(Self.router(signer: keys.signer, maximumResponseBodySize: 1024)).test(.live) { client in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            let session = try Self.session(.informational(roots: keys.roots))
            defer { session.shutdown() }
            // 4 KiB response, 1 KiB limit: a 500, not a truncated or unsigned copy.
            let large = try await session.get(base + "/v1/large")
            #expect(large.status == 500)
            #expect(large.header(SignedResponseHeader.signature) == nil)
            #expect(large.verification == .failed(.missingSignature))
            // 100-byte request body, 64-byte limit: Hummingbird's 413.
            let big = try await session.post(base + "/v1/echo", body: Array(repeating: UInt8(ascii: "y"), count: 100))
            #expect(big.status == 413)
            #expect(big.verification == .failed(.missingSignature))
            // The same routes within the limits still verify.
            #expect(try await session.get(base + "/v1/balance").verification == .verified)
        }
    }
}
#endif
