import Foundation
import HTTPTypes
import Logging
import ServerTrust

/// The session's side of signed responses: adds the challenge headers to a request, and judges
/// the response.
///
/// Holds no per-host table: each host's compiled policy (``Entry``, its verifiers and replay
/// caches, one per pattern) is carried by the host's resolved policy (`TrustPolicy`), which a
/// hop reads once. Immutable, hence `Sendable`.
final class SignedResponseChecker: Sendable {
    /// One pattern's signed-response policy, compiled: made once per pattern when the session
    /// takes a trust manager (``compile(_:)``), and shared by every host that pattern resolves.
    struct Entry: Sendable {
        let mode: SignedResponsePolicy.Mode
        let scheme: SignedResponsePolicy.Scheme
        /// v1's verifier (schemes v1 and either); nil when disabled.
        let verifier: ResponseSignatureVerifier?
        /// RFC 9421's verifier (schemes rfc9421 and either); nil when disabled.
        let messageVerifier: MessageSignatureVerifier?
        let coversContentEncoding: Bool

        /// Whether responses are checked (mode informational or enforced).
        var checks: Bool { verifier != nil || messageVerifier != nil }
    }

    /// A hop whose response must be verified.
    struct Pending: Sendable {
        fileprivate let entry: Entry
        let challenge: SignatureChallenge?
        let messageChallenge: MessageSignatureChallenge?
    }

    private let onFailure: (@Sendable (ResponseVerificationFailure) -> Void)?
    private let clock: @Sendable () -> Date
    private let logger: Logger

    /// - Parameter configuration: the session's configuration (its verification hook, clock and logger).
    init(configuration: Session.Configuration) {
        onFailure = configuration.onVerificationFailure
        clock = configuration.signatureClock
        logger = configuration.logger
    }

    /// Compiles one pattern's policy: its verifiers, each with its replay cache.
    /// - Throws: `ResponseSignatureError` `.invalidConfiguration` for a policy without roots
    ///   (unless disabled), with bad versions or durations, or of an RFC 9421 scheme without
    ///   `messageSignatures`.
    static func compile(_ policy: SignedResponsePolicy, clock: @escaping @Sendable () -> Date) throws -> Entry {
        let active = policy.mode != .disabled
        let usesV1 = active && policy.scheme != .rfc9421
        let usesRFC9421 = active && policy.scheme != .v1
        let verifier = usesV1 ? try ResponseSignatureVerifier(
            roots: policy.roots, freshnessWindow: policy.freshnessWindow, clockSkewAllowance: policy.clockSkewAllowance,
            clock: clock) : nil
        var messageVerifier: MessageSignatureVerifier?
        if usesRFC9421 {
            guard let messagePolicy = policy.messageSignatures else {
                throw ResponseSignatureError(
                    .invalidConfiguration, "A signed-response policy of scheme \(policy.scheme) needs messageSignatures (an RFC 9421 key set).")
            }
            messageVerifier = try MessageSignatureVerifier(policy: messagePolicy, clock: clock)
        }
        return Entry(
            mode: policy.mode, scheme: policy.scheme, verifier: verifier, messageVerifier: messageVerifier,
            coversContentEncoding: policy.coversContentEncoding)
    }

    /// `request` with a fresh nonce and request time, as its host's `entry` asks for a
    /// signature, and what to verify the response against.
    func prepare(_ request: Request, _ entry: Entry) throws(SessionError) -> (Request, Pending) {
        // Session.data(for:) reads a streamed or file body into memory first; fail closed if not.
        if let body = request.uploadBody, body.bytes == nil {
            throw SessionError(.invalidRequest, "A streamed body cannot be signed before it is read.", url: request.url.absoluteString)
        }
        var sent = request
        var challenge: SignatureChallenge?
        if entry.verifier != nil {
            let made: SignatureChallenge
            do {
                made = try SignatureChallenge(
                    method: request.method.sentName, url: request.url, requestBody: request.body ?? [], now: clock())
            } catch {
                throw SessionError(
                    .invalidRequest, "Cannot build a signed-response challenge: \(error.reason)", url: request.url.absoluteString, signatureError: error)
            }
            let names = [SignedResponseHeader.nonce, SignedResponseHeader.requestTime].compactMap { HTTPField.Name($0) }
            sent.headers.removeAll { names.contains($0.name) }
            try Self.append(made.requestHeaders, to: &sent, url: request.url)
            challenge = made
        }
        var messageChallenge: MessageSignatureChallenge?
        if let messageVerifier = entry.messageVerifier {
            sent.headers.removeAll { $0.name == Self.acceptSignature }
            // A request body is bound the RFC 9530 way: the client's own Content-Digest of the
            // bytes it sends, which the signature must cover as "content-digest";req.
            if let body = request.body, !body.isEmpty {
                sent.headers.removeAll { $0.name == Self.contentDigest }
                try Self.append([(name: "Content-Digest", value: ContentDigest.fieldValue(of: body))], to: &sent, url: request.url)
            }
            let fields = sent.headers.map { (name: $0.name.rawName, value: $0.value) }
            guard let described = MessageSignatureRequest(method: request.method.sentName, url: request.url, headers: fields) else {
                throw SessionError(.invalidRequest, "The URL has no scheme or host to sign a response for.", url: request.url.absoluteString)
            }
            let made: MessageSignatureChallenge
            do {
                made = try messageVerifier.challenge(for: described)
            } catch {
                throw SessionError(
                    .invalidRequest, "Cannot build an Accept-Signature challenge: \(error.reason)", url: request.url.absoluteString, signatureError: error)
            }
            try Self.append([(name: "Accept-Signature", value: made.acceptSignature)], to: &sent, url: request.url)
            messageChallenge = made
        }
        return (sent, Pending(entry: entry, challenge: challenge, messageChallenge: messageChallenge))
    }

    private static let acceptSignature = HTTPField.Name("Accept-Signature")!
    private static let contentDigest = HTTPField.Name("Content-Digest")!

    private static func append(_ fields: [(name: String, value: String)], to request: inout Request, url: URL) throws(SessionError) {
        for field in fields {
            // The challenge's names are constants and its values base64, digits and structured
            // fields; fail closed all the same rather than send one the server could not match.
            guard let name = HTTPField.Name(field.name), HTTPField.isValidValue(field.value) else {
                throw SessionError(
                    .invalidRequest, "The signed-response challenge field \"\(field.name)\" cannot be sent as built.", url: url.absoluteString)
            }
            request.headers.append(HTTPField(name: name, value: field.value))
        }
    }

    /// The verification of one hop's response. Enforced mode throws on failure; both modes
    /// report a failure to the hook first, and every outcome to `metrics`.
    func verify(
        _ pending: Pending?, status: Int, headers: @autoclosure () -> HTTPFields, body: [UInt8], url: URL, metrics: SessionMetrics? = nil
    ) throws(SessionError) -> ResponseVerification {
        // The fields are made from the bytes received only for a checked host.
        guard let pending, pending.entry.checks else { return .notRequested }
        let entry = pending.entry
        // Every field, repeats included in order: a second ETag or Location, or a second
        // Signature-Input line, must reach the verifier, which refuses it.
        let fields = headers().map { (name: $0.name.rawName, value: $0.value) }
        var failure: ResponseSignatureError?
        var scheme = entry.scheme
        if let messageVerifier = entry.messageVerifier, let challenge = pending.messageChallenge {
            do {
                try messageVerifier.verify(status: status, headers: fields, body: body, answering: challenge)
                metrics?.signedResponseChecked(scheme: "rfc9421", mode: entry.mode, failure: nil)
                return .verified
            } catch {
                failure = error
                scheme = .rfc9421
            }
        }
        // Scheme either: v1 is tried when RFC 9421 did not verify; the RFC 9421 failure is the
        // one reported when the response carried an RFC 9421 signature, else v1's.
        if let verifier = entry.verifier, let challenge = pending.challenge {
            do {
                try verifier.verify(status: status, headers: fields, body: body, answering: challenge)
                metrics?.signedResponseChecked(scheme: "v1", mode: entry.mode, failure: nil)
                return .verified
            } catch {
                if failure == nil || failure?.code == .missingSignature {
                    failure = error
                    scheme = .v1
                }
            }
        }
        let error = failure ?? ResponseSignatureError(.missingSignature, "The response carries no signature.", status: status)
        let mode = entry.mode
        metrics?.signedResponseChecked(scheme: scheme.description, mode: mode, failure: error)
        logger.error(
            "Signed-response verification failed for \(url.host ?? "?")\(mode == .enforced ? "" : ", not enforced"): \(error.reason)",
            metadata: [
                "host": .string(url.host ?? ""), "evaluator": .string(scheme == .v1 ? "ResponseSignatureVerifier" : "MessageSignatureVerifier"),
                "reason": .string(error.code.description), "mode": .string("\(mode)"), "status": .stringConvertible(status),
                "scheme": .string(scheme.description),
            ])
        onFailure?(ResponseVerificationFailure(url: url, mode: mode, error: error))
        guard mode == .enforced else { return .failed(error) }
        throw SessionError(
            .responseSignatureInvalid, "The response (status \(status)) failed signature verification: \(error.reason)",
            url: url.absoluteString, signatureError: error)
    }

    /// Refuses to stream from a host whose responses are checked: verification needs the whole
    /// body, and a stream would hand out unverified bytes before the verdict.
    static func refuseStreaming(_ request: Request) throws(SessionError) {
        throw SessionError(
            .invalidRequest,
            "Responses from \(request.url.host ?? "this host") are signature-checked, which needs the whole body before any of it is "
                + "used; use data(for:) (bounded by maximumResponseBodySize) instead of stream(_:).",
            url: request.url.absoluteString)
    }
}
