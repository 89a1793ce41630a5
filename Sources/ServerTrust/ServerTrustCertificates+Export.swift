// Certificate, Pin, TrustError, VerificationKey, SignaturePublicKey and the revocation results
// live in ServerTrustCertificates, which the plugin's tool builds without the rest of ServerTrust. Every
// `import ServerTrust` still sees them, and `ServerTrust.Certificate` still names the type.
@_exported public import ServerTrustCertificates
