import Foundation
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport
import Testing

/// Issue #42, finding 4, through `Session`: a pin on the root keeps matching when the anchors
/// also hold the intermediate (OpenSSL's path then stops at the intermediate, a partial-chain
/// anchor), on a new connection and on a reused one (the connection guard evaluates again);
/// the response's trust report names the certificate that matched.
@Suite struct CAKeyPinSessionTests {
    enum Pinned: String, CaseIterable, Sendable {
        case root, intermediate, leaf, unknown
    }

    private static func pin(_ pinned: Pinned, _ fixture: SessionFixture) throws -> Pin {
        switch pinned {
        case .root: fixture.root.certificate.spkiPin
        case .intermediate: fixture.intermediatePin
        case .leaf: fixture.leafPin
        case .unknown: try SessionFixture.unrelatedPin
        }
    }

    @Test(arguments: Pinned.allCases, [false, true])
    func aPinOnTheRootIntermediateOrLeafMatchesWithOrWithoutTheIntermediateAmongTheAnchors(
        _ pinned: Pinned, intermediateIsAnchor: Bool
    ) async throws {
        let fixture = try SessionFixture()
        let anchors = [fixture.root.certificate] + (intermediateIsAnchor ? [fixture.intermediate.certificate] : [])
        let evaluator = try PinnedKeyHashesTrustEvaluator(pins: [Self.pin(pinned, fixture)])
        let trustAnchors = try TrustAnchors(anchors)
        let session = try fixture.session([SessionFixture.host: evaluator]) { $0.anchors = .bundle(trustAnchors) }
        defer { session.shutdown() }

        for _ in 0..<2 {  // a new connection, then the same one reused (the guard evaluates again)
            let result = await outcome { try await session.get(fixture.url("/status/200").absoluteString) }
            guard pinned != .unknown else {
                #expect(result.sessionError?.trustError?.code == .pinMismatch)
                #expect(result.sessionError?.trustError?.evidence.chain.count == 3)
                continue
            }
            let response = try result.get()
            #expect(response.status == 200)
            #expect(response.trust.validatedChain.map(\.subject) == [
                "CN=\(SessionFixture.host)", "CN=Session Test Intermediate", "CN=Session Test Root",
            ])
            let match = try #require(response.trust.pinMatches.first)
            #expect(try match.pin == Self.pin(pinned, fixture))
            #expect(match.depth == ["leaf": 0, "intermediate": 1, "root": 2][pinned.rawValue])
            #expect(match.isAnchorExtension == (pinned == .root && intermediateIsAnchor))
            #expect(response.trust.description.contains("matched pin: \(match)"))
        }
    }

    @Test func aRootTheServerSendsWithTheRootsNameAndAnotherKeyIsNeverMatched() async throws {
        let fixture = try SessionFixture()
        let bogus = try LabPKI.makeRoot(commonName: "Session Test Root")
        let server = try LocalTLSServer(chain: fixture.leaf.chain + [bogus.certificate], privateKeyPEM: fixture.leaf.key.pemPrivateKey)
        defer { server.stop() }
        for anchors in [[fixture.intermediate.certificate], [fixture.root.certificate, fixture.intermediate.certificate]] {
            var configuration = try fixture.configuration()
            configuration.anchors = .bundle(try TrustAnchors(anchors))
            configuration.resolve = [server.resolveEntry(host: SessionFixture.host)]
            let session = try Session(
                configuration: configuration,
                trustManager: ServerTrustManager(evaluators: [
                    try HostPattern(SessionFixture.host): try PinnedKeyHashesTrustEvaluator(pins: [bogus.certificate.spkiPin])
                ]))
            defer { session.shutdown() }
            let result = await outcome { try await session.get(server.url("/status/200", host: SessionFixture.host)) }
            #expect(result.sessionError?.trustError?.code == .pinMismatch)
            #expect(result.sessionError?.trustError?.evidence.chain.contains { $0.pin == bogus.certificate.spkiPin } == false)
        }
    }
}
