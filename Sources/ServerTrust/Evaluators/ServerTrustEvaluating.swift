/// Decides whether a server's certificates are acceptable for a host.
///
/// Implementations throw a `TrustError` that says which check failed and shows the
/// evidence; returning normally means the server is trusted. Evaluators are immutable and
/// shared across concurrent handshakes, hence `Sendable`.
///
/// A client never runs an evaluator alone: it runs
/// ``evaluateAsPolicy(_:forHost:)``, which checks the host against the leaf once the evaluator
/// has accepted. A custom evaluator therefore need not check the host, and cannot switch that
/// check off.
public protocol ServerTrustEvaluating: Sendable {
    /// Evaluates `trust` for `host` (a DNS name or an IP address literal).
    func evaluate(_ trust: PeerTrust, forHost host: String) throws

    /// A short name for reports and errors; defaults to the type name.
    var name: String { get }

    /// Whether this evaluator reads ``PeerTrust/stapledOCSPResponse``. When true, a TLS client
    /// asks the server for a staple and runs the evaluation once the staple has arrived (in
    /// TLS 1.2 that is after the certificate chain). Default `false`.
    var usesStapledOCSPResponse: Bool { get }

    /// Whether this evaluator reads ``HandshakeEvidence/signedCertificateTimestamps``. When
    /// true, a TLS client asks the server for SCTs in the TLS extension (with OpenSSL, that
    /// also asks for an OCSP staple). Default `false`.
    var usesSignedCertificateTimestamps: Bool { get }

    /// Whether an evaluation may block on the network, fetching revocation data (live OCSP or
    /// CRLs) or doing any other I/O of its own. Default `false`.
    ///
    /// A ``ServerTrustEvaluating`` runs inside the TLS handshake, which waits for it. A
    /// `Session` runs the connections of a host whose evaluator says `true` on a thread of
    /// their own, so a slow responder holds up that host's requests only, not the session's
    /// other hosts. A custom evaluator that does blocking I/O (a network fetch, a lookup in a
    /// remote service) should return `true`; one that may wait only on memory and the CPU
    /// should keep the default.
    var mayFetchRevocationData: Bool { get }
}

extension ServerTrustEvaluating {
    public var name: String { String(describing: type(of: self)) }

    public var usesStapledOCSPResponse: Bool { false }

    public var usesSignedCertificateTimestamps: Bool { false }

    public var mayFetchRevocationData: Bool { false }

    /// Runs `body`, attributing any `TrustError` it throws to this evaluator and host.
    func attributing<T>(host: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as TrustError {
            throw error.attributed(to: name, host: host)
        }
    }
}
