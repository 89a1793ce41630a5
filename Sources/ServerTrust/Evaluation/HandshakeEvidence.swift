/// What a TLS handshake gave besides the certificate chain, gathered once by the transport and
/// handed to every evaluator (``PeerTrust/handshake``).
///
/// An evaluator that judges evidence (a staple, Certificate Transparency, the protocol) reads it
/// here; no transport needs new plumbing for it. What a transport cannot see is `nil`:
/// swift-nio-ssl's verification callback, for one, gets the chain only.
public struct HandshakeEvidence: Hashable, Sendable {
    /// The OCSP response the server stapled, DER, if any.
    public var stapledOCSPResponse: [UInt8]?
    /// The signed certificate timestamps the server sent in the TLS extension
    /// (`signed_certificate_timestamp`, RFC 6962 section 3.3), each in its TLS encoding; empty
    /// when none were sent. SCTs embedded in the certificate are read from the certificate.
    public var signedCertificateTimestamps: [[UInt8]]
    /// The negotiated protocol version.
    public var protocolVersion: TLSProtocolVersion?
    /// The negotiated cipher suite, by its standard (IANA) name: `TLS_AES_128_GCM_SHA256`.
    public var cipherSuite: String?
    /// The key-exchange group, by OpenSSL's name (`X25519`, `prime256v1`; a group OpenSSL has no
    /// object for by its TLS name, as the post-quantum hybrids `X25519MLKEM768` and
    /// `SecP256r1MLKEM768` that OpenSSL 3.5 negotiates by default), when the transport knows it at
    /// evaluation time (TLS 1.3; a TLS 1.2 server sends its group after the chain).
    public var keyExchangeGroup: String?
    /// The application protocol agreed by ALPN (`h2`, `http/1.1`), if any.
    public var applicationProtocol: String?

    /// - Parameters: each piece of evidence; default none.
    public init(
        stapledOCSPResponse: [UInt8]? = nil, signedCertificateTimestamps: [[UInt8]] = [], protocolVersion: TLSProtocolVersion? = nil,
        cipherSuite: String? = nil, keyExchangeGroup: String? = nil, applicationProtocol: String? = nil
    ) {
        self.stapledOCSPResponse = stapledOCSPResponse
        self.signedCertificateTimestamps = signedCertificateTimestamps
        self.protocolVersion = protocolVersion
        self.cipherSuite = cipherSuite
        self.keyExchangeGroup = keyExchangeGroup
        self.applicationProtocol = applicationProtocol
    }
}
