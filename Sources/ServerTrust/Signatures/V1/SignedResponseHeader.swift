/// The header field names of the signed-response scheme (docs/SIGNED_RESPONSES.md).
public enum SignedResponseHeader {
    /// Request: base64 of the client's random nonce (32 bytes from this library; a server
    /// accepts 16 to 64).
    public static let nonce = "X-ServerTrust-Nonce"
    /// Request: the client's clock when it built the request, decimal seconds since 1970 (UTC).
    public static let requestTime = "X-ServerTrust-Request-Time"
    /// Response: `v1; cert=…; salt=…; nonce=…; time=…; req=…; body=…; sig=…`.
    public static let signature = "X-ServerTrust-Signature"
}
