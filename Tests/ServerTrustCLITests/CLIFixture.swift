import Foundation
import ServerTrust
import ServerTrustTestSupport

/// A PKI and a local HTTPS server for `cli.servertrust.test`, with the root written to a file
/// for `--ca`.
final class CLIFixture: Sendable {
    static let host = "cli.servertrust.test"

    let root: LabCA
    let intermediate: LabCA
    let leaf: LabLeaf
    let server: LocalTLSServer
    /// The root as PEM, for `--ca`.
    let caFile: String

    init() throws {
        root = try LabPKI.makeRoot(commonName: "CLI Test Root")
        intermediate = try root.issueIntermediate(commonName: "CLI Test Intermediate")
        leaf = try intermediate.issueLeaf(
            dnsNames: [Self.host], ipAddresses: ["127.0.0.1"], ocspURL: "http://ocsp.servertrust.test/",
            crlURL: "http://crl.servertrust.test/intermediate.crl")
        var configuration = LocalTLSServer.Configuration(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey) { request in
            request.path == "/" ? .text("hello from the CLI fixture\n") : nil
        }
        configuration.stapledOCSPResponse = try intermediate.makeOCSPResponseDER(for: leaf.certificate)
        server = try LocalTLSServer(configuration)
        caFile = try LabPKI.writeTemporaryFile(root.certificate.pemEncoded, name: "root.pem")
    }

    deinit {
        server.stop()
        LabPKI.removeTemporaryFile(caFile)
    }

    func url(_ path: String = "/", host: String = CLIFixture.host) -> String { server.url(path, host: host) }

    /// `--resolve host:port:127.0.0.1` for `host`.
    func resolve(_ host: String = CLIFixture.host) -> [String] { ["--resolve", server.resolveEntry(host: host)] }

    /// `--ca <root> --resolve …`.
    var trusting: [String] { ["--ca", caFile] + resolve() }

    /// A port on 127.0.0.1 where nothing listens: a server's, after it was stopped and freed.
    func closedPort() throws -> Int {
        try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey).port
    }

    /// The key exchange the fixture's server (OpenSSL on both ends) negotiates, as `inspect`
    /// prints it and as its JSON reports it, for ``GoldenText``: OpenSSL 3.5 and later offer
    /// the post-quantum hybrid first, OpenSSL 3.0 has none (issue #43). A platform whose
    /// group differs from its documented one fails the golden comparison.
    static var negotiatedGroupText: [String: String] {
        let group = OpenSSLDefaults.tls13KeyExchangeGroup
        let postQuantum = KeyExchangeRequirement.isPostQuantum(group: group)
        return [
            "\(group) (\(postQuantum ? "post-quantum" : "classical") key exchange)": "<group>",
            "\"keyExchangeGroup\" : \"\(group)\",\n    \"postQuantumKeyExchange\" : \(postQuantum),": "<group>",
        ]
    }

    /// Placeholders for the fixture's volatile literals, for ``GoldenText``.
    var literals: [String: String] { [caFile: "<ca>"] }
}
