/// The client's `Accept-Signature` for one request (RFC 9421 section 5.1): the components it
/// requires and a fresh nonce, which the server copies into its signature's `nonce` parameter.
public struct MessageSignatureChallenge: Sendable {
    /// 128 random bits, base64url without padding.
    public let nonce: String
    /// The request as sent: what `;req` components resolve to.
    public let request: MessageSignatureRequest
    /// The `Accept-Signature` field value to send.
    public let acceptSignature: String
    /// The request time, seconds since 1970.
    public let requestTime: Int64
    /// What the accepted signature must cover: the policy's required components, and
    /// `"content-digest";req` when the request carries a `Content-Digest` (a request body).
    public let requiredComponents: [MessageComponent]

    /// A challenge with a nonce of the caller's: for replaying a recorded exchange, known-answer
    /// tests and fuzzing. A live client uses `MessageSignatureVerifier.challenge(for:)`, whose
    /// nonce is fresh; a repeated nonce makes every response to it replayable.
    ///
    /// When `request` has a `Content-Digest` field (the client's digest of the body it sends),
    /// the signature must also cover it as `"content-digest";req`: the response is then bound to
    /// the request body, as v1's request digest binds it.
    /// - Parameters:
    ///   - nonce: the nonce sent.
    ///   - request: the request as sent.
    ///   - policy: the policy whose components the `Accept-Signature` names.
    ///   - requestTime: seconds since 1970.
    public init(nonce: String, request: MessageSignatureRequest, policy: MessageSignaturePolicy, requestTime: Int64) {
        self.nonce = nonce
        self.request = request
        self.requestTime = requestTime
        var required = policy.requiredComponents
        var accepted = policy.acceptedComponents
        let bodyDigest = MessageComponent("content-digest", requestBound: true)
        if MessageComponentResolver.fieldValue("content-digest", in: request.headers) != nil, !required.contains(bodyDigest) {
            required.append(bodyDigest)
            accepted.append(bodyDigest)
        }
        requiredComponents = required
        acceptSignature = policy.label + "=" + StructuredField.serialize(innerList: accepted.map(\.item), parameters: [("nonce", .string(nonce))])
    }
}
