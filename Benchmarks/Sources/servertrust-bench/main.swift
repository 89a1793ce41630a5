import BenchSupport
import Foundation
import ServerTrust
import ServerTrustHTTP

// ServerTrust's Session under the common workloads (see BenchSupport.Options), plus the
// revocation workloads that need ServerTrust itself:
//
//   servertrust-bench handshake|keepalive|multi|memory URL --policy P [--cacert F] [--pin …]…
//   servertrust-bench crl - --crl-dir DIR [--sizes 1000,100000,1000000] [--seconds S]
//   servertrust-bench lookup - [--seconds S]     (trust manager lookups, 10 / 1,000 / 10,000 patterns)
//
// Policies: default, pins, pins-staple, pins-staple-verifier, pins-ocsp-warm, pins-ocsp-cold
// (see Policies.swift). Without --cacert the anchors are the system bundle, loaded once.

runBlocking {
    let options = Options()
    if options.mode == "crl" {
        try CRLWorkload.run(options)
        return
    }
    if options.mode == "lookup" {
        try LookupWorkload.run(options)
        return
    }
    var configuration = Session.Configuration()
    configuration.httpVersion = options.http2 ? .http2Preferred : .http1_1
    configuration.maximumConnectionsPerHost = options.http2 ? 1 : options.connections
    configuration.redirectPolicy = .disallow
    if let file = options.caCertificates {
        configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: file))
    }
    guard let host = URL(string: options.url)?.host else { Options.fail("bad URL \(options.url)") }
    let policy = try Policies.make(options.policy, pins: options.pins)
    let session = try Session(configuration: configuration, trustManager: ServerTrustManager(evaluators: [host: policy.evaluator]))
    let url = options.url
    let prepare = policy.prepare
    try await runWorkload(options) {
        prepare()
        let response = try await session.get(url)
        guard response.status == 200 else { throw BenchError.status(response.status.code) }
    }
    policy.report()
    session.shutdown()
}

enum BenchError: Error { case status(Int) }
