public import ServerTrust

/// Apple's roots, compiled in from `Sources/ServerTrustPurchases/Certificates` as Apple
/// publishes them (<https://www.apple.com/certificateauthority/>): what the purchase verifiers
/// trust unless the caller gives roots of its own. No file is read at run time.
///
/// | root | signs | SHA-256 |
/// |---|---|---|
/// | ``appleRootCA`` (RSA) | legacy receipts, through Apple WWDR | `b0b1730e…1001f024` |
/// | ``appleRootCAG2`` (RSA) | — | `c2b9b042…0444a050` |
/// | ``appleRootCAG3`` (ECC) | App Store signed data (JWS), through Apple WWDR G6 | `63343abf…653e9179` |
public enum AppleRootCertificates {
    /// Apple Root CA (Apple Inc. Root, 2006–2035).
    public static let appleRootCA: Certificate? = parse(Certificates.appleIncRootCertificateDER)
    /// Apple Root CA – G2 (2014–2039).
    public static let appleRootCAG2: Certificate? = parse(Certificates.appleRootCAG2DER)
    /// Apple Root CA – G3 (2014–2039).
    public static let appleRootCAG3: Certificate? = parse(Certificates.appleRootCAG3DER)

    /// The three roots, in the order above: the default roots of ``AppStoreSignedDataVerifier``
    /// and the receipt verifier. The build verified that each file parses.
    public static var all: [Certificate] { [appleRootCA, appleRootCAG2, appleRootCAG3].compactMap(\.self) }

    /// The SHA-256 fingerprints Apple publishes for them, hexadecimal, in the same order.
    public static let publishedSHA256Fingerprints = [
        "b0b1730ecbc7ff4505142c49f1295e6eda6bcaed7e2c68c5be91b5a11001f024",
        "c2b9b042dd57830e7d117dac55ac8ae19407d38e41d88f3215bc3a890444a050",
        "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179",
    ]

    /// Whether `certificate` is, byte for byte, one of Apple's roots.
    public static func isAppleRoot(_ certificate: Certificate) -> Bool {
        all.contains { $0.derEncoded == certificate.derEncoded }
    }

    private static func parse(_ base64: String) -> Certificate? {
        try? Certificate(base64Encoded: base64)
    }
}
