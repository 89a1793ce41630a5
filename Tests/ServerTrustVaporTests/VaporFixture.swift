#if VaporClient
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustTestSupport
import ServerTrustVapor
import Synchronization
import Vapor
import VaporTesting

/// The genuine upstream for ``host`` and the impostor of ``GenuineAndImpostor``, both serving
/// ``balance`` on loopback, which the session reaches through `resolve` entries: only the pin
/// can tell the two apart.
struct VaporFixture {
    static let host = "payments.servertrust.test"

    let pki: GenuineAndImpostor
    let genuine: LocalTLSServer
    let impostor: LocalTLSServer

    init() throws {
        pki = try GenuineAndImpostor(host: Self.host, name: "Vapor Test")
        (genuine, impostor) = try pki.servers(handler: Self.balance)
    }

    /// The genuine chain's intermediate, which the client pins.
    var pin: Pin { pki.pin }

    /// `GET /balance` answers JSON; every other route is the lab's (`/echo`, `/redirect/…`, …).
    static let balance: LocalHTTPHandler = { request in
        guard request.method == "GET", request.path == "/balance" else { return nil }
        return LocalHTTPResponse(headers: [("Content-Type", "application/json")], body: .text(#"{"balance":"100.00"}"#))
    }

    /// The session's settings: both roots trusted, ``host`` sent to the genuine server and to
    /// the impostor (on their own ports), a request timeout no test reaches.
    func configuration() throws -> ServerTrustHTTP.Session.Configuration {
        var configuration = ServerTrustHTTP.Session.Configuration()
        configuration.anchors = .bundle(try pki.anchors)
        configuration.resolve = [genuine.resolveEntry(host: Self.host), impostor.resolveEntry(host: Self.host)]
        configuration.requestTimeout = .seconds(300)
        return configuration
    }

    /// A session that pins the genuine intermediate for ``host``, made as the DocC article makes
    /// it (plus the lab's anchors and `resolve` entries); `policy` replaces the pin when set.
    func session(policy: HostPolicy? = nil) throws -> ServerTrustHTTP.Session {
        let manager = try policy.map { try ServerTrustManager(policies: [try HostPattern(Self.host): $0], allHostsMustBeEvaluated: true) }
            ?? ServerTrustManager(evaluators: [try HostPattern(Self.host): .pinnedKeyHashes([pin])], allHostsMustBeEvaluated: true)
        return try ServerTrustHTTP.Session(configuration: configuration(), trustManager: manager)
    }

    /// `https://payments.servertrust.test:{port}{path}` on `server`.
    func url(_ path: String, on server: LocalTLSServer) -> String { server.url(path, host: Self.host) }

    func stop() {
        genuine.stop()
        impostor.stop()
    }
}

/// Runs `test` against a Vapor application whose client is `.serverTrust(session)`, with the
/// routes `routes` installs, served on 127.0.0.1 at a free port (VaporTesting's `.running`);
/// shuts the application down whatever happens.
@discardableResult
func withVaporApp<T>(
    session: ServerTrustHTTP.Session, routes: (Application) throws -> Void, _ test: (any TestingApplicationTester) async throws -> T
) async throws -> T {
    let app = try await Application.make(.testing)
    do {
        app.clients.use(.serverTrust(session))
        try routes(app)
        let result = try await test(try app.testing(method: .running(hostname: "127.0.0.1", port: 0)))
        try await app.asyncShutdown()
        return result
    } catch {
        try? await app.asyncShutdown()
        throw error
    }
}

/// A value the tests read after a route handler has set it.
final class Recorded<Value: Sendable>: Sendable {
    private let value: Mutex<Value?> = Mutex(nil)
    init() {}
    func set(_ newValue: Value) { value.withLock { $0 = newValue } }
    var current: Value? { value.withLock { $0 } }
}
#endif
