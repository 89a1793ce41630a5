import Foundation
internal import COpenSSL
import Synchronization

/// Chains one ``X509TrustStore`` validated recently, so a server that presents the very same
/// certificates again is not put through chain building and signature checks again.
///
/// `X509_verify_cert` is the largest cost of a full handshake a library above curl controls,
/// and a server sends a byte-identical chain on every handshake. What a hit skips is only path validation of that identical chain
/// — its result depends on nothing but the presented bytes, the store, the options and the
/// time — and a hit is allowed only when all four are covered:
///
/// - **Bytes**: every presented certificate, in order, equals the validated one's whole DER
///   (compared, not just hashed: the SHA-1 OpenSSL keeps per certificate only picks the entry).
/// - **Store**: one cache per store; a store is immutable once built. Stores with CRLs get no
///   cache, since a CRL check depends on time in ways the bounds below do not capture.
/// - **Options**: the ``PathValidationOptions`` are part of the key.
/// - **Time**: the validation time lies inside every certificate's validity (presented and
///   validated, notAfter exclusive) and at most ``lifetime`` after the first validation.
///
/// Host name, pins, revocation and every evaluator still run on every handshake, against the
/// chain returned here; in a handshake, possession of the leaf's key is still proved by the
/// TLS CertificateVerify, which libssl checks against the (identical) leaf itself. Failures are
/// never cached.
///
/// Thread-safe: the table is behind a mutex; the certificates it holds are immutable.
// Fast path: docs/PERFORMANCE.md#fast-paths, "Validated-chain cache".
final class ValidatedChainCache: Sendable {
    /// Entries kept; the table is emptied when it is full (the working set is a few servers).
    static let capacity = 256
    /// How long after its first validation a chain is reused.
    static let lifetime: TimeInterval = 600

    struct Key: Hashable {
        /// The presented certificates' SHA-1 digests, concatenated in order.
        let digests: [UInt8]
        let options: PathValidationOptions
    }

    struct Entry {
        let presentedDER: [[UInt8]]
        let options: PathValidationOptions
        let path: ValidatedPath
        let firstValidation: Date
        /// The latest notBefore and the earliest notAfter of every certificate involved.
        let validFrom: Date
        let validUntil: Date

        /// Whether this entry answers for `presentedDER` under `options` at `time`.
        func admits(presentedDER candidate: [[UInt8]], options candidateOptions: PathValidationOptions, time: Date) -> Bool {
            candidateOptions == options && candidate == presentedDER
                && validFrom <= time && time < validUntil
                && time >= firstValidation && time.timeIntervalSince(firstValidation) <= ValidatedChainCache.lifetime
        }
    }

    struct Statistics: Equatable {
        var hits = 0
        var misses = 0
        var stored = 0
    }

    private let entries = Locked<[Key: Entry]>([:])
    private let hits = Atomic<Int>(0)
    private let misses = Atomic<Int>(0)
    private let stored = Atomic<Int>(0)

    var statistics: Statistics {
        Statistics(hits: hits.load(ordering: .relaxed), misses: misses.load(ordering: .relaxed), stored: stored.load(ordering: .relaxed))
    }
    var count: Int { entries.withLock { $0.count } }

    /// The path validated earlier for exactly these certificates, options and time, or nil.
    func path(for presented: [Certificate], options: PathValidationOptions, time: Date) -> ValidatedPath? {
        guard let key = Self.key(presented, options) else { return nil }
        guard let entry = entries.withLock({ $0[key] }),
            entry.admits(presentedDER: presented.map(\.derEncoded), options: options, time: time)
        else {
            misses.add(1, ordering: .relaxed)
            return nil
        }
        hits.add(1, ordering: .relaxed)
        return entry.path
    }

    /// Remembers `path`, which path validation (and its extension through the anchors) just
    /// returned for `presented` at `time`. The anchors added above the path count among the
    /// certificates whose validity bounds the entry: an anchor that expires is no longer added.
    func store(_ path: ValidatedPath, for presented: [Certificate], options: PathValidationOptions, time: Date) {
        guard let key = Self.key(presented, options), !path.certificates.isEmpty else { return }
        let involved = presented + path.certificates
        let entry = Entry(
            presentedDER: presented.map(\.derEncoded), options: options, path: path, firstValidation: time,
            validFrom: involved.map(\.notValidBefore).max() ?? .distantFuture,
            validUntil: involved.map(\.notValidAfter).min() ?? .distantPast)
        guard entry.presentedDER.allSatisfy({ !$0.isEmpty }) else { return }
        entries.withLock { entries in
            if entries.count >= Self.capacity, entries[key] == nil { entries.removeAll() }
            entries[key] = entry
        }
        stored.add(1, ordering: .relaxed)
    }

    /// The table key: nil for a chain path validation refuses outright (none, or too many).
    private static func key(_ presented: [Certificate], _ options: PathValidationOptions) -> Key? {
        guard !presented.isEmpty, presented.count <= PathValidator.maximumPresentedCertificates else { return nil }
        var digests = [UInt8]()
        digests.reserveCapacity(presented.count * Int(SHA_DIGEST_LENGTH))
        for certificate in presented {
            var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var length: UInt32 = 0
            guard X509_digest(certificate.x509, EVP_sha1(), &digest, &length) == 1 else { return nil }
            digests += digest[..<Int(length)]
        }
        return Key(digests: digests, options: options)
    }
}
