internal import COpenSSL

/// RFC 9530 `Content-Digest`: the digest of a message's content as sent — after any
/// `Content-Encoding`, before any decoding — computed as the body arrives.
///
/// ```swift
/// let digest = ContentDigest()          // sha-256 and sha-512 at once
/// for chunk in body { digest.update(chunk) }
/// try digest.check(fieldValue)          // the response's Content-Digest
/// ```
///
/// An RFC 9421 signature covers the `Content-Digest` field; this check ties the field to the
/// bytes received. Algorithms checked: `sha-256` and `sha-512` (RFC 9530's "standard" ones);
/// others (`md5`, `sha`, `unixsum`… are deprecated or insecure) are ignored, and a field that
/// names neither known algorithm is refused. Every known algorithm the field lists must match.
public final class ContentDigest {
    /// The digest algorithms RFC 9530 marks standard.
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha256 = "sha-256"
        case sha512 = "sha-512"
    }

    private let sha256Context: OpaquePointer?
    private let sha512Context: OpaquePointer?
    /// The algorithms computed.
    public let algorithms: Set<Algorithm>
    /// How many bytes went in.
    public private(set) var count = 0

    /// A fresh computation of `algorithms` (default both). A verifier computes only what the
    /// received field names (``algorithms(in:)``): SHA-512 of a body nobody asked about is most
    /// of the cost of checking a large one.
    public init(algorithms: Set<Algorithm> = Set(Algorithm.allCases)) {
        func start(_ algorithm: Algorithm, _ digest: OpaquePointer?) -> OpaquePointer? {
            guard algorithms.contains(algorithm) else { return nil }
            guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, digest, nil) == 1 else {
                preconditionFailure("OpenSSL cannot start a SHA-2 digest")
            }
            return context
        }
        self.algorithms = algorithms
        sha256Context = start(.sha256, EVP_sha256())
        sha512Context = start(.sha512, EVP_sha512())
    }

    deinit {
        EVP_MD_CTX_free(sha256Context)
        EVP_MD_CTX_free(sha512Context)
    }

    /// The known algorithms a received `Content-Digest` value lists; none for a field that is
    /// absent or does not parse (``check(_:)`` then refuses it without any hashing).
    public static func algorithms(in field: String?) -> Set<Algorithm> {
        guard let field, let members = try? StructuredField.dictionary(field) else { return [] }
        return Set(members.compactMap { Algorithm(rawValue: $0.key) })
    }

    /// Adds the next bytes of the content.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        count += bytes.count
        if let sha256Context { EVP_DigestUpdate(sha256Context, bytes.baseAddress, bytes.count) }
        if let sha512Context { EVP_DigestUpdate(sha512Context, bytes.baseAddress, bytes.count) }
    }

    /// Adds the next bytes of the content.
    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digests of the content so far (the computation goes on), for ``algorithms``.
    public func digests() -> [Algorithm: [UInt8]] {
        func finish(_ context: OpaquePointer?, _ size: Int) -> [UInt8]? {
            guard let context else { return nil }
            guard let copy = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL cannot copy a digest") }
            defer { EVP_MD_CTX_free(copy) }
            var out = [UInt8](repeating: 0, count: size)
            var length: UInt32 = 0
            guard EVP_MD_CTX_copy_ex(copy, context) == 1, EVP_DigestFinal_ex(copy, &out, &length) == 1 else {
                preconditionFailure("OpenSSL cannot finish a SHA-2 digest")
            }
            return out
        }
        var result: [Algorithm: [UInt8]] = [:]
        result[.sha256] = finish(sha256Context, 32)
        result[.sha512] = finish(sha512Context, 64)
        return result
    }

    /// The `Content-Digest` field value for the content so far: `sha-256=:…:`.
    /// - Precondition: `algorithm` is one of ``algorithms``.
    public func fieldValue(_ algorithm: Algorithm = .sha256) -> String {
        guard let value = digests()[algorithm] else { preconditionFailure("\(algorithm.rawValue) is not computed by this ContentDigest") }
        return algorithm.rawValue + "=:" + StrictBase64.encode(value) + ":"
    }

    /// The `Content-Digest` value of `body` (`sha-256=:…:`).
    public static func fieldValue(of body: [UInt8], algorithm: Algorithm = .sha256) -> String {
        let digest = ContentDigest(algorithms: [algorithm])
        digest.update(body)
        return digest.fieldValue(algorithm)
    }

    /// Checks the content so far against a received `Content-Digest` field value (all its
    /// lines joined with ", ").
    /// - Returns: the algorithms that matched.
    /// - Throws: `ResponseSignatureError` `.digestMismatch` for a malformed field or one naming
    ///   neither `sha-256` nor `sha-512`; `.bodyMismatch` when a listed digest is not the
    ///   content's.
    @discardableResult
    public func check(_ field: String) throws(ResponseSignatureError) -> [Algorithm] {
        let members: [(key: String, member: StructuredField.Member)]
        do {
            members = try StructuredField.dictionary(field)
        } catch {
            throw ResponseSignatureError(.digestMismatch, "The Content-Digest field is malformed at byte \(error.offset): \(error.message).")
        }
        let computed = digests()
        var matched: [Algorithm] = []
        for (key, member) in members {
            guard let algorithm = Algorithm(rawValue: key) else { continue }
            guard case .item(let item) = member, case .bytes(let expected) = item.value else {
                throw ResponseSignatureError(.digestMismatch, "The Content-Digest member \(key) is not a byte sequence.")
            }
            guard let actual = computed[algorithm] else {
                throw ResponseSignatureError(.digestMismatch, "The Content-Digest member \(key) was not computed for this body (this ContentDigest computes \(algorithms.map(\.rawValue).sorted().joined(separator: ", "))).")
            }
            guard expected.count == actual.count, CRYPTO_memcmp(expected, actual, actual.count) == 0 else {
                throw ResponseSignatureError(
                    .bodyMismatch, "The body (\(count) bytes as received) does not match its signed Content-Digest (\(key)): it was altered on the way.")
            }
            matched.append(algorithm)
        }
        guard !matched.isEmpty else {
            throw ResponseSignatureError(
                .digestMismatch, "The Content-Digest field names no algorithm this client checks (sha-256, sha-512): \(members.map(\.key).joined(separator: ", ")).")
        }
        return matched
    }
}
