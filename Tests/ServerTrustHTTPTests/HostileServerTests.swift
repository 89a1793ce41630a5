import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Servers that try to exhaust or confuse the client: limits and budgets hold, and the error
/// says which one.
@Suite struct HostileServerTests {
    private func server(chain: [Certificate], key: LabKey, handler: LocalHTTPHandler? = nil) throws -> LocalTLSServer {
        try LocalTLSServer(chain: chain, privateKeyPEM: key.pemPrivateKey, handler: handler)
    }

    private func session(_ root: LabCA, _ server: LocalTLSServer, pins: [Pin]? = nil, configure: (inout Session.Configuration) -> Void = { _ in }) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try root.trustAnchors())
        configuration.resolve = [server.resolveEntry(host: SessionFixture.host)]
        configure(&configuration)
        let evaluator: any ServerTrustEvaluating = try pins.map { try PinnedKeyHashesTrustEvaluator(pins: $0) } ?? DefaultTrustEvaluator()
        return try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [try HostPattern(SessionFixture.host): evaluator]))
    }

    @Test func aHundredJunkIntermediatesAreRefusedByTheChainLimit() async throws {
        let root = try LabPKI.makeRoot()
        let leaf = try root.issueLeaf(dnsNames: [SessionFixture.host])
        let junkCA = try LabPKI.makeRoot(commonName: "Junk")
        let junk = try (0..<100).map { _ in try junkCA.issueIntermediate(commonName: "Junk Intermediate").certificate }
        let hostile = try server(chain: [leaf.certificate] + junk, key: leaf.key)
        let session = try session(root, hostile)
        defer { session.shutdown() }
        let error = await outcome { try await session.get("https://\(SessionFixture.host):\(hostile.port)/") }.sessionError
        #expect(error?.trustError?.code == .chainValidationFailed)
        #expect(error?.trustError?.reason.contains("101 certificates, over the limit of 64") == true)
    }

    @Test func junkBesideAValidPathUnderTheLimitStillValidates() async throws {
        let root = try LabPKI.makeRoot()
        let intermediate = try root.issueIntermediate()
        let leaf = try intermediate.issueLeaf(dnsNames: [SessionFixture.host])
        let junkCA = try LabPKI.makeRoot(commonName: "Junk")
        let junk = try (0..<30).map { _ in try junkCA.issueIntermediate(commonName: "Test Intermediate CA").certificate }
        let hostile = try server(chain: [leaf.certificate] + junk + [intermediate.certificate], key: leaf.key)
        let session = try session(root, hostile, pins: [intermediate.certificate.spkiPin])
        defer { session.shutdown() }
        let response = try await session.get("https://\(SessionFixture.host):\(hostile.port)/status/200")
        #expect(response.trust.validatedChain.map(\.pin) == [leaf.certificate.spkiPin, intermediate.certificate.spkiPin, root.certificate.spkiPin])
    }

    /// OpenSSL bounds the certificate message at 100 KiB by default: ten thousand names do not
    /// fit, and the handshake fails before any parsing of the leaf.
    @Test func aLeafWithTenThousandNamesIsRefusedByTheMessageLimit() async throws {
        let root = try LabPKI.makeRoot()
        let names = (0..<9_999).map { "name\($0).servertrust.test" } + [SessionFixture.host]
        let leaf = try root.issueLeaf(dnsNames: names)
        let hostile = try server(chain: [leaf.certificate], key: leaf.key)
        let session = try session(root, hostile)
        defer { session.shutdown() }
        let error = await outcome { try await session.get("https://\(SessionFixture.host):\(hostile.port)/status/200") }.sessionError
        #expect(error?.code == .transferFailed)
        #expect(error?.curlCode == 35)
        #expect(error?.curlMessage.contains("excessive message size") == true)
    }

    @Test func aLeafWithAThousandNamesIsMatchedAndTheMessageStaysShort() async throws {
        let root = try LabPKI.makeRoot()
        let names = (0..<999).map { "name\($0).servertrust.test" } + [SessionFixture.host]
        let leaf = try root.issueLeaf(dnsNames: names)
        let hostile = try server(chain: [leaf.certificate], key: leaf.key)
        let session = try session(root, hostile)
        defer { session.shutdown() }
        let response = try await session.get("https://\(SessionFixture.host):\(hostile.port)/status/200")
        #expect(response.status == 200)

        var other = Session.Configuration()
        other.anchors = .bundle(try root.trustAnchors())
        other.resolve = [hostile.resolveEntry(host: "absent.servertrust.test")]
        let wrongHost = try Session(configuration: other)
        defer { wrongHost.shutdown() }
        let error = await outcome { try await wrongHost.get("https://absent.servertrust.test:\(hostile.port)/") }.sessionError
        #expect(error?.trustError?.code == .hostMismatch)
        #expect(error?.trustError?.reason.contains("(1000 in all)") == true)
    }

    @Test func anExpiredIntermediateBesideAValidCrossSignedOneIsPassedOver() async throws {
        let root = try LabPKI.makeRoot(commonName: "Current Root")
        let intermediate = try root.issueIntermediate(commonName: "Shared Intermediate")
        let oldRoot = try LabPKI.makeRoot(commonName: "Old Root")
        let expired = try oldRoot.crossSign(intermediate, notBefore: Date(timeIntervalSinceNow: -400 * 86400), notAfter: Date(timeIntervalSinceNow: -86400))
        let leaf = try intermediate.issueLeaf(dnsNames: [SessionFixture.host])
        let hostile = try server(chain: [leaf.certificate, expired.certificate, intermediate.certificate], key: leaf.key)
        let session = try session(root, hostile) {
            $0.anchors = .bundle(try! TrustAnchors([root.certificate, oldRoot.certificate]))
        }
        defer { session.shutdown() }
        let response = try await session.get("https://\(SessionFixture.host):\(hostile.port)/status/200")
        #expect(response.trust.validatedChain.map(\.pin) == [leaf.certificate.spkiPin, intermediate.certificate.spkiPin, root.certificate.spkiPin])
    }

    @Test func endlessHeadersAreCutAtTheHeaderLimit() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler { request in
            guard request.path == "/many-headers" else { return nil }
            var response = LocalHTTPResponse.text("ok\n")
            for index in 0..<4_000 { response.headers.append(("X-Padding-\(index)", String(repeating: "x", count: 100))) }
            return response
        }
        let session = try fixture.session()
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/many-headers").absoluteString) }.sessionError
        #expect(error?.code == .responseTooLarge)
        #expect(error?.reason.contains("headers exceed") == true)
    }

    @Test func anEndlessBodyIsCutAtTheBodyLimit() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.maximumResponseBodySize = 1 << 20 }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/large/200000000").absoluteString) }.sessionError
        #expect(error?.code == .responseTooLarge)
        #expect(error?.reason.contains("body exceeds the 1048576-byte limit") == true)
    }

    @Test func aSlowDripIsCutByTheRequestTimeout() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.requestTimeout = .milliseconds(500) }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/drip/100000/50").absoluteString) }.sessionError
        #expect(error?.code == .timedOut)
    }
}

/// `Request.timeout` overrides the session's `requestTimeout`, both ways.
@Suite struct RequestTimeoutTests {
    @Test func aRequestsOwnTimeoutCutsASlowDripTheSessionWouldWaitFor() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.requestTimeout = .seconds(60) }
        defer { session.shutdown() }
        let request = Request(url: fixture.url("/drip/100000/50"), timeout: .milliseconds(500))
        let error = await outcome { try await session.data(for: request) }.sessionError
        #expect(error?.code == .timedOut)
    }

    @Test func aRequestsOwnTimeoutOutlastsTheSessionsShorterOne() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.requestTimeout = .milliseconds(300) }
        defer { session.shutdown() }
        // Twenty bytes, one every 50 ms: about a second, past the session's 300 ms.
        let slow = fixture.url("/drip/20/50")
        let cut = await outcome { try await session.data(for: Request(url: slow)) }.sessionError
        #expect(cut?.code == .timedOut)
        let response = try await session.data(for: Request(url: slow, timeout: .seconds(30)))
        #expect(response.status == 200)
        #expect(response.body.count == 20)
    }

    @Test func aTimeoutThatIsNotPositiveIsRefused() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let error = await outcome { try await session.data(for: Request(url: fixture.url("/status/200"), timeout: .zero)) }.sessionError
        #expect(error?.code == .invalidRequest)
        #expect(error?.reason.contains("timeout must be positive") == true)
    }
}
