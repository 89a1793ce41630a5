public import Foundation

/// Signs responses on the server: any Swift server calls it with the request it received and
/// the response it is about to send, and adds the returned header field.
///
/// ```swift
/// let signer = try ResponseSigner(pem: String(contentsOfFile: "intermediate.pem", encoding: .utf8))
/// let headers = try signer.signatureHeaders(
///     method: request.method, path: request.path, query: request.query, requestHeaders: request.headers,
///     requestBody: request.body, status: 200, etag: etag, body: body)
/// ```
///
/// Sign the body bytes exactly as they go on the wire (after any `Content-Encoding`), and
/// `ETag` and `Location` exactly as sent. A request without `X-ServerTrust-Nonce` did not ask
/// for a signature: `ResponseSignatureError.Code.missingChallenge` is thrown and the response
/// goes out unsigned. Immutable, hence `Sendable`; one signer serves any number of threads.
///
/// During a root rotation after a compromise, run two signers — the old root's intermediate
/// under version 1 and the new root's under version 2 — and send both header fields: each
/// client reads only the version it has a root for (docs/SIGNED_RESPONSES_V1.md, section 9).
public struct ResponseSigner: Sendable {
    /// The intermediate key's certificate, sent with every signature.
    public let certificate: IntermediateKeyCertificate
    /// The header version signed under (the `v1` of `v1; …`).
    public let version: Int
    private let key: SigningKey

    /// - Parameters:
    ///   - key: the intermediate private key.
    ///   - certificate: the root's certificate for `key`.
    ///   - version: the header version, 1 to 999. Default 1.
    /// - Throws: `ResponseSignatureError.Code.keyMismatch` when `certificate` certifies
    ///   another key; `ResponseSignatureError.Code.invalidConfiguration` for a bad version.
    public init(key: SigningKey, certificate: IntermediateKeyCertificate, version: Int = 1) throws(ResponseSignatureError) {
        guard key.verificationKey == certificate.key else {
            throw ResponseSignatureError(
                .keyMismatch, "The intermediate certificate is for key \(certificate.key.base64), not for the signing key \(key.verificationKey.base64).")
        }
        guard SignatureHeader.versions.contains(version) else {
            throw ResponseSignatureError(.invalidConfiguration, "A signature version is 1 to 999; got \(version).")
        }
        self.key = key
        self.certificate = certificate
        self.version = version
    }

    /// A signer from the file `servertrust keys issue-intermediate` writes: the intermediate's
    /// PEM private key and its `SERVERTRUST INTERMEDIATE KEY CERTIFICATE` block.
    public init(pem: String, version: Int = 1) throws(ResponseSignatureError) {
        try self.init(key: try SigningKey(pem: pem), certificate: try IntermediateKeyCertificate(pem: pem), version: version)
    }

    /// The `X-ServerTrust-Signature` field for a response to the request `challenge` describes.
    ///
    /// - Parameters:
    ///   - challenge: the request as received (``SignatureChallenge/init(receivedMethod:target:headers:body:host:)``).
    ///   - status: the response status, 100–999.
    ///   - etag: the `ETag` value sent, if any.
    ///   - location: the `Location` value sent, if any (redirects: the signature covers where
    ///     the client is sent next).
    ///   - body: the body bytes sent; ignored for `HEAD`, whose response has none.
    ///   - now: the server's clock, to refuse signing with an expired intermediate.
    /// - Throws: `ResponseSignatureError.Code.intermediateExpired` when the intermediate has
    ///   expired (rotate it: clients would reject the signature);
    ///   `ResponseSignatureError.Code.invalidConfiguration` for a status outside 100–999.
    public func signatureHeader(
        answering challenge: SignatureChallenge, status: Int, etag: String? = nil, location: String? = nil, body: [UInt8],
        now: Date = Date()
    ) throws(ResponseSignatureError) -> (name: String, value: String) {
        try signatureHeader(answering: challenge, status: status, etag: etag, location: location, body: body, now: now, salt: nil)
    }

    /// The same, with a fixed salt for known-answer tests of the layout.
    func signatureHeader(
        answering challenge: SignatureChallenge, status: Int, etag: String?, location: String?, body: [UInt8], now: Date,
        salt fixedSalt: [UInt8]?
    ) throws(ResponseSignatureError) -> (name: String, value: String) {
        guard (100...999).contains(status) else {
            throw ResponseSignatureError(.invalidConfiguration, "An HTTP status is 100 to 999; got \(status).")
        }
        guard now.timeIntervalSince1970 < TimeInterval(certificate.expiresAt) else {
            throw ResponseSignatureError(
                .intermediateExpired, "The intermediate key expired at \(certificate.expires); issue a new one with servertrust keys issue-intermediate.")
        }
        let salt: [UInt8]
        if let fixedSalt { salt = fixedSalt } else { salt = try SecureRandom.bytes(SignatureHeader.saltLength) }
        let bodyDigest = sha256(challenge.method == "HEAD" ? [] : body)
        let requestDigest = challenge.requestDigest
        let etagValue = try SignatureHeader.signedValue(of: "ETag", in: etag.map { [("ETag", $0)] } ?? [])
        let locationValue = try SignatureHeader.signedValue(of: "Location", in: location.map { [("Location", $0)] } ?? [])
        let message = SignatureHeader.message(
            version: version, salt: salt, nonce: challenge.nonce, requestTime: challenge.requestTime, requestDigest: requestDigest,
            status: status, etag: etagValue, location: locationValue, bodyDigest: bodyDigest)
        let header = SignatureHeader(
            version: version, certificate: certificate.encoded, salt: salt, nonce: challenge.nonce, requestTime: challenge.requestTime,
            requestDigest: requestDigest, bodyDigest: bodyDigest, signature: try key.signature(for: message))
        return (SignedResponseHeader.signature, header.text)
    }

    /// The header fields to add to a response, from the request as received: the shape most
    /// server frameworks hand a middleware.
    ///
    /// - Parameters:
    ///   - method: the method, from the request line.
    ///   - path: the path from the request line, percent-encoded as received: exactly the bytes
    ///     received, never a normalised form (no dot-segments removed, nothing decoded).
    ///   - query: the query from the request line, without `?`; nil or empty when there is none.
    ///   - requestHeaders: the request's fields (nonce, request time and `Host` are read).
    ///   - requestBody: the request body as received. Default: empty.
    ///   - status: the response status, 100–999.
    ///   - etag: the `ETag` value sent, if any. Default: none.
    ///   - location: the `Location` value sent, if any. Default: none.
    ///   - body: the body bytes sent; ignored for `HEAD`.
    ///   - host: the public authority (`api.example.com`, or `api.example.com:8443` for a port
    ///     other than 443), when a proxy in front rewrites `Host`. Default: `Host`. The port is
    ///     signed; an authority without one means 443.
    ///   - now: the server's clock, to refuse signing with an expired intermediate. Default: `Date()`.
    /// - Throws: `ResponseSignatureError.Code.missingChallenge` when the request did not ask
    ///   for a signature; the errors of ``SignatureChallenge`` and of signing.
    public func signatureHeaders(
        method: String, path: String, query: String?, requestHeaders: [(name: String, value: String)], requestBody: [UInt8] = [],
        status: Int, etag: String? = nil, location: String? = nil, body: [UInt8], host: String? = nil, now: Date = Date()
    ) throws(ResponseSignatureError) -> [(name: String, value: String)] {
        let target = path + (query.map { $0.isEmpty ? "" : "?" + $0 } ?? "")
        let challenge = try SignatureChallenge(receivedMethod: method, target: target, headers: requestHeaders, body: requestBody, host: host)
        return [try signatureHeader(answering: challenge, status: status, etag: etag, location: location, body: body, now: now)]
    }
}
