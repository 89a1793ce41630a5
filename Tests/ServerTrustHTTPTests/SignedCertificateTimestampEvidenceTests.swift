import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing
@testable import ServerTrustHTTP

/// Issue #33, `HandshakeEvidence`: the SCTs a server sends in the TLS extension reach an
/// evaluator that asks for them, with `openssl s_server -serverinfo` as the real peer (TLS 1.2:
/// a version-1 serverinfo file is sent in the ServerHello, and only when the client asked).
@Suite struct SignedCertificateTimestampEvidenceTests {
    static let host = SessionFixture.host

    /// One SCT (RFC 6962 section 3.2) as OpenSSL's `i2o_SCT` writes it: v1, a log ID, a
    /// timestamp, no extensions, an ECDSA/SHA-256 signature (never verified here: ServerTrust
    /// collects SCTs, an evaluator judges them).
    static let sct: [UInt8] = [0x00] + [UInt8](repeating: 0xA5, count: 32) + [0, 0, 1, 0x8F, 0x12, 0x34, 0x56, 0x78]
        + [0, 0] + [4, 3] + [0, 8] + [1, 2, 3, 4, 5, 6, 7, 8]

    /// A `SERVERINFO` PEM file holding a `signed_certificate_timestamp` extension (type 18) with
    /// a list of one SCT.
    static var serverInfoPEM: String {
        let entry = [UInt8(sct.count >> 8), UInt8(sct.count & 0xFF)] + sct
        let list = [UInt8(entry.count >> 8), UInt8(entry.count & 0xFF)] + entry
        let extensionBytes = [0, 18, UInt8(list.count >> 8), UInt8(list.count & 0xFF)] + list
        return "-----BEGIN SERVERINFO FOR CT-----\n\(Data(extensionBytes).base64EncodedString(options: .lineLength64Characters))\n-----END SERVERINFO FOR CT-----\n"
    }

    /// Records the SCTs each evaluation saw.
    final class SCTRecorder: ServerTrustEvaluating {
        let usesSignedCertificateTimestamps: Bool
        private let seen = Locked<[[[UInt8]]]>([])

        init(asks: Bool) { usesSignedCertificateTimestamps = asks }

        func evaluate(_ trust: PeerTrust, forHost host: String) throws {
            seen.withLock { $0.append(trust.handshake.signedCertificateTimestamps) }
            try DefaultTrustEvaluator().evaluate(trust, forHost: host)
        }

        var timestamps: [[[UInt8]]] { seen.withLock { $0 } }
    }

    /// `openssl s_server`, TLS 1.2 only, serving the fixture's chain and the SCT extension.
    private static func startServer(_ fixture: SessionFixture, connections: Int) throws -> OpenSSLServer {
        try OpenSSLServer.start(
            leaf: fixture.leaf.certificate.pemEncoded, chain: fixture.intermediate.certificate.pemEncoded, key: fixture.leaf.key.pemPrivateKey,
            files: ["serverinfo.pem": serverInfoPEM], arguments: "-tls1_2 -serverinfo serverinfo.pem", connections: connections)
    }

    @Test func theSCTsOfTheTLSExtensionReachAnEvaluatorThatAsksForThemAndOnlyIt() async throws {
        let fixture = try SessionFixture()
        let server = try Self.startServer(fixture, connections: 2)
        defer { server.removeFiles() }
        for asks in [true, false] {
            let recorder = SCTRecorder(asks: asks)
            var configuration = try fixture.configuration()
            configuration.resolve = ["\(Self.host):\(server.port):127.0.0.1"]
            let session = try Session(configuration: configuration, trustManager: ServerTrustManager(policies: [try HostPattern(Self.host): HostPolicy.custom(recorder)]))
            defer { session.shutdown() }
            let response = try await session.get("https://\(Self.host):\(server.port)/")
            #expect(response.status.code == 200)
            #expect(recorder.timestamps == [asks ? [Self.sct] : []])
            #expect(response.trust.handshake.signedCertificateTimestamps == (asks ? [Self.sct] : []))
            #expect(response.trust.handshake.protocolVersion == .tls12)
        }
    }
}
