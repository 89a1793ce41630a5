/// What one folder compiles into: its certificates and its TUF roots, each sorted by file name.
package struct GeneratedConstants: Sendable {
    package let certificates: [CertificateConstant]
    package let tufRoots: [TUFRootConstant]

    package init(certificates: [CertificateConstant], tufRoots: [TUFRootConstant] = []) {
        self.certificates = certificates
        self.tufRoots = tufRoots
    }

    /// Every warning, as `(file name, reason)`, in file-name order: the files compile, but a
    /// person should look (an expired TUF root…).
    package var warnings: [(file: String, reason: String)] {
        tufRoots.flatMap { root in root.warnings.map { (root.fileName, $0) } }
    }
}
