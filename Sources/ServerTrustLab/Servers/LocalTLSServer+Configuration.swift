public import ServerTrust

extension LocalTLSServer {
    /// What the server presents: a chain (leaf first, sent exactly as given) and the leaf's key.
    public struct Identity: Sendable {
        /// Leaf first, then the certificates to send after it, in order. Include the root only
        /// to test a server that sends it.
        public var chain: [Certificate]
        /// The leaf's private key as PEM (`-----BEGIN PRIVATE KEY-----`, PKCS#8; traditional
        /// RSA/EC PEM works too).
        public var privateKeyPEM: String

        /// `chain` (leaf first) with the leaf's PEM private key.
        public init(chain: [Certificate], privateKeyPEM: String) {
            self.chain = chain
            self.privateKeyPEM = privateKeyPEM
        }
    }

    /// A TLS protocol version the server may negotiate.
    public struct TLSVersion: Hashable, Comparable, Sendable, CustomStringConvertible {
        private enum Base: Int32, Sendable {
            case v1_2 = 0x0303
            case v1_3 = 0x0304
        }

        private let base: Base

        /// TLS 1.2.
        public static let v1_2 = TLSVersion(base: .v1_2)
        /// TLS 1.3.
        public static let v1_3 = TLSVersion(base: .v1_3)

        /// OpenSSL's version constant (`TLS1_2_VERSION`…).
        var openSSLVersion: Int32 { base.rawValue }

        /// Older versions first.
        public static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool { lhs.base.rawValue < rhs.base.rawValue }

        /// `TLSv1.2` or `TLSv1.3`, as OpenSSL names them.
        public var description: String { base == .v1_2 ? "TLSv1.2" : "TLSv1.3" }
    }

    /// How a ``LocalTLSServer`` behaves.
    ///
    /// ALPN: the server selects `http/1.1` when the client offers it, and otherwise negotiates
    /// no protocol; it never speaks HTTP/2 (interop tests use nginx for that).
    public struct Configuration: Sendable {
        /// The chain and key presented. Replace it on a running server with
        /// ``LocalTLSServer/replaceIdentity(_:stapledOCSPResponse:)``.
        public var identity: Identity
        /// Default: TLS 1.2.
        public var minimumTLSVersion: TLSVersion
        /// Default: TLS 1.3.
        public var maximumTLSVersion: TLSVersion
        /// Issue stateless session tickets (TLS 1.2 RFC 5077 tickets, TLS 1.3 tickets).
        /// Default: true.
        public var sessionTickets: Bool
        /// Keep a server-side session cache, so TLS 1.2 clients resume by session ID and, with
        /// tickets off, TLS 1.3 clients resume with stateful tickets. Default: true.
        /// With both this and ``sessionTickets`` off, no handshake can be resumed.
        public var sessionCache: Bool
        /// A DER `OCSPResponse` stapled to every handshake whose client asks for status
        /// (`status_request`), sent as is. Default: none.
        public var stapledOCSPResponse: [UInt8]?
        /// Consulted first for every request; nil falls through to ``LocalHTTPRoutes``.
        /// Default: none.
        public var handler: LocalHTTPHandler?
        /// Ask every client for a certificate, accept any certificate without verifying it (or
        /// none), and record the subject of each one that arrives in
        /// ``LocalTLSServer/clientCertificateSubjects``: to see whether a client sent one, not to
        /// authenticate it. Default: false (no certificate is asked for).
        public var requestsUnverifiedClientCertificate = false

        /// A configuration presenting `identity`, with the defaults described on each property.
        public init(
            identity: Identity,
            minimumTLSVersion: TLSVersion = .v1_2,
            maximumTLSVersion: TLSVersion = .v1_3,
            sessionTickets: Bool = true,
            sessionCache: Bool = true,
            stapledOCSPResponse: [UInt8]? = nil,
            handler: LocalHTTPHandler? = nil
        ) {
            self.identity = identity
            self.minimumTLSVersion = minimumTLSVersion
            self.maximumTLSVersion = maximumTLSVersion
            self.sessionTickets = sessionTickets
            self.sessionCache = sessionCache
            self.stapledOCSPResponse = stapledOCSPResponse
            self.handler = handler
        }

        /// A configuration presenting `chain` (leaf first) with the leaf's PKCS#8 PEM key.
        public init(chain: [Certificate], privateKeyPEM: String, handler: LocalHTTPHandler? = nil) {
            self.init(identity: Identity(chain: chain, privateKeyPEM: privateKeyPEM), handler: handler)
        }
    }

    /// What one completed handshake negotiated, in the order handshakes completed.
    public struct Handshake: Sendable {
        /// The connection it ran on (``LocalHTTPRequest/connectionNumber``).
        public var connectionNumber: Int
        /// `TLSv1.2` or `TLSv1.3`.
        public var tlsVersion: String
        /// Whether a previous session was resumed (`SSL_session_reused`).
        public var resumed: Bool
        /// The SNI host name the client sent.
        public var serverName: String?
        /// The ALPN protocol selected (`http/1.1`), if any.
        public var alpnProtocol: String?
        /// Whether an OCSP response was stapled to it.
        public var stapledOCSPResponse: Bool
        /// The SHA-256 fingerprint of the leaf it presented, to tell identities apart.
        public var leafFingerprint: [UInt8]
    }

    /// The server's counts at one instant.
    public struct Statistics: Sendable {
        /// TCP connections accepted.
        public var acceptedConnections: Int
        /// TLS handshakes that completed (full or resumed).
        public var completedHandshakes: Int
        /// Completed handshakes that resumed a session.
        public var resumedHandshakes: Int
        /// Handshakes that failed (the client rejected us, or the reverse).
        public var failedHandshakes: Int
        /// Handshakes an OCSP response was stapled to.
        public var stapledResponses: Int
        /// Requests answered (counted before the response is written).
        public var requestsServed: Int
        /// Connections open now.
        public var openConnections: Int
    }
}
