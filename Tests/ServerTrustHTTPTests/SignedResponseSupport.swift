import Foundation
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// The client's wall clock, which a test (or a server handler, mid-request) can move.
final class SignedResponseClock: Sendable {
    private let offset = Locked<TimeInterval>(0)
    /// When set, the clock does not advance on its own: only `move(by:)` changes it, so a test
    /// about a time boundary cannot be decided by how long the machine took to run it.
    private let frozenAt: Date?

    init(frozen: Bool = false) { frozenAt = frozen ? Date() : nil }

    func move(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }

    var read: @Sendable () -> Date { { [self] in (frozenAt ?? Date()).addingTimeInterval(offset.withLock { $0 }) } }
}

/// Every failure the session reported to `onVerificationFailure`.
final class VerificationFailureLog: Sendable {
    private let entries = Locked<[ResponseVerificationFailure]>([])

    var hook: @Sendable (ResponseVerificationFailure) -> Void { { [self] failure in entries.withLock { $0.append(failure) } } }

    var failures: [ResponseVerificationFailure] { entries.withLock { $0 } }
}

/// What a server handler does to produce a (possibly dishonest) signed response.
struct SignedReply: Sendable {
    var status = 200
    var body: [UInt8]
    var headers: [(name: String, value: String)] = []
    /// The body the signature covers; the stand-in for a proxy that rewrites the body after the
    /// server signed it. Default: the body sent.
    var signedBody: [UInt8]?
    /// Rewrites the request as the server "received" it before signing (a request altered on
    /// the way, a dropped nonce…). Default: as received.
    var receivedRequest: (@Sendable (LocalHTTPRequest) -> LocalHTTPRequest)?
    /// Rewrites the finished signature value (truncation, garbling). Default: none.
    var signatureValue: (@Sendable (String) -> String?)?
    var signer: ResponseSigner?

    init(status: Int = 200, body: String, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.body = Array(body.utf8)
        self.headers = headers
    }
}

extension SignedReply {
    /// The response a signing server sends: `reply`, plus `X-ServerTrust-Signature` when the
    /// request asked for one (as ``ResponseSigner`` decides: no nonce, no signature).
    func response(to request: LocalHTTPRequest, defaultSigner: ResponseSigner) -> LocalHTTPResponse {
        var headers = self.headers
        let seen = receivedRequest?(request) ?? request
        let etag = headers.first { $0.name.caseInsensitiveCompare("ETag") == .orderedSame }?.value
        let location = headers.first { $0.name.caseInsensitiveCompare("Location") == .orderedSame }?.value
        let path = String(seen.target.prefix { $0 != "?" })
        let query = seen.target.firstIndex(of: "?").map { String(seen.target[seen.target.index(after: $0)...]) }
        if let signature = try? (signer ?? defaultSigner).signatureHeaders(
            method: seen.method, path: path, query: query, requestHeaders: seen.headers, requestBody: seen.body, status: status,
            etag: etag, location: location, body: signedBody ?? body
        ).first {
            let value = signatureValue.map { $0(signature.value) } ?? signature.value
            if let value { headers.append((signature.name, value)) }
        }
        return LocalHTTPResponse(status: status, headers: headers, body: .bytes(body))
    }
}

extension SessionFixture {
    /// Makes the server answer every request with `reply(request)`, signed by `keys`.
    func serveSigned(_ keys: SigningKeys, _ reply: @escaping @Sendable (LocalHTTPRequest) -> SignedReply?) {
        let signer = keys.signer
        server.setHandler { request in reply(request)?.response(to: request, defaultSigner: signer) }
    }

    /// A session checking `policy` for the fixture's host, on `clock`, reporting to `log`.
    /// With `evaluators` (default none: default trust evaluation) as in ``session(_:allHostsMustBeEvaluated:configure:)``.
    func signingSession(
        _ policies: [String: SignedResponsePolicy], clock: SignedResponseClock = SignedResponseClock(), log: VerificationFailureLog = VerificationFailureLog(),
        evaluators: [String: any ServerTrustEvaluating] = [:], configure: (inout Session.Configuration) -> Void = { _ in }
    ) throws -> Session {
        var configuration = try self.configuration()
        configuration.signatureClock = clock.read
        configuration.onVerificationFailure = log.hook
        configure(&configuration)
        // One policy per pattern: the pattern's evaluator (default validation without one) and
        // its signed-response policy.
        var hostPolicies: [HostPattern: HostPolicy] = [:]
        for (pattern, evaluator) in evaluators { hostPolicies[try HostPattern(pattern)] = .custom(evaluator) }
        for (pattern, policy) in policies { hostPolicies[try HostPattern(pattern), default: HostPolicy()].signedResponses = policy }
        let manager = try ServerTrustManager(policies: hostPolicies, allHostsMustBeEvaluated: !evaluators.isEmpty)
        return try Session(configuration: configuration, trustManager: manager)
    }
}
