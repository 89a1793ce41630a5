import Foundation
import ServerTrustTestSupport
import Testing

/// Third security review, finding 2: ServerTrust sets its own TLS floor (TLS 1.2, OpenSSL
/// security level 2) on every connection it configures, whatever `OPENSSL_CONF` says. libcurl
/// 7.88 loads that file when it initialises OpenSSL, so the floor can only be proven in a
/// process of its own: the `servertrust` binary, run with a configuration that allows TLS 1.0,
/// against `openssl s_server` speaking nothing else.
@Suite struct TLSFloorCommandTests {
    /// An `openssl s_server` that speaks TLS 1.0 only, at security level 0, for
    /// `cli.servertrust.test`; it exits after `connections` connections or 60 s.
    struct TLS10Server {
        let port: Int
        let directory: String

        init(_ fixture: CLIFixture, connections: Int) throws {
            directory = try LabPKI.writeTemporaryFile(fixture.leaf.key.pemPrivateKey, name: "leaf.key")
                .components(separatedBy: "/").dropLast().joined(separator: "/")
            try Data(fixture.leaf.certificate.pemEncoded.utf8).write(to: URL(fileURLWithPath: "\(directory)/leaf.pem"))
            try Data(fixture.intermediate.certificate.pemEncoded.utf8).write(to: URL(fileURLWithPath: "\(directory)/chain.pem"))
            // A configuration as an attacker (or a careless image) might leave in OPENSSL_CONF.
            try Data("""
                openssl_conf = init
                [init]
                ssl_conf = ssl
                [ssl]
                system_default = weak
                [weak]
                MinProtocol = TLSv1
                CipherString = DEFAULT@SECLEVEL=0

                """.utf8).write(to: URL(fileURLWithPath: "\(directory)/weak.cnf"))
            let start = try ChildProcess.run("/bin/sh", ["-c", """
                cd '\(directory)' || exit 1
                timeout 60 openssl s_server -tls1 -cipher 'DEFAULT@SECLEVEL=0' -cert leaf.pem -cert_chain chain.pem -key leaf.key \
                    -accept 127.0.0.1:0 -www -naccept \(connections) >server.log 2>&1 </dev/null &
                for _ in $(seq 200); do grep -q '^ACCEPT' server.log && break; sleep 0.05; done
                sed -n 's/^ACCEPT 127.0.0.1:\\([0-9]*\\)$/\\1/p' server.log
                """])
            port = try #require(Int(start.outputText.trimmingCharacters(in: .whitespacesAndNewlines)), "s_server did not start: \(start.errorText)")
        }

        var configuration: String { "\(directory)/weak.cnf" }
    }

    @Test func finding2AnOPENSSLCONFThatAllowsTLS10DoesNotLowerServerTrustsFloor() throws {
        let fixture = try CLIFixture()
        let server = try TLS10Server(fixture, connections: 2)
        defer { try? FileManager.default.removeItem(atPath: server.directory) }

        // The control: under that configuration, OpenSSL's own client does speak TLS 1.0 to it.
        let control = try ChildProcess.run("/bin/sh", ["-c", """
            echo | OPENSSL_CONF='\(server.configuration)' openssl s_client -connect 127.0.0.1:\(server.port) \
                -tls1 -cipher 'DEFAULT@SECLEVEL=0' 2>&1
            """])
        #expect(control.outputText.contains("Protocol  : TLSv1\n"), "\(control.outputText)")

        let result = CommandRunner.run(
            ["fetch", "https://\(CLIFixture.host):\(server.port)/", "--ca", fixture.caFile,
             "--resolve", "\(CLIFixture.host):\(server.port):127.0.0.1"],
            environment: ["OPENSSL_CONF": server.configuration])
        #expect(result.status == 3, "\(result)")
        #expect(result.standardOutput.isEmpty, "\(result)")
        #expect(
            result.standardError.hasPrefix(
                "error: The server for \(CLIFixture.host) offers no protocol version at or above TLS 1.2, the lowest ServerTrust accepts."),
            "\(result)")
    }
}
