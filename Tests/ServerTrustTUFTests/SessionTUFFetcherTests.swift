import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import ServerTrustTUF
import ServerTrustUpdates
import ServerTrustTestSupport
import Testing

/// ServerTrustUpdates' `SessionTUFFetcher`: the TUF client fetching over a `Session`, so the
/// update host is evaluated like any other — here a local TLS server of an in-process PKI,
/// serving the python-tuf "happy" repository.
@Suite struct SessionTUFFetcherTests {
    static let host = "tuf.servertrust.test"

    /// A TLS server for `host` serving the generated repositories (`/<scenario>/<state>/…`),
    /// with a few extra paths: `/huge` (1 MiB), `/slow` (a byte every 0.5 s), `/forbidden` (403),
    /// `/error` (500).
    struct Fixture {
        let root: LabCA
        let leaf: LabLeaf
        let server: LocalTLSServer

        init() throws {
            root = try LabPKI.makeRoot(commonName: "TUF Update Host Root")
            leaf = try root.issueLeaf(dnsNames: [SessionTUFFetcherTests.host])
            let base = TUFTooling.repositories
            var configuration = LocalTLSServer.Configuration(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey) { request in
                let path = String(request.target.prefix { $0 != "?" })
                switch path {
                case "/huge": return LocalHTTPResponse(body: .pattern(count: 1 << 20))
                case "/slow": return LocalHTTPResponse(body: .pattern(count: 64), pacing: (chunkSize: 1, interval: .milliseconds(500)))
                case "/forbidden": return LocalHTTPResponse(status: 403)
                case "/error": return LocalHTTPResponse(status: 500)
                default:
                    guard !path.contains(".."), let data = FileManager.default.contents(atPath: base + path) else {
                        return LocalHTTPResponse(status: 404)
                    }
                    return LocalHTTPResponse(body: .bytes(Array(data)))
                }
            }
            configuration.minimumTLSVersion = .v1_2
            server = try LocalTLSServer(configuration)
        }

        /// A session that trusts only this PKI's root, resolves `host` to the server and pins
        /// the update host to `pins`.
        func session(pins: [Pin]) throws -> Session {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try root.trustAnchors())
            configuration.resolve = [server.resolveEntry(host: SessionTUFFetcherTests.host)]
            configuration.redirectPolicy = .disallow
            configuration.requestTimeout = .seconds(300)
            let manager = try ServerTrustManager(evaluators: [try HostPattern(SessionTUFFetcherTests.host): PinnedKeyHashesTrustEvaluator(pins: pins)])
            return try Session(configuration: configuration, trustManager: manager)
        }

        func url(_ path: String) -> String { server.url(path, host: SessionTUFFetcherTests.host) }

        func updater(_ session: Session, state: Int = 0, store directory: String) throws -> Updater {
            let store = try MetadataStore(directory: directory)
            let root = try #require(FileManager.default.contents(atPath: "\(TUFTooling.repositories)/happy/root.json"))
            try store.write("root.json", Array(root))
            // A budget no loaded CI machine reaches: these tests are about trust, not time.
            var configuration = UpdaterConfiguration()
            configuration.downloadTimeBudget = .seconds(600)
            return try Updater(
                store: store, metadataBaseURL: url("/happy/\(state)/metadata"), targetBaseURL: url("/happy/\(state)/targets"),
                fetcher: SessionTUFFetcher(session: session), configuration: configuration)
        }
    }

    /// A budget no load reaches (a full suite beside a benchmark once took over 60 s to start
    /// one download): tests of the other rules must not be decided by the time rule.
    static func deadline() -> ContinuousClock.Instant { ContinuousClock.now + .seconds(600) }

    @Test func anUpdateHostPinnedToItsKeyRefreshesAndDownloads() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let session = try fixture.session(pins: [fixture.leaf.certificate.spkiPin])
        defer { session.shutdown() }
        let updater = try fixture.updater(session, store: TUFTooling.temporaryDirectory("session"))
        try await updater.refresh()
        let target = try #require(try await updater.targetInfo("file.txt"))
        let bytes = try await updater.downloadTarget(target, to: TUFTooling.temporaryDirectory("session-targets"))
        #expect(bytes == Array("hello, world\n".utf8))
    }

    /// The interceptor case: the update host presents a certificate its pins do not name. The
    /// refresh fails on the first download and trusts nothing new.
    @Test func anUpdateHostThatFailsItsPinsGivesTheClientNothing() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let otherKey = try LabPKI.makeRoot(commonName: "Someone Else").key.pin
        let session = try fixture.session(pins: [otherKey])
        defer { session.shutdown() }
        let directory = TUFTooling.temporaryDirectory("session-pins")
        let updater = try fixture.updater(session, store: directory)
        let error = await #expect(throws: TUFError.self) { try await updater.refresh() }
        #expect(error?.code == .downloadFailed)
        #expect(error?.reason.contains("trustEvaluationFailed") == true, "\(String(describing: error))")
        #expect(error?.reason.contains("pinMismatch") == true, "\(String(describing: error))")
        let stored = try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }
        #expect(stored == ["root.json"], "\(stored)")
    }

    /// An evaluator that refuses the host only after `delay`: the refusal arrives after the
    /// download's deadline.
    struct LateRefusal: ServerTrustEvaluating {
        let delay: Duration
        func evaluate(_ trust: PeerTrust, forHost host: String) throws {
            Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
            throw TrustError(.pinMismatch, "refused late on purpose")
        }
    }

    /// A refusal is a trust failure whenever it comes: one that arrives after the deadline
    /// (a loaded machine, a slow evaluator) is still `downloadFailed` naming the check, never
    /// `slowRetrieval` — which would hide an interceptor behind "the network was slow".
    @Test func aRefusalAfterTheDeadlineIsStillATrustFailure() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try fixture.root.trustAnchors())
        configuration.resolve = [fixture.server.resolveEntry(host: Self.host)]
        let manager = try ServerTrustManager(evaluators: [try HostPattern(Self.host): LateRefusal(delay: .milliseconds(1_500))])
        let session = try Session(configuration: configuration, trustManager: manager)
        defer { session.shutdown() }
        let fetcher = SessionTUFFetcher(session: session)
        let error = await #expect(throws: TUFError.self) {
            try await fetcher.fetch(fixture.url("/happy/0/metadata/1.root.json"), maximumLength: 1_000_000, deadline: ContinuousClock.now + .seconds(1))
        }
        #expect(error?.code == .downloadFailed, "\(String(describing: error))")
        #expect(error?.reason.contains("pinMismatch") == true, "\(String(describing: error))")
    }

    @Test func eachDownloadIsHeldToItsLengthAndTimeAndStatusRules() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let session = try fixture.session(pins: [fixture.leaf.certificate.spkiPin])
        defer { session.shutdown() }
        let fetcher = SessionTUFFetcher(session: session)

        let tooLarge = await #expect(throws: TUFError.self) {
            try await fetcher.fetch(fixture.url("/huge"), maximumLength: 16_384, deadline: Self.deadline())
        }
        #expect(tooLarge?.code == .downloadTooLarge)
        #expect(try await fetcher.fetch(fixture.url("/huge"), maximumLength: 1 << 20, deadline: Self.deadline()).count == 1 << 20)

        let slow = await #expect(throws: TUFError.self) {
            try await fetcher.fetch(fixture.url("/slow"), maximumLength: 1_000, deadline: ContinuousClock.now + .seconds(2))
        }
        #expect(slow?.code == .slowRetrieval)

        for (path, code) in [("/forbidden", TUFError.Code.notFound), ("/happy/0/metadata/99.root.json", .notFound), ("/error", .downloadFailed)] {
            let error = await #expect(throws: TUFError.self) { try await fetcher.fetch(fixture.url(path), maximumLength: 1_000, deadline: Self.deadline()) }
            #expect(error?.code == code, "\(path)")
        }
    }

    /// Plain http only to loopback, without user-info; nothing else but https. Refused before
    /// any connection (none of these hosts exists).
    @Test func plainHTTPIsRefusedForAnyHostButLoopback() async throws {
        let session = try Session()
        defer { session.shutdown() }
        let fetcher = SessionTUFFetcher(session: session)
        for url in ["http://example.com/metadata/1.root.json", "http://127.0.0.1.example.com/x", "http://user@127.0.0.1/x", "ftp://127.0.0.1/x", "file:///etc/passwd"] {
            let error = await #expect(throws: TUFError.self) { try await fetcher.fetch(url, maximumLength: 1_000, deadline: Self.deadline()) }
            #expect(error?.code == .invalidURL, "\(url)")
        }
        for url in ["http://localhost/x", "http://127.0.0.1:8080/x", "http://127.1.2.3/x", "http://[::1]:80/x", "https://example.com/x"] {
            #expect(url.hasPrefix("https") || SessionTUFFetcher.isLoopback(url), "\(url)")
        }
    }
}
