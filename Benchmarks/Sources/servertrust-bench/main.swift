import BenchSupport
import Foundation
import ServerTrust
import ServerTrustHTTP

// ServerTrust's Session under the common workloads (see BenchSupport.Options), plus the
// revocation workloads that need ServerTrust itself:
//
//   servertrust-bench handshake|keepalive|multi|memory URL --policy P [--cacert F] [--pin …]…
//                     [--executor loop]   (the workload's tasks prefer Session.taskExecutor)
//                     [--trust compiled|live] [--deny-list K,C]   (trust updates, TrustSources.swift)
//   servertrust-bench crl - --crl-dir DIR [--sizes 1000,100000,1000000] [--seconds S]
//   servertrust-bench lookup - [--seconds S]     (trust manager lookups, 10 / 1,000 / 10,000 patterns)
//
// Policies: default, pins, pins-staple, pins-staple-verifier, pins-ocsp-warm, pins-ocsp-cold,
// pins-ct [--ct-log-list FILE] (see Policies.swift). Without --cacert the anchors are the system bundle, loaded once.

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
    let policy = try Policies.make(options.policy, pins: options.pins, options: options)
    let session = try TrustSources.session(options, configuration: configuration, host: host, policy: policy)
    let url = options.url
    let prepare = policy.prepare
    let request: @Sendable () async throws -> Void = {
        prepare()
        let response = try await session.get(url)
        guard response.status == 200 else { throw BenchError.status(response.status.code) }
    }
    switch options.extra["executor"] {
    case nil, "global":
        try await runWorkload(options, request)
    case "loop":
        // The whole workload (its task group's children inherit the preference) runs on the
        // session's loop thread: no cross-thread hand-off per request.
        try await withTaskExecutorPreference(session.taskExecutor) { () async throws -> Void in
            try await runWorkload(options, request)
        }
    case let other?:
        Options.fail("--executor is global or loop, not \(other)")
    }
    policy.report()
    session.shutdown()
}

enum BenchError: Error { case status(Int) }
