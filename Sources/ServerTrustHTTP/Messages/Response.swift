public import Foundation
public import HTTPTypes

/// An HTTP response with its body and the trust report of the connection that carried it.
///
/// The status and header fields are swift-http-types' `HTTPResponse.Status` and `HTTPFields`
/// (``httpResponse`` has both as an `HTTPResponse`), so `response.status == 200` and
/// `response.headers[.contentType]` read as they do in Hummingbird, Vapor or AsyncHTTPClient.
public struct Response: Sendable {
    /// The status of the final hop. Its reason phrase is empty: HTTP/2 has none, and the
    /// status line's is not kept.
    public var status: HTTPResponse.Status { head.publicStatus }
    /// Header fields of the final hop, in order as received, repeated fields kept (a field
    /// whose name is not a valid RFC 9110 token is dropped: see <doc:HTTPTypes>).
    ///
    /// Made from the bytes received the first time they are read, then shared by every later
    /// read and every copy of the response: a caller that never reads them does not pay for them.
    public var headers: HTTPFields { head.headers }
    /// The body, decoded when ``decodedContentEncodings`` is not empty.
    public let body: [UInt8]
    /// The URL of the final hop (after redirects).
    public let url: URL
    /// The trust evaluation of the final hop's connection.
    public let trust: TrustReport
    /// Every hop's trust evaluation, first request first (redirects add hops).
    public var hops: [TrustReport] { hopLog.reports }
    /// The negotiated HTTP version, e.g. `HTTP/2`.
    public var httpVersion: String { head.httpVersion }
    /// Whether the response was proven to come from the server by its signatures
    /// (`HostPolicy.signedResponses`), redirect hops included.
    ///
    /// ``ResponseVerification/failed(_:)`` with the first failing hop's error when *any* hop
    /// failed — in informational mode a failing redirect hop is followed, and a response reached
    /// through an unproven `Location` is not verified, whatever the final hop says (enforced
    /// mode throws at that hop instead). Otherwise the final hop's result:
    /// ``ResponseVerification/verified``, or ``ResponseVerification/notRequested`` when no
    /// signed-response policy covers the final host. Each hop's own result is in
    /// ``hopVerifications``; failures also go to ``Session/Configuration/onVerificationFailure``.
    ///
    /// A hop to a host *without* a policy is ``ResponseVerification/notRequested``, not a
    /// failure: a `.verified` response reached through it is proven for ``url``, the URL it
    /// answers, but nothing proves the unchecked hop's `Location`. Compare ``url`` with the URL
    /// requested, or require every entry of ``hopVerifications`` to be `.verified`, when that
    /// matters.
    public internal(set) var verification: ResponseVerification = .notRequested
    /// Every hop's signed-response verification, parallel to ``hops`` (same count, same order):
    /// `hopVerifications[i]` is the result for the response whose connection `hops[i]` reports.
    /// A hop to a host without a policy is ``ResponseVerification/notRequested``.
    public var hopVerifications: [ResponseVerification] { hopLog.verifications }
    /// The content codings the session removed from ``body``, in the order the server applied
    /// them (``Session/Configuration/contentDecoding``); empty when ``body`` is the bytes as
    /// received. The `Content-Encoding` and `Content-Length` fields in ``headers`` are kept as
    /// the server sent them, so they describe the encoded body, not ``body``. A signature
    /// (``verification``) was checked over the encoded bytes, before they were decoded.
    public internal(set) var decodedContentEncodings: [ContentCoding] = []
    /// The content codings still applied to ``body``: the final hop's `Content-Encoding`
    /// tokens as received (`identity` left out), less those in ``decodedContentEncodings``.
    /// Empty when ``body`` is the content itself.
    ///
    /// Not empty when a coding was not asked for, or when the host's responses are
    /// signature-checked: a v1 signature does not cover `Content-Encoding`, so such a body is
    /// handed over exactly as signed and received, never decoded by a label anyone on the path
    /// could have added or removed (third security review, finding 3). Decode it yourself only
    /// if you know, from the API's contract, that it is encoded.
    public var undecodedContentEncodings: [String] {
        let tokens = ContentCoding.tokens(of: headers)
        return Array(tokens.dropLast(min(decodedContentEncodings.count, tokens.count)))
    }
    /// How many times the final hop was sent: 1, or more when
    /// ``Session/Configuration/retryPolicy`` retried it after a connection failure.
    public internal(set) var attempts = 1
    /// Every hop's attempts, parallel to ``hops`` (same count, same order).
    public var hopAttempts: [Int] { hopLog.attempts }
    /// The hops, read by ``hops``, ``hopVerifications`` and ``hopAttempts`` when asked for.
    let hopLog: HopLog
    /// The final hop's head (status line and fields), the one type a streamed response's
    /// head is too (``StreamingResponse``): read by ``status``, ``headers`` and ``httpVersion``.
    let head: ResponseHead
    /// The final hop's fields, read by ``headers`` (made when first read).
    var receivedFields: ReceivedFields { head.fields }

    /// The final hop's trust result: ``TrustResult/verified``, ``TrustResult/failed(_:)`` when a
    /// report-only evaluator rejected the server (an enforced rejection throws instead), or
    /// ``TrustResult/notRequested`` for plain HTTP. Redirect hops' results are in ``hops``.
    public var trustResult: TrustResult { trust.result }

    /// The first value of a header, compared case-insensitively; nil when there is none, or
    /// when `name` is not a valid field name (RFC 9110 token), which no field can have.
    public func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap(header)
    }

    /// The first value of a header (`headers[name]` joins repeated fields with commas instead).
    public func header(_ name: HTTPField.Name) -> String? {
        headers.first { $0.name == name }?.value
    }

    /// The final hop's status and header fields as an `HTTPResponse`, repeated fields in order.
    public var httpResponse: HTTPResponse {
        HTTPResponse(status: status, headerFields: headers)
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}
