public import Foundation
internal import COpenSSL

/// What a successful RFC 9421 verification established.
public struct VerifiedMessageSignature: Hashable, Sendable {
    /// The label the server signed under.
    public let label: String
    /// The `keyid` that verified.
    public let keyID: String
    /// The algorithm (`ed25519`, `ecdsa-p256-sha256`, `rsa-pss-sha512`, `hmac-sha256`).
    public let algorithm: String
    /// The covered components, serialized, in order.
    public let coveredComponents: [String]
    /// The `created` parameter.
    public let created: Int64
}

/// Verifies RFC 9421 response signatures (with RFC 9530 `Content-Digest`) for a client, under
/// one ``MessageSignaturePolicy``.
///
/// ```swift
/// let verifier = try MessageSignatureVerifier(policy: MessageSignaturePolicy(keys: keys))
/// let challenge = try verifier.challenge(for: request)   // send challenge.acceptSignature
/// let verified = try verifier.verify(status: status, headers: headers, body: body, answering: challenge)
/// ```
///
/// The checks, in order; the first failure is thrown:
/// 1. `Signature-Input` and `Signature` are at most ``maximumFieldLength`` bytes each and parse
///    as Dictionaries with no label twice (`malformedSignature`), and both are present
///    (`missingSignature`);
/// 2. some signature carries the challenge's nonce (`nonceMismatch`); each such signature is
///    tried in order, and the first one's failure is reported when none verifies:
/// 3. its parameters have their types (`malformedSignature`); it covers the required
///    components, `content-digest` for a non-empty body and each present field the policy names
///    (`missingComponent`);
/// 4. `created` is present, not in the future (`notYetValidSignature`) and not older than the
///    window, and `expires` has not passed (`expiredSignature`);
/// 5. `keyid` names a key of the set or, only when configured, a shared secret (`unknownKey`);
///    `alg`, if given, is the key's algorithm (`algorithmMismatch` for another registered
///    algorithm, `rsa-v1_5-sha256` and `hmac-sha256` with an asymmetric key included;
///    `unsupportedAlgorithm` for a name RFC 9421 does not register);
/// 6. every covered component resolves (`absentComponent`) and the signature verifies over the
///    base (`badSignature`);
/// 7. the body matches the `Content-Digest` (`bodyMismatch`, `digestMismatch`);
/// 8. the nonce was not accepted before (`replayedResponse`).
///
/// Thread-safe; the replay cache is bounded.
public final class MessageSignatureVerifier: Sendable {
    /// The largest `Signature-Input` or `Signature` value (all its lines) read: 16 KiB.
    public static let maximumFieldLength = 16 * 1024

    public let policy: MessageSignaturePolicy
    private let clock: @Sendable () -> Date
    private let acceptedNonces: NonceCache

    /// - Parameters:
    ///   - policy: the keys, required components and windows.
    ///   - replayCacheCapacity: how many accepted nonces are remembered. Default 10 000.
    ///   - clock: the current time. Default `Date()`; tests inject their own.
    /// - Throws: `ResponseSignatureError` `.invalidConfiguration` for a policy that cannot work.
    public init(
        policy: MessageSignaturePolicy, replayCacheCapacity: Int = 10_000, clock: @escaping @Sendable () -> Date = { Date() }
    ) throws(ResponseSignatureError) {
        try policy.validate()
        self.policy = policy
        self.clock = clock
        acceptedNonces = NonceCache(capacity: replayCacheCapacity)
    }

    /// A fresh challenge for `request`: its `Accept-Signature` names the policy's
    /// ``MessageSignaturePolicy/acceptedComponents`` with a new nonce.
    /// - Throws: `ResponseSignatureError` `.openSSLFailure` if no random bytes could be drawn.
    public func challenge(for request: MessageSignatureRequest) throws(ResponseSignatureError) -> MessageSignatureChallenge {
        MessageSignatureChallenge(
            nonce: Base64URL.encode(try SecureRandom.bytes(16)), request: request, policy: policy,
            requestTime: Int64(clock().timeIntervalSince1970.rounded(.down)))
    }

    /// Verifies a response whose whole body (as received, before any content decoding) is at hand.
    ///
    /// - Parameters:
    ///   - status: the response status.
    ///   - headers: the response's header fields, in order, repeats included.
    ///   - body: the body as received.
    ///   - challenge: the challenge sent with the request.
    /// - Returns: the signature that verified.
    /// - Throws: `ResponseSignatureError` naming the first check that failed, with `status`.
    @discardableResult
    public func verify(
        status: Int, headers: [(name: String, value: String)], body: [UInt8], answering challenge: MessageSignatureChallenge
    ) throws(ResponseSignatureError) -> VerifiedMessageSignature {
        // Only what the received field names is computed (every algorithm it lists is checked).
        let digest = ContentDigest(algorithms: ContentDigest.algorithms(in: MessageComponentResolver.fieldValue("content-digest", in: headers)))
        digest.update(body)
        return try verify(status: status, headers: headers, contentDigest: digest, answering: challenge)
    }

    /// Verifies a response whose body went through `contentDigest` as it arrived.
    ///
    /// - Parameters:
    ///   - status: the response status.
    ///   - headers: the response's header fields, in order, repeats included.
    ///   - contentDigest: the digests of the body as received.
    ///   - challenge: the challenge sent with the request.
    /// - Returns: the signature that verified.
    /// - Throws: `ResponseSignatureError` naming the first check that failed, with `status`.
    @discardableResult
    public func verify(
        status: Int, headers: [(name: String, value: String)], contentDigest: ContentDigest, answering challenge: MessageSignatureChallenge
    ) throws(ResponseSignatureError) -> VerifiedMessageSignature {
        do {
            return try check(status: status, headers: headers, digest: contentDigest, challenge: challenge)
        } catch {
            throw error.with(status: status)
        }
    }

    private struct Candidate {
        let label: String
        let covered: [StructuredField.Item]
        let parameters: StructuredField.Parameters
    }

    private func check(
        status: Int, headers: [(name: String, value: String)], digest: ContentDigest, challenge: MessageSignatureChallenge
    ) throws(ResponseSignatureError) -> VerifiedMessageSignature {
        let inputs = try Self.dictionary("Signature-Input", in: headers)
        let signatures = try Self.dictionary("Signature", in: headers)
        guard let inputs, let signatures, !inputs.isEmpty else {
            throw ResponseSignatureError(
                .missingSignature,
                inputs == nil && signatures == nil
                    ? "The response has no Signature-Input and Signature fields: it is not signed."
                    : "The response has \(inputs == nil ? "no Signature-Input" : "no Signature") field beside its \(inputs == nil ? "Signature" : "Signature-Input").")
        }
        var candidates: [Candidate] = []
        for (label, member) in inputs {
            guard case .innerList(let items, let parameters) = member else {
                throw ResponseSignatureError(.malformedSignature, "Signature-Input member \"\(label)\" is not an inner list of components.")
            }
            if parameters.first(where: { $0.key == "nonce" })?.value == .string(challenge.nonce) {
                candidates.append(Candidate(label: label, covered: items, parameters: parameters))
            }
        }
        guard !candidates.isEmpty else {
            throw ResponseSignatureError(
                .nonceMismatch,
                "None of the response's \(inputs.count) signature(s) (\(inputs.map(\.key).joined(separator: ", "))) carries this request's nonce: it answers another request, or was replayed.")
        }
        var firstError: ResponseSignatureError?
        for candidate in candidates {
            do throws(ResponseSignatureError) {
                let verified = try evaluate(candidate, signatures: signatures, status: status, headers: headers, digest: digest, challenge: challenge)
                let window = Self.seconds(policy.maximumAge) + 2 * Self.seconds(policy.clockSkewAllowance)
                let now = Int64(clock().timeIntervalSince1970.rounded(.down))
                guard acceptedNonces.insert(Array(challenge.nonce.utf8), expiry: now.addingClamped(window), now: now) else {
                    throw ResponseSignatureError(.replayedResponse, "A response to this request's nonce was already accepted: a replay.")
                }
                return verified
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        throw firstError!
    }

    private func evaluate(
        _ candidate: Candidate, signatures: [(key: String, member: StructuredField.Member)], status: Int,
        headers: [(name: String, value: String)], digest: ContentDigest, challenge: MessageSignatureChallenge
    ) throws(ResponseSignatureError) -> VerifiedMessageSignature {
        let label = candidate.label
        guard let member = signatures.first(where: { $0.key == label })?.member else {
            throw ResponseSignatureError(.malformedSignature, "Signature-Input names signature \"\(label)\", but the Signature field has no such member.")
        }
        guard case .item(let item) = member, case .bytes(let signature) = item.value else {
            throw ResponseSignatureError(.malformedSignature, "Signature member \"\(label)\" is not a byte sequence.")
        }

        // Parameter types (RFC 9421 section 2.3).
        var created: Int64?
        var expires: Int64?
        var keyID: String?
        var algorithm: String?
        for (key, value) in candidate.parameters {
            switch (key, value) {
            case ("created", .integer(let v)): created = v
            case ("expires", .integer(let v)): expires = v
            case ("keyid", .string(let v)): keyID = v
            case ("alg", .string(let v)): algorithm = v
            case ("nonce", .string), ("tag", .string): break
            case ("created", _), ("expires", _): throw ResponseSignatureError(.malformedSignature, "Signature \"\(label)\": \(key) is not an integer.")
            case ("keyid", _), ("alg", _), ("nonce", _), ("tag", _):
                throw ResponseSignatureError(.malformedSignature, "Signature \"\(label)\": \(key) is not a string.")
            default: break  // an extension parameter: covered by the base all the same
            }
        }

        // Coverage.
        let covered = Set(candidate.covered.map(StructuredField.serialize))
        let targetURI = covered.contains(MessageComponent.requestTargetURI.description)
        let uriParts: Set<String> = ["@scheme", "@authority", "@path", "@query"]
        var missing = challenge.requiredComponents.filter { required in
            !covered.contains(required.description) && !(targetURI && required.isRequestBound && uriParts.contains(required.name))
        }.map(\.description)
        if digest.count > 0 && !covered.contains(MessageComponent.contentDigest.description) {
            missing.append(MessageComponent.contentDigest.description)
        }
        let present = Set(headers.map { $0.name.lowercased() })
        for field in policy.requiredFieldsWhenPresent where present.contains(field) {
            let component = MessageComponent(field).description
            if !covered.contains(component) { missing.append(component) }
        }
        guard missing.isEmpty else {
            throw ResponseSignatureError(
                .missingComponent,
                "Signature \"\(label)\" does not cover \(missing.joined(separator: ", ")), which this host's policy requires; it covers \(candidate.covered.map(StructuredField.serialize).joined(separator: " ")).")
        }

        // Time.
        let now = Int64(clock().timeIntervalSince1970.rounded(.down))
        let skew = Self.seconds(policy.clockSkewAllowance)
        guard let created else {
            throw ResponseSignatureError(.malformedSignature, "Signature \"\(label)\" has no created parameter; this client requires one.")
        }
        guard created <= now.addingClamped(skew) else {
            throw ResponseSignatureError(.notYetValidSignature, "Signature \"\(label)\" was created \(created - now) s in the future, beyond the \(skew) s skew allowance.")
        }
        guard now <= created.addingClamped(Self.seconds(policy.maximumAge)).addingClamped(skew) else {
            throw ResponseSignatureError(
                .expiredSignature, "Signature \"\(label)\" was created \(now - created) s ago, beyond the \(Self.seconds(policy.maximumAge)) s window (+\(skew) s skew).")
        }
        if let expires, now > expires.addingClamped(skew) {
            throw ResponseSignatureError(.expiredSignature, "Signature \"\(label)\" expired \(now - expires) s ago.")
        }

        // Key and algorithm.
        guard let keyID else {
            throw ResponseSignatureError(.unknownKey, "Signature \"\(label)\" has no keyid; this client resolves keys by keyid only.")
        }
        enum Verification {
            case hmac([UInt8])
            case key(SignaturePublicKey, SignatureAlgorithm)
        }
        let verification: Verification
        let algorithmName: String
        if let secret = policy.sharedSecrets[keyID] {
            guard algorithm == nil || algorithm == "hmac-sha256" else {
                throw ResponseSignatureError(.algorithmMismatch, "Signature \"\(label)\" says alg \(algorithm!) but key \"\(keyID)\" is an hmac-sha256 secret.")
            }
            algorithmName = "hmac-sha256"
            verification = .hmac(secret)
        } else {
            guard let key = policy.keys().keys[keyID] else {
                throw ResponseSignatureError(
                    .unknownKey, "Signature \"\(label)\" names keyid \"\(keyID)\", which is not in this host's key set: rotate the client's keys, or it is forged.")
            }
            let (expected, scheme) = Self.algorithm(for: key.kind)
            if let algorithm, algorithm != expected {
                throw ResponseSignatureError(
                    Self.knownAlgorithms.contains(algorithm) ? .algorithmMismatch : .unsupportedAlgorithm,
                    Self.knownAlgorithms.contains(algorithm)
                        ? "Signature \"\(label)\" says alg \(algorithm) but key \"\(keyID)\" is \(key.kind.rawValue), which signs \(expected)."
                        : "Signature \"\(label)\" uses alg \"\(algorithm)\", which this client does not accept (ed25519, ecdsa-p256-sha256, rsa-pss-sha512).")
            }
            algorithmName = expected
            verification = .key(key, scheme)
        }

        // The base, and the signature over it.
        let base = try SignatureBase(request: challenge.request, response: .init(status: status, headers: headers))
            .base(covered: candidate.covered, parameters: candidate.parameters)
        let valid = switch verification {
        case .hmac(let secret): Self.hmacSHA256(key: secret, message: base, matches: signature)
        case .key(let key, let scheme): key.isValidSignature(signature, for: base, algorithm: scheme)
        }
        guard valid else {
            throw ResponseSignatureError(
                .badSignature,
                "Signature \"\(label)\" (\(algorithmName), key \"\(keyID)\") does not verify over this response and request: a covered component (\(candidate.covered.map(StructuredField.serialize).joined(separator: " "))) was altered, it was signed for another request, or it is forged.")
        }

        // The body.
        if let field = MessageComponentResolver.fieldValue("content-digest", in: headers) {
            try digest.check(field)
        }
        return VerifiedMessageSignature(
            label: label, keyID: keyID, algorithm: algorithmName, coveredComponents: candidate.covered.map(StructuredField.serialize), created: created)
    }

    static let knownAlgorithms: Set<String> = ["ed25519", "ecdsa-p256-sha256", "rsa-pss-sha512", "hmac-sha256", "rsa-v1_5-sha256", "ecdsa-p384-sha384"]

    /// The RFC 9421 algorithm a key of `kind` signs with.
    static func algorithm(for kind: SignaturePublicKey.Kind) -> (name: String, scheme: SignatureAlgorithm) {
        switch kind {
        case .ed25519: ("ed25519", .ed25519)
        case .ecdsaP256: ("ecdsa-p256-sha256", .ecdsaP256SHA256Raw)
        case .rsa: ("rsa-pss-sha512", .rsaPSSSHA512)
        }
    }

    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = HMAC(EVP_sha256(), key, Int32(key.count), message, message.count, &out, &length)
        return out
    }

    private static func hmacSHA256(key: [UInt8], message: [UInt8], matches signature: [UInt8]) -> Bool {
        let expected = hmacSHA256(key: key, message: message)
        return signature.count == expected.count && CRYPTO_memcmp(signature, expected, expected.count) == 0
    }

    /// Field `name` parsed as a Dictionary; nil when absent.
    private static func dictionary(
        _ name: String, in headers: [(name: String, value: String)]
    ) throws(ResponseSignatureError) -> [(key: String, member: StructuredField.Member)]? {
        guard let value = MessageComponentResolver.fieldValue(name, in: headers) else { return nil }
        guard value.utf8.count <= maximumFieldLength else {
            throw ResponseSignatureError(.malformedSignature, "The \(name) field is \(value.utf8.count) bytes, over the \(maximumFieldLength)-byte limit.")
        }
        do {
            return try StructuredField.dictionary(value)
        } catch {
            throw ResponseSignatureError(.malformedSignature, "The \(name) field is malformed at byte \(error.offset): \(error.message).")
        }
    }

    private static func seconds(_ duration: Duration) -> Int64 { duration.components.seconds }
}
