import Foundation
internal import COpenSSL

extension PathValidator {
    /// The anchors above `chain` that issued its top, nearest first; empty when its top is
    /// self-issued or no anchor issued it.
    ///
    /// With `X509_V_FLAG_PARTIAL_CHAIN` (always on: an anchor need not be self-signed) OpenSSL
    /// ends the path at the first anchor it reaches. When that anchor is an intermediate whose
    /// own issuer is an anchor too, the path is extended upward, one anchor at a time, while its
    /// top is not self-issued. A candidate must:
    ///
    /// - be one of `store`'s anchors — never a certificate the server sent, so a server cannot
    ///   add a "root" of its own choosing, even one with the right name;
    /// - have issued the top: `X509_check_issued` (names, key identifiers, keyCertSign) and the
    ///   top's signature verified with the candidate's key — an anchor with the right name and
    ///   another key is not appended;
    /// - vouch for the whole path below it: the extended path is validated again by OpenSSL with
    ///   the candidate as its only anchor (validity at `time`, CA flag, path length, name
    ///   constraints, key sizes, serverAuth purpose) and passes ``WebPKIChecks``, so a root
    ///   that could not have validated this path on its own (expired, `pathlen:0`, names it
    ///   does not permit) is not added. No CRL is consulted: an anchor is trusted by
    ///   configuration, as the top of the validated path is.
    ///
    /// Several anchors can have issued the same certificate only by sharing a key (a re-issued
    /// root, a root and its cross-signed copy): each is an anchor that legitimately issued the
    /// top, so matching a pin on any of them is sound. One is taken, deterministically: a
    /// self-issued one first (it ends the path), then one valid at `time`, then the lowest DER
    /// encoding; candidates whose path does not validate are skipped. A certificate pin on
    /// another of them does not match (their key pins are the same).
    ///
    /// Bounded by `options.maximumDepth` and by never adding a certificate already on the path.
    /// Costs nothing measurable for the usual chain, whose top is a self-signed root; one
    /// `X509_verify_cert` per added anchor otherwise.
    static func anchorsAbove(
        _ chain: [Certificate], in store: X509TrustStore, time: Date, options: PathValidationOptions
    ) -> [Certificate] {
        guard var top = chain.last, !top.isSelfIssued, store.anchors.contains(top) else { return [] }
        var added: [Certificate] = []
        while !top.isSelfIssued, chain.count + added.count <= options.maximumDepth {
            let path = chain + added
            let candidates = issuingAnchors(of: top, among: store.anchors, excluding: path, at: time)
            guard let next = candidates.first(where: { vouches($0, for: path, time: time, options: options) }) else { break }
            added.append(next)
            top = next
        }
        return added
    }

    /// Anchors that issued `certificate` (names, key identifiers, key usage, signature), not
    /// already on the path, in the order they are tried.
    private static func issuingAnchors(
        of certificate: Certificate, among anchors: [Certificate], excluding path: [Certificate], at time: Date
    ) -> [Certificate] {
        clearOpenSSLErrors()
        defer { _ = drainOpenSSLErrors() }  // a failed verification leaves its reason on the queue
        let issuing = anchors.filter { candidate in
            guard !path.contains(candidate), X509_check_issued(candidate.x509, certificate.x509) == X509_V_OK,
                let key = X509_get0_pubkey(candidate.x509)
            else { return false }
            return X509_verify(certificate.x509, key) == 1
        }
        func rank(_ anchor: Certificate) -> Int {
            (anchor.isSelfIssued ? 0 : 2) + (anchor.notValidBefore <= time && time <= anchor.notValidAfter ? 0 : 1)
        }
        return issuing.sorted { lhs, rhs in
            rank(lhs) != rank(rhs) ? rank(lhs) < rank(rhs) : lhs.derEncoded.lexicographicallyPrecedes(rhs.derEncoded)
        }
    }

    /// Whether `path` + `anchor` validates with `anchor` as the only anchor.
    private static func vouches(_ anchor: Certificate, for path: [Certificate], time: Date, options: PathValidationOptions) -> Bool {
        guard let emptyStore = X509TrustStore.empty,
            case .validated(let built)? = try? verifyOnce(
                presented: path + [anchor], setAside: [], store: emptyStore, trustedStack: [anchor],
                trustedStackRevocationLists: [], time: time, options: options, checkingCRLs: false)
        else { return false }
        return built == path + [anchor] && WebPKIChecks.firstViolation(in: built) == nil
    }
}
