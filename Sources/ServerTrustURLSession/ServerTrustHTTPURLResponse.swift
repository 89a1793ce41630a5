#if URLSessionAdapter
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
public import HTTPTypes
public import ServerTrustHTTP

/// The `HTTPURLResponse` a request served by ``ServerTrustURLProtocol`` completes with: the
/// final hop's response, with what the `Session` evaluated on the way.
///
/// ```swift
/// let (data, response) = try await urlSession.data(from: url)
/// if let served = response as? ServerTrustHTTPURLResponse {
///     print(served.trust.evaluator, served.trust.validatedChain)
/// }
/// ```
///
/// `allHeaderFields` holds each field once, repeated fields joined with `", "`, as
/// `HTTPURLResponse` does; ``headerFields`` has them as received. On a `401` response,
/// `WWW-Authenticate` is delivered as `X-ServerTrust-WWW-Authenticate` (``headerFields`` keeps
/// the original name): FoundationNetworking answers a 401 challenge by sending the request
/// again through its own HTTP stack, which no `Session` evaluates.
// @unchecked Sendable, as HTTPURLResponse is: every property of this subclass is a `let` of a Sendable type.
public final class ServerTrustHTTPURLResponse: HTTPURLResponse, @unchecked Sendable {
    /// The trust evaluation of the final hop's connection.
    public let trust: TrustReport
    /// Every hop's trust evaluation, the first request's first (redirects add hops).
    public let hops: [TrustReport]
    /// The header fields as received, in order, repeated fields kept.
    public let headerFields: HTTPFields
    /// The signed-response verification (v1 or RFC 9421) over every hop: `.verified` only when
    /// each hop verified (`Response.verification`). An enforced failure never gets here: the
    /// task fails with `URLError.badServerResponse` and the `SessionError` underneath.
    public let verification: ResponseVerification
    /// Each hop's signed-response verification, parallel to ``hops``.
    public let hopVerifications: [ResponseVerification]

    init?(_ response: Response) {
        trust = response.trust
        hops = response.hops
        verification = response.verification
        hopVerifications = response.hopVerifications
        headerFields = response.headers
        var fields: [String: String] = [:]
        var names: [String: String] = [:]  // lower-cased → first spelling, as HTTP names are case-insensitive
        for field in response.headers {
            var name = field.name.rawName
            if response.status.code == 401 && field.name == .wwwAuthenticate { name = "X-ServerTrust-WWW-Authenticate" }
            let key = names[name.lowercased(), default: name]
            names[name.lowercased()] = key
            fields[key] = fields[key].map { "\($0), \(field.value)" } ?? field.value
        }
        super.init(url: response.url, statusCode: response.status.code, httpVersion: response.httpVersion, headerFields: fields)
    }

    /// Not supported: a trust report is not archived.
    public required init?(coder aDecoder: NSCoder) { nil }
}

/// A session `Response` as the URL response URLSession hands out.
enum ResponseMapping {
    static func urlResponse(for response: Response) -> URLResponse {
        // `HTTPURLResponse.init` is failable (FoundationNetworking's never fails); should one
        // fail, the response is still delivered, without the report.
        ServerTrustHTTPURLResponse(response)
            ?? URLResponse(url: response.url, mimeType: nil, expectedContentLength: response.body.count, textEncodingName: nil)
    }
}
#endif
