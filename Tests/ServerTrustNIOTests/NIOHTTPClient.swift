#if NIOAdapter
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ServerTrust
import ServerTrustNIO

/// What one HTTP/1.1 GET through `NIOSSLClientHandler` and the adapter returned.
struct NIOHTTPResult: Sendable {
    let status: Int
    let body: String
    /// The SPKI pins of the chain the adapter reported to swift-nio-ssl as validated, leaf first.
    let validatedChainPins: [String]
}

/// A minimal SwiftNIO HTTP/1.1 client: one connection, one GET, the adapter's handlers first.
enum NIOHTTPClient {
    /// A client TLS context that leaves certificate checks to ServerTrust, with the TLS 1.2 floor
    /// the verifier demands (swift-nio-ssl's default minimum is TLS 1.0).
    static func context(
        _ verification: CertificateVerification = .noHostnameVerification, minimumTLSVersion: TLSVersion = .tlsv12
    ) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = verification
        configuration.minimumTLSVersion = minimumTLSVersion
        return try NIOSSLContext(configuration: configuration)
    }

    /// Connects to 127.0.0.1:`port` as `host` and GETs `path` with `headers` besides `Host`;
    /// `onVerification` receives the connection's `HostTrustVerification` once it is made.
    static func get(
        _ path: String = "/", host: String, port: Int, verifier: ServerTrustNIOVerifier, context: NIOSSLContext? = nil,
        headers: [(String, String)] = [], onVerification: (@Sendable (HostTrustVerification) -> Void)? = nil
    ) async throws -> NIOHTTPResult {
        let sslContext = try context ?? Self.context()
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let response = eventLoop.makePromise(of: NIOHTTPResult.self)
        let channel = try await ClientBootstrap(group: eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let verification = try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: sslContext, host: host)
                    onVerification?(verification)
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ResponseCollector(promise: response))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        defer { channel.close(promise: nil) }
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
        head.headers.add(name: "Host", value: host)
        head.headers.add(name: "Connection", value: "close")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        return try await response.futureResult.get()
    }
}

/// Collects one response and the chain the TLS handler holds as validated; fails with the
/// first error the pipeline reports.
private final class ResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<NIOHTTPResult>
    private var status = 0
    private var body = ""
    private var pins: [String] = []
    private var done = false

    init(promise: EventLoopPromise<NIOHTTPResult>) { self.promise = promise }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
            do {
                let chain = try context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self).peerValidatedCertificateChain
                pins = try (chain.map(Array.init) ?? []).map { try Certificate(derEncoded: $0.toDERBytes()).spkiPin.description }
            } catch {
                finish(.failure(error))
            }
        case .body(let buffer): body += String(buffer: buffer)
        case .end: finish(.success(NIOHTTPResult(status: status, body: body, validatedChainPins: pins)))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(ChannelError.ioOnClosedChannel))
        context.fireChannelInactive()
    }

    private func finish(_ result: Result<NIOHTTPResult, any Error>) {
        guard !done else { return }
        done = true
        promise.completeWith(result)
    }
}
#endif
