import Foundation
package import ServerTrustCertificates

/// One certificate file, parsed and named, ready to be written out as Swift constants.
///
/// A file holds exactly one certificate, PEM or DER, whatever its extension says: a bundle is
/// refused rather than half-compiled (name it `.pem.txt` to keep it out), and so is a file with
/// a private key in it, which must never end up in a binary.
package struct CertificateConstant: Sendable {
    /// The file name, e.g. `sample-leaf.pem`.
    package let fileName: String
    /// The Swift name derived from ``fileName``, e.g. `sampleLeaf` (see ``ConstantName``).
    package let name: String
    package let certificate: Certificate

    /// Parses the contents of one file.
    ///
    /// - Throws: ``CodeGenerationError`` naming the file: no usable name, empty, a private key,
    ///   no certificate, more than one, or one OpenSSL cannot parse.
    package init(fileName: String, contents: [UInt8]) throws(CodeGenerationError) {
        func failure(_ reason: String) -> CodeGenerationError { CodeGenerationError(file: fileName, reason: reason) }
        guard let name = ConstantName.identifier(forFileName: fileName) else {
            throw failure("the file name has no letter or digit to name a Swift constant after; rename it, e.g. server-leaf.pem")
        }
        guard !contents.isEmpty else { throw failure("the file is empty; put one PEM or DER certificate in it") }
        do {
            if let text = String(bytes: contents, encoding: .utf8), text.contains("-----BEGIN") {
                if text.contains("PRIVATE KEY-----") {
                    throw failure("the file contains a private key; never compile a key into a binary: remove the key from the file and keep it out of this folder")
                }
                let certificates = try Certificate.certificates(pemBundle: text)
                guard certificates.count == 1 else {
                    throw failure("the file holds \(certificates.count) certificates; put one certificate per file (name a chain file .pem.txt to keep it out)")
                }
                certificate = certificates[0]
            } else {
                certificate = try Certificate(derEncoded: contents)
            }
        } catch let error as CodeGenerationError {
            throw error
        } catch let error as TrustError {
            throw failure(error.reason + (error.evidence.openSSLErrors.first.map { " (OpenSSL: \($0))" } ?? ""))
        } catch {
            throw failure("\(error)")
        }
        self.fileName = fileName
        self.name = name
    }

    /// The member holding the DER encoding in base64, e.g. `sampleLeafDER`.
    package var derConstantName: String { name + "DER" }
    /// The member holding the SPKI pin, e.g. `sampleLeafPin`.
    package var pinConstantName: String { name + "Pin" }
    /// The base64 of the DER encoding.
    package var derBase64: String { Data(certificate.derEncoded).base64EncodedString() }
    /// The SPKI pin, `sha256/<base64>`.
    package var pin: Pin { certificate.spkiPin }
}
