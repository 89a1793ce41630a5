#if URLSessionAdapter
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServerTrust
import ServerTrustHTTP
import ServerTrustTestSupport
import ServerTrustURLSession
import Synchronization

/// The genuine nginx, an impostor for its host name with a certificate from a CA the session
/// trusts, and a second, genuine lab server (`redirector`) that redirects wherever it is told.
///
/// The session anchors the nginx root, the impostor's CA and the redirector's; pins name
/// nginx's intermediate for the nginx host, so only the pin rejects the impostor.
struct URLSessionFixture {
    static let redirectorHost = "redirector.servertrust.test"

    let nginx: NginxInterop.Environment
    let impostor: LocalTLSServer
    let redirector: LocalTLSServer
    let redirectorRoot: LabCA
    let session: Session

    init(redirectorHandler: LocalHTTPHandler? = nil, signedResponses: [String: SignedResponsePolicy] = [:]) throws {
        nginx = try NginxInterop.environment()
        let impostorPKI = try GenuineAndImpostor.Impostor(host: nginx.host)
        impostor = try LocalTLSServer(chain: impostorPKI.leaf.chain, privateKeyPEM: impostorPKI.leaf.key.pemPrivateKey)
        redirectorRoot = try LabPKI.makeRoot(commonName: "Redirector Root")
        let redirectorLeaf = try redirectorRoot.issueLeaf(dnsNames: [Self.redirectorHost])
        redirector = try LocalTLSServer(chain: redirectorLeaf.chain, privateKeyPEM: redirectorLeaf.key.pemPrivateKey, handler: redirectorHandler)

        var configuration = Session.Configuration()
        let nginxRoot = try Certificate.certificates(pemBundle: String(contentsOfFile: nginx.root, encoding: .utf8))
        configuration.anchors = .bundle(try TrustAnchors(nginxRoot + [impostorPKI.root.certificate, redirectorRoot.certificate]))
        configuration.resolve = nginx.resolve + [impostor.resolveEntry(host: nginx.host), redirector.resolveEntry(host: Self.redirectorHost)]
        var policies: [HostPattern: HostPolicy] = [
            try HostPattern(nginx.host): .custom(try PinnedKeyHashesTrustEvaluator([nginx.intermediatePin])),
            try HostPattern(Self.redirectorHost): .custom(try PinnedKeyHashesTrustEvaluator(pins: [redirectorRoot.certificate.spkiPin])),
        ]
        for (pattern, policy) in signedResponses { policies[try HostPattern(pattern), default: HostPolicy()].signedResponses = policy }
        session = try Session(configuration: configuration, trustManager: try ServerTrustManager(policies: policies))
    }

    /// The genuine nginx server (TLS 1.3, HTTP/2).
    var genuineURL: URL { URL(string: nginx.url("TLS13_ECDSA_H2_STAPLED"))! }
    var genuineBody: String { "interop \(nginx.port("TLS13_ECDSA_H2_STAPLED"))\n" }
    /// The impostor, under the nginx host name.
    var impostorURL: URL { URL(string: impostor.url("/status/200", host: nginx.host))! }

    func redirectorURL(_ path: String) -> URL { URL(string: redirector.url(path, host: Self.redirectorHost))! }

    /// A redirector URL answering `302` to `target`.
    func redirect(to target: URL) -> URL {
        redirectorURL("/redirect/302?to=" + target.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
    }

    /// A URLSession whose requests go through ``session``.
    func urlSession(delegate: (any URLSessionDelegate)? = nil) -> URLSession {
        URLSession(configuration: .serverTrust(session: session), delegate: delegate, delegateQueue: nil)
    }

    func stop() {
        session.shutdown()
        impostor.stop()
        redirector.stop()
    }
}

/// A data delegate that records what URLSession tells it, and waits for the task's end.
final class RecordingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: every field is behind the mutex.
    struct Record {
        var response: URLResponse?
        var data = Data()
        var completed = false
        var error: (any Error)?
        var challenges = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    let record = Mutex(Record())

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse, completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        record.withLock { $0.response = response }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        record.withLock { $0.data.append(data) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        record.withLock { $0.challenges += 1 }
        completionHandler(.useCredential, URLCredential(user: "user", password: "secret", persistence: .none))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let waiters = record.withLock { record in
            record.completed = true
            record.error = error
            defer { record.waiters = [] }
            return record.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until the task has completed.
    func completion() async {
        await withCheckedContinuation { continuation in
            let done = record.withLock { record in
                if !record.completed { record.waiters.append(continuation) }
                return record.completed
            }
            if done { continuation.resume() }
        }
    }
}

/// What a call threw, as a `URLError`.
func urlError<T>(_ body: () async throws -> T) async -> URLError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? URLError
    }
}
#endif
