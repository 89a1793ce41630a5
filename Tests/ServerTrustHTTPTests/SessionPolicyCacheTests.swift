import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// The session resolves a host's policy once and caches it under the URL's spelling too: every
/// spelling of one host shares one policy, and no spelling ever gets another host's.
@Suite struct SessionPolicyCacheTests {
    private let names = try! PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin])
    private let loopbackV4 = DefaultTrustEvaluator()
    private let loopbackV6 = DefaultTrustEvaluator()
    private let wildcard = DefaultTrustEvaluator()

    private func manager() throws -> ServerTrustManager {
        try ServerTrustManager(
            evaluators: [try HostPattern("api.servertrust.test"): names, try HostPattern("127.0.0.1"): loopbackV4, try HostPattern("::1"): loopbackV6, try HostPattern("*.servertrust.test"): wildcard],
            allHostsMustBeEvaluated: true)
    }

    private func session() throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try LabPKI.makeRoot().trustAnchors())
        return try Session(configuration: configuration, trustManager: try manager())
    }

    /// What a policy decides, or the error code: compared between a warmed and a fresh session.
    private struct Resolution: Equatable {
        var host: String?
        var pattern: String?
        var evaluator: ObjectIdentifier?
        var error: SessionError.Code?
    }

    private func resolve(_ session: Session, _ raw: String) -> Resolution {
        do {
            let policy = try session.policy(forRawHost: raw, override: nil)
            return Resolution(host: policy.host, pattern: policy.pattern?.description, evaluator: ObjectIdentifier(policy.evaluator as AnyObject))
        } catch {
            return Resolution(error: error.code)
        }
    }

    private let spellings = [
        "api.servertrust.test", "API.ServerTrust.Test", "api.servertrust.test.", "API.SERVERTRUST.TEST.", "api.servertrust.test..",
        "api.servertrust.test...", "[::1].", "[::FFFF:127.0.0.1].",
        "other.servertrust.test", "Other.ServerTrust.test.", "127.0.0.1", "127.0.0.1.", "127.1", "0x7f.0.0.1", "127.000.000.001",
        "[::1]", "::1", "[0:0:0:0:0:0:0:1]", "[::0001]", "[::FFFF:127.0.0.1]", "[::ffff:7f00:1]", "unlisted.example",
    ]

    @Test func upperCaseAndATrailingDotShareTheNormalisedHostsPolicy() throws {
        let session = try session()
        defer { session.shutdown() }
        let policy = try session.policy(forRawHost: "api.servertrust.test", override: nil)
        #expect(policy.host == "api.servertrust.test")
        #expect(policy.evaluator as AnyObject === names)
        for raw in ["API.ServerTrust.Test", "api.servertrust.test.", "Api.Servertrust.Test."] {
            #expect(try session.policy(forRawHost: raw, override: nil) === policy, "\(raw)")
            #expect(try session.policy(forRawHost: raw, override: nil) === policy, "\(raw), cached")
        }
    }

    @Test func ipLiteralSpellingsShareTheCanonicalAddresssPolicy() throws {
        let session = try session()
        defer { session.shutdown() }
        let v6 = try session.policy(forRawHost: "[0:0:0:0:0:0:0:1]", override: nil)
        #expect(v6.host == "::1")
        #expect(v6.evaluator as AnyObject === loopbackV6)
        #expect(try session.policy(forRawHost: "[::1]", override: nil) === v6)
        #expect(try session.policy(forRawHost: "[::0001]", override: nil) === v6)
        let v4 = try session.policy(forRawHost: "127.0.0.1", override: nil)
        #expect(v4.evaluator as AnyObject === loopbackV4)
        #expect(v4 !== v6)
        // An IPv4-mapped IPv6 address is where curl connects: 127.0.0.1, so it gets 127.0.0.1's
        // policy (second audit, finding 7), never a key of its own.
        #expect(try session.policy(forRawHost: "[::ffff:127.0.0.1]", override: nil) === v4)
        #expect(try session.policy(forRawHost: "[::FFFF:7f00:1]", override: nil) === v4)
    }

    @Test func spellingsThatAreNotAddressesAreRefusedEveryTimeNeverCached() throws {
        let session = try session()
        defer { session.shutdown() }
        _ = try session.policy(forRawHost: "127.0.0.1", override: nil)
        for raw in ["127.1", "0x7f.0.0.1", "127.000.000.001"] {
            #expect(resolve(session, raw).error == .trustEvaluationFailed, "\(raw)")
            #expect(resolve(session, raw).error == .trustEvaluationFailed, "\(raw), again")
        }
    }

    @Test func everySpellingResolvesAsInAFreshSessionWhateverWasCachedBefore() throws {
        let fresh = try spellings.map { raw in
            let session = try session()
            defer { session.shutdown() }
            return (raw, resolve(session, raw))
        }
        // Forward, backward and interleaved orders, each spelling twice (miss, then hit).
        for order in [spellings, spellings.reversed(), spellings.enumerated().sorted { ($0.offset * 7) % 19 < ($1.offset * 7) % 19 }.map(\.element)] {
            let warmed = try session()
            defer { warmed.shutdown() }
            for raw in order + order {
                let expected = fresh.first { $0.0 == raw }!.1
                #expect(resolve(warmed, raw) == expected, "\(raw)")
            }
        }
    }

    @Test func aPerRequestEvaluatorIsCachedApartFromTheManagersPolicy() throws {
        let session = try session()
        defer { session.shutdown() }
        let override = DefaultTrustEvaluator()
        let managed = try session.policy(forRawHost: "API.servertrust.test", override: nil)
        let overridden = try session.policy(forRawHost: "API.servertrust.test", override: override)
        #expect(managed.evaluator as AnyObject === names)
        #expect(overridden.evaluator as AnyObject === override)
        #expect(try session.policy(forRawHost: "api.servertrust.test.", override: override) === overridden)
        #expect(try session.policy(forRawHost: "api.servertrust.test.", override: nil) === managed)
    }
}
