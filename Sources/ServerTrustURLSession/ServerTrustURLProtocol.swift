#if URLSessionAdapter
#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif
public import ServerTrustHTTP
import Synchronization

/// Serves the requests of a `URLSession` through a `Session`, so that every
/// connection they make is evaluated by the application's `ServerTrustManager`.
///
/// FoundationNetworking's `URLSession` on Linux offers no server-trust challenge: its own HTTP
/// stack cannot be pinned. Installed in a configuration, this protocol takes every request of
/// the sessions made with it (every scheme but `data:`) and sends it with the `Session`:
///
/// ```swift
/// let session = try Session(trustManager: manager)
/// let configuration = URLSessionConfiguration.ephemeral
/// ServerTrustURLProtocol.install(in: configuration, session: session)
/// let urlSession = URLSession(configuration: configuration)
/// let (data, response) = try await urlSession.data(from: url)
/// ```
///
/// It fails closed: a request it cannot serve as the `Session` would — no `Session` installed
/// or the installed one released, a scheme other than `https:` (or `http:` with
/// `allowsPlainHTTP`), a download, upload or WebSocket task — fails with a `URLError` whose
/// underlying error is a `SessionError`; it never falls through to URLSession's own
/// unpinned stack. See <doc:ServerTrustURLSession> for redirects, errors, and what differs from
/// URLSession's own stack.
public class ServerTrustURLProtocol: URLProtocol {
    /// The current load: the task sending the request, and whether URLSession stopped it.
    private let load = LoadState()

    /// Serves `configuration`'s requests through `session`: puts a protocol class bound to
    /// `session` first in `configuration.protocolClasses`, replacing one an earlier call put there.
    ///
    /// Each `Session` gets a protocol class of its own, so configurations installed with
    /// different sessions stay apart (URLSession makes protocol instances itself, and gives
    /// them no way to reach their configuration). The class refers to `session` weakly: keep
    /// the `Session` alive for as long as URLSessions made with this configuration send
    /// requests — a request after it is released fails with
    /// `SessionError` `sessionNotFound`.
    ///
    /// The class also keeps what FoundationNetworking leaves to an HTTP protocol, as it is now:
    /// `httpAdditionalHeaders` (sent unless the request sets the same field) and, when
    /// `httpShouldSetCookies`, `httpCookieStorage` (where the final response's cookies are
    /// stored). So call it after the other changes to `configuration`.
    public static func install(in configuration: URLSessionConfiguration, session: Session) {
        let bound = InstalledSessions.protocolClass(for: session, settings: InstalledSettings(configuration))
        let others = (configuration.protocolClasses ?? []).filter { !($0 is ServerTrustURLProtocol.Type) }
        configuration.protocolClasses = [bound] + others
    }

    /// The key of the `TrustReport` in a failure's `URLError.userInfo`, when a chain was
    /// evaluated and rejected (the same report as the underlying `SessionError`'s `rejectedTrust`).
    public static let trustReportKey = "ServerTrustReport"

    /// Every request but `data:` ones (which never reach the network): a request this class
    /// cannot serve is failed by it, never handed to the next protocol class.
    override public class func canInit(with request: URLRequest) -> Bool {
        request.url?.scheme?.lowercased() != "data"
    }

    /// `request` unchanged: the `Session` sends what the application built.
    override public class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// Always false: nothing this protocol serves is taken from or put into `URLCache`.
    override public class func requestIsCacheEquivalent(_ a: URLRequest, to b: URLRequest) -> Bool { false }

    /// Sends the request with the installed `Session` and reports the final response, its
    /// whole body and completion — or a `URLError` — to URLSession. A request that cannot be
    /// served (no `Session`, an unsupported task, an invalid request) fails at once.
    override public func startLoading() {
        guard let client else { return }
        let session: Session
        let settings: InstalledSettings
        let prepared: Request
        do {
            (session, settings) = try Self.requireInstallation()
            try Self.refuseUnsupported(task)
            prepared = try RequestMapping.request(for: request, additionalHeaders: settings.additionalHeaders)
        } catch {
            Delivery(urlProtocol: self, client: client, load: load, cookieStorage: nil)
                .fail(URLErrorMapping.urlError(for: error, url: request.url, refusedBeforeSending: true))
            return
        }
        let cookieStorage = request.httpShouldHandleCookies ? settings.cookieStorage : nil
        let delivery = Delivery(urlProtocol: self, client: client, load: load, cookieStorage: cookieStorage)
        load.start {
            Task {
                do {
                    delivery.succeed(try await session.data(for: prepared))
                } catch {
                    delivery.fail(URLErrorMapping.urlError(for: error, url: prepared.url))
                }
            }
        }
    }

    private static func requireInstallation() throws(SessionError) -> (session: Session, settings: InstalledSettings) {
        if let installation = InstalledSessions.installation(of: self) { return installation }
        throw SessionError(
            .sessionNotFound,
            self == ServerTrustURLProtocol.self
                ? "ServerTrustURLProtocol was registered by hand; install it with ServerTrustURLProtocol.install(in:session:) so that it knows its Session."
                : "The Session installed in this URLSession's configuration has been released; keep it alive while the URLSession is in use.")
    }

    /// Cancels the `Session` request. URLSession reports the cancellation itself, so nothing
    /// more is reported to the client after this.
    override public func stopLoading() {
        load.stop()
    }

    /// Refuses the tasks whose results FoundationNetworking does not take from a custom protocol
    /// (a download task's file, a WebSocket's frames) or whose body it does not show one (an
    /// upload task's body, unless it is in the request).
    private static func refuseUnsupported(_ task: URLSessionTask?) throws(SessionError) {
        switch task {
        case is URLSessionDownloadTask:
            throw SessionError(.unsupportedTask, "Download tasks are not served by ServerTrustURLProtocol; use a data task (or URLSession.data(for:)) and write the data yourself.")
        case is URLSessionWebSocketTask:
            throw SessionError(.unsupportedTask, "WebSocket tasks are not served by ServerTrustURLProtocol.")
        case let upload as URLSessionUploadTask where upload.originalRequest?.httpBody == nil && upload.originalRequest?.httpBodyStream == nil:
            throw SessionError(
                .unsupportedTask,
                "An upload task's separate body is not visible to a URLProtocol in FoundationNetworking; put it in URLRequest.httpBody (or httpBodyStream) and use a data task.")
        default:
            return
        }
    }
}

/// The `Task` of one load, and whether URLSession has stopped it.
final class LoadState: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var stopped = false
    }
    private let state = Mutex(State())

    /// Whether URLSession has stopped the load: nothing is reported after that.
    var isStopped: Bool { state.withLock { $0.stopped } }

    func start(_ makeTask: () -> Task<Void, Never>) {
        let task = makeTask()
        let stopped = state.withLock { state in
            state.task = task
            return state.stopped
        }
        if stopped { task.cancel() }
    }

    func stop() {
        let task = state.withLock { state in
            state.stopped = true
            return state.task
        }
        task?.cancel()
    }
}

/// Reports a load's outcome to the URLSession client.
///
/// `@unchecked Sendable`: `URLProtocol` is not `Sendable`, but the client is, and
/// FoundationNetworking's client only reads the protocol's `task` and records the loaded data
/// on it; the load's single task makes these calls in order, once `startLoading` has returned
/// (or, for a request refused up front, from `startLoading` itself), and makes none after
/// `stopLoading` (``LoadState``).
struct Delivery: @unchecked Sendable {
    let urlProtocol: URLProtocol
    let client: any URLProtocolClient
    let load: LoadState
    /// Where the final response's cookies go (``InstalledSettings/cookieStorage``).
    let cookieStorage: HTTPCookieStorage?

    func succeed(_ response: Response) {
        guard !load.isStopped else { return }
        if let cookieStorage {
            let fields = response.headers.filter { $0.name == .setCookie }.map { ["Set-Cookie": $0.value] }
            let cookies = fields.flatMap { HTTPCookie.cookies(withResponseHeaderFields: $0, for: response.url) }
            if !cookies.isEmpty { cookieStorage.setCookies(cookies, for: response.url, mainDocumentURL: nil) }
        }
        client.urlProtocol(urlProtocol, didReceive: ResponseMapping.urlResponse(for: response), cacheStoragePolicy: .notAllowed)
        // One call with the whole body: FoundationNetworking keeps only the last chunk passed
        // here for a task with a completion handler (`URLSession.data(from:)`), and a protocol
        // cannot tell which tasks have one.
        if !response.body.isEmpty { client.urlProtocol(urlProtocol, didLoad: Data(response.body)) }
        client.urlProtocolDidFinishLoading(urlProtocol)
    }

    func fail(_ error: URLError) {
        guard !load.isStopped else { return }
        client.urlProtocol(urlProtocol, didFailWithError: error)
    }
}
#endif
