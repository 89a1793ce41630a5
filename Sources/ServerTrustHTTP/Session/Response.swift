public import Foundation

/// An HTTP response with its body and the trust report of the connection that carried it.
public struct Response: Sendable {
    /// The status code of the final hop.
    public let status: Int
    /// Header fields of the final hop, in order.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]
    /// The URL of the final hop (after redirects).
    public let url: URL
    /// The trust evaluation of the final hop's connection.
    public let trust: TrustReport
    /// Every hop's trust evaluation, first request first (redirects add hops).
    public let hops: [TrustReport]
    /// The negotiated HTTP version, e.g. `HTTP/2`.
    public let httpVersion: String
    /// Whether the final hop's response was proven to come from the server by its signature
    /// (``Session/Configuration/signedResponses``); ``ResponseVerification/notRequested`` when
    /// no signed-response policy covers its host. Redirect hops are checked too: a failure there
    /// throws (enforced) or goes to ``Session/Configuration/onVerificationFailure``.
    public internal(set) var verification: ResponseVerification = .notRequested

    /// The final hop's trust result: ``TrustResult/verified``, ``TrustResult/failed(_:)`` when a
    /// report-only evaluator rejected the server (an enforced rejection throws instead), or
    /// ``TrustResult/notRequested`` for plain HTTP. Redirect hops' results are in ``hops``.
    public var trustResult: TrustResult { trust.result }

    /// The first value of a header, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}
