public import Foundation

/// A response whose body is still arriving.
public struct StreamingResponse: Sendable {
    public let status: Int
    public let headers: [(name: String, value: String)]
    public let url: URL
    public let trust: TrustReport
    public let hops: [TrustReport]
    public let httpVersion: String
    public let body: ResponseBody
    /// How many times the final hop was attempted, as ``Response/attempts``.
    public let attempts: Int
    /// Every hop's attempts, parallel to ``hops``, as ``Response/hopAttempts``.
    public let hopAttempts: [Int]

    /// The final hop's trust result, as ``Response/trustResult``.
    public var trustResult: TrustResult { trust.result }

    /// The first value of a header, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
