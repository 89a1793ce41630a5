import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// The three ways SCTs reach a client (RFC 6962 §3.3), served by TestSupport's servers and
/// received by OpenSSL's own client, which validates them (`openssl s_client -ct`): embedded in
/// the leaf, in the TLS extension (`openssl s_server -serverinfo`), in a stapled OCSP response.
@Suite struct SCTDeliveryTests {
    static let host = "ct.example.com"

    /// A root, an issuing intermediate, a plain leaf, and two logs of distinct operators.
    struct Site {
        let root: LabCA
        let intermediate: LabCA
        let leaf: LabLeaf
        let logs: [TestCTLog]

        init() throws {
            root = try LabPKI.makeRoot()
            intermediate = try root.issueIntermediate()
            leaf = try intermediate.issueLeaf(dnsNames: [SCTDeliveryTests.host])
            logs = [
                try TestCTLog(description: "Delivery Log A", operatorName: "Operator A"),
                try TestCTLog(description: "Delivery Log B", operatorName: "Operator B", keyKind: .rsa2048),
            ]
        }

        /// x509_entry SCTs for the leaf, one per log, stamped a minute ago (OpenSSL refuses an
        /// SCT from the future).
        func certificateSCTs() throws -> [[UInt8]] {
            try logs.map { try $0.certificateSCT(for: leaf.certificate.derEncoded, at: Date(timeIntervalSinceNow: -60)) }
        }

        /// `openssl s_client -ct` against `port`, trusting the root and knowing the logs.
        func connect(port: Int, _ arguments: String = "-ct") throws -> String {
            let directory = NSTemporaryDirectory() + "sct-client-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try Data(root.certificate.pemEncoded.utf8).write(to: URL(fileURLWithPath: directory + "/root.pem"))
            try Data(OpenSSLSCTValidation.logFile(logs).utf8).write(to: URL(fileURLWithPath: directory + "/logs.cnf"))
            let run = try ChildProcess.run("/bin/sh", ["-c", """
                cd '\(directory)' && openssl s_client -connect 127.0.0.1:\(port) -servername \(SCTDeliveryTests.host) \
                    -CAfile root.pem -verify_return_error -ctlogfile logs.cnf \(arguments) </dev/null 2>&1
                """])
            return run.outputText
        }
    }

    static func count(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    @Test(arguments: ["-tls1_2", "-tls1_3"])
    func openSSLServerSendsTheSCTExtensionToAClientThatAsks(version: String) throws {
        let site = try Site()
        let server = try OpenSSLServer.start(
            leaf: site.leaf.certificate.pemEncoded, chain: site.intermediate.certificate.pemEncoded, key: site.leaf.key.pemPrivateKey,
            arguments: version, connections: 2, signedCertificateTimestamps: try site.certificateSCTs())
        defer { server.removeFiles() }
        let asking = try site.connect(port: server.port, "-ct \(version)")
        #expect(asking.contains("SCTs present (2)"), "\(asking)")
        #expect(Self.count("SCT validation status: valid", in: asking) == 2)
        #expect(asking.contains("New, " + (version == "-tls1_2" ? "TLSv1.2" : "TLSv1.3") + ", Cipher is"))
        // A client that does not send the extension gets none back.
        let silent = try site.connect(port: server.port, "-tlsextdebug \(version)")
        #expect(silent.contains("Verify return code: 0 (ok)"))
        #expect(!silent.contains("signed certificate timestamps"), "\(silent)")
    }

    @Test func theOCSPStapleCarriesTheSCTsAndOpenSSLValidatesThem() throws {
        let site = try Site()
        let scts = try site.certificateSCTs()
        let response = try site.intermediate.makeOCSPResponseDER(for: site.leaf.certificate, signedCertificateTimestamps: scts)
        let path = try LabPKI.writeTemporaryFile(response, name: "staple.der")
        defer { LabPKI.removeTemporaryFile(path) }
        let text = try shell("openssl ocsp -respin '\(path)' -resp_text -noverify")
        #expect(text.contains("CT Certificate SCTs:"))
        #expect(Self.count("Signed Certificate Timestamp:", in: text) == 2)
        for log in site.logs {
            let firstLine = log.logID.prefix(16).map { String(format: "%02X", $0) }.joined(separator: ":")
            #expect(text.contains(firstLine))
        }

        // Stapled by s_server (-status_file) and by the in-process server.
        let server = try OpenSSLServer.start(
            leaf: site.leaf.certificate.pemEncoded, chain: site.intermediate.certificate.pemEncoded, key: site.leaf.key.pemPrivateKey,
            arguments: "", connections: 1, stapledOCSPResponse: response)
        defer { server.removeFiles() }
        let local = try LocalTLSServer(.init(
            identity: .init(chain: site.leaf.chain, privateKeyPEM: site.leaf.key.pemPrivateKey), stapledOCSPResponse: response))
        defer { local.stop() }
        for port in [server.port, local.port] {
            let output = try site.connect(port: port, "-ct -status")
            #expect(output.contains("OCSP Response Status: successful"), "\(output)")
            #expect(output.contains("SCTs present (2)"), "\(output)")
            #expect(Self.count("SCT validation status: valid", in: output) == 2)
        }
    }

    @Test func theInProcessServerDeliversAnEmbeddedSCTLeafThatOpenSSLValidates() throws {
        let site = try Site()
        let leaf = try site.intermediate.issueLeafWithEmbeddedSCTs(
            from: site.logs, dnsNames: [Self.host], sctTimestamp: Date(timeIntervalSinceNow: -3600))
        let server = try LocalTLSServer(.init(identity: leaf.identity))
        defer { server.stop() }
        let output = try site.connect(port: server.port)
        #expect(output.contains("SCTs present (2)"), "\(output)")
        #expect(Self.count("SCT validation status: valid", in: output) == 2)
    }
}
