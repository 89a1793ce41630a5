import ServerTrustCertificates

/// Apple's marker extensions on the certificates that sign App Store data: present and not
/// critical, the check ``AppStoreSignedDataVerifier`` makes on its `x5c` chain, shared here so
/// the receipt verifier makes exactly the same one.
enum AppleMarkerExtension {
    /// Throws unless `certificate` carries the extension `oid`, not critical.
    ///
    /// - Throws: `missingMarkerExtension` or `criticalMarkerExtension`.
    static func check(_ oid: String, on certificate: Certificate, named name: String) throws(PurchaseVerificationError) {
        switch certificate.extensionCriticality(oid: oid) {
        case nil:
            throw PurchaseVerificationError(
                .missingMarkerExtension, "The \(name) certificate (\(certificate.subject)) lacks Apple's marker extension \(oid).")
        case true?:
            throw PurchaseVerificationError(
                .criticalMarkerExtension, "The \(name) certificate (\(certificate.subject)) marks Apple's extension \(oid) critical.")
        case false?:
            return
        }
    }
}
