#if OpenAPIAdapter
public import Foundation
public import HTTPTypes
public import OpenAPIRuntime
public import ServerTrustHTTP

/// A swift-openapi-runtime `ClientTransport` that sends every request of a generated client
/// through a ServerTrustHTTP `Session`, so each connection is evaluated by the session's
/// trust policies: pins, revocation, per-host evaluators.
///
/// ```swift
/// let session = try Session(trustManager: ServerTrustManager(evaluators: [
///     try HostPattern("api.example.com"): .pinnedKeyHashes(["sha256/…", "sha256/…backup"]),
/// ]))
/// let client = Client(serverURL: try Servers.Server1.url(), transport: SessionTransport(session: session))
/// let greeting = try await client.getGreeting()
/// ```
///
/// The transport adds nothing to the session's checks and removes nothing: a request goes
/// out through `Session.stream(_:)` or `Session.data(for:)` as it would from your own code,
/// under the same evaluators, redirect rules and signed-response policies.
///
/// **Bodies stream both ways.** A request body is read from its `HTTPBody` as curl sends it,
/// with back-pressure (`Request.Body.stream(_:length:)`); a known `HTTPBody.Length` is sent as
/// `Content-Length`, an unknown one as chunked (HTTP/1.1) or DATA frames (HTTP/2). A response
/// body is handed to the client as it arrives (`Session.stream(_:)`), paced by its reader;
/// dropping it unread cancels its transfer (`ResponseBody.cancel()`).
/// Two exceptions, both the session's rules:
/// - a host with an informational or enforced signed-response policy
///   (`Session.checksSignedResponses(from:)`): the response is read whole, its signature
///   checked, and only then returned (`Session.data(for:)`, bounded by
///   `Session.Configuration.maximumResponseBodySize`), as a signature covers the whole body;
///   the request body is read into memory first too (`maximumSignedRequestBodySize`), since
///   the request's signature covers its digest. The body reaches the generated client exactly
///   as signed and received, never decoded by `Content-Encoding`, which a v1 signature does not
///   cover. Nor does it cover `Content-Type`, by which the generated client picks its decoder:
///   for a checked operation declare one response content type per status, so that a relabelled
///   response fails to decode instead of being read as another type;
/// - a streamed request body is sent once: a 307 or 308 redirect that would resend it fails
///   with `SessionError.Code.bodyNotReplayable`, and the session never retries it.
///
/// **Errors are the session's.** Whatever the session throws — a `SessionError` whose
/// `trustError` says which check rejected the server, whose `signatureError` says why a signed
/// response failed — ``send(_:body:baseURL:operationID:)`` throws unchanged: a direct call
/// (a test, your own code) catches the `SessionError` itself. The generated client wraps every
/// transport error — a `ClientMiddleware`'s `next` throws it wrapped too — so through it the
/// caller catches a `ClientError` whose `underlyingError` is that `SessionError`. Input the transport cannot turn into a request (a base URL and path
/// that make no URL) is a `SessionError` with code `invalidRequest`.
///
/// **Reports are reachable.** The trust report and signed-response verification of every
/// response are recorded into the ``ExchangeLog``s the calling task is recording into
/// (``ExchangeLog/recording(isolation:_:)``), from the caller or from a `ClientMiddleware`.
public struct SessionTransport: ClientTransport {
    /// The session every request goes through.
    public let session: Session

    /// A transport over `session`. The session is not shut down by the transport: shut it down
    /// (or let it go) when the clients that use it are done.
    public init(session: Session) {
        self.session = session
    }

    /// Sends `request` to `baseURL` through the session and returns the response with a body
    /// that streams, or whole for a host whose responses are signature-checked.
    ///
    /// - Parameters:
    ///   - request: the generated client's request: method, path and query, header fields.
    ///   - body: the request body, streamed as it is sent; nil for none.
    ///   - baseURL: the server URL (`Client(serverURL:…)`), to which `request.path` is appended.
    ///   - operationID: the OpenAPI operation, recorded in ``Exchange/operationID``.
    /// - Returns: the response head and body (nil for `HEAD`).
    /// - Throws: the session's `SessionError`, unchanged — a direct call catches the
    ///   `SessionError` itself; the generated client rethrows it wrapped, as the
    ///   `underlyingError` of a `ClientError`.
    public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let outgoing = try Self.sessionRequest(request, body: body, baseURL: baseURL)
        if session.checksSignedResponses(from: outgoing.url) {
            let response = try await session.data(for: outgoing)
            ExchangeLog.record(Exchange(response, operationID: operationID))
            let responseBody = request.method == .head ? nil : HTTPBody(response.body)
            return (response.httpResponse, responseBody)
        }
        let response = try await session.stream(outgoing)
        ExchangeLog.record(Exchange(response, operationID: operationID))
        let responseBody = request.method == .head
            ? nil : HTTPBody(StreamedResponseBody(response.body), length: Self.streamedLength(response.headers), iterationBehavior: .single)
        return (response.httpResponse, responseBody)
    }
}
#endif
