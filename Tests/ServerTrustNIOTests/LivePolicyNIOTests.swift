#if NIOAdapter
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import ServerTrust
@testable import ServerTrustNIO
import ServerTrustTestSupport
import Synchronization
import Testing

/// A verifier over a `LiveTrustManager`: new channels are evaluated under the manager in force,
/// and channels established under a replaced manager are retired by `PolicyRetirementHandler`.
/// Local servers on 127.0.0.1 only.
@Suite struct LivePolicyNIOTests {
    static let host = "live.servertrust.test"

    /// A root, an intermediate, leaf A served by a local HTTPS server, and leaf B to rotate to.
    struct Fixture {
        let root: LabCA
        let intermediate: LabCA
        let leafA: LabLeaf
        let leafB: LabLeaf
        let server: LocalTLSServer

        init() throws {
            root = try LabPKI.makeRoot(commonName: "Live NIO Root")
            intermediate = try root.issueIntermediate(commonName: "Live NIO Intermediate")
            leafA = try intermediate.issueLeaf(dnsNames: [LivePolicyNIOTests.host])
            leafB = try intermediate.issueLeaf(dnsNames: [LivePolicyNIOTests.host])
            server = try LocalTLSServer(chain: leafA.chain, privateKeyPEM: leafA.key.pemPrivateKey)
        }

        var pinA: Pin { leafA.certificate.spkiPin }
        var pinB: Pin { leafB.certificate.spkiPin }

        func pinned(_ pins: [Pin]) throws -> ServerTrustManager {
            try ServerTrustManager(evaluators: [try HostPattern(LivePolicyNIOTests.host): PinnedKeyHashesTrustEvaluator(pins: pins)])
        }

        func verifier(_ live: LiveTrustManager) throws -> ServerTrustNIOVerifier {
            try ServerTrustNIOVerifier(liveTrustManager: live, anchors: TrustAnchors([root.certificate]))
        }

        func get(_ verifier: ServerTrustNIOVerifier, _ path: String) async throws -> NIOHTTPResult {
            try await NIOHTTPClient.get(path, host: LivePolicyNIOTests.host, port: server.port, verifier: verifier)
        }
    }

    /// Pins A; the policy becomes A+B; the server rotates to B: a new channel is accepted by
    /// pin B. A verifier that kept the first manager (the control: one made with it alone)
    /// refuses the rotated server with `.pinMismatch`.
    @Test func aRotationPublishedBeforeTheServerRotatesIsFollowedByNewChannels() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let first = try fixture.pinned([fixture.pinA])
        let live = LiveTrustManager(first)
        let verifier = try fixture.verifier(live)
        #expect(try await fixture.get(verifier, "/status/200?a").status == 200)
        #expect(try verifier.verification(forHost: Self.host).generation == 1)

        #expect(live.replace(with: try fixture.pinned([fixture.pinA, fixture.pinB])) == 2)
        #expect(verifier.trustManager === live.current)
        #expect(try verifier.verification(forHost: Self.host).generation == 2)
        #expect(try await fixture.get(verifier, "/status/200?b").status == 200)

        try fixture.server.replaceIdentity(.init(chain: fixture.leafB.chain, privateKeyPEM: fixture.leafB.key.pemPrivateKey))
        let rotated = try await fixture.get(verifier, "/status/200?c")
        #expect(rotated.status == 200)
        #expect(rotated.validatedChainPins.first == fixture.pinB.description)

        // The control: the first manager alone refuses the rotated server, naming pin B.
        let fixed = try ServerTrustNIOVerifier(trustManager: first, anchors: TrustAnchors([fixture.root.certificate]))
        let error = await thrownError { try await fixture.get(fixed, "/status/200?d") }
        let failure = try #require(error as? ServerTrustNIOError, "\(String(describing: error))")
        #expect(failure.trustError.code == .pinMismatch)
        #expect(failure.trustError.evidence.chain.first?.pin == fixture.pinB)
    }

    /// The leaf's key put on the deny-list while the host's pins still name it: the next
    /// channel is refused with `.deniedKey`, naming the key; lifted again, it is accepted.
    @Test func aDenyListedKeyRefusesTheNextChannel() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let live = LiveTrustManager(try fixture.pinned([fixture.pinA, fixture.pinB]))
        let verifier = try fixture.verifier(live)
        #expect(try await fixture.get(verifier, "/status/200?a").status == 200)

        live.replace(with: try live.current.replacing(denyList: KeyDenyList(keys: [fixture.pinA])))
        let error = await thrownError { try await fixture.get(verifier, "/status/200?b") }
        let failure = try #require(error as? ServerTrustNIOError, "\(String(describing: error))")
        #expect(failure.trustError.code == .deniedKey)
        #expect(failure.trustError.reason.contains(fixture.pinA.description))
        #expect(failure.host == Self.host)

        live.replace(with: try live.current.replacing(denyList: KeyDenyList()))
        #expect(try await fixture.get(verifier, "/status/200?c").status == 200)
    }

    /// A verification made before the replacement (as a gRPC transport holds one) evaluates a
    /// later handshake under the manager in force: the deny-listed key is refused although the
    /// verification was resolved under the manager that allowed it.
    @Test func aVerificationMadeBeforeTheReplacementEvaluatesLaterHandshakesUnderTheNewManager() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let live = LiveTrustManager(try fixture.pinned([fixture.pinA]))
        let verifier = try fixture.verifier(live)
        let verification = try verifier.verification(forHost: Self.host)
        live.replace(with: try live.current.replacing(denyList: KeyDenyList(keys: [fixture.pinA])))

        let outcome = await handshake(verification: verification, port: fixture.server.port)
        #expect(outcome.failure?.trustError.code == .deniedKey, "\(outcome)")
        #expect(verification.generation == 1)
        #expect(verification.lastFailure?.trustError.code == .deniedKey)
        #expect(verification.acceptedCount == 0)
    }

    /// Channels established under generation 1: the one with the retirement handler is closed
    /// after a replacement, with a `Retirement` event, and stops watching; the one without it
    /// stays open. A channel set up after the replacement — its policy current — stays open,
    /// and its handler stops watching when the channel is closed.
    @Test func anEstablishedChannelIsRetiredAfterAReplacementAndOnlyThen() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let live = LiveTrustManager(try fixture.pinned([fixture.pinA]))
        let verifier = try fixture.verifier(live)
        let retiring = try await OpenChannel.connect(verifier, port: fixture.server.port, retireOnPolicyChange: true)
        let keeping = try await OpenChannel.connect(verifier, port: fixture.server.port, retireOnPolicyChange: false)
        defer { keeping.channel.close(promise: nil) }

        // No replacement: both stay open.
        try await Task.sleep(for: .milliseconds(300))
        #expect(retiring.channel.isActive)
        #expect(keeping.channel.isActive)
        #expect(try await retiring.isWatching())

        live.replace(with: try fixture.pinned([fixture.pinA, fixture.pinB]))
        try await wait(for: retiring.channel.closeFuture)
        #expect(!retiring.channel.isActive)
        #expect(retiring.events.retirements == [.init(channelGeneration: 1, currentGeneration: 2)])
        #expect(try await retiring.isWatching() == false)
        #expect(keeping.channel.isActive, "a channel without the retirement handler keeps its evaluation")

        // Set up under generation 2, which stays in force: not retired.
        let current = try await OpenChannel.connect(verifier, port: fixture.server.port, retireOnPolicyChange: true)
        try await Task.sleep(for: .milliseconds(300))
        #expect(current.channel.isActive)
        #expect(current.events.retirements.isEmpty)
        try await current.channel.close()
        #expect(try await current.isWatching() == false)
    }

    /// gRPC: the transport's verification is made once; the deny-list retires its established
    /// connection, and the transport's new connection is refused with `.deniedKey`. Without
    /// retirement the call would ride the old connection; without the callback resolving the
    /// host again, the new connection would be accepted under the old manager.
    @Test func aGRPCConnectionIsRetiredAndItsReconnectionEvaluatedUnderTheNewManager() async throws {
        let pki = try GenuineAndImpostor(host: GRPCNIOTests.host)
        let pin = pki.genuine.certificate.spkiPin
        let live = LiveTrustManager(
            try ServerTrustManager(evaluators: [try HostPattern(GRPCNIOTests.host): PinnedKeyHashesTrustEvaluator(pins: [pin])]))
        let verifier = try ServerTrustNIOVerifier(liveTrustManager: live, anchors: pki.anchors)
        let verification = try verifier.verification(forHost: GRPCNIOTests.host)
        let channels = ChannelLog()

        let server = HTTP2ServerTransport.Posix(
            address: .ipv4(host: "127.0.0.1", port: 0),
            transportSecurity: .tls(
                certificateChain: pki.genuine.chain.map { .bytes($0.derEncoded, format: .der) },
                privateKey: .bytes(Array(pki.genuine.key.pemPrivateKey.utf8), format: .pem)))
        try await withGRPCServer(transport: server, services: [Greeter()]) { grpcServer in
            defer { grpcServer.beginGracefulShutdown() }
            let port = try #require(try await server.listeningAddress.ipv4?.port)
            let client = try HTTP2ClientTransport.Posix(
                target: .ipv4(address: "127.0.0.1", port: port),
                transportSecurity: .tls { tls in
                    tls.serverCertificateVerification = .noHostnameVerification
                    tls.customVerificationCallback = verification.callback
                },
                config: .defaults { config in
                    config.http2.authority = verification.serverHostname
                    config.channelDebuggingCallbacks.onCreateTCPConnection = { channel in
                        channels.append(channel)
                        return verification.addGuardHandler(to: channel)
                    }
                })
            try await withGRPCClient(transport: client) { grpcClient in
                func greet(_ name: String) async throws -> String {
                    try await grpcClient.unary(
                        request: ClientRequest(message: name), descriptor: Greeter.method, serializer: UTF8Serializer(),
                        deserializer: UTF8Deserializer(), options: .noWait
                    ) { try $0.message }
                }
                #expect(try await greet("a") == "hello a")
                let first = try #require(channels.all.first)

                live.replace(with: try live.current.replacing(denyList: KeyDenyList(keys: [pin])))
                try await wait(for: first.closeFuture)

                let acceptedBefore = verification.acceptedCount
                // A call may fail fast ("no subchannel available") before the transport has
                // reconnected, and then carries no cause: call until the reconnection has been
                // evaluated. Every call must fail; the refusal is read from the verification.
                var answered: [String] = []
                for attempt in 0..<50 where verification.refusedCount == 0 {
                    do {
                        answered.append(try await greet("b\(attempt)"))
                    } catch {
                        let rpcError = try #require(error as? RPCError, "\(error)")
                        #expect(rpcError.code == .unavailable)
                    }
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(answered.isEmpty, "calls were answered after the deny-listing")
                #expect(verification.lastFailure?.trustError.code == .deniedKey)
                #expect(verification.lastFailure?.trustError.reason.contains(pin.description) == true)
                #expect(verification.acceptedCount == acceptedBefore, "a connection was accepted after the deny-listing")
                #expect(channels.all.count >= 2, "the transport reconnected")
            }
        }
    }

    /// One handshake to 127.0.0.1:`port` with `verification`'s callback and guard: its failure, if any.
    private func handshake(verification: HostTrustVerification, port: Int) async -> (failure: ServerTrustNIOError?, error: (any Error)?) {
        do {
            let sslContext = try NIOHTTPClient.context()
            let events = EventRecorder()
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let tls = try NIOSSLClientHandler(
                            context: sslContext, serverHostname: verification.serverHostname,
                            customVerificationCallbackWithMetadata: verification.callback)
                        try channel.pipeline.syncOperations.addHandlers([tls, verification.makeGuardHandler(), events.handler()])
                    }
                }
                .connect(host: "127.0.0.1", port: port).get()
            defer { channel.close(promise: nil) }
            try await wait(for: events.handshake.futureResult)
            return (nil, nil)
        } catch {
            return (error as? ServerTrustNIOError, error)
        }
    }
}

/// The channels a gRPC transport created.
private final class ChannelLog: Sendable {
    private let channels = Mutex<[any Channel]>([])
    var all: [any Channel] { channels.withLock { $0 } }
    func append(_ channel: any Channel) { channels.withLock { $0.append(channel) } }
}

/// A channel through `addClientHandlers`, its handshake completed, and the events it saw.
private struct OpenChannel {
    let channel: any Channel
    let events: EventRecorder

    static func connect(_ verifier: ServerTrustNIOVerifier, port: Int, retireOnPolicyChange: Bool) async throws -> OpenChannel {
        let sslContext = try NIOHTTPClient.context()
        let events = EventRecorder()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try verifier.addClientHandlers(
                        to: channel.pipeline.syncOperations, context: sslContext, host: LivePolicyNIOTests.host,
                        retireOnPolicyChange: retireOnPolicyChange)
                    try channel.pipeline.syncOperations.addHandler(events.handler())
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await wait(for: events.handshake.futureResult)
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try? channel.pipeline.syncOperations.handler(type: PolicyRetirementHandler.self), eventLoop: channel.eventLoop)
        }.get()
        return OpenChannel(channel: channel, events: events, retirementHandler: handler)
    }

    /// The channel's retirement handler, kept past its removal from the pipeline.
    let retirementHandler: NIOLoopBound<PolicyRetirementHandler?>

    init(channel: any Channel, events: EventRecorder, retirementHandler: NIOLoopBound<PolicyRetirementHandler?>) {
        self.channel = channel
        self.events = events
        self.retirementHandler = retirementHandler
    }

    /// Whether the retirement handler still watches the manager.
    func isWatching() async throws -> Bool {
        let handler = retirementHandler
        return try await channel.eventLoop.submit { handler.value?.isWatching ?? false }.get()
    }
}

/// What the last handler of a pipeline saw: the handshake's completion (or first error), and
/// every `PolicyRetirementHandler.Retirement` event.
private final class EventRecorder: Sendable {
    let handshake: EventLoopPromise<Void> = MultiThreadedEventLoopGroup.singleton.any().makePromise()
    private let seen = Mutex<[PolicyRetirementHandler.Retirement]>([])
    private let settled = Mutex(false)

    /// Completes ``handshake`` once: later outcomes (the close after an error) are ignored.
    func settle(_ result: Result<Void, any Error>) {
        guard settled.withLock({ done in defer { done = true }; return !done }) else { return }
        handshake.completeWith(result)
    }

    var retirements: [PolicyRetirementHandler.Retirement] { seen.withLock { $0 } }

    func handler() -> Handler { Handler(recorder: self) }

    final class Handler: ChannelInboundHandler {
        typealias InboundIn = NIOAny
        let recorder: EventRecorder

        init(recorder: EventRecorder) { self.recorder = recorder }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let tls = event as? TLSUserEvent, case .handshakeCompleted = tls { recorder.settle(.success(())) }
            if let retirement = event as? PolicyRetirementHandler.Retirement { recorder.seen.withLock { $0.append(retirement) } }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            recorder.settle(.failure(error))
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            recorder.settle(.failure(ChannelError.ioOnClosedChannel))
            context.fireChannelInactive()
        }
    }
}

/// Waits for `future`, failing after `seconds` instead of hanging the suite (a future's wait
/// cannot be cancelled, so the timeout fails a promise of its own).
private func wait(for future: EventLoopFuture<Void>, seconds: Int = 20) async throws {
    let eventLoop = future.eventLoop
    let promise = eventLoop.makePromise(of: Void.self)
    let timeout = eventLoop.scheduleTask(in: .seconds(Int64(seconds))) { promise.fail(TimeoutError(seconds: seconds)) }
    future.whenComplete { _ in timeout.cancel() }
    future.cascade(to: promise)
    try await promise.futureResult.get()
}

private struct TimeoutError: Error, CustomStringConvertible {
    let seconds: Int
    var description: String { "timed out after \(seconds) s" }
}
#endif
