import Foundation
import MetricsTestKit
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import ServerTrustTestSupport
import ServerTrustTUF
import ServerTrustUpdates
import Testing

/// Trust updates end to end: policies published with python-tuf (tuf_repo.py policies), served
/// by a local TLS update host whose pins the fetching session checks, applied by
/// `TrustUpdateClient` to the `LiveTrustManager` a running `Session` reads — against a local
/// API server whose key rotates.
@Suite struct TrustUpdateTests {
    static let apiHost = "api.servertrust.test"
    static let updateHost = "tuf.servertrust.test"

    /// A clock the tests move (seconds added to the system clock).
    final class TestClock: TUFClock, @unchecked Sendable {
        private let lock = NSLock()
        private var offset: Int64 = 0
        func now() -> Int64 { lock.withLock { Int64(Date().timeIntervalSince1970) + offset } }
        func advance(days: Int64) { lock.withLock { offset += days * 86_400 } }
    }

    /// The PKI, the API server (key A, rotating to key B), the update host serving one state
    /// of the published repository at a time, and the policies of each state.
    final class Fixture: @unchecked Sendable {
        let root: LabCA
        let leafA: LabLeaf
        let leafB: LabLeaf
        let updateLeaf: LabLeaf
        let api: LocalTLSServer
        let published: PublishedPolicyStates
        let backup = try! Pin("sha256/" + Data(repeating: 9, count: 32).base64EncodedString())

        /// Response-signing keys (RFC 9421), published as `jwks.json`.
        let signingKey1 = try! SignaturePrivateKey.generate(.ed25519)
        let signingKey2 = try! SignaturePrivateKey.generate(.ed25519)

        /// The published states: 0 pins A (and a backup); 1 pins A and B; 2 replays state 0;
        /// 3 unpins the host; 4 is state 1 plus a deny-list of key A; 5 is a newer format;
        /// 6 pins A and B and expires in one day; 7, 8 and 9 are state 0 with a response-signing
        /// key set of key 1, keys 1 and 2, and key 2 (a rotation), each requiring RFC 9421 signed
        /// responses from the API host; 10 is state 1 with key 1's set; 11 requires RFC 9421
        /// responses with no key set delivered; 12 is state 1 with an empty key set (every key
        /// withdrawn); 13 is state 4 with key 1's set, its timestamp expired a day ago; 14 is state 6
        /// (expiring in one day) with state 13's deny-list and key set; 15 is state 3 (the host
        /// unpinned) with the deny-list of key A and key 2's set; 16 is state 4 with policy.json
        /// delivered by the delegated role "policies", which expires in 2 days; 17 is state 4 with
        /// a deny-list this release cannot read (`"version": 2`); 18 is state 10 with a
        /// `jwks.json` this release cannot read.
        init() throws {
            root = try LabPKI.makeRoot(commonName: "Trust Update Test Root")
            leafA = try root.issueLeaf(dnsNames: [TrustUpdateTests.apiHost])
            leafB = try root.issueLeaf(dnsNames: [TrustUpdateTests.apiHost])
            updateLeaf = try root.issueLeaf(dnsNames: [TrustUpdateTests.updateHost])
            api = try LocalTLSServer(chain: leafA.chain, privateKeyPEM: leafA.key.pemPrivateKey)
            let host = TrustUpdateTests.apiHost
            func policy(_ pins: [Pin], extra: String = "", version: Int = 1, hostExtra: String = "") -> String {
                let list = pins.map { "{\"pin\": \"\($0)\"}" }.joined(separator: ", ")
                return "{\"version\": \(version), \(extra)\"hosts\": {\"\(host)\": {\(hostExtra)\"pins\": [\(list)]}}}"
            }
            // RFC 9421 responses required, with the key set delivered beside the policy.
            let signed = #""signedResponses": {"mode": "enforced", "scheme": "rfc9421"}, "#
            let a = leafA.certificate.spkiPin, b = leafB.certificate.spkiPin
            let tomorrow = ISO8601DateFormatter().string(from: Date().addingTimeInterval(86_400))
            let states: [[String: Any]] = [
                ["targets": ["policy.json": policy([a, backup])]],
                ["targets": ["policy.json": policy([a, b])]],
                ["replay": 0],
                ["targets": ["policy.json": "{\"version\": 1, \"hosts\": {\"\(host)\": {}}}"]],
                ["targets": ["policy.json": policy([a, b]), "denylist.json": "{\"version\": 1, \"spki\": [\"\(a)\"]}"]],
                ["targets": ["policy.json": policy([a, b], version: 2)]],
                ["targets": ["policy.json": policy([a, b], extra: "\"expires\": \"\(tomorrow)\", ")]],
                ["targets": ["policy.json": policy([a, backup], hostExtra: signed), "jwks.json": SigningKeySet.jwksDocument([("k1", signingKey1.publicKey)])]],
                ["targets": [
                    "policy.json": policy([a, backup], hostExtra: signed),
                    "jwks.json": SigningKeySet.jwksDocument([("k1", signingKey1.publicKey), ("k2", signingKey2.publicKey)]),
                ]],
                ["targets": ["policy.json": policy([a, backup], hostExtra: signed), "jwks.json": SigningKeySet.jwksDocument([("k2", signingKey2.publicKey)])]],
                ["targets": ["policy.json": policy([a, b]), "jwks.json": SigningKeySet.jwksDocument([("k1", signingKey1.publicKey)])]],
                ["targets": ["policy.json": policy([a, backup], hostExtra: signed)]],
                ["targets": ["policy.json": policy([a, b]), "jwks.json": SigningKeySet.jwksDocument([])]],
                [
                    "targets": [
                        "policy.json": policy([a, b]), "denylist.json": "{\"version\": 1, \"spki\": [\"\(a)\"]}",
                        "jwks.json": SigningKeySet.jwksDocument([("k1", signingKey1.publicKey)]),
                    ],
                    "expired": true,
                ],
                ["targets": [
                    "policy.json": policy([a, b], extra: "\"expires\": \"\(tomorrow)\", "), "denylist.json": "{\"version\": 1, \"spki\": [\"\(a)\"]}",
                    "jwks.json": SigningKeySet.jwksDocument([("k1", signingKey1.publicKey)]),
                ]],
                ["targets": [
                    "policy.json": "{\"version\": 1, \"hosts\": {\"\(host)\": {}}}", "denylist.json": "{\"version\": 1, \"spki\": [\"\(a)\"]}",
                    "jwks.json": SigningKeySet.jwksDocument([("k2", signingKey2.publicKey)]),
                ]],
                [
                    "targets": ["policy.json": policy([a, b]), "denylist.json": "{\"version\": 1, \"spki\": [\"\(a)\"]}"],
                    "delegated": ["names": ["policy.json"], "expiresInDays": 2],
                ],
                ["targets": ["policy.json": policy([a, b]), "denylist.json": "{\"version\": 2, \"spki\": [\"\(a)\"]}"]],
                ["targets": ["policy.json": policy([a, b]), "jwks.json": "{\"keys\": \"k1\"}"]],
            ]
            published = try PublishedPolicyStates("policies", states: states, identity: updateLeaf)
        }

        /// The update host.
        var updates: LocalTLSServer { published.server }
        /// Where the states were generated.
        var repository: String { published.directory }
        /// The state the update host serves.
        var servedState: Int {
            get { published.servedState }
            set { published.servedState = newValue }
        }

        func stop() {
            api.stop()
            published.stop()
        }

        /// The compiled-in floor: the API host pinned to key A and a backup, and `revocation`
        /// checked after the pins when given.
        func floor(revocation: RevocationOptions? = nil) throws -> ServerTrustManager {
            let pins = try PinSet([.init(leafA.certificate.spkiPin, label: "A"), .init(backup, label: "backup")])
            return try ServerTrustManager(policies: [try HostPattern(TrustUpdateTests.apiHost): HostPolicy(pins: pins, revocation: revocation)])
        }

        /// A session for the update host, pinned to its key.
        func updateSession() throws -> Session {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try root.trustAnchors())
            configuration.resolve = [updates.resolveEntry(host: TrustUpdateTests.updateHost)]
            configuration.redirectPolicy = .disallow
            configuration.requestTimeout = .seconds(300)
            let manager = try ServerTrustManager(evaluators: [try HostPattern(TrustUpdateTests.updateHost): PinnedKeyHashesTrustEvaluator(pins: [updateLeaf.certificate.spkiPin])])
            return try Session(configuration: configuration, trustManager: manager)
        }

        func client(
            _ session: Session, directory: String, rules: TrustUpdateRules = TrustUpdateRules(), clock: any TUFClock = SystemTUFClock(),
            metrics: TestMetrics? = nil, floorRevocation: RevocationOptions? = nil, fetcher: (any TUFFetching)? = nil
        ) throws -> TrustUpdateClient {
            var configuration = TrustUpdateClient.Configuration(
                metadataDirectory: directory, initialRoot: try InitialRoot(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: repository + "/root.json")))),
                repositoryURL: updates.url("", host: TrustUpdateTests.updateHost))
            configuration.rules = rules
            configuration.updater.downloadTimeBudget = .seconds(600)
            return try TrustUpdateClient(
                floor: try floor(revocation: floorRevocation), configuration: configuration, fetcher: fetcher ?? SessionTUFFetcher(session: session), clock: clock,
                metricsFactory: metrics)
        }

        /// A session for the API host reading the client's live manager.
        func apiSession(_ client: TrustUpdateClient) throws -> Session {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try root.trustAnchors())
            configuration.resolve = [api.resolveEntry(host: TrustUpdateTests.apiHost)]
            configuration.requestTimeout = .seconds(300)
            return try Session(configuration: configuration, liveTrustManager: client.liveTrustManager)
        }

        func apiURL() -> URL { URL(string: api.url("/", host: TrustUpdateTests.apiHost))! }

        func rotateAPIServerToB() throws {
            try api.replaceIdentity(.init(chain: leafB.chain, privateKeyPEM: leafB.key.pemPrivateKey))
        }
    }

    /// A delivered policy requires RFC 9421 signed responses from the API host, and the
    /// response-signing keys delivered beside it as `jwks.json` rotate without a new binary: the
    /// session, which has no signed-response configuration of its own, verifies with the set
    /// in force at each response.
    @Test func responseSigningKeysRotateThroughTheDeliveredKeySet() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let client = try fixture.client(updateSession, directory: TUFTooling.temporaryDirectory("updates"))
        let signing = Locked((key: fixture.signingKey1, id: "k1"))
        fixture.api.setHandler { request in
            let (key, id) = signing.withLock { $0 }
            let path = String(request.target.prefix { $0 != "?" })
            let query = request.target.firstIndex(of: "?").map { String(request.target[request.target.index(after: $0)...]) }
            let received = MessageSignatureRequest(method: request.method, authority: request.header("Host") ?? "", path: path, query: query, headers: request.headers)
            let headers = [(name: "Content-Type", value: "application/json")]
            let body = Array(#"{"entitled":true}"#.utf8)
            let fields = (try? MessageSignatureSigner(key: key, keyID: id).signatureFields(status: 200, headers: headers, body: body, request: received)) ?? []
            return LocalHTTPResponse(headers: headers + fields, body: .bytes(body))
        }
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try fixture.root.trustAnchors())
        configuration.resolve = [fixture.api.resolveEntry(host: TrustUpdateTests.apiHost)]
        configuration.requestTimeout = .seconds(300)
        let session = try Session(configuration: configuration, liveTrustManager: client.liveTrustManager)
        defer { session.shutdown() }
        func signatureCode() async -> ResponseSignatureError.Code? {
            switch await Self.result(session, fixture.apiURL()) {
            case .success(let response): response.verification == .verified ? nil : .badSignature
            case .failure(let error): (error as? SessionError)?.signatureError?.code ?? .openSSLFailure
            }
        }

        fixture.servedState = 7
        #expect(await client.refresh().lastOutcome == .applied)
        #expect(client.signingKeys.keyIDs == ["k1"])
        #expect(await signatureCode() == nil)
        // The server moves to key 2 before the clients have it: refused, naming the key.
        signing.withLock { $0 = (fixture.signingKey2, "k2") }
        #expect(await signatureCode() == .unknownKey)
        // The rotation's middle state publishes both keys: key 2 verifies, no restart.
        fixture.servedState = 8
        #expect(await client.refresh().lastOutcome == .applied)
        #expect(await signatureCode() == nil)
        // Key 1 retired: a response signed with it is refused.
        fixture.servedState = 9
        #expect(await client.refresh().lastOutcome == .applied)
        signing.withLock { $0 = (fixture.signingKey1, "k1") }
        #expect(await signatureCode() == .unknownKey)
        // A later policy that requires RFC 9421 without delivering keys is refused whole; the
        // one in force stays.
        fixture.servedState = 11
        let refused = await client.refresh()
        #expect(refused.lastOutcome == .refused)
        #expect(refused.refusal?.description.contains("jwks.json") == true, "\(String(describing: refused.refusal))")
        #expect(client.signingKeys.keyIDs == ["k2"])
    }

    static func result(_ session: Session, _ url: URL, closing: Bool = false) async -> Result<Response, any Error> {
        var request = Request(url: url)
        if closing { request.headers[.connection] = "close" }
        do { return .success(try await session.data(for: request)) } catch { return .failure(error) }
    }

    static func trustCode(_ result: Result<Response, any Error>) -> TrustError.Code? {
        if case .failure(let error) = result { return (error as? SessionError)?.trustError?.code }
        return nil
    }

    /// Pin A; the repository publishes A+B; the server rotates to B; requests keep succeeding —
    /// a running session's pins changed without a restart. The floor alone (pins A and a
    /// backup) refuses the rotated server.
    @Test func aPolicyPublishedWithPythonTUFChangesARunningSessionsPinsWithoutARestart() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let client = try fixture.client(updateSession, directory: TUFTooling.temporaryDirectory("updates"))
        let session = try fixture.apiSession(client)
        defer { session.shutdown() }
        #expect(client.status.inForce == .floorNoUpdateYet)

        fixture.servedState = 0
        #expect(await client.refresh().lastOutcome == .applied)
        #expect(try await Self.result(session, fixture.apiURL()).get().trust.isTrusted)

        fixture.servedState = 1
        let status = await client.refresh()
        #expect(status.lastOutcome == .applied)
        #expect(status.inForce == .delivered)
        #expect(status.generation == 3)
        #expect(try await Self.result(session, fixture.apiURL()).get().trust.isTrusted)

        try fixture.rotateAPIServerToB()
        _ = await Self.result(session, fixture.apiURL(), closing: true)
        let rotated = try await Self.result(session, fixture.apiURL()).get()
        #expect(rotated.trust.presentedChain.first?.pin == fixture.leafB.certificate.spkiPin)

        // The same repository again: nothing changes, no new generation.
        #expect(await client.refresh().lastOutcome == .unchanged)
        #expect(client.liveTrustManager.generation == 3)

        // The floor alone would refuse B: what the update changed.
        let floorSession = try Session(configuration: try fixture.apiSession(client).configuration, trustManager: try fixture.floor())
        defer { floorSession.shutdown() }
        #expect(Self.trustCode(await Self.result(floorSession, fixture.apiURL())) == .pinMismatch)
    }

    /// A mirror replays the old, validly signed repository (pins A only): the TUF client refuses
    /// the rollback, the policy in force (A+B) stays, and the rotated server is still accepted.
    @Test func aRollbackToTheOldPolicyIsRefusedAndTheCurrentOneStays() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let client = try fixture.client(updateSession, directory: TUFTooling.temporaryDirectory("updates"))
        let session = try fixture.apiSession(client)
        defer { session.shutdown() }
        fixture.servedState = 1
        let applied = await client.refresh()
        #expect(applied.lastOutcome == .applied)

        fixture.servedState = 2
        let status = await client.refresh()
        #expect(status.lastOutcome == .failed)
        #expect(status.lastError?.description.contains("rollback") == true, "\(status.lastError?.description ?? "")")
        #expect(status.inForce == .delivered)
        #expect(status.policySHA256 == applied.policySHA256)
        try fixture.rotateAPIServerToB()
        #expect(try await Self.result(session, fixture.apiURL()).get().trust.isTrusted)
    }

    /// A policy that unpins the host is refused without the application's permission (the
    /// policy in force stays, and the status and the metrics say so); with `.unpinHosts` it is
    /// applied.
    @Test func aWeakeningWithoutPermissionIsRefused() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let metrics = TestMetrics()
        let client = try fixture.client(updateSession, directory: TUFTooling.temporaryDirectory("updates"), metrics: metrics)
        fixture.servedState = 1
        #expect(await client.refresh().lastOutcome == .applied)
        let before = client.liveTrustManager.current

        fixture.servedState = 3
        let status = await client.refresh()
        #expect(status.lastOutcome == .refused)
        #expect(status.refusal?.description.contains("default validation only") == true, "\(status.refusal?.description ?? "")")
        #expect(client.liveTrustManager.current === before)

        #expect(try metrics.expectCounter("servertrust_trust_updates_total", [("outcome", "applied")]).totalValue == 1)
        #expect(try metrics.expectCounter("servertrust_trust_updates_total", [("outcome", "refused")]).totalValue == 1)
        #expect(try metrics.expectGauge("servertrust_trust_update_generation").lastValue == 2)

        let permitted = try fixture.client(
            updateSession, directory: TUFTooling.temporaryDirectory("updates"), rules: TrustUpdateRules(permissions: [.unpinHosts]))
        #expect(await permitted.refresh().lastOutcome == .applied)
        #expect(try permitted.liveTrustManager.current.resolve(host: Self.apiHost).evaluator is DefaultTrustEvaluator)
    }

    /// Fourth review, finding 1: the floor pins the API host and requires a positive OCSP
    /// answer over the whole chain; the repository publishes the same kind of pins and no
    /// revocation. Without `.weakerRevocation` the update is refused, naming what it drops, and
    /// a server whose certificate is revoked stays refused; given the permission, the update
    /// applies and that server is accepted — what the permission lets through.
    @Test func droppingTheFloorsRevocationCheckNeedsItsPermission() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let revoked = try fixture.root.makeOCSPResponseDER(
            .revoked(reason: .keyCompromise, date: Date(timeIntervalSinceNow: -600)), for: fixture.leafA.certificate)
        try fixture.api.replaceIdentity(.init(chain: fixture.leafA.chain, privateKeyPEM: fixture.leafA.key.pemPrivateKey), stapledOCSPResponse: revoked)
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let floorRevocation = RevocationOptions(methods: .ocsp, requirePositiveResponse: true, networkAccessDisabled: true, scope: .wholeChain)

        let client = try fixture.client(updateSession, directory: TUFTooling.temporaryDirectory("updates"), floorRevocation: floorRevocation)
        let session = try fixture.apiSession(client)
        defer { session.shutdown() }
        fixture.servedState = 1
        let status = await client.refresh()
        #expect(status.lastOutcome == .refused)
        #expect(status.refusal?.description.contains("\(Self.apiHost) has no revocation checking, where the floor's \(Self.apiHost) checks ocsp, wholeChain, hard-fail, no network") == true, "\(status.refusal?.description ?? "")")
        #expect(Self.trustCode(await Self.result(session, fixture.apiURL())) == .revoked)

        let permitted = try fixture.client(
            updateSession, directory: TUFTooling.temporaryDirectory("updates"), rules: TrustUpdateRules(permissions: [.weakerRevocation]),
            floorRevocation: floorRevocation)
        let permittedSession = try fixture.apiSession(permitted)
        defer { permittedSession.shutdown() }
        #expect(await permitted.refresh().lastOutcome == .applied)
        #expect(try await Self.result(permittedSession, fixture.apiURL()).get().trust.isTrusted)
    }

    /// Key A put on the deny-list while a connection to the server (key A) is kept alive: the
    /// next request on it is refused with `.deniedKey`, although the delivered pins name A.
    @Test func aDeniedKeyIsRefusedOnAKeptAliveConnectionAtItsNextRequest() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let client = try fixture.client(updateSession, directory: TUFTooling.temporaryDirectory("updates"))
        let session = try fixture.apiSession(client)
        defer { session.shutdown() }
        fixture.servedState = 1
        #expect(await client.refresh().lastOutcome == .applied)
        #expect(try await Self.result(session, fixture.apiURL()).get().trust.isTrusted)

        fixture.servedState = 4
        let status = await client.refresh()
        #expect(status.lastOutcome == .applied)
        #expect(status.denyListEntries == 1)
        let refused = await Self.result(session, fixture.apiURL())
        #expect(Self.trustCode(refused) == .deniedKey, "\(refused)")
        #expect(fixture.api.acceptedConnections == 1, "refused on the kept-alive connection")
    }

    /// A policy in a newer format than this library reads is not applied, and that is reported.
    @Test func aPolicyInANewerFormatIsNotApplied() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let client = try fixture.client(updateSession, directory: TUFTooling.temporaryDirectory("updates"))
        fixture.servedState = 5
        let status = await client.refresh()
        #expect(status.lastOutcome == .refused, "\(status)")
        #expect(status.refusal?.description.contains("format version 2") == true, "\(status.refusal?.description ?? "")")
        #expect(status.inForce == .floorNoUpdateYet)
        #expect(client.liveTrustManager.generation == 1)
    }

    /// When the TUF metadata behind the applied policy expires without a successful refresh:
    /// by default the floor is back in force (the rotated server is refused); with
    /// `.keepAppliedPolicy` the delivered policy stays, and the status says so.
    @Test(arguments: [TrustUpdateRules.MetadataExpiry.revertToFloor, .keepAppliedPolicy])
    func metadataExpiryBehavesAsConfigured(behaviour: TrustUpdateRules.MetadataExpiry) async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let clock = TestClock()
        let client = try fixture.client(
            updateSession, directory: TUFTooling.temporaryDirectory("updates"), rules: TrustUpdateRules(whenMetadataExpires: behaviour), clock: clock)
        let session = try fixture.apiSession(client)
        defer { session.shutdown() }
        fixture.servedState = 10
        #expect(await client.refresh().lastOutcome == .applied)
        #expect(client.signingKeys.keyIDs == ["k1"])
        try fixture.rotateAPIServerToB()

        clock.advance(days: 40)  // the repository's metadata expires after 30 days
        fixture.updates.stop()   // and no refresh can succeed
        let status = await client.refresh()
        #expect(status.lastOutcome == .failed)
        let result = await Self.result(session, fixture.apiURL())
        switch behaviour {
        case .revertToFloor:
            #expect(status.inForce == .floorMetadataExpired)
            #expect(Self.trustCode(result) == .pinMismatch, "\(result)")
            // The delivered response-signing keys go with the delivered policy; of the compiled-in
            // keys, only those the last verified set holds (key 1, under another key ID) come back.
            #expect(client.signingKeys.keyIDs.isEmpty)
            #expect(status.signingKeyIDs.isEmpty)
            #expect(status.lastVerifiedSigningKeyIDs == ["k1"])
            let compiled = SigningKeySet(keys: ["compiled": fixture.signingKey1.publicKey, "retired": fixture.signingKey2.publicKey])
            #expect(client.signingKeys(orFloor: compiled).keyIDs == ["compiled"])
        case .keepAppliedPolicy:
            #expect(status.inForce == .deliveredMetadataExpired)
            #expect((try? result.get())?.trust.isTrusted == true, "\(result)")
            #expect(client.signingKeys.keyIDs == ["k1"])
        }
    }

    /// A client restarted after its metadata expired (offline for weeks, or an attacker holding
    /// a deny-listed key who blocked the update host that long) starts at the floor, says
    /// `floorMetadataExpired`, and keeps the last verified deny-list: the server of key A, which
    /// the floor pins, is still refused with `.deniedKey` — before and after a failed refresh.
    @Test func aRestartWithExpiredMetadataKeepsTheLastVerifiedDenyList() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let clock = TestClock()
        let directory = TUFTooling.temporaryDirectory("updates")
        fixture.servedState = 4
        let applied = await (try fixture.client(updateSession, directory: directory, clock: clock)).refresh()
        #expect(applied.lastOutcome == .applied)
        #expect(applied.denyListEntries == 1)

        clock.advance(days: 40)  // the repository's metadata expires after 30 days
        fixture.updates.stop()   // and no refresh can succeed
        let restarted = try await fixture.restartExpectingDeniedKey(updateSession, directory: directory, clock: clock)
        defer { restarted.session.shutdown() }
        let restored = restarted.restored
        #expect(restored.inForce == .floorMetadataExpired, "\(restored)")
        #expect(restored.lastError?.description.contains("expired") == true, "\(restored.lastError?.description ?? "")")

        let failed = await fixture.refreshExpectingDeniedKey(restarted)
        #expect(failed.lastOutcome == .failed)
        #expect(failed.inForce == .floorMetadataExpired)
    }

    /// A delivered `jwks.json` with no key is in force over the compiled-in keys: the repository
    /// withdrew them all. Before #42 `signingKeys(orFloor:)` brought the compiled-in keys back
    /// for an empty set; nor do they come back after a restart with expired metadata.
    @Test func anEmptyDeliveredKeySetWithdrawsEveryCompiledInKey() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let clock = TestClock()
        let directory = TUFTooling.temporaryDirectory("updates")
        let compiled = SigningKeySet(keys: ["k1": fixture.signingKey1.publicKey])
        let client = try fixture.client(updateSession, directory: directory, clock: clock)
        #expect(client.signingKeys(orFloor: compiled).keyIDs == ["k1"], "before any update: the compiled-in keys")
        fixture.servedState = 12
        let applied = await client.refresh()
        #expect(applied.lastOutcome == .applied)
        #expect(applied.lastVerifiedSigningKeyIDs == [])
        #expect(client.signingKeys.isEmpty)
        #expect(client.signingKeys(orFloor: compiled).isEmpty)

        clock.advance(days: 40)
        fixture.updates.stop()
        let restarted = try fixture.client(updateSession, directory: directory, clock: clock)
        #expect(await restarted.restore().inForce == .floorMetadataExpired)
        #expect(restarted.signingKeys(orFloor: compiled).isEmpty)
    }

    /// Compiled-in keys 1 and 2; the repository delivers key 1 only. After a revert to the floor
    /// (the metadata expired), and in a client restarted on that store, key 1 verifies again
    /// but key 2 stays withdrawn.
    @Test func aCompiledInKeyTheRepositoryWithdrewStaysWithdrawnAfterARevertAndARestart() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let clock = TestClock()
        let directory = TUFTooling.temporaryDirectory("updates")
        let compiled = SigningKeySet(keys: ["k1": fixture.signingKey1.publicKey, "k2": fixture.signingKey2.publicKey])
        let client = try fixture.client(updateSession, directory: directory, clock: clock)
        fixture.servedState = 10
        #expect(await client.refresh().lastOutcome == .applied)
        #expect(client.signingKeys(orFloor: compiled).keyIDs == ["k1"])

        clock.advance(days: 40)
        fixture.updates.stop()
        #expect(await client.refresh().inForce == .floorMetadataExpired)
        #expect(client.signingKeys.isEmpty)
        #expect(client.signingKeys(orFloor: compiled).keyIDs == ["k1"])

        let restarted = try fixture.client(updateSession, directory: directory, clock: clock)
        let restored = await restarted.restore()
        #expect(restored.inForce == .floorMetadataExpired)
        #expect(restored.lastVerifiedSigningKeyIDs == ["k1"])
        #expect(restarted.signingKeys(orFloor: compiled).keyIDs == ["k1"])
    }

    /// `beforeFirstUpdate: .refuseConnections`: until a delivered policy is applied, the API
    /// host is refused (naming the rule) although the floor pins its key; then it is accepted.
    @Test func beforeTheFirstUpdateConnectionsAreRefusedWhenTheRulesSaySo() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let client = try fixture.client(
            updateSession, directory: TUFTooling.temporaryDirectory("updates"), rules: TrustUpdateRules(beforeFirstUpdate: .refuseConnections))
        let session = try fixture.apiSession(client)
        defer { session.shutdown() }
        #expect(client.status.inForce == .refusingUntilFirstUpdate)
        let refused = await Self.result(session, fixture.apiURL())
        #expect(Self.trustCode(refused) == .noEvaluatorForHost, "\(refused)")
        #expect("\(refused)".contains("beforeFirstUpdate"), "\(refused)")

        fixture.servedState = 0
        #expect(await client.refresh().lastOutcome == .applied)
        #expect(try await Self.result(session, fixture.apiURL()).get().trust.isTrusted)
    }

    /// A delivered policy's own `expires` passes: the floor is back (the default).
    @Test func anExpiredPolicyRevertsToTheFloor() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let clock = TestClock()
        let client = try fixture.client(updateSession, directory: TUFTooling.temporaryDirectory("updates"), clock: clock)
        fixture.servedState = 6
        let applied = await client.refresh()
        #expect(applied.lastOutcome == .applied)
        #expect(applied.policyExpires != nil)
        clock.advance(days: 2)
        client.checkExpiry()
        #expect(client.status.inForce == .floorPolicyExpired)
        #expect(client.liveTrustManager.generation == 3)
    }

    /// The trusted state survives a restart: a new client on the same store, whose repository
    /// is unreachable, restores the delivered policy from the store (verified again), and its
    /// failed refresh leaves that policy in force. A replay served to the restarted client is
    /// still a rollback: the store remembers.
    @Test func theLastTrustedPolicySurvivesARestartAndARollbackAcrossRuns() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let directory = TUFTooling.temporaryDirectory("updates")
        fixture.servedState = 1
        let first = try fixture.client(updateSession, directory: directory)
        let applied = await first.refresh()
        #expect(applied.lastOutcome == .applied)

        let restarted = try fixture.client(updateSession, directory: directory)
        let restored = await restarted.restore()
        #expect(restored.inForce == .delivered)
        #expect(restored.policySHA256 == applied.policySHA256)
        fixture.servedState = 2
        let status = await restarted.refresh()
        #expect(status.lastOutcome == .failed)
        #expect(status.lastError?.description.contains("rollback") == true, "\(status.lastError?.description ?? "")")
        #expect(status.inForce == .delivered)
    }

    /// The schedule: the interval with bounded jitter, doubling back-off after failures, and an
    /// early refresh before a pin set, the policy or the metadata expires.
    @Test func theScheduleJittersBacksOffAndRefreshesBeforeExpiry() throws {
        let schedule = TrustUpdateSchedule()
        let now = Date()
        var status = TrustUpdateStatus()
        status.lastOutcome = .applied
        #expect(schedule.delay(after: status, policy: nil, now: now, random: 0) == 3_600 * 0.9)
        #expect(schedule.delay(after: status, policy: nil, now: now, random: 1) == 3_600 * 1.1)
        status.lastOutcome = .failed
        let backOff = (1...8).map { failures -> TimeInterval in
            status.consecutiveFailures = failures
            return schedule.delay(after: status, policy: nil, now: now, random: 0.5)
        }
        #expect(backOff == [60, 120, 240, 480, 960, 1_920, 3_600, 3_600])
        status.lastOutcome = .applied
        status.metadataExpires = now.addingTimeInterval(86_400 + 600)
        #expect(schedule.delay(after: status, policy: nil, now: now, random: 0.5) == 600)
        status.metadataExpires = now.addingTimeInterval(3_600)
        #expect(schedule.delay(after: status, policy: nil, now: now, random: 0.5) == 60)
    }

    /// `servertrust fetch --updates-*`: the fetched host's pins come from the repository; a
    /// second run against a replay refuses the rollback (the store remembers), says so on
    /// standard error, and still fetches under the last trusted policy; `updates show` prints
    /// it; with no trusted policy at all nothing is fetched.
    @Test func theCLIFetchesUnderThePublishedPolicyAndRemembersItAcrossRuns() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let caFile = TUFTooling.temporaryDirectory("cli") + "/ca.pem"
        try fixture.root.certificate.pemEncoded.write(toFile: caFile, atomically: true, encoding: .utf8)
        let rootFile = fixture.repository + "/root.json"
        let directory = TUFTooling.temporaryDirectory("cli-store")
        let base = fixture.updates.url("", host: Self.updateHost)
        func fetch(_ directory: String) -> ChildResult {
            Child.run(PackageFiles.servertrustBinary, [
                "fetch", fixture.api.url("/", host: Self.apiHost), "--ca", caFile,
                "--resolve", fixture.api.resolveEntry(host: Self.apiHost), "--resolve", fixture.updates.resolveEntry(host: Self.updateHost),
                "--pin", fixture.updateLeaf.certificate.spkiPin.description,
                "--updates-root", rootFile, "--updates-url", base, "--updates-dir", directory,
            ])
        }
        try fixture.rotateAPIServerToB()
        fixture.servedState = 1
        let first = fetch(directory)
        #expect(first.status == 0, "\(first.output)")
        #expect(first.output.contains("trust update: policy.json from targets version 2 is in force"), "\(first.output)")

        fixture.servedState = 2
        let second = fetch(directory)
        #expect(second.status == 0, "\(second.output)")
        #expect(second.output.contains("the trust update failed"), "\(second.output)")
        #expect(second.output.contains("rollback"), "\(second.output)")
        #expect(second.output.contains("the last trusted policy"), "\(second.output)")

        let show = Child.run(PackageFiles.servertrustBinary, ["updates", "--metadata-dir", directory, "show"])
        #expect(show.status == 0, "\(show.output)")
        #expect(show.output.contains("policy.json: verified, sha256"), "\(show.output)")

        // A store whose metadata has expired: `show` says the floor is in force, with the last
        // verified deny-list and the key IDs that bound the compiled-in keys.
        let expiredStore = TUFTooling.temporaryDirectory("cli-expired")
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let behind = TestClock()
        behind.advance(days: -2)  // state 13's timestamp expired a day ago
        fixture.servedState = 13
        #expect(await (try fixture.client(updateSession, directory: expiredStore, clock: behind)).refresh().lastOutcome == .applied)
        let expired = Child.run(PackageFiles.servertrustBinary, ["updates", "--metadata-dir", expiredStore, "show"])
        #expect(expired.status == 0, "\(expired.output)")
        #expect(expired.output.contains("(EXPIRED)"), "\(expired.output)")
        #expect(expired.output.contains("the floor is (floorMetadataExpired)"), "\(expired.output)")
        #expect(expired.output.contains("deny-list entries: 1 (the last verified deny-list, kept)"), "\(expired.output)")
        #expect(expired.output.contains("compiled-in keys only as the last verified set holds them: k1"), "\(expired.output)")
        let json = Child.run(PackageFiles.servertrustBinary, ["updates", "--metadata-dir", expiredStore, "show", "--json"])
        // Standard error (the client's log) comes first in the output; the report is the rest.
        let text = json.output.range(of: "\n{").map { String(json.output[$0.lowerBound...]) } ?? json.output
        let report = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        let trustUpdate = report?["trustUpdate"] as? [String: Any]
        #expect(trustUpdate?["inForce"] as? String == "floorMetadataExpired", "\(json.output)")
        #expect(trustUpdate?["denyListEntries"] as? Int == 1, "\(json.output)")

        // A fresh store only ever offered a policy in a newer format: nothing trusted, nothing fetched.
        fixture.servedState = 5
        let refused = fetch(TUFTooling.temporaryDirectory("cli-fresh"))
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.output.contains("was not applied"), "\(refused.output)")
        #expect(refused.output.contains("nothing was fetched"), "\(refused.output)")
    }
}
