// swift-tools-version:6.1
import PackageDescription

// ServerTrust's benchmarks, side by side with raw libcurl, curl's CURLOPT_PINNEDPUBLICKEY,
// FoundationNetworking's URLSession and AsyncHTTPClient, all against one local nginx.
// A separate package, so the peers used for comparison never enter the main package's graph.
// `./run.sh` builds and runs everything; see docs/PERFORMANCE.md for the results.
let package = Package(
    name: "ServerTrustBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        // Named, so products resolve whatever the checkout's directory is called.
        .package(name: "ServerTrust", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        // For comparison only.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // Raw libcurl, no ServerTrust code: the baseline of every ratio.
        .executableTarget(
            name: "libcurl-bench",
            linkerSettings: [.linkedLibrary("curl")]
        ),
        // The least an async Swift request costs over libcurl, without ServerTrust (async-floor).
        .target(name: "CCurlFloor", linkerSettings: [.linkedLibrary("curl")]),
        .executableTarget(name: "async-floor", dependencies: ["BenchSupport", "CCurlFloor"]),
        // The workload drivers every Swift client shares.
        .target(name: "BenchSupport"),
        // ServerTrust fixtures shared by the micro-benchmarks and servertrust-bench.
        .target(name: "BenchFixtures", dependencies: [.product(name: "ServerTrust", package: "ServerTrust")]),
        .executableTarget(
            name: "servertrust-bench",
            dependencies: [
                "BenchSupport", "BenchFixtures",
                .product(name: "ServerTrust", package: "ServerTrust"),
                .product(name: "ServerTrustHTTP", package: "ServerTrust"),
            ]
        ),
        // Signed-response verification, v1 beside RFC 9421, and the responses for the Python
        // peer (scripts/signatures.sh, rfc9421/bench.py). No network.
        .executableTarget(name: "signature-bench", dependencies: [.product(name: "ServerTrust", package: "ServerTrust")]),
        .executableTarget(name: "urlsession-bench", dependencies: ["BenchSupport"]),
        // App Store signed-transaction verification beside its crypto floor; Apple's
        // SignedDataVerifier is built beside it by scripts/purchases.sh, outside this package.
        .executableTarget(
            name: "purchases-bench",
            dependencies: [
                .product(name: "ServerTrust", package: "ServerTrust"),
                .product(name: "ServerTrustLab", package: "ServerTrust"),
                .product(name: "ServerTrustPurchases", package: "ServerTrust"),
            ]
        ),
        .executableTarget(
            name: "ahc-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // ordo-one/benchmark micro-benchmarks: `swift package benchmark` (run.sh does it).
        .executableTarget(
            name: "ServerTrustMicro",
            dependencies: [
                "BenchFixtures",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ServerTrust", package: "ServerTrust"),
            ],
            path: "Benchmarks/ServerTrustMicro",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
