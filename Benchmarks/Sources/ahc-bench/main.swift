import AsyncHTTPClient
import BenchSupport
import Foundation
import NIOSSL

// AsyncHTTPClient (SwiftNIO + BoringSSL) under the common workloads, with the test root as its
// only trust root (`--cacert`), or its default roots (the system bundle) without it.

runBlocking {
    let options = Options()
    var tls = TLSConfiguration.makeClientConfiguration()
    if let file = options.caCertificates {
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
    }
    var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
    configuration.httpVersion = options.http2 ? .automatic : .http1Only
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = options.connections
    configuration.redirectConfiguration = .disallow
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    let url = options.url
    do {
        try await runWorkload(options) {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
            _ = try await response.body.collect(upTo: 1 << 20)
            guard response.status.code == 200 else { throw HTTPClientError.invalidURL }
        }
    } catch {
        _ = try? await client.shutdown().get()
        throw error
    }
    try await client.shutdown().get()
}
