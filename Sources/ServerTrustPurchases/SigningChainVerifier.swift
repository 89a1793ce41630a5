import Foundation
import ServerTrust
import ServerTrustCertificates

/// The App Store's signing chain — leaf, Apple WWDR intermediate, configured root — verified
/// once and remembered: path validation, Apple's marker extensions, the leaf's key and the
/// chain's revocation state, for the JWS and receipt verifiers alike.
///
/// **Validation time.** With a time given, the chain is judged at that time and nothing moves
/// it. Without one, it is judged now; when it does not validate now but did when the data was
/// signed (it has expired or been rotated since), it is judged at the signing date — and then
/// only with revocation checking on and a verified "good" answer for each certificate that was
/// produced at or after the signing date: a live one, or the last one this verifier saw while
/// the chain was valid. A signing date is the signer's claim; an answer given after it is what
/// shows the key was not revoked when it signed. Without such an answer the data is refused as
/// ``PurchaseVerificationError/Code/revocationUnknown`` (retryable); with revocation checking
/// off, as ``PurchaseVerificationError/Code/chainValidationFailed``.
///
/// **Cache.** A chain that validated is kept, keyed by its exact bytes (the `x5c` text of a
/// JWS, the DER of a receipt's certificates), with the window in which it validates, its leaf's
/// parsed key and its revocation answers until they go stale. So a new transaction signed by a
/// known leaf costs its signature check and its JSON decode: no certificate is parsed and no
/// path built again. At most ``capacity`` chains are kept (Apple signs with a handful); only a
/// chain that validated to a configured root is ever stored.
final class SigningChainVerifier: Sendable {
    /// Chains kept; the oldest entry is dropped past it.
    static let capacity = 64
    /// How long an unknown revocation status stands before it is asked again: a responder
    /// that is down is not asked on every verification.
    static let unknownRetryInterval: TimeInterval = 30

    /// The roots and markers in force; a chain verified under an earlier generation is
    /// verified again.
    let trust: LiveAppleSigningTrust
    let revocation: AppStoreRevocationPolicy
    private let entries = Locked<[ChainKey: Entry]>([:])
    /// Chains parsed and validated so far (cache misses), for tests.
    private let misses = Locked(0)
    var validations: Int { misses.withLock { $0 } }

    /// A chain verified for one verification.
    struct Verified {
        /// Leaf, intermediate, root.
        let chain: [Certificate]
        let key: SignaturePublicKey
        /// Leaf first; empty with revocation checking off.
        let revocation: [CertificateRevocationResult]
        /// The time the chain was judged at: the time given, now, or the signing date.
        let judgedAt: Date
        /// The latest notBefore and the earliest notAfter of the chain, read once per chain.
        let validFrom: Date
        let validUntil: Date
    }

    private struct Entry: Sendable {
        let chain: [Certificate]
        let key: SignaturePublicKey
        /// The ``LiveAppleSigningTrust`` generation it was verified under, and its store.
        let generation: Int
        let store: SignedDataTrustStore
        /// The chain validates strictly between these instants.
        let validFrom: Date
        let validUntil: Date
        let inserted: Date
        var revocation: [CertificateRevocationResult] = []
        /// Until when ``revocation`` stands; nil before the first check.
        var revocationFreshUntil: Date?
        /// Per depth, the thisUpdate of the latest verified "good" answer seen, kept after the
        /// answer goes stale: what shows old data was signed before any revocation.
        var lastGood: [Date?] = [nil, nil]

        func validates(at time: Date) -> Bool { validFrom < time && time < validUntil }
    }

    init(trust: LiveAppleSigningTrust, revocation: AppStoreRevocationPolicy) {
        self.trust = trust
        self.revocation = revocation
    }

    /// Verifies the chain of signed data.
    ///
    /// - Parameters:
    ///   - key: the chain's exact bytes, the cache key.
    ///   - presented: parses the chain, signer first, without the root (called on a cache
    ///     miss, with the set in force).
    ///   - signedAt: when the data says it was signed, if it says; asked only when the chain is
    ///     not valid at the time.
    ///   - now: the time to judge the chain at.
    ///   - fixed: whether `now` was given by the caller, which no rule moves; else it is the
    ///     clock's, and the signing-date rule applies.
    func verify(
        key: [UInt8], presented: (AppleSigningTrust) throws(PurchaseVerificationError) -> [Certificate], signedAt: () -> Date?, at now: Date,
        fixed: Bool
    ) throws(PurchaseVerificationError) -> Verified {
        let (current, generation) = trust.snapshot
        let key = ChainKey(key)
        var entry: Entry
        var cached = false
        if let known = entries.withLock({ $0[key] }), known.generation == generation {
            (entry, cached) = (known, true)
        } else {
            misses.withLock { $0 += 1 }
            entry = try validate(presented(current), under: current, generation: generation, at: now, signedAt: fixed ? { nil } : signedAt)
        }
        if entry.validates(at: now) {
            let results = try checkRevocation(&entry, key: key, cached: cached, at: now)
            return Verified(
                chain: entry.chain, key: entry.key, revocation: results, judgedAt: now, validFrom: entry.validFrom, validUntil: entry.validUntil)
        }
        // Not valid now: only the signing-date rule can save it, and only without a fixed time.
        guard !fixed, let signedAt = signedAt(), signedAt < now, entry.validates(at: signedAt) else {
            throw PurchaseVerificationError(
                .chainValidationFailed,
                "The signing chain is not valid at \(now.formatted(.iso8601)): it is valid from "
                    + "\(entry.validFrom.formatted(.iso8601)) to \(entry.validUntil.formatted(.iso8601)).")
        }
        guard revocation.isEnabled else {
            throw PurchaseVerificationError(
                .chainValidationFailed,
                "The signing chain expired at \(entry.validUntil.formatted(.iso8601)), after the data was signed at "
                    + "\(signedAt.formatted(.iso8601)); with revocation checking off, nothing shows it was not revoked then.")
        }
        let results = try checkRevocation(&entry, key: key, cached: cached, at: now, signedAt: signedAt)
        return Verified(
            chain: entry.chain, key: entry.key, revocation: results, judgedAt: signedAt, validFrom: entry.validFrom, validUntil: entry.validUntil)
    }

    /// Path validation, the chain's shape and Apple's markers, on a cache miss; the entry is
    /// stored only once all of them pass. With `signedAt`, a chain that does not validate at
    /// `time` is tried at `signedAt`.
    private func validate(
        _ presented: [Certificate], under current: AppleSigningTrust, generation: Int, at time: Date, signedAt: () -> Date?
    ) throws(PurchaseVerificationError) -> Entry {
        let roots = current.store
        let validated: [Certificate]
        do {
            validated = try roots.validate(presented, at: time)
        } catch {
            guard let signedAt = signedAt(), signedAt < time, let then = try? roots.validate(presented, at: signedAt) else {
                throw PurchaseVerificationError(.chainValidationFailed, error.reason)
            }
            validated = then
        }
        guard validated.count == 3, validated.first == presented.first, presented.dropFirst().contains(validated[1]) else {
            throw PurchaseVerificationError(
                .chainValidationFailed, "The leaf does not chain to the configured root through the intermediate sent with it (a JWS's x5c[1]).")
        }
        for oid in current.intermediateMarkerOIDs { try AppleMarkerExtension.check(oid, on: validated[1], named: "intermediate") }
        for oid in current.leafMarkerOIDs { try AppleMarkerExtension.check(oid, on: validated[0], named: "leaf") }
        let key: SignaturePublicKey
        do {
            key = try SignaturePublicKey(subjectPublicKeyInfoDER: validated[0].subjectPublicKeyInfoDER)
        } catch {
            throw PurchaseVerificationError(.invalidSignature, "The signer's public key cannot be read: \(error)")
        }
        return Entry(
            chain: validated, key: key, generation: generation, store: roots, validFrom: validated.map(\.notValidBefore).max() ?? .distantFuture,
            validUntil: validated.map(\.notValidAfter).min() ?? .distantPast, inserted: Date())
    }

    /// The revocation step: the entry's answers while they stand, else fresh ones; then the
    /// decision. Stores the entry (the chain validated) whatever the decision.
    ///
    /// - Parameter signedAt: set when the chain has expired since the data was signed: every
    ///   certificate then needs a verified "good" produced at or after it.
    ///   - cached: whether the entry came from the cache: then it is stored again only when its
    ///     answers were refreshed.
    private func checkRevocation(
        _ entry: inout Entry, key: ChainKey, cached: Bool, at time: Date, signedAt: Date? = nil
    ) throws(PurchaseVerificationError) -> [CertificateRevocationResult] {
        guard let mode = revocation.mode else {
            if !cached { store(entry, key: key) }
            return []
        }
        var refreshed = false
        if entry.revocationFreshUntil.map({ time >= $0 }) ?? true {
            refreshed = true
            let results = entry.store.revocationResults(
                of: entry.chain, options: mode.options, fetcher: mode.fetcher, cache: mode.cache, revocationLists: mode.revocationLists,
                at: time)
            entry.revocation = results
            var freshUntil = time.addingTimeInterval(Self.unknownRetryInterval)
            if results.allSatisfy(\.status.isGoodOrRevoked) {
                freshUntil = results.compactMap(\.validUntil).min() ?? freshUntil
            }
            entry.revocationFreshUntil = freshUntil
            for result in results where result.status == .good && result.depth < entry.lastGood.count {
                if let produced = result.thisUpdate, produced > entry.lastGood[result.depth] ?? .distantPast {
                    entry.lastGood[result.depth] = produced
                }
            }
        }
        if refreshed || !cached { store(entry, key: key) }
        let results = entry.revocation
        for result in results {
            if case .revoked(let reason, let date) = result.status {
                throw PurchaseVerificationError(
                    .revoked,
                    "The \(result.depth == 0 ? "leaf" : "intermediate") certificate (\(result.certificate.subject), serial "
                        + "\(result.certificate.serialNumber)) is revoked since \(date.formatted(.iso8601)), reason "
                        + "\(reason?.description ?? "not given"), according to the \(result.source).")
            }
        }
        if let signedAt {
            for depth in 0..<(entry.chain.count - 1) {
                let certificate = entry.chain[depth]
                let live = results.first { $0.depth == depth }
                if let live, Self.covers(live.status, producedAt: live.thisUpdate, signedAt: signedAt, certificate: certificate) { continue }
                if let remembered = entry.lastGood[depth], Self.covers(.good, producedAt: remembered, signedAt: signedAt, certificate: certificate) {
                    continue
                }
                if let archived = entry.store.archivedOCSPAnswer(for: certificate, issuer: entry.chain[depth + 1], options: mode.options, cache: mode.cache) {
                    if case .revoked(let reason, let date) = archived.status {
                        throw PurchaseVerificationError(
                            .revoked,
                            "The \(depth == 0 ? "leaf" : "intermediate") certificate (\(certificate.subject)) is revoked since "
                                + "\(date.formatted(.iso8601)), reason \(reason?.description ?? "not given"), according to the last OCSP answer cached for it.")
                    }
                    if Self.covers(archived.status, producedAt: archived.thisUpdate, signedAt: signedAt, certificate: certificate) { continue }
                }
                throw PurchaseVerificationError(
                    .revocationUnknown,
                    "The signing chain expired at \(entry.validUntil.formatted(.iso8601)), after the data was signed at "
                        + "\(signedAt.formatted(.iso8601)), and no verified answer given between then and the expiry of "
                        + "\(certificate.subject) shows it was not revoked (\(live.map(\.explanation) ?? "not checked")); retry later.")
            }
            return results
        }
        if mode.options.requirePositiveResponse, let unknown = results.first(where: { !$0.status.isGoodOrRevoked }) {
            throw PurchaseVerificationError(
                .revocationUnknown,
                "The revocation status of \(unknown.certificate.subject) (depth \(unknown.depth)) is unknown and the policy "
                    + "requires a verified answer (hard-fail): \(unknown.explanation); retry later.")
        }
        return results
    }

    /// Whether an answer shows `certificate` was not revoked at `signedAt`: a verified "good"
    /// produced at or after it, while the certificate was still valid — responders need not
    /// keep answering for expired certificates (RFC 6960 section 4.4.4), and a CA may drop them
    /// from its CRLs (RFC 5280 section 3.3), so only an answer from within its validity counts.
    private static func covers(_ status: RevocationStatus, producedAt: Date?, signedAt: Date, certificate: Certificate) -> Bool {
        guard status == .good, let producedAt else { return false }
        return signedAt <= producedAt && producedAt <= certificate.notValidAfter
    }

    private func store(_ entry: Entry, key: ChainKey) {
        entries.withLock { entries in
            if entries[key] == nil, entries.count >= Self.capacity,
                let oldest = entries.min(by: { $0.value.inserted < $1.value.inserted })?.key
            {
                entries[oldest] = nil
            }
            entries[key] = entry
        }
    }
}

extension RevocationStatus {
    /// A verified answer, as opposed to unknown.
    fileprivate var isGoodOrRevoked: Bool {
        if case .unknown = self { return false }
        return true
    }
}

/// A chain's (or a certificate's) exact bytes as a cache key, hashed by their length, first 64
/// and last 32 bytes and compared in full: hashing all 3 to 4 KB of an `x5c` or a receipt's
/// certificates on every lookup cost more than the rest of a steady verification's bookkeeping.
/// The head holds the leaf's serial number (the chains of one root share their tail), the tail a
/// certificate's signature; bytes chosen to collide only cost probes in a table of at most 64.
struct ChainKey: Hashable, Sendable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.count)
        bytes.prefix(64).withUnsafeBytes { hasher.combine(bytes: $0) }
        bytes.suffix(32).withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// Byte for byte, as `memcmp` compares (`Array ==` loops one element at a time: for the
    /// 3.7 KB of a receipt's certificates that was 4 % of its verification).
    static func == (lhs: ChainKey, rhs: ChainKey) -> Bool {
        guard lhs.bytes.count == rhs.bytes.count, !lhs.bytes.isEmpty else { return lhs.bytes.count == rhs.bytes.count }
        return lhs.bytes.withUnsafeBytes { l in rhs.bytes.withUnsafeBytes { r in memcmp(l.baseAddress!, r.baseAddress!, l.count) == 0 } }
    }
}
