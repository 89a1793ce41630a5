#if OpenAPIAdapter
public import Foundation
public import HTTPTypes
import ServerTrust
public import ServerTrustHTTP

extension SessionTransport {
    /// What the session reported for one response the transport returned: the trust
    /// evaluation of every hop's connection and the signed-response verification.
    ///
    /// Recorded into the ``ExchangeLog``s the calling task records into, as soon as the
    /// response head has arrived (before a streamed body is read). A request that fails records
    /// nothing: its `SessionError` carries the evidence (`trustError`, `rejectedTrust`,
    /// `signatureError`).
    public struct Exchange: Sendable, CustomStringConvertible {
        /// The OpenAPI operation that sent the request.
        public let operationID: String
        /// The URL of the final hop (after redirects), whole; ``description`` shows it without
        /// user-info, query or fragment.
        public let url: URL
        /// The final hop's status.
        public let status: HTTPResponse.Status
        /// The trust evaluation of the final hop's connection: host, matched pattern,
        /// evaluator, validated chain, revocation.
        public let trust: TrustReport
        /// Every hop's trust evaluation, first request first.
        public let hops: [TrustReport]
        /// Whether the response was proven to come from the server by its signature
        /// (`Response.verification`): `.verified`, `.failed(_:)` in informational mode
        /// (enforced mode throws instead), or `.notRequested` for a host without a policy —
        /// always so for a ``BodyDelivery/streamed`` response, as streaming is only chosen for
        /// such hosts.
        public let verification: ResponseVerification
        /// Every hop's verification, parallel to ``hops`` (same count, same order); all
        /// `.notRequested` for a streamed response.
        public let hopVerifications: [ResponseVerification]
        /// The negotiated HTTP version, e.g. `HTTP/2`.
        public let httpVersion: String
        /// How the response body reached the client.
        public let bodyDelivery: BodyDelivery

        /// How a response body reached the client.
        public enum BodyDelivery: Hashable, Sendable {
            /// Handed on as it arrived (`Session.stream(_:)`).
            case streamed
            /// Read whole and, for a signature-checked host, verified before it was handed on
            /// (`Session.data(for:)`).
            case buffered
        }

        init(_ response: Response, operationID: String) {
            self.operationID = operationID
            url = response.url
            status = response.status
            trust = response.trust
            hops = response.hops
            verification = response.verification
            hopVerifications = response.hopVerifications
            httpVersion = response.httpVersion
            bodyDelivery = .buffered
        }

        init(_ response: StreamingResponse, operationID: String) {
            self.operationID = operationID
            url = response.url
            status = response.status
            trust = response.trust
            hops = response.hops
            verification = .notRequested
            hopVerifications = Array(repeating: .notRequested, count: response.hops.count)
            httpVersion = response.httpVersion
            bodyDelivery = .streamed
        }

        /// The operation, status, URL (without user-info, query or fragment), body delivery and
        /// signature result, then the trust report.
        public var description: String {
            "\(operationID) \(status.code) \(URLRedaction.redacted(url)) (\(bodyDelivery), signature \(verification)): \(trust)"
        }
    }
}
#endif
