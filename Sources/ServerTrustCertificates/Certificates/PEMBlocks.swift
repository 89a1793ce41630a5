import Foundation

/// Splits PEM text into the DER bodies of its certificate blocks.
///
/// Written by hand rather than with `PEM_read_bio_X509` so that every malformed block is
/// reported with its position and never silently skipped, and so that "TRUSTED CERTIFICATE"
/// blocks (OpenSSL's auxiliary-trust format, whose trust settings we do not honour) are refused
/// instead of being half-understood.
enum PEMBlocks {
    static func certificates(in text: String) throws -> [[UInt8]] {
        var result: [[UInt8]] = []
        var body: String?
        var label = ""
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                guard body == nil else {
                    throw TrustError(.malformedCertificate, "PEM block \(result.count + 1) has no END line before the next BEGIN.")
                }
                label = String(line.dropFirst(11).dropLast(5))
                body = ""
            } else if line.hasPrefix("-----END "), line.hasSuffix("-----") {
                guard let current = body else {
                    throw TrustError(.malformedCertificate, "PEM END line without a BEGIN line.")
                }
                let endLabel = String(line.dropFirst(9).dropLast(5))
                guard endLabel == label else {
                    throw TrustError(.malformedCertificate, "PEM block \"\(label)\" ends with \"\(endLabel)\".")
                }
                body = nil
                switch label {
                case "CERTIFICATE", "X509 CERTIFICATE":
                    guard let der = Data(base64Encoded: current), !der.isEmpty else {
                        throw TrustError(.malformedCertificate, "PEM certificate block \(result.count + 1) is not valid base64.")
                    }
                    result.append([UInt8](der))
                case "TRUSTED CERTIFICATE":
                    throw TrustError(
                        .malformedCertificate,
                        "PEM block \(result.count + 1) is an OpenSSL \"TRUSTED CERTIFICATE\"; auxiliary trust settings are not supported, convert it with `openssl x509 -in F -out F.pem`.")
                default:
                    continue  // keys, CRLs and parameters in the same file are not certificates
                }
            } else if body != nil {
                if line.contains(":") { continue }  // RFC 1421 headers such as Proc-Type
                body! += line
            }
        }
        if body != nil {
            throw TrustError(.malformedCertificate, "PEM block \"\(label)\" has no END line.")
        }
        return result
    }
}
