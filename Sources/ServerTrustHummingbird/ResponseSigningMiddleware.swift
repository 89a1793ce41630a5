#if HummingbirdSigning
internal import HTTPTypes
public import Hummingbird
public import ServerTrust

/// Signs every response to a request that asked for a signature: with an RFC 9421
/// `MessageSignatureSigner` when the request carries `Accept-Signature`, with a v1
/// `ResponseSigner` when it carries `X-ServerTrust-Nonce` — the Hummingbird 2 form of what
/// docs/SIGNED_RESPONSES.md asks of a server.
///
/// ```swift
/// let key = try SignaturePrivateKey(pem: String(contentsOfFile: "signing.pem", encoding: .utf8))
/// let router = Router()
/// router.add(middleware: ResponseSigningMiddleware(messageSigner: try MessageSignatureSigner(key: key, keyID: "2026-11")))
/// router.get("/v1/balance") { _, _ in "{\"balance\":\"100.00\"}" }
/// ```
///
/// During a migration give it both signers: each client gets the scheme it asks for.
///
/// Add it *last* among the middleware that change responses (compression, CORS, headers), so
/// that it signs the bytes that go on the wire: whatever runs outside it and alters the body,
/// `ETag` or `Location` afterwards breaks the signature, which clients in enforced mode reject.
///
/// RFC 9421: for each request carrying `Accept-Signature`, the middleware runs the chain,
/// collects the response body and adds `Content-Digest` (unless the route set one),
/// `Signature-Input` and `Signature`, covering what the client asked for with its nonce
/// (`MessageSignatureSigner` names what it covers); a request whose `Content-Digest` (the
/// client's binding of its body) does not match the body it sent is refused with `400`, never
/// signed for. v1: for each request carrying
/// `X-ServerTrust-Nonce`, the middleware collects the request body
/// (the signature covers it; the collected body is handed on, so routes still read it), runs
/// the rest of the chain, collects the response body — up to ``maximumResponseBodySize`` — and
/// adds `X-ServerTrust-Signature` over the request it received, the status, `ETag`, `Location`
/// and the body. A request without the nonce did not ask for a signature and passes through
/// untouched, at no cost. Errors a route throws as `HTTPResponseError` (`HTTPError(.notFound)`,
/// the router's own 404) are turned into their response and signed like any other.
///
/// Failures never send a response that looks signed but is not:
/// - a malformed challenge (a nonce or request time the scheme refuses) or an expired
///   intermediate: the response goes out unsigned and the reason is logged at error level on
///   the request's logger — a client in enforced mode rejects it, one in informational mode
///   marks it failed;
/// - a request body over ``maximumRequestBodySize``: Hummingbird's `413 Content Too Large`;
/// - a response body over ``maximumResponseBodySize``: `500`, logged, since a truncated or
///   unsigned copy of a large body is not what the route meant to send.
///
/// Streaming responses are buffered to be signed; send large downloads from routes the client
/// does not require signatures for.
public struct ResponseSigningMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The v1 signer, for the intermediate key and header version in use; nil: v1 challenges
    /// pass through unsigned.
    public let signer: ResponseSigner?
    /// The RFC 9421 signer; nil: `Accept-Signature` passes through unsigned.
    public let messageSigner: MessageSignatureSigner?
    /// The authority clients sign for — `api.example.com`, or `api.example.com:8443` when they
    /// connect to a port other than 443 — when a proxy in front of this server rewrites `Host`;
    /// nil: the `Host` (HTTP/1.1) or `:authority` (HTTP/2) the request arrived with. The port is
    /// signed (an authority without one means 443), so a response from this service never
    /// verifies for another port of the same host.
    public let publicHost: String?
    /// The largest request body collected to be signed over. Default 1 MiB.
    public let maximumRequestBodySize: Int
    /// The largest response body buffered to be signed. Default 16 MiB.
    public let maximumResponseBodySize: Int

    /// v1 signing.
    /// - Parameters:
    ///   - signer: signs each response.
    ///   - publicHost: see ``publicHost``. Default nil.
    ///   - maximumRequestBodySize: see ``maximumRequestBodySize``.
    ///   - maximumResponseBodySize: see ``maximumResponseBodySize``.
    public init(
        signer: ResponseSigner, publicHost: String? = nil, maximumRequestBodySize: Int = 1 << 20, maximumResponseBodySize: Int = 16 << 20
    ) {
        self.init(
            signer: signer, messageSigner: nil, publicHost: publicHost, maximumRequestBodySize: maximumRequestBodySize,
            maximumResponseBodySize: maximumResponseBodySize)
    }

    /// RFC 9421 signing, and v1 too when `signer` is given (a migration).
    /// - Parameters:
    ///   - messageSigner: signs each response that asked with `Accept-Signature`.
    ///   - signer: signs each response that asked with `X-ServerTrust-Nonce`; default nil.
    ///   - publicHost: see ``publicHost``. Default nil.
    ///   - maximumRequestBodySize: see ``maximumRequestBodySize``.
    ///   - maximumResponseBodySize: see ``maximumResponseBodySize``.
    public init(
        messageSigner: MessageSignatureSigner, signer: ResponseSigner? = nil, publicHost: String? = nil, maximumRequestBodySize: Int = 1 << 20,
        maximumResponseBodySize: Int = 16 << 20
    ) {
        self.init(
            signer: signer, messageSigner: messageSigner, publicHost: publicHost, maximumRequestBodySize: maximumRequestBodySize,
            maximumResponseBodySize: maximumResponseBodySize)
    }

    private init(
        signer: ResponseSigner?, messageSigner: MessageSignatureSigner?, publicHost: String?, maximumRequestBodySize: Int, maximumResponseBodySize: Int
    ) {
        self.signer = signer
        self.messageSigner = messageSigner
        self.publicHost = publicHost
        self.maximumRequestBodySize = maximumRequestBodySize
        self.maximumResponseBodySize = maximumResponseBodySize
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let signsV1 = signer != nil && request.headers[nonceField] != nil
        let signsRFC9421 = messageSigner != nil && request.headers[acceptSignatureField] != nil
        guard signsV1 || signsRFC9421 else { return try await next(request, context) }
        var request = request
        // v1 covers the request body. RFC 9421 binds it through the client's Content-Digest,
        // which the signature covers as "content-digest";req: the digest must be the body's, or
        // the server would sign for a body it did not receive.
        let requestDigest = signsRFC9421 ? request.headers[contentDigestField] : nil
        let requestBody = signsV1 || requestDigest != nil ? try await request.collectBody(upTo: maximumRequestBodySize) : ByteBuffer()
        if let requestDigest {
            let digest = ContentDigest(algorithms: ContentDigest.algorithms(in: requestDigest))
            digest.update(Self.bytes(requestBody))
            do {
                try digest.check(requestDigest)
            } catch {
                context.logger.error(
                    "Request refused: its Content-Digest does not match its body: \(error.reason)", metadata: ["path": "\(request.uri.path)"])
                throw HTTPError(.badRequest, message: "The request's Content-Digest does not match its body.")
            }
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // A route's or the router's `HTTPError` (404, 400, …) becomes its response here, so
            // that it is signed too; any other error is Hummingbird's unsigned 500.
            response = try error.response(from: request, context: context)
        }

        let collector = CollectingBodyWriter(limit: maximumResponseBodySize)
        do {
            try await response.body.write(collector)
        } catch let error as ResponseBodyTooLarge {
            context.logger.error(
                "Response not sent: its body is over the \(error.limit)-byte limit for signing (ResponseSigningMiddleware.maximumResponseBodySize).",
                metadata: ["path": "\(request.uri.path)"])
            throw HTTPError(.internalServerError)
        }
        let body = collector.bytes
        let trailers = collector.trailers
        response.body = ResponseBody(contentLength: body.readableBytes) { writer in
            try await writer.write(body)
            try await writer.finish(trailers)
        }

        // HTTPTypes moves `Host` into `:authority`; the signature covers it, so put it back.
        var headers = request.headers.map { (name: $0.name.rawName, value: $0.value) }
        if let authority = request.head.authority, !headers.contains(where: { $0.name.lowercased() == "host" }) {
            headers.append((name: "Host", value: authority))
        }
        let target = Self.target(of: request)
        if signsRFC9421, let messageSigner {
            let authority = publicHost ?? request.head.authority ?? ""
            let received = MessageSignatureRequest(
                method: request.method.rawValue, authority: authority, path: target.path, query: target.query, headers: headers)
            do {
                for field in try messageSigner.signatureFields(
                    status: response.status.code, headers: response.headers.map { (name: $0.name.rawName, value: $0.value) },
                    body: request.method == .head ? [] : Self.bytes(body), request: received)
                {
                    guard let name = HTTPField.Name(field.name) else { continue }
                    response.headers[name] = field.value
                }
            } catch {
                context.logger.error(
                    "Response sent without an RFC 9421 signature: \(error.description)",
                    metadata: ["path": "\(request.uri.path)", "reason": "\(error.code)"])
            }
        }
        guard signsV1, let signer else { return response }
        do {
            let signature = try signer.signatureHeaders(
                method: request.method.rawValue, path: target.path, query: target.query, requestHeaders: headers,
                requestBody: Self.bytes(requestBody), status: response.status.code, etag: response.headers[.eTag],
                location: response.headers[.location], body: Self.bytes(body), host: publicHost)
            for field in signature {
                guard let name = HTTPField.Name(field.name) else { continue }
                response.headers[name] = field.value
            }
        } catch {
            context.logger.error(
                "Response sent unsigned: \(error.description)",
                metadata: ["path": "\(request.uri.path)", "reason": "\(error.code)"])
        }
        return response
    }

    /// The request target as received, percent-encoding kept, split at the first `?`.
    private static func target(of request: Request) -> (path: String, query: String?) {
        let target = request.head.path ?? "/"
        guard let mark = target.firstIndex(of: "?") else { return (target, nil) }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }

    private static func bytes(_ buffer: ByteBuffer) -> [UInt8] {
        buffer.getBytes(at: buffer.readerIndex, length: buffer.readableBytes) ?? []
    }
}

private let nonceField = HTTPField.Name(SignedResponseHeader.nonce)!
private let acceptSignatureField = HTTPField.Name("Accept-Signature")!
private let contentDigestField = HTTPField.Name("Content-Digest")!

/// Thrown by ``CollectingBodyWriter`` past its limit.
struct ResponseBodyTooLarge: Error {
    let limit: Int
}

/// Collects a response body written by a route, up to a limit. A class, so the bytes can be
/// read after `ResponseBody.write(_:)` consumed the writer.
final class CollectingBodyWriter: ResponseBodyWriter, @unchecked Sendable {
    // Written only by the one task running `ResponseBody.write(_:)`, read after it returned.
    private(set) var bytes = ByteBuffer()
    private(set) var trailers: HTTPFields?
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    func write(_ buffer: ByteBuffer) async throws {
        guard bytes.readableBytes + buffer.readableBytes <= limit else { throw ResponseBodyTooLarge(limit: limit) }
        var buffer = buffer
        bytes.writeBuffer(&buffer)
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {
        trailers = trailingHeaders
    }
}
#endif
