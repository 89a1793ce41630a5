public import Foundation
public import HTTPTypes

/// A response whose body is still arriving.
public struct StreamingResponse: Sendable {
    /// The status of the final hop, as ``Response/status``.
    public var status: HTTPResponse.Status { head.publicStatus }
    /// Header fields of the final hop, as ``Response/headers`` (made when first read).
    public var headers: HTTPFields { head.headers }
    public let url: URL
    public let trust: TrustReport
    public var hops: [TrustReport] { hopLog.reports }
    /// The negotiated HTTP version, as ``Response/httpVersion``.
    public var httpVersion: String { head.httpVersion }
    public let body: ResponseBody
    /// How many times the final hop was attempted, as ``Response/attempts``.
    public let attempts: Int
    /// Every hop's attempts, parallel to ``hops``, as ``Response/hopAttempts``.
    public var hopAttempts: [Int] { hopLog.attempts }
    /// The hops, read by ``hops`` and ``hopAttempts`` when asked for.
    let hopLog: HopLog
    /// The final hop's head, the one type ``Response`` holds too: read by ``status``,
    /// ``headers`` and ``httpVersion``.
    let head: ResponseHead
    /// The final hop's fields, read by ``headers`` (made when first read).
    var receivedFields: ReceivedFields { head.fields }

    /// The final hop's trust result, as ``Response/trustResult``.
    public var trustResult: TrustResult { trust.result }

    /// The first value of a header, as `Response.header(_:)`.
    public func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap(header)
    }

    /// The first value of a header, as `Response.header(_:)`.
    public func header(_ name: HTTPField.Name) -> String? {
        headers.first { $0.name == name }?.value
    }

    /// The final hop's status and header fields as an `HTTPResponse`, as ``Response/httpResponse``.
    public var httpResponse: HTTPResponse {
        HTTPResponse(status: status, headerFields: headers)
    }
}
