import BenchSupport
import Foundation
import FoundationNetworking

// FoundationNetworking's URLSession (libcurl underneath) under the common workloads.
//
// It has no API for anchors and ignores URLSessionCertificateAuthorityInfoFile, so run.sh
// starts it in a private mount namespace (`unshare -m`) with the test root bind-mounted over
// /etc/ssl/certs/ca-certificates.crt; `--cacert` is accepted and ignored.

runBlocking {
    let options = Options()
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = options.connections  // HTTP/2 or not: its own choice
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    let session = URLSession(configuration: configuration)
    guard let url = URL(string: options.url) else { Options.fail("bad URL \(options.url)") }
    try await runWorkload(options) {
        let (_, response) = try await session.data(from: url)
        guard let status = (response as? HTTPURLResponse)?.statusCode, status == 200 else { throw URLError(.badServerResponse) }
    }
    session.invalidateAndCancel()
}
