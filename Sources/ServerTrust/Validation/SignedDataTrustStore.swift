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
