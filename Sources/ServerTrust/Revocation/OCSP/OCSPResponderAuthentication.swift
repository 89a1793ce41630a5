import Foundation
internal import COpenSSL
internal import CServerTrustShims

/// A basic response whose signature verified under the key of a signer the issuer authorised.
///
/// Only ``OCSPResponderAuthentication/authenticate(_:issuer:at:)`` creates one (the initializer
/// is private to this file), so code holding one knows the response is authentic.
struct AuthenticatedOCSPResponse {
    let basic: BasicOCSPResponse
    /// The certificate whose key signed the response: the issuer or its delegated responder.
    let signer: Certificate
    let signerIsIssuer: Bool

    fileprivate init(basic: BasicOCSPResponse, signer: Certificate, signerIsIssuer: Bool) {
        self.basic = basic
        self.signer = signer
        self.signerIsIssuer = signerIsIssuer
    }
}

/// Who may sign an OCSP response about a certificate (RFC 6960 §4.2.2.2), checked by hand.
///
/// Authorised are the issuer itself, and a responder certificate issued *directly* by the
/// issuer with the id-kp-OCSPSigning extended key usage. `OCSP_basic_verify`'s own signer check
/// is not used: it builds the signer's chain to whatever anchors a store holds (so the signer
/// only has to chain to *an* anchor, with the issuer-match as one of several ways to pass), falls
/// back to "explicit trust" settings of the root, and judges validity by the store's clock
/// unless told otherwise. Here `OCSP_basic_verify` checks the signature only
/// (`OCSP_NOVERIFY`), under the key of a candidate we chose, and authorisation is the two rules
/// above, at the given validation time.
enum OCSPResponderAuthentication {
    static func authenticate(
        _ basic: BasicOCSPResponse, issuer: Certificate, at time: Date
    ) throws(RevocationFailure) -> AuthenticatedOCSPResponse {
        // The issuer first: a responder ID naming it needs no certificate in the response.
        let candidates = ([issuer] + basic.certificates).filter(basic.responderIDMatches)
        guard !candidates.isEmpty else {
            throw RevocationFailure(
                .unauthorizedSigner,
                "The OCSP responder ID names neither the issuer \(issuer.subject) nor a certificate included in the response.")
        }
        guard let signer = candidates.first(where: { candidate in
            basic.signatureVerifies(under: candidate) { signatureVerifies(basic, signer: candidate) }
        }) else {
            throw RevocationFailure(
                .badSignature,
                "The OCSP response's signature does not verify under the key of \(candidates[0].subject), whom its responder ID names.")
        }
        if X509_cmp(signer.x509, issuer.x509) == 0 {
            return AuthenticatedOCSPResponse(basic: basic, signer: signer, signerIsIssuer: true)
        }
        if let refusal = delegationRefusal(responder: signer, issuer: issuer, at: time) {
            throw RevocationFailure(.unauthorizedSigner, "The OCSP response is signed by \(signer.subject), \(refusal).")
        }
        return AuthenticatedOCSPResponse(basic: basic, signer: signer, signerIsIssuer: false)
    }

    private static func signatureVerifies(_ basic: BasicOCSPResponse, signer: Certificate) -> Bool {
        guard let stack = CServerTrustShims_sk_X509_new_null() else { return false }
        defer { CServerTrustShims_sk_X509_free(stack) }  // borrowed pointer: free the stack only
        guard CServerTrustShims_sk_X509_push(stack, signer.x509) > 0 else { return false }
        // OCSP_NOVERIFY skips the chain step, so the store is never read; it is passed so that no
        // OpenSSL version can dereference a NULL.
        guard let store = X509_STORE_new() else { return false }
        defer { X509_STORE_free(store) }
        clearOpenSSLErrors()
        let result = OCSP_basic_verify(basic.pointer, stack, store, UInt(OCSP_NOINTERN | OCSP_NOVERIFY))
        _ = drainOpenSSLErrors()
        return result == 1
    }

    /// Why `responder` is not a delegated responder of `issuer` at `time`, or `nil` if it is.
    private static func delegationRefusal(responder: Certificate, issuer: Certificate, at time: Date) -> String? {
        clearOpenSSLErrors()
        defer { _ = drainOpenSSLErrors() }
        guard X509_check_issued(issuer.x509, responder.x509) == X509_V_OK,
            let issuerKey = X509_get0_pubkey(issuer.x509), X509_verify(responder.x509, issuerKey) == 1
        else {
            return "which \(issuer.subject) did not issue (a delegated responder must be certified directly by the issuer)"
        }
        let flags = X509_get_extension_flags(responder.x509)
        if flags & UInt32(EXFLAG_INVALID) != 0 {
            return "whose certificate has invalid extensions"
        }
        guard flags & UInt32(EXFLAG_XKUSAGE) != 0,
            X509_get_extended_key_usage(responder.x509) & UInt32(XKU_OCSP_SIGN) != 0
        else {
            return "whose certificate lacks the id-kp-OCSPSigning extended key usage a delegated responder needs"
        }
        if flags & UInt32(EXFLAG_KUSAGE) != 0,
            X509_get_key_usage(responder.x509) & UInt32(KU_DIGITAL_SIGNATURE | KU_NON_REPUDIATION) == 0
        {
            return "whose key usage does not allow signatures"
        }
        guard responder.notValidBefore <= time, time <= responder.notValidAfter else {
            return "whose certificate is not valid at \(time.formatted(.iso8601)) (valid \(responder.notValidBefore.formatted(.iso8601)) to \(responder.notValidAfter.formatted(.iso8601)))"
        }
        return nil
    }
}
