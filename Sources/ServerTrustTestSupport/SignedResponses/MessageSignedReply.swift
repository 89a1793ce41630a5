public import ServerTrust
public import ServerTrustLab

extension LocalHTTPRequest {
    /// The request as a signing server received it: RFC 9421's view (method, `Host` as the
    /// authority, path and query as received, every field).
    public var messageSignatureRequest: MessageSignatureRequest {
        let path = String(target.prefix { $0 != "?" })
        let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) }
        return MessageSignatureRequest(method: method, authority: header("Host") ?? "", path: path, query: query, headers: headers)
    }
}

/// What an RFC 9421 signing server sends: `body` with `headers`, signed over `signedBody`
/// (default: `body` itself; a different one stands in for an intermediary that rewrote the body
/// after the server signed). Unsigned when the request did not ask (no `Accept-Signature`).
public func messageSignedReply(
    to request: LocalHTTPRequest, signer: MessageSignatureSigner, status: Int = 200, body: String, signedBody: String? = nil,
    headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
) -> LocalHTTPResponse {
    messageSignedReply(
        to: request, signer: signer, status: status, bytes: Array(body.utf8), signedBytes: signedBody.map { Array($0.utf8) }, headers: headers)
}

/// The same with a body of bytes (a compressed one, say).
public func messageSignedReply(
    to request: LocalHTTPRequest, signer: MessageSignatureSigner, status: Int = 200, bytes body: [UInt8], signedBytes: [UInt8]? = nil,
    headers: [(name: String, value: String)]
) -> LocalHTTPResponse {
    var fields = headers
    if request.header("Accept-Signature") != nil,
        let signature = try? signer.signatureFields(status: status, headers: headers, body: signedBytes ?? body, request: request.messageSignatureRequest)
    {
        fields += signature
    }
    return LocalHTTPResponse(status: status, headers: fields, body: .bytes(body))
}
