import Foundation
import ServerTrustLab

/// `openssl s_server` as a real peer, for what an in-process server cannot show: a TLS extension
/// from a serverinfo file (SCTs), a chosen key-exchange group list, a stapled OCSP response file. It serves `-www` on 127.0.0.1 at a
/// port of its own choosing, for `connections` connections or 60 s, whichever ends first.
public struct OpenSSLServer: Sendable {
    public let port: Int
    /// The folder holding its files (`leaf.pem`, `chain.pem`, `leaf.key`, and any extra ones).
    public let directory: String

    /// - Parameters:
    ///   - leaf: the leaf certificate, PEM.
    ///   - chain: the certificates sent after it, PEM.
    ///   - key: the leaf's private key, PEM.
    ///   - files: more files to write beside them, by name.
    ///   - arguments: more `s_server` arguments (shell words), as `-tls1_3 -groups X25519`.
    ///   - connections: how many connections to accept before exiting.
    ///   - signedCertificateTimestamps: SCTs (TLS encoding) to send in the
    ///     `signed_certificate_timestamp` extension, to clients that ask, over TLS 1.2 and 1.3
    ///     (`-serverinfo`, see ``serverInfoPEM(signedCertificateTimestamps:)``). Default none.
    ///   - stapledOCSPResponse: a DER OCSP response stapled to every handshake whose client asks
    ///     (`-status_file`). Default none.
    public static func start(
        leaf: String, chain: String, key: String, files: [String: String] = [:], arguments: String, connections: Int,
        signedCertificateTimestamps: [[UInt8]]? = nil, stapledOCSPResponse: [UInt8]? = nil
    ) throws -> OpenSSLServer {
        let directory = try LabPKI.writeTemporaryFile(key, name: "leaf.key").components(separatedBy: "/").dropLast().joined(separator: "/")
        for (name, contents) in ["leaf.pem": leaf, "chain.pem": chain].merging(files, uniquingKeysWith: { $1 }) {
            try Data(contents.utf8).write(to: URL(fileURLWithPath: "\(directory)/\(name)"))
        }
        var arguments = arguments
        if let signedCertificateTimestamps {
            try Data(serverInfoPEM(signedCertificateTimestamps: signedCertificateTimestamps).utf8)
                .write(to: URL(fileURLWithPath: "\(directory)/sct-serverinfo.pem"))
            arguments += " -serverinfo sct-serverinfo.pem"
        }
        if let stapledOCSPResponse {
            try Data(stapledOCSPResponse).write(to: URL(fileURLWithPath: "\(directory)/ocsp-staple.der"))
            arguments += " -status_file ocsp-staple.der"
        }
        let start = try ChildProcess.run("/bin/sh", ["-c", """
            cd '\(directory)' || exit 1
            timeout 60 openssl s_server \(arguments) -cert leaf.pem -cert_chain chain.pem -key leaf.key \
                -accept 127.0.0.1:0 -www -naccept \(connections) >server.log 2>&1 </dev/null &
            for _ in $(seq 200); do grep -q '^ACCEPT' server.log && break; sleep 0.05; done
            sed -n 's/^ACCEPT 127.0.0.1:\\([0-9]*\\)$/\\1/p' server.log
            """])
        guard let port = Int(start.outputText.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ChildProcess.SpawnError(description: "openssl s_server did not start: \(start.errorText) \((try? String(contentsOfFile: "\(directory)/server.log", encoding: .utf8)) ?? "")")
        }
        return OpenSSLServer(port: port, directory: directory)
    }

    /// A `-serverinfo` file carrying `signedCertificateTimestamps` in the
    /// `signed_certificate_timestamp` extension (type 18).
    ///
    /// A `SERVERINFOV2` block, whose 4-byte context lets OpenSSL send the extension in a TLS 1.2
    /// ServerHello and in the leaf's TLS 1.3 CertificateEntry, only to a client whose
    /// ClientHello carried the extension. The version-1 form (`SERVERINFO FOR`, no context)
    /// is sent over TLS 1.2 only: OpenSSL 3.0 gives it the TLS-1.2-and-below context.
    public static func serverInfoPEM(signedCertificateTimestamps: [[UInt8]]) -> String {
        let context: UInt64 = 0x0080 /* CLIENT_HELLO */ | 0x0100 /* TLS1_2_SERVER_HELLO */
            | 0x1000 /* TLS1_3_CERTIFICATE */ | 0x0040 /* IGNORE_ON_RESUMPTION */
        let block = TLSEncoding.integer(context, byteCount: 4) + SCTListEncoding.tlsExtension(signedCertificateTimestamps)
        let base64 = Data(block).base64EncodedString(options: .lineLength64Characters)
        return "-----BEGIN SERVERINFOV2 FOR signed_certificate_timestamp-----\n\(base64)\n-----END SERVERINFOV2 FOR signed_certificate_timestamp-----\n"
    }

    /// Removes its files (the process ends by itself).
    public func removeFiles() { try? FileManager.default.removeItem(atPath: directory) }
}
