import Foundation
import ServerTrust
import ServerTrustCertificates

/// The self-signed certificate StoreKit Testing in Xcode signs with, as a verifier configured
/// for the Xcode environment holds it: never one of Apple's roots, its key parsed once and of
/// the one kind that signs what it is for (P-256 for signed data, RSA for receipts), its
/// validity checked at the time the data is judged at. The JWS and receipt verifiers share it.
struct StoreKitTestCertificate: Sendable {
    let certificate: Certificate
    let key: SignaturePublicKey
    /// The certificate as an `x5c` entry carries it: standard base64 of the DER.
    let x5cEntry: [UInt8]

    /// - Throws: ``PurchaseVerificationError/Code/invalidConfiguration`` for one of Apple's
    ///   roots, or a key that cannot be read or is not of `kind`.
    init(_ certificate: Certificate, keyKind kind: SignaturePublicKey.Kind) throws(PurchaseVerificationError) {
        guard !AppleRootCertificates.isAppleRoot(certificate) else {
            throw PurchaseVerificationError(
                .invalidConfiguration, "\(certificate.subject) is one of Apple's roots, not a StoreKit test certificate.")
        }
        guard let key = try? SignaturePublicKey(subjectPublicKeyInfoDER: certificate.subjectPublicKeyInfoDER), key.kind == kind else {
            throw PurchaseVerificationError(.invalidConfiguration, "The StoreKit test certificate's key is not \(kind == .rsa ? "an RSA" : "a P-256") key.")
        }
        self.certificate = certificate
        self.key = key
        x5cEntry = Array(Data(certificate.derEncoded).base64EncodedString().utf8)
    }

    /// - Throws: ``PurchaseVerificationError/Code/chainValidationFailed`` unless `time` is
    ///   within the certificate's validity.
    func checkValid(at time: Date) throws(PurchaseVerificationError) {
        guard certificate.notValidBefore <= time, time <= certificate.notValidAfter else {
            throw PurchaseVerificationError(
                .chainValidationFailed,
                "The StoreKit test certificate is valid from \(certificate.notValidBefore.formatted(.iso8601)) to "
                    + "\(certificate.notValidAfter.formatted(.iso8601)), not at \(time.formatted(.iso8601)).")
        }
    }
}
