public import ServerTrust
public import Foundation

/// Entry points of the in-process PKI: roots, PEM bundles, temporary files.
///
/// Every certificate is generated in the process when it is asked for, so none can expire under
/// a test suite and nothing depends on the `openssl` command line. Keys live in memory only; a
/// lab PKI is for demos, examples and tests, never for production traffic.
public enum LabPKI {
    /// A self-signed root CA.
    ///
    /// - Parameters:
    ///   - commonName: default "Test Root CA".
    ///   - key: default a fresh P-256 key.
    ///   - notBefore: default a day ago.
    ///   - notAfter: default ten years from now.
    ///   - pathLength: basicConstraints pathLenConstraint. Default none.
    ///   - permittedDNSNames: nameConstraints permitted DNS subtrees. Default none.
    ///   - serialNumber: hexadecimal; default 16 random bytes.
    public static func makeRoot(
        commonName: String = "Test Root CA",
        key: LabKey = .ecP256(),
        notBefore: Date = Date(timeIntervalSinceNow: -86400),
        notAfter: Date = Date(timeIntervalSinceNow: 10 * 365 * 86400),
        pathLength: Int? = nil,
        permittedDNSNames: [String] = [],
        serialNumber: String? = nil
    ) throws -> LabCA {
        try makeRoot(
            CertificateSpec(
                subject: LabName(commonName: commonName), subjectKey: key, serialNumber: serialNumber,
                notBefore: notBefore, notAfter: notAfter, isCA: true, pathLength: pathLength,
                extendedKeyUsage: [], permittedDNSNames: permittedDNSNames))
    }

    /// A self-signed certificate from `spec`, signed with its own key, returned as a CA.
    public static func makeRoot(_ spec: CertificateSpec) throws -> LabCA {
        let certificate = try CertificateBuilder.build(spec, issuer: nil, issuerKey: spec.subjectKey)
        return LabCA(certificate: certificate, key: spec.subjectKey, name: spec.subject, issuer: nil)
    }

    /// The certificates as one PEM text, in order.
    public static func pemBundle(_ certificates: [Certificate]) -> String {
        certificates.map(\.pemEncoded).joined()
    }

    /// Writes `contents` to a new file in a fresh temporary directory and returns its path.
    ///
    /// Each call makes its own directory, so concurrent tests never share a file; the caller
    /// removes it with ``removeTemporaryFile(_:)`` when it matters.
    public static func writeTemporaryFile(_ contents: [UInt8], name: String = "test.pem") throws -> String {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ServerTrustTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent(name)
        try Data(contents).write(to: file)
        return file.path
    }

    /// Writes UTF-8 text to a new temporary file and returns its path.
    public static func writeTemporaryFile(_ text: String, name: String = "test.pem") throws -> String {
        try writeTemporaryFile(Array(text.utf8), name: name)
    }

    /// Removes a file made by `writeTemporaryFile` together with its private directory.
    public static func removeTemporaryFile(_ path: String) {
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
}
