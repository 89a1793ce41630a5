// A Vapor 4 service whose `req.client` calls to its upstream are pinned, with the pins kept
// current by trust updates and the trust metrics exported for Prometheus. README.md runs it.
#if Examples
import CoreMetrics
import Foundation
import Logging
import Prometheus
import ServerTrust
import ServerTrustHTTP
import ServerTrustTUF
import ServerTrustUpdates
import ServerTrustVapor
import ServiceLifecycle
import Vapor

guard CommandLine.arguments.count == 2 else {
    print("usage: servertrust-example-vapor UPSTREAM-DIR   (the directory Examples/upstream.py made)")
    exit(2)
}
let upstream = CommandLine.arguments[1]
let logger = Logger(label: "servertrust-example-vapor")

// Metrics first: a Session reads the factory when it is made.
let registry = PrometheusCollectorRegistry()
MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

// The README starts the upstream and this service together: wait for its files (60 s at most).
for _ in 0..<120 where !FileManager.default.fileExists(atPath: upstream + "/ready") { try await Task.sleep(for: .milliseconds(500)) }

// The floor: the pins this binary starts from (both hosts). A real service compiles them in from
// Certificates/ with ServerTrustPinsPlugin, and its TUF root too; here they are the upstream's files.
let floor = try TrustPolicyFile(contentsOf: URL(fileURLWithPath: upstream + "/floor.json")).manager
let root = try InitialRoot(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: upstream + "/root.json"))))

// Both hosts are the local upstream, whose CA is not in the system store.
var configuration = Session.Configuration()
configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: upstream + "/ca.pem"))
configuration.resolve = ["api.upstream.test:19443:127.0.0.1", "updates.upstream.test:19443:127.0.0.1"]

// Trust updates come from the update host over a session pinned by the floor alone (what a
// delivered policy says never decides how the next one is fetched).
var updateConfiguration = configuration
updateConfiguration.redirectPolicy = .disallow
let updates = try TrustUpdateClient(
    floor: floor,
    configuration: .init(
        metadataDirectory: upstream + "/vapor-service-trust", initialRoot: root,
        repositoryURL: "https://updates.upstream.test:19443/tuf"),
    fetcher: SessionTUFFetcher(session: try Session(configuration: updateConfiguration, trustManager: floor)))

// Vapor's client is the session, which follows the policy the updates put in force.
let session = try Session(configuration: configuration, liveTrustManager: updates.liveTrustManager)
let app = try await Application.make(.init(name: "production", arguments: ["servertrust-example-vapor"]), logger: logger)
app.clients.use(.serverTrust(session))

app.get("quote") { req async throws -> Vapor.Response in
    do {
        let quote = try await req.client.get("https://api.upstream.test:19443/v1/quote")
        return Vapor.Response(status: quote.status, headers: ["Content-Type": "application/json"], body: .init(buffer: quote.body ?? ByteBuffer()))
    } catch let error as SessionError {
        // Refused by the upstream's pins (or not reached): the upstream failed us, say why.
        let reason = error.trustError.map { "upstream not trusted: \($0.code)" } ?? "upstream failed: \(error.code)"
        return Vapor.Response(status: .badGateway, body: .init(string: reason + "\n"))
    }
}
app.get("metrics") { _ -> String in registry.emitToString() }

/// Vapor 4 has no ServiceLifecycle integration: its server, run as a Service.
struct VaporServer: Service {
    let app: Application
    let updates: TrustUpdateClient

    func run() async throws {
        // Take traffic once the first refresh has had its answer (applied, or failed and the floor
        // stays), so that the first quote is fetched under the policy the service will keep.
        while updates.status.lastOutcome == nil { try await Task.sleep(for: .milliseconds(100)) }
        try await app.asyncBoot()
        try await app.server.start(address: .hostname("127.0.0.1", port: 18080))
        try? await gracefulShutdown()  // SIGTERM or ^C (or the group cancelled)
        await app.server.shutdown()
        try await app.asyncShutdown()
    }
}

// Restores and refreshes the trust updates, serves, and on SIGTERM or ^C stops the server, then the updates.
try await ServiceGroup(services: [updates, VaporServer(app: app, updates: updates)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
session.shutdown()
#else
import Foundation

print("servertrust-example-vapor: build with --enable-all-traits (the Examples trait)")
exit(1)
#endif
