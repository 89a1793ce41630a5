import Foundation
import Testing
internal import CCurl
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// `SessionError.TransportFailure`: libcurl's result code read once, into the kind retries, the
/// URLSession adapter's `URLError` and the command line's hints are decided by.
@Suite struct TransportFailureTests {
    typealias Failure = SessionError.TransportFailure

    private func kind(_ code: CURLcode, _ message: String = "") -> Failure {
        Failure(curlCode: code, curlMessage: message)
    }

    // MARK: Each curl code's kind

    @Test func aNameThatDoesNotResolveIsANameResolutionFailureForTheServerAndForTheProxy() {
        #expect(kind(CURLE_COULDNT_RESOLVE_HOST) == .nameResolutionFailed)
        #expect(kind(CURLE_COULDNT_RESOLVE_PROXY) == .nameResolutionFailed)
    }

    @Test func aConnectionNobodyAcceptsIsAFailedConnection() {
        #expect(kind(CURLE_COULDNT_CONNECT, "Failed to connect to 127.0.0.1 port 1: Connection refused") == .connectionFailed)
    }

    @Test func anExpiredTimeLimitIsATimeout() {
        #expect(kind(CURLE_OPERATION_TIMEDOUT) == .timedOut)
    }

    @Test func aFailedHandshakeIsATLSHandshakeFailureNotATrustRejection() {
        #expect(kind(CURLE_SSL_CONNECT_ERROR, "OpenSSL/3.0.19: error:0A00010B:SSL routines::wrong version number") == .tlsHandshakeFailed)
    }

    /// A server refusing the client certificate under TLS 1.3 shows up on the first read, with
    /// the code of a dropped connection; the message tells them apart.
    @Test func aTLSAlertOnASendOrReceiveIsAnAlertNotAReset() {
        let alert = "OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0"
        #expect(kind(CURLE_RECV_ERROR, alert) == .tlsAlertReceived)
        #expect(kind(CURLE_SEND_ERROR, "SSL_write: sslv3 ALERT bad certificate") == .tlsAlertReceived)
    }

    @Test func aSendOrReceiveErrorWithoutAnAlertIsAReset() {
        #expect(kind(CURLE_RECV_ERROR, "Connection reset by peer") == .connectionReset)
        #expect(kind(CURLE_SEND_ERROR, "Broken pipe") == .connectionReset)
        #expect(kind(CURLE_RECV_ERROR) == .connectionReset)
    }

    @Test func aConnectionClosedWithoutAResponseIsAnEmptyReply() {
        #expect(kind(CURLE_GOT_NOTHING) == .emptyReply)
    }

    @Test func aBodyCutShortIsATruncatedResponse() {
        #expect(kind(CURLE_PARTIAL_FILE) == .responseTruncated)
    }

    @Test func libcurlsOwnPeerVerificationIsATrustRejection() {
        #expect(kind(CURLE_PEER_FAILED_VERIFICATION) == .trustRejected)
        #expect(kind(CURLE_OBSOLETE51) == .trustRejected)  // libcurl before 7.62
    }

    @Test func tlsFailuresOutsideTheHandshakeAndLibcurlsUnusedChecksAreOtherTLSFailures() {
        for code in [CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED,
                     CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS] {
            #expect(kind(code) == .tlsFailed, "curl \(code.rawValue)")
        }
    }

    @Test func http2ConnectionAndStreamFailuresAreToldApart() {
        #expect(kind(CURLE_HTTP2) == .http2ConnectionFailed)
        #expect(kind(CURLE_HTTP2_STREAM) == .http2StreamFailed)
    }

    @Test func aFailedProxyHandshakeIsAProxyFailure() {
        #expect(kind(CURLE_PROXY) == .proxyFailed)
    }

    @Test func libcurlsRedirectLimitIsTooManyRedirects() {
        #expect(kind(CURLE_TOO_MANY_REDIRECTS) == .tooManyRedirects)
    }

    @Test func aTransferStoppedByTheSessionsOwnCallbackIsAbortedByCallback() {
        #expect(kind(CURLE_WRITE_ERROR) == .abortedByCallback)
        #expect(kind(CURLE_ABORTED_BY_CALLBACK) == .abortedByCallback)
    }

    @Test func everyOtherCodeIsOther() {
        for code in [CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_BAD_CONTENT_ENCODING, CURLE_SEND_FAIL_REWIND,
                     CURLE_UNKNOWN_OPTION, CURLE_OUT_OF_MEMORY] {
            #expect(kind(code) == .other, "curl \(code.rawValue)")
        }
    }

    @Test func eachKindDescribesItselfByName() {
        #expect(Failure.nameResolutionFailed.description == "nameResolutionFailed")
        #expect(Failure.trustRejected.description == "trustRejected")
        #expect(Failure.other.description == "other")
    }

    // MARK: On the error

    @Test func anErrorGetsItsKindFromItsCurlCodeAndNoneWithoutOne() {
        #expect(SessionError(.transferFailed, "refused", curlCode: 7).transportFailure == .connectionFailed)
        #expect(SessionError(.transferFailed, "alert", curlCode: 56, curlMessage: "tlsv13 alert certificate required").transportFailure == .tlsAlertReceived)
        #expect(SessionError(.invalidRequest, "no scheme").transportFailure == nil)
        #expect(SessionError(CurlError(.createHandle)).transportFailure == nil)
    }

    @Test func anOptionCurlRefusesIsOtherWithCurlsCodeBesideIt() {
        let error = SessionError(CurlError(.setOption(CURLOPT_PROTOCOLS_STR), code: CURLE_UNSUPPORTED_PROTOCOL))
        #expect(error.code == .invalidRequest)
        #expect(error.transportFailure == .other)
        #expect(error.curlCode == Int(CURLE_UNSUPPORTED_PROTOCOL.rawValue))
    }

    // MARK: From a transfer

    /// Port 1 on loopback: nothing listens, so the connection is refused at once.
    @Test func aRefusedConnectionFailsWithConnectionFailed() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let error = try #require(await outcome { try await session.get("https://127.0.0.1:1/") }.sessionError)
        #expect(error.code == .transferFailed)
        #expect(error.transportFailure == .connectionFailed)
    }

    /// OpenSSL bounds the certificate message at 100 KiB: ten thousand names do not fit, and
    /// the client ends the handshake before any certificate reaches the trust policy.
    @Test func aHandshakeThatFailsBeforeEvaluationIsATLSHandshakeFailureNotATrustRejection() async throws {
        let root = try LabPKI.makeRoot()
        let names = (0..<9_999).map { "name\($0).servertrust.test" } + [SessionFixture.host]
        let leaf = try root.issueLeaf(dnsNames: names)
        let server = try LocalTLSServer(chain: [leaf.certificate], privateKeyPEM: leaf.key.pemPrivateKey)
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try root.trustAnchors())
        configuration.resolve = [server.resolveEntry(host: SessionFixture.host)]
        let session = try Session(configuration: configuration)
        defer { session.shutdown() }
        let error = try #require(await outcome { try await session.get("https://\(SessionFixture.host):\(server.port)/status/200") }.sessionError)
        #expect(error.code == .transferFailed)
        #expect(error.transportFailure == .tlsHandshakeFailed)
        #expect(error.trustError == nil)
    }

    @Test func aServerFromAnUntrustedRootIsATrustRejection() async throws {
        let fixture = try SessionFixture()
        let otherRoot = try LabPKI.makeRoot(commonName: "Somebody Else's Root")
        let session = try fixture.session([SessionFixture.host: DefaultTrustEvaluator()]) {
            $0.anchors = .bundle(try! otherRoot.trustAnchors())
        }
        defer { session.shutdown() }
        let error = try #require(await outcome { try await session.get(fixture.url("/").absoluteString) }.sessionError)
        #expect(error.code == .trustEvaluationFailed)
        #expect(error.transportFailure == .trustRejected)
    }

    /// Rejected in TLS 1.2's status callback, the handshake ends with libcurl's code for a
    /// failed handshake: the kind says what happened, a trust rejection.
    @Test func aTrustRejectionInTheStatusCallbackIsATrustRejectionNotAFailedHandshake() async throws {
        let fixture = try SessionFixture(minimumTLSVersion: .v1_2, maximumTLSVersion: .v1_2)
        let session = try fixture.session([SessionFixture.host: StapledOCSPDeliveryTests.StapleRecorder(requireStaple: true)])
        defer { session.shutdown() }
        let error = try #require(await outcome { try await session.get(fixture.url("/status/200").absoluteString) }.sessionError)
        #expect(error.trustError?.code == .revocationStatusUnknown)
        #expect(error.curlCode == Int(CURLE_SSL_CONNECT_ERROR.rawValue))
        #expect(error.transportFailure == .trustRejected)
    }
}
