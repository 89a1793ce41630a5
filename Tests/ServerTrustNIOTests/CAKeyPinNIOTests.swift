#if NIOAdapter
import Foundation
import ServerTrust
import ServerTrustNIO
import ServerTrustTestSupport
import Testing

/// Issue #42, finding 4, through ServerTrustNIO (`NIOSSLClientHandler` with the verifier's
/// callback): a pin on the root keeps matching when the anchors also hold the intermediate, and
/// the evaluation's log line names the certificate that matched.
@Suite struct CAKeyPinNIOTests {
    static let host = "nio.servertrust.test"

    enum Pinned: String, CaseIterable, Sendable {
        case root, intermediate, leaf, unknown
    }

    @Test(arguments: Pinned.allCases, [false, true])
    func aPinOnTheRootIntermediateOrLeafMatchesWithOrWithoutTheIntermediateAmongTheAnchors(
        _ pinned: Pinned, intermediateIsAnchor: Bool
    ) async throws {
        let root = try LabPKI.makeRoot(commonName: "NIO CA-Key Root")
        let intermediate = try root.issueIntermediate(commonName: "NIO CA-Key Intermediate")
        let leaf = try intermediate.issueLeaf(dnsNames: [Self.host])
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        defer { server.stop() }
        let pin: Pin =
            switch pinned {
            case .root: root.certificate.spkiPin
            case .intermediate: intermediate.certificate.spkiPin
            case .leaf: leaf.certificate.spkiPin
            case .unknown: try Pin("sha256/" + Data(repeating: 9, count: 32).base64EncodedString())
            }
        let logs = CapturedLogs()
        let verifier = try ServerTrustNIOVerifier(
            trustManager: ServerTrustManager(evaluators: [try HostPattern(Self.host): try PinnedKeyHashesTrustEvaluator(pins: [pin])]),
            anchors: try TrustAnchors([root.certificate] + (intermediateIsAnchor ? [intermediate.certificate] : [])),
            logger: logs.logger)

        do {
            let response = try await NIOHTTPClient.get("/status/200", host: Self.host, port: server.port, verifier: verifier)
            #expect(pinned != .unknown, "an unknown pin was accepted")
            #expect(response.status == 200)
        } catch {
            #expect(pinned == .unknown, "\(error)")
            #expect((error as? ServerTrustNIOError)?.trustError.code == .pinMismatch, "\(error)")
            return
        }
        let matches = try #require(logs.at(.debug).first?.metadata["pinMatches"])
        let depth = ["leaf": 0, "intermediate": 1, "root": 2][pinned.rawValue]!
        let byExtension = pinned == .root && intermediateIsAnchor
        #expect(matches.contains("\(pin): "), "\(matches)")
        #expect(matches.contains("(depth \(depth)" + (byExtension ? ", an anchor above the validated path)" : ")")), "\(matches)")
    }
}
#endif
