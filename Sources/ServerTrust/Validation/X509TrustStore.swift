import Foundation
internal import COpenSSL

/// Our own `X509_STORE`: anchors and CRLs of one policy, built once and shared.
///
/// We never use curl's store (libcurl 7.88 may silently replace it between connections) and
/// never rebuild a store per handshake (it costs a measurable share of kept-alive throughput).
/// OpenSSL's `X509_STORE` is reference-counted and safe for concurrent verification once
/// built; nothing mutates it after `init`, hence `@unchecked Sendable`.
final class X509TrustStore: @unchecked Sendable {
    let pointer: OpaquePointer
    let anchors: [Certificate]
    let revocationLists: [CertificateRevocationList]
    /// Chains validated against this store, reused for identical chains; nil when the store
    /// holds CRLs (see ``ValidatedChainCache``).
    let validatedChains: ValidatedChainCache?
    /// The revocation lists at constant cost where that gives OpenSSL's verdict; nil without
    /// CRLs or when none of them can be checked so (``PathCRLShortcut``).
    let crlShortcut: PathCRLShortcut?

    /// A store with no anchors, for validations whose only anchors are a trusted stack; nil only
    /// when OpenSSL cannot allocate one.
    static let empty: X509TrustStore? = try? X509TrustStore(anchors: [])

    init(anchors: [Certificate], revocationLists: [CertificateRevocationList] = []) throws {
        guard let store = X509_STORE_new() else {
            throw TrustError(.openSSLFailure, "X509_STORE_new failed.")
        }
        pointer = store
        self.anchors = anchors
        self.revocationLists = revocationLists
        validatedChains = revocationLists.isEmpty ? ValidatedChainCache() : nil
        crlShortcut = PathCRLShortcut(revocationLists)
        for anchor in anchors where X509_STORE_add_cert(store, anchor.x509) != 1 {
            // Adding the same certificate twice is harmless; anything else is not.
            let errors = drainOpenSSLErrors()
            if !errors.allSatisfy({ $0.contains("already in hash table") }) {
                var evidence = TrustError.Evidence()
                evidence.openSSLErrors = errors
                throw TrustError(.openSSLFailure, "Cannot add anchor \(anchor.subject) to the trust store.", evidence: evidence)
            }
        }
        for crl in revocationLists where X509_STORE_add_crl(store, crl.crl) != 1 {
            let errors = drainOpenSSLErrors()
            if !errors.allSatisfy({ $0.contains("already in hash table") }) {
                var evidence = TrustError.Evidence()
                evidence.openSSLErrors = errors
                throw TrustError(.openSSLFailure, "Cannot add a CRL of \(crl.issuer) to the trust store.", evidence: evidence)
            }
        }
    }

    deinit { X509_STORE_free(pointer) }
}
