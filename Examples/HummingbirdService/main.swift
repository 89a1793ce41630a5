// A Hummingbird 2 service whose calls to its upstream are pinned, with the pins kept current by
// trust updates and the trust metrics exported for Prometheus. README.md runs it.
#if Examples
import CoreMetrics
import Foundation
import Hummingbird
import Logging
import Prometheus
import ServerTrust
import ServerTrustHTTP
import ServerTrustTUF
import ServerTrustUpdates
import ServiceLifecycle

guard CommandLine.arguments.count == 2 else {
    print("usage: servertrust-example-hummingbird UPSTREAM-DIR   (the directory Examples/upstream.py made)")
    exit(2)
}
let upstream = CommandLine.arguments[1]
let logger = Logger(label: "servertrust-example-hummingbird")

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
        metadataDirectory: upstream + "/hummingbird-service-trust", initialRoot: root,
        repositoryURL: "https://updates.upstream.test:19443/tuf"),
    fetcher: SessionTUFFetcher(session: try Session(configuration: updateConfiguration, trustManager: floor)))

// The API's session follows the policy the updates put in force.
let session = try Session(configuration: configuration, liveTrustManager: updates.liveTrustManager)

let router = Router()
router.get("quote") { _, _ -> Response in
    do {
        let quote = try await session.get("https://api.upstream.test:19443/v1/quote")
        return Response(status: quote.status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: quote.body)))
    } catch let error as SessionError {
        // Refused by the upstream's pins (or not reached): the upstream failed us, say why.
        let reason = error.trustError.map { "upstream not trusted: \($0.code)" } ?? "upstream failed: \(error.code)"
        return Response(status: .badGateway, body: .init(byteBuffer: ByteBuffer(string: reason + "\n")))
    }
}
router.get("metrics") { _, _ -> String in registry.emitToString() }

var app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 18081)), logger: logger)
// Take traffic once the first refresh has had its answer (applied, or failed and the floor stays),
// so that the first quote is fetched under the policy the service will keep.
app.beforeServerStarts { while updates.status.lastOutcome == nil { try await Task.sleep(for: .milliseconds(100)) } }

// Restores and refreshes the trust updates, serves, and on SIGTERM or ^C stops the server, then the updates.
try await ServiceGroup(services: [updates, app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
session.shutdown()
#else
import Foundation

print("servertrust-example-hummingbird: build with --enable-all-traits (the Examples trait)")
exit(1)
#endif
