public import Foundation

/// Checks on the client that a response was signed by the server, for the request the client
/// sent, with a key chained to a root compiled into the client.
///
/// ```swift
/// let verifier = try ResponseSignatureVerifier(roots: [SignedResponseRoot(base64: signedResponseRootKey)])
/// let challenge = try SignatureChallenge(method: "GET", url: url)
/// // send challenge.requestHeaders with the request, then:
/// let verified = try verifier.verify(status: status, headers: headers, body: body, answering: challenge)
/// ```
///
/// The checks, in order; the first failure is thrown (docs/SIGNED_RESPONSES_V1.md, section 7):
/// 1. a signature field is present (`ResponseSignatureError.Code.missingSignature`), well
///    formed (`malformedSignature`), of a version some root is configured for
///    (`unsupportedVersion`) — the highest such version present is the only one read;
/// 2. its intermediate certificate is signed by a configured root of that version
///    (`untrustedIntermediate`) and not expired (`intermediateExpired`);
/// 3. the response has at most one `ETag` and one `Location` field (`duplicateSignedField`),
///    and the Ed25519 signature verifies over the response's status, ETag and Location and the
///    echoed values (`badSignature`);
/// 4. the nonce was not accepted before (`replayedResponse`) and is this request's
///    (`nonceMismatch`); the server signed this request and request time (`requestMismatch`);
///    the request time is within the freshness window (`staleRequestTime`);
/// 5. the body is the signed one (`bodyMismatch`).
///
/// The clock-skew allowance widens every comparison with the clock: a request time up to the
/// allowance in the future, or up to window + allowance in the past, is fresh; an intermediate
/// is expired only after its expiry + allowance. The verifier remembers accepted nonces
/// (bounded), so each may verify once. Thread-safe.
public final class ResponseSignatureVerifier: Sendable {
    public let roots: [SignedResponseRoot]
    /// How old a request may be when its response is verified. Default 300 s.
    public let freshnessWindow: Duration
    /// How far clocks may disagree. Default 60 s.
    public let clockSkewAllowance: Duration
    private let clock: @Sendable () -> Date
    private let acceptedNonces: NonceCache

    /// - Parameters:
    ///   - roots: the trusted roots, each with its header version. At least one.
    ///   - freshnessWindow: the oldest request whose response is accepted; at least the
    ///     request timeout. Default 300 s.
    ///   - clockSkewAllowance: the tolerance on every time comparison. Default 60 s.
    ///   - replayCacheCapacity: how many accepted nonces are remembered. Default 10 000.
    ///   - clock: the current time. Default `Date()`; tests inject their own.
    /// - Throws: `ResponseSignatureError.Code.invalidConfiguration` for no roots, a version
    ///   outside 1–999, or a negative duration.
    public init(
        roots: [SignedResponseRoot], freshnessWindow: Duration = .seconds(300), clockSkewAllowance: Duration = .seconds(60),
        replayCacheCapacity: Int = 10_000, clock: @escaping @Sendable () -> Date = { Date() }
    ) throws(ResponseSignatureError) {
        guard !roots.isEmpty else {
            throw ResponseSignatureError(.invalidConfiguration, "A signed-response verifier needs at least one root key.")
        }
        if let bad = roots.first(where: { !SignatureHeader.versions.contains($0.version) }) {
            throw ResponseSignatureError(.invalidConfiguration, "A signature version is 1 to 999; root \(bad.key.base64) has \(bad.version).")
        }
        guard freshnessWindow >= .zero, clockSkewAllowance >= .zero else {
            throw ResponseSignatureError(.invalidConfiguration, "The freshness window and clock-skew allowance cannot be negative.")
        }
        self.roots = roots
        self.freshnessWindow = freshnessWindow
        self.clockSkewAllowance = clockSkewAllowance
        self.clock = clock
        acceptedNonces = NonceCache(capacity: replayCacheCapacity)
    }

    /// Verifies a response to the request `challenge` describes.
    ///
    /// - Parameters:
    ///   - status: the response status.
    ///   - headers: the response header fields, in order.
    ///   - body: the whole body as received.
    ///   - challenge: the challenge whose ``SignatureChallenge/requestHeaders`` were sent.
    /// - Returns: what was verified.
    /// - Throws: `ResponseSignatureError` naming the first check that failed, with `status`.
    @discardableResult
    public func verify(
        status: Int, headers: [(name: String, value: String)], body: [UInt8], answering challenge: SignatureChallenge
    ) throws(ResponseSignatureError) -> VerifiedResponseSignature {
        do {
            return try check(status: status, headers: headers, body: body, challenge: challenge)
        } catch {
            throw error.with(status: status)
        }
    }

    private func check(
        status: Int, headers: [(name: String, value: String)], body: [UInt8], challenge: SignatureChallenge
    ) throws(ResponseSignatureError) -> VerifiedResponseSignature {
        let (header, intermediate) = try selectSignature(in: headers)
        let now = Int64(clock().timeIntervalSince1970.rounded(.down))
        let skew = Self.seconds(clockSkewAllowance)

        let candidates = roots.filter { $0.version == header.version && $0.key.keyID == intermediate.rootKeyID }
        guard let root = candidates.first(where: { intermediate.isSigned(by: $0.key) }) else {
            let configured = roots.filter { $0.version == header.version }.map(\.key.keyIDHex).joined(separator: ", ")
            throw ResponseSignatureError(
                .untrustedIntermediate,
                candidates.isEmpty
                    ? "The intermediate key was issued by root \(hex(intermediate.rootKeyID)), which is not a configured v\(header.version) root (\(configured))."
                    : "The intermediate key certificate names root \(hex(intermediate.rootKeyID)) but its signature does not verify with that root.")
        }
        guard now <= intermediate.expiresAt.addingClamped(skew) else {
            throw ResponseSignatureError(
                .intermediateExpired, "The intermediate key expired at \(intermediate.expires); the server must rotate it.")
        }

        let message = header.message(
            status: status, etag: try SignatureHeader.signedValue(of: "ETag", in: headers),
            location: try SignatureHeader.signedValue(of: "Location", in: headers))
        guard intermediate.key.isValidSignature(header.signature, for: message) else {
            throw ResponseSignatureError(
                .badSignature, "The signature does not verify: the status, ETag, Location or signed values were altered, or forged.")
        }

        let window = Self.seconds(freshnessWindow)
        if acceptedNonces.contains(header.nonce, now: now) {
            throw ResponseSignatureError(.replayedResponse, "The response answers a request whose response was already accepted: a replay.")
        }
        guard header.nonce == challenge.nonce else {
            throw ResponseSignatureError(.nonceMismatch, "The response is signed for another request's nonce.")
        }
        guard header.requestTime == challenge.requestTime else {
            throw ResponseSignatureError(
                .requestMismatch, "The server signed request time \(header.requestTime), but the request was sent with \(challenge.requestTime).")
        }
        guard header.requestDigest == challenge.requestDigest else {
            throw ResponseSignatureError(
                .requestMismatch,
                "The server signed a different request (method, host, port, path, query or body) from "
                    + "\(challenge.method) \(challenge.host) port \(challenge.port) \(challenge.path): "
                    + "it was altered on the way, or a proxy in front of the server rewrote Host.")
        }
        guard now.addingClamped(skew) >= challenge.requestTime else {
            throw ResponseSignatureError(
                .staleRequestTime, "The request time is \(challenge.requestTime - now) s ahead of the clock, beyond the \(skew) s skew allowance.")
        }
        guard now <= challenge.requestTime.addingClamped(window).addingClamped(skew) else {
            throw ResponseSignatureError(
                .staleRequestTime, "The request was made \(now - challenge.requestTime) s ago, beyond the \(window) s window (+\(skew) s skew).")
        }
        guard sha256(body) == header.bodyDigest else {
            throw ResponseSignatureError(.bodyMismatch, "The body (\(body.count) bytes) is not the one the server signed.")
        }
        guard acceptedNonces.insert(header.nonce, expiry: challenge.requestTime.addingClamped(window).addingClamped(skew), now: now) else {
            throw ResponseSignatureError(.replayedResponse, "The response answers a request whose response was already accepted: a replay.")
        }
        return VerifiedResponseSignature(version: header.version, root: root.key, intermediate: intermediate)
    }

    /// The entry to verify and its parsed certificate: the highest version present that some
    /// root is configured for. A lower version is never tried when a higher one fails: that
    /// would let an attacker downgrade to a replaced root.
    private func selectSignature(in headers: [(name: String, value: String)]) throws(ResponseSignatureError) -> (SignatureHeader, IntermediateKeyCertificate) {
        let entries = try SignatureHeader.entries(in: headers)
        guard !entries.isEmpty else {
            throw ResponseSignatureError(.missingSignature, "The response has no \(SignedResponseHeader.signature) field.")
        }
        let configured = Set(roots.map(\.version))
        guard let version = entries.map(\.version).filter(configured.contains).max() else {
            let seen = Set(entries.map(\.version)).sorted().map { "v\($0)" }.joined(separator: ", ")
            let known = configured.sorted().map { "v\($0)" }.joined(separator: ", ")
            throw ResponseSignatureError(.unsupportedVersion, "The response is signed under \(seen); this client has roots for \(known).")
        }
        let chosen = entries.filter { $0.version == version }
        guard chosen.count == 1 else {
            throw ResponseSignatureError(.malformedSignature, "The response has \(chosen.count) v\(version) signatures; exactly one is allowed.")
        }
        let header = try SignatureHeader(parsing: chosen[0].text, version: version)
        let intermediate: IntermediateKeyCertificate
        do {
            intermediate = try IntermediateKeyCertificate(encoded: header.certificate)
        } catch {
            throw ResponseSignatureError(.malformedSignature, "The signature's intermediate certificate is malformed: \(error.reason)")
        }
        return (header, intermediate)
    }

    private static func seconds(_ duration: Duration) -> Int64 {
        duration.components.seconds
    }
}

/// What a successful verification established.
public struct VerifiedResponseSignature: Hashable, Sendable {
    /// The header version that was verified.
    public let version: Int
    /// The root that signed the intermediate.
    public let root: VerificationKey
    /// The intermediate that signed the response; watch ``IntermediateKeyCertificate/expires``
    /// to warn before the server's rotation is overdue.
    public let intermediate: IntermediateKeyCertificate
}

extension Int64 {
    /// `self + other`, saturating instead of trapping: times come from hostile input.
    func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
