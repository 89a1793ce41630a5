import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Every evaluator, accepting and rejecting, over a real TLS handshake.
@Suite struct SessionEvaluatorTests {
    @Test func defaultEvaluationAcceptsTheGenuineServerAndReportsTheValidatedChain() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session([SessionFixture.host: DefaultTrustEvaluator()])
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: fixture.url("/status/201")))
        #expect(response.status == 201)
        #expect(response.trust.isTrusted)
        #expect(response.trust.host == SessionFixture.host)
        #expect(response.trust.matchedPattern?.description == SessionFixture.host)
        #expect(response.trust.evaluator == "DefaultTrustEvaluator")
        #expect(response.trust.validatedChain.map(\.pin) == [fixture.leafPin, fixture.intermediatePin, fixture.root.certificate.spkiPin])
        #expect(response.hops.count == 1)
    }

    @Test func defaultEvaluationRejectsAServerFromAnUntrustedRoot() async throws {
        let fixture = try SessionFixture()
        let otherRoot = try LabPKI.makeRoot(commonName: "Somebody Else's Root")
        let session = try fixture.session([SessionFixture.host: DefaultTrustEvaluator()]) {
            $0.anchors = .bundle(try! otherRoot.trustAnchors())
        }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/").absoluteString) }.sessionError
        #expect(error?.code == .trustEvaluationFailed)
        #expect(error?.trustError?.code == .chainValidationFailed)
        #expect(error?.trustError?.evidence.verifyResult == 20)  // X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
        #expect(error?.curlCode == 60)  // CURLE_PEER_FAILED_VERIFICATION: rejected inside the handshake
    }

    @Test func defaultEvaluationRejectsTheWrongHostName() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session() { $0.resolve.append(fixture.server.resolveEntry(host: "other.servertrust.test")) }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.server.url("/", host: "other.servertrust.test")) }.sessionError
        #expect(error?.code == .trustEvaluationFailed)
        #expect(error?.trustError?.code == .hostMismatch)
    }

    @Test func keyHashPinsAcceptAMatchingIntermediateAndRejectUnknownPinsListingThePeerChain() async throws {
        let fixture = try SessionFixture()
        let good = try fixture.session([SessionFixture.host: try .pinnedKeyHashes([fixture.intermediatePin])])
        defer { good.shutdown() }
        let response = try await good.get(fixture.url("/").absoluteString)
        #expect(response.trust.evaluator == "PinnedKeyHashesTrustEvaluator")

        let bad = try fixture.session([SessionFixture.host: try .pinnedKeyHashes([SessionFixture.unrelatedPin])])
        defer { bad.shutdown() }
        let error = await outcome { try await bad.get(fixture.url("/").absoluteString) }.sessionError
        #expect(error?.trustError?.code == .pinMismatch)
        #expect(error?.trustError?.evaluator == "PinnedKeyHashesTrustEvaluator")
        #expect(try error?.trustError?.evidence.configuredPins == [SessionFixture.unrelatedPin])
        #expect(error?.trustError?.evidence.chain.map(\.pin).contains(fixture.leafPin) == true)
        #expect(error?.description.contains(fixture.leafPin.description) == true)
    }

    @Test func publicKeyAndCertificatePinsAcceptTheirMatchAndRejectOthers() async throws {
        let fixture = try SessionFixture()
        let stranger = try LabPKI.makeRoot(commonName: "Stranger")
        let cases: [(any ServerTrustEvaluating, Bool)] = [
            (try .publicKeys([fixture.intermediate.certificate.publicKey]), true),
            (try .publicKeys([stranger.certificate.publicKey]), false),
            (try .pinnedCertificates([fixture.leaf.certificate]), true),
            (try .pinnedCertificates([stranger.certificate]), false),
        ]
        for (evaluator, accepted) in cases {
            let session = try fixture.session([SessionFixture.host: evaluator])
            defer { session.shutdown() }
            let result = await outcome { try await session.get(fixture.url("/").absoluteString) }
            if accepted {
                #expect(try result.get().trust.evaluator == evaluator.name)
            } else {
                #expect(result.sessionError?.trustError?.code == .pinMismatch)
                #expect(result.sessionError?.trustError?.evaluator == evaluator.name)
            }
        }
    }

    @Test func compositeReportsTheFirstFailingEvaluator() async throws {
        let fixture = try SessionFixture()
        let composite = try CompositeTrustEvaluator([DefaultTrustEvaluator(), try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin])])
        let session = try fixture.session([SessionFixture.host: composite])
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/").absoluteString) }.sessionError
        #expect(error?.trustError?.code == .pinMismatch)
        #expect(error?.trustError?.evaluator == "PinnedKeyHashesTrustEvaluator")
    }

    @Test func disabledEvaluatorAcceptsAnUntrustedServerInDebugBuildsOnlyWithTheUnsafeOptIn() async throws {
        let fixture = try SessionFixture()
        let otherRoot = try LabPKI.makeRoot(commonName: "Unrelated Root")
        let refusing = try fixture.session([SessionFixture.host: DisabledTrustEvaluator()]) {
            $0.anchors = .bundle(try! otherRoot.trustAnchors())
        }
        defer { refusing.shutdown() }
        let refused = await outcome { try await refusing.get(fixture.url("/status/200").absoluteString) }.sessionError
        #expect(refused?.code == .trustEvaluationFailed)
        #expect(refused?.trustError?.code == .invalidConfiguration)
        #expect(refused?.trustError?.evaluator == "DisabledTrustEvaluator")

        let session = try fixture.session([SessionFixture.host: DisabledTrustEvaluator(unsafeAcceptAnyCertificate: true)]) {
            $0.anchors = .bundle(try! otherRoot.trustAnchors())
        }
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/status/200").absoluteString)
        #expect(response.status == 200)
        #expect(response.trust.evaluator == "DisabledTrustEvaluator")
    }

    @Test func aHostWithoutAPatternIsRefusedWhenAllHostsMustBeEvaluated() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session(["elsewhere.servertrust.test": DefaultTrustEvaluator()])
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/").absoluteString) }.sessionError
        #expect(error?.code == .trustEvaluationFailed)
        #expect(error?.trustError?.code == .noEvaluatorForHost)
        #expect(fixture.server.acceptedConnections == 0)  // refused before any connection
    }

    /// Issue #51: the refusal names the hop's whole URL, not the bare host its policy was
    /// looked up by; the description shows it redacted, as every other hop error does.
    @Test func aHostWithoutAPatternIsRefusedNamingTheWholeURLOfTheHop() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session(["elsewhere.servertrust.test": DefaultTrustEvaluator()])
        defer { session.shutdown() }
        let url = "https://unlisted.upstream.test:\(fixture.server.port)/v1/orders?page=2&token=secret"
        let error = await outcome { try await session.get(url) }.sessionError
        #expect(error?.code == .trustEvaluationFailed)
        #expect(error?.trustError?.code == .noEvaluatorForHost)
        #expect(error?.url == url)
        #expect(error?.description.hasSuffix("URL: https://unlisted.upstream.test:\(fixture.server.port)/v1/orders") == true, "\(String(describing: error))")
        #expect(error?.description.contains("token=secret") == false)
    }

    @Test func pinsWithoutDefaultValidationStillRejectWrongPinsDespiteNoCAInCurl() async throws {
        // No CA is given to curl (CAINFO/CAPATH unset) and the policy skips default validation:
        // only our callback can reject, and it must.
        let fixture = try SessionFixture()
        let otherRoot = try LabPKI.makeRoot(commonName: "Unrelated Root")
        let session = try fixture.session([
            SessionFixture.host: try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin], performDefaultValidation: false)
        ]) { $0.anchors = .bundle(try! otherRoot.trustAnchors()) }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/").absoluteString) }.sessionError
        #expect(error?.trustError?.code == .pinMismatch)
        #expect(fixture.server.requestsServed == 0)
    }

    @Test func plainHTTPIsRefusedUnlessAllowed() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let error = await outcome { try await session.get("http://\(SessionFixture.host):\(fixture.server.port)/") }.sessionError
        #expect(error?.code == .invalidRequest)
    }
}
