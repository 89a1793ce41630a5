import Foundation
import HTTPTypes
import Logging
import Testing
import Synchronization
internal import CCurl
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// The pieces of `Session.RetryPolicy` that need no server: backoff, jitter, classification.
@Suite struct RetryPolicyTests {
    private let policy = Session.RetryPolicy(maximumRetries: 10, baseDelay: .milliseconds(100), maximumDelay: .milliseconds(350))

    @Test func theBackoffDoublesFromTheBaseDelayUpToTheCap() {
        var full = policy
        full.jitter = .full
        // random just below 1: the whole backoff, give or take rounding.
        let almostOne = 1 - Double.ulpOfOne
        let delays = (1...5).map { full.delay(beforeRetry: $0, random: almostOne) }
        let expected: [Duration] = [.milliseconds(100), .milliseconds(200), .milliseconds(350), .milliseconds(350), .milliseconds(350)]
        for (delay, bound) in zip(delays, expected) {
            #expect(delay <= bound && delay > bound - .microseconds(1), "\(delays)")
        }
        // Far past any power of two a Duration holds: still the cap, no overflow.
        #expect(full.delay(beforeRetry: 10_000, random: almostOne) <= .milliseconds(350))
        #expect(full.delay(beforeRetry: 10_000, random: almostOne) > .milliseconds(349))
    }

    @Test func fullJitterDrawsFromZeroToTheBackoff() {
        var full = policy
        full.jitter = .full
        #expect(full.delay(beforeRetry: 1, random: 0) == .zero)
        #expect(full.delay(beforeRetry: 1, random: 0.25) == .milliseconds(25))
        #expect(full.delay(beforeRetry: 2, random: 0.5) == .milliseconds(100))
        #expect(full.delay(beforeRetry: 3, random: 0.5) == .milliseconds(175))  // half the 350 ms cap
    }

    @Test func equalJitterNeverWaitsLessThanHalfTheBackoff() {
        var equal = policy
        equal.jitter = .equal
        #expect(equal.delay(beforeRetry: 1, random: 0) == .milliseconds(50))
        #expect(equal.delay(beforeRetry: 1, random: 0.5) == .milliseconds(75))
        #expect(equal.delay(beforeRetry: 2, random: 0) == .milliseconds(100))
        #expect(equal.delay(beforeRetry: 3, random: 0) == .milliseconds(175))
        #expect(equal.delay(beforeRetry: 3, random: 0.5) == .microseconds(262_500))
    }

    @Test func onlyConnectionLevelCurlCodesAreRetryable() {
        typealias Failures = Session.RetryPolicy.Failures
        #expect(Failures.kind(curlCode: CURLE_COULDNT_CONNECT, curlMessage: "") == .connectionRefused)
        #expect(Failures.kind(curlCode: CURLE_GOT_NOTHING, curlMessage: "") == .connectionReset)
        #expect(Failures.kind(curlCode: CURLE_RECV_ERROR, curlMessage: "Connection reset by peer") == .connectionReset)
        #expect(Failures.kind(curlCode: CURLE_SEND_ERROR, curlMessage: "Broken pipe") == .connectionReset)
        #expect(Failures.kind(curlCode: CURLE_HTTP2, curlMessage: "") == .http2StreamRefused)
        #expect(Failures.kind(curlCode: CURLE_HTTP2_STREAM, curlMessage: "") == .http2StreamRefused)
        // A server refusing our client certificate under TLS 1.3 shows up on the first read.
        let alert = "OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0"
        #expect(Failures.kind(curlCode: CURLE_RECV_ERROR, curlMessage: alert) == nil)
        for code in [CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_OPERATION_TIMEDOUT, CURLE_PARTIAL_FILE,
                     CURLE_ABORTED_BY_CALLBACK, CURLE_COULDNT_RESOLVE_HOST, CURLE_SSL_CERTPROBLEM] {
            #expect(Failures.kind(curlCode: code, curlMessage: "") == nil, "curl \(code.rawValue)")
        }
    }

    @Test func requestsAreRetryableByMethodUnlessMarked() throws {
        let url = try #require(URL(string: "https://a.test/"))
        for method in ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE", "get"] {
            #expect(Request(method: try #require(HTTPRequest.Method(method)), url: url).mayBeRetried, "\(method)")
        }
        for method in ["POST", "PATCH", "CONNECT", "PURGE"] {
            #expect(!Request(method: try #require(HTTPRequest.Method(method)), url: url).mayBeRetried, "\(method)")
        }
        #expect(Request(method: .post, url: url, isIdempotent: true).mayBeRetried)
        #expect(!Request(method: .get, url: url, isIdempotent: false).mayBeRetried)
    }

    @Test func theDefaultPolicyNeverRetries() {
        #expect(Session.Configuration().retryPolicy == .none)
        #expect(Session.RetryPolicy.none.maximumRetries == 0)
        var error = SessionError(.transferFailed, "empty reply", curlCode: 52)
        error.retryableFailure = .connectionReset
        #expect(!Session.RetryPolicy.none.retries(error, afterAttempt: 1))
        #expect(Session.RetryPolicy(maximumRetries: 1).retries(error, afterAttempt: 1))
        #expect(!Session.RetryPolicy(maximumRetries: 1).retries(error, afterAttempt: 2))
    }

    /// A failure is retryable only when it came before any response byte: after a header line,
    /// the same connection-level code means the server has answered and may have acted.
    @Test(arguments: [false, true])
    func aConnectionFailureIsRetryableOnlyBeforeTheFirstHeaderLine(headerArrived: Bool) throws {
        let policy = TrustPolicy(
            host: NormalizedHost("plain.servertrust.test"), pattern: nil, evaluator: DefaultTrustEvaluator(),
            anchors: try LabPKI.makeRoot().trustAnchors(), validationOptions: PathValidationOptions(), revocationFetcher: nil,
            counters: TrustCounters(), logger: Logger(label: "servertrust.test"))
        let result = Mutex<Result<Transfer.Outcome, SessionError>?>(nil)
        let transfer = Transfer(
            url: "http://plain.servertrust.test/", method: "GET", headers: [:], body: nil, policy: policy, isTLS: false,
            bodyLimit: nil, stream: nil, onCompletion: { outcome in result.withLock { $0 = outcome } })
        #expect(transfer.admitConnection(disableGuard: false))
        if headerArrived {
            let line = Array("HTTP/1.1 200 OK\r\n".utf8)
            #expect(line.withUnsafeBytes { transfer.receiveHeaderLine($0) })
        }
        transfer.finish(CURLE_RECV_ERROR)
        guard case .failure(let error) = try #require(result.withLock { $0 }) else {
            Issue.record("The transfer succeeded")
            return
        }
        #expect(error.code == .transferFailed)
        #expect(error.curlCode == 56)
        #expect(error.retryableFailure == (headerArrived ? nil : .connectionReset))
    }
}

extension Session.RetryPolicy.Failures {
    /// The retry kind of a transfer libcurl ended with `curlCode`: classified as the transfer
    /// does, then judged by the policy.
    static func kind(curlCode: CURLcode, curlMessage: String) -> Self? {
        kind(of: SessionError.TransportFailure(curlCode: curlCode, curlMessage: curlMessage))
    }
}
