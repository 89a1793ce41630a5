package import Foundation

/// Roots for chains that sign data rather than serve TLS — the `x5c` chain of the App Store's
/// signed data — and the path validation they get: ServerTrust's own (``PathValidator``:
/// signatures, validity, CA flag, path length, key usage, the structural Web PKI rules of
/// ``WebPKICheck``), with no TLS purpose and without OpenSSL's strict profile.
///
/// Strict mode stays off because its additions are issuance hygiene, not authority: critical
/// basicConstraints in CA certificates and key identifiers present. Apple's published test chain
/// for App Store signed data has neither, while Apple's production G3 chain passes either way;
/// none of the two decides who signed.
package final class SignedDataTrustStore: Sendable {
    /// The roots, as configured.
    package let roots: [Certificate]
    /// The roots' DER, encoded once: every verification compares the sender's root with them.
    private let rootEncodings: Set<[UInt8]>
    private let store: X509TrustStore

    /// A store of `roots`; throws ``TrustError/Code/invalidConfiguration`` when there is none.
    package init(roots: [Certificate]) throws(TrustError) {
        guard !roots.isEmpty else {
            throw TrustError(.invalidConfiguration, "A signed-data trust store needs at least one root.")
        }
        self.roots = roots
        rootEncodings = Set(roots.map(\.derEncoded))
        do {
            store = try X509TrustStore(anchors: roots)
        } catch let error as TrustError {
            throw error
        } catch {
            throw TrustError(.openSSLFailure, "The signed-data trust store could not be built: \(error).")
        }
    }

    /// Whether `certificate` is one of the roots, byte for byte.
    package func holds(_ certificate: Certificate) -> Bool {
        rootEncodings.contains(certificate.derEncoded)
    }

    /// Validates `chain` (the signer first, then its intermediates; never a root a sender
    /// supplied) to one of the roots at `time`.
    ///
    /// - Returns: the validated chain, signer first, ending at the root.
    /// - Throws: the validator's ``TrustError`` (`chainValidationFailed`, `revoked`, …).
    package func validate(_ chain: [Certificate], at time: Date) throws(TrustError) -> [Certificate] {
        var options = PathValidationOptions()
        options.purpose = .dataSigning
        do {
            return try PathValidator.validate(presented: chain, store: store, time: time, options: options)
        } catch let error as TrustError {
            throw error
        } catch {
            throw TrustError(.chainValidationFailed, "The signing chain could not be validated: \(error).")
        }
    }
}

extension SignedDataTrustStore {
    /// The revocation status of every certificate of a validated signing chain but its root,
    /// signer first, from ServerTrust's revocation machinery (``RevocationChecker``): the
    /// application's CRLs, the shared ``RevocationCache``, then live OCSP and CRLs through
    /// `fetcher`, one flight per certificate across concurrent callers, within the options'
    /// time budget; answers judged at `time`.
    ///
    /// The options' scope is not read: a signing chain is checked whole, since a revoked
    /// intermediate would vouch for any leaf. A certificate naming neither an OCSP responder nor
    /// a CRL distribution point is `noResponderURL` unknown. Checking stops at the first
    /// certificate found revoked.
    ///
    /// - Parameter validated: the chain ``validate(_:at:)`` returned, ending at the root.
    package func revocationResults(
        of validated: [Certificate], options: RevocationOptions, fetcher: (any RevocationFetcher)?, cache: RevocationCache,
        revocationLists: [CertificateRevocationList] = [], at time: Date
    ) -> [CertificateRevocationResult] {
        let checker = RevocationChecker(
            options: options, fetcher: fetcher, cache: cache, localCRLs: revocationLists.map(ProfiledCRL.init), time: time,
            deadline: ContinuousClock.now + options.timeBudget, record: RevocationRecord())
        var results: [CertificateRevocationResult] = []
        for depth in 0..<max(validated.count - 1, 0) {
            let result = checker.check(validated[depth], depth: depth, issuer: validated[depth + 1], staple: nil)
            results.append(result)
            if case .revoked = result.status { break }
        }
        return results
    }
}

extension SignedDataTrustStore {
    /// A verified OCSP answer for `certificate` that the cache still holds (in memory or in its
    /// directory) though it may have gone stale, verified in full as of the time it was
    /// produced: what shows a certificate that has since expired was not revoked at that time.
    ///
    /// - Returns: the status and the response's thisUpdate, or nil when the cache holds no
    ///   response that verifies at its production time.
    package func archivedOCSPAnswer(
        for certificate: Certificate, issuer: Certificate, options: RevocationOptions, cache: RevocationCache
    ) -> (status: RevocationStatus, thisUpdate: Date)? {
        guard let key = RevocationCacheKey.ocsp(certificate: certificate, issuer: issuer) else { return nil }
        var found: (status: RevocationStatus, thisUpdate: Date)?
        _ = cache.cached(key, maximumSize: options.effectiveMaximumResponseSize) { data in
            guard let response = data.ocspResponse, let producedAt = response.basic?.producedAt else { return false }
            let verified = options.ocspVerifier.verify(response, for: certificate, issuedBy: issuer, at: producedAt)
            guard verified.status.isDecisive, let thisUpdate = verified.thisUpdate else { return false }
            found = (verified.status, thisUpdate)
            return true
        }
        return found
    }
}
