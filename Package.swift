// swift-tools-version:6.1
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "ServerTrust",
    // Synchronization's Atomic and Mutex need macOS 15. Linux is what this project's CI tests;
    // macOS builds are not tested (README, "Platforms").
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ServerTrust", targets: ["ServerTrust"]),
        .library(name: "ServerTrustHTTP", targets: ["ServerTrustHTTP"]),
        // The TUF client (canonical JSON, trusted metadata, atomic store); fetching is a protocol,
        // so it links neither libcurl nor ServerTrustHTTP, and neither of those links it.
        .library(name: "ServerTrustTUF", targets: ["ServerTrustTUF"]),
        // The glue between them: the TUF client fetching over a pinned `Session`.
        .library(name: "ServerTrustUpdates", targets: ["ServerTrustUpdates"]),
        // The App Store's signed data verified against configured Apple roots before a purchase
        // is granted; OpenSSL through ServerTrust, no other dependency, no libcurl.
        .library(name: "ServerTrustPurchases", targets: ["ServerTrustPurchases"]),
        // The purchase ledger: each verified purchase granted once, to one account, durably —
        // SQLite (Debian's libsqlite3) by default; OpenSSL and SQLite only, no libcurl.
        .library(name: "ServerTrustLedger", targets: ["ServerTrustLedger"]),
        .executable(name: "servertrust", targets: ["servertrust"]),
        // A local PKI and TLS servers for demos, examples and your own tests — never for
        // production traffic. `servertrust demo` runs on it.
        .library(name: "ServerTrustLab", targets: ["ServerTrustLab"]),
        // Compiles the certificates of a Certificates/ folder into Swift constants (DER + SPKI pin),
        // and its TUF roots (*.tufroot.json), verified at build time, into base64 constants.
        .plugin(name: "ServerTrustPinsPlugin", targets: ["ServerTrustPinsPlugin"]),
        // Response signing as Hummingbird 2 middleware; empty unless the trait below is enabled.
        .library(name: "ServerTrustHummingbird", targets: ["ServerTrustHummingbird"]),
        // A URLProtocol that serves a URLSession's https requests through a Session; empty unless
        // the URLSessionAdapter trait is enabled.
        .library(name: "ServerTrustURLSession", targets: ["ServerTrustURLSession"]),
        // A swift-openapi-runtime ClientTransport over Session, for clients made by
        // swift-openapi-generator; empty unless the OpenAPIAdapter trait is enabled.
        .library(name: "ServerTrustOpenAPI", targets: ["ServerTrustOpenAPI"]),
        // ServerTrustManager as swift-nio-ssl's custom verification callback (NIOSSLClientHandler,
        // grpc-swift-nio-transport); empty unless the NIOAdapter trait is enabled.
        .library(name: "ServerTrustNIO", targets: ["ServerTrustNIO"]),
        // A Vapor 4 `Client` whose every request goes through a Session (`app.clients.use(.serverTrust(session))`);
        // empty unless the VaporClient trait is enabled.
        .library(name: "ServerTrustVapor", targets: ["ServerTrustVapor"]),
    ],
    traits: [
        .trait(
            name: "HummingbirdSigning",
            description: "Builds ServerTrustHummingbird: ResponseSigner as Hummingbird 2 middleware (pulls in Hummingbird and SwiftNIO)."
        ),
        .trait(
            name: "URLSessionAdapter",
            description: "Builds ServerTrustURLSession: a URLProtocol that serves URLSession's https requests through a pinned Session (no new package dependency)."
        ),
        .trait(
            name: "OpenAPIAdapter",
            description: "Builds ServerTrustOpenAPI: SessionTransport, a swift-openapi-runtime ClientTransport over Session (pulls in swift-openapi-runtime)."
        ),
        .trait(
            name: "NIOAdapter",
            description: "Builds ServerTrustNIO: a ServerTrustManager as swift-nio-ssl's custom verification callback (pulls in SwiftNIO and swift-nio-ssl with its BoringSSL; its tests also pull in grpc-swift 2 and grpc-swift-nio-transport)."
        ),
        .trait(
            name: "Examples",
            description: "Builds the two example services in Examples/ (servertrust-example-vapor, servertrust-example-hummingbird), with Vapor, Hummingbird, swift-prometheus and swift-service-lifecycle; without it they are stubs.",
            enabledTraits: ["VaporClient", "LifecycleService"]
        ),
        .trait(
            name: "VaporClient",
            description: "Builds ServerTrustVapor: a Vapor 4 Client (req.client, app.client) whose every request goes through a pinned Session (pulls in Vapor with SwiftNIO, AsyncHTTPClient and swift-nio-ssl)."
        ),
        .trait(
            name: "LifecycleService",
            description: "Makes TrustUpdateClient a swift-service-lifecycle Service that stops on graceful shutdown, for a ServiceGroup (pulls in swift-service-lifecycle, swift-async-algorithms and swift-collections)."
        ),
        .trait(
            name: "PostgreSQLLedger",
            description: "Builds PostgresLedgerStore: the purchase ledger on a PostgreSQL server, for services on several machines (pulls in postgres-nio with SwiftNIO); its tests need a server (.ci/run starts one)."
        ),
        .trait(
            name: "X509Interop",
            description: "Builds the test that uses ServerTrust.Certificate beside swift-certificates' X509.Certificate (pulls in swift-certificates, swift-crypto and swift-asn1)."
        ),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        // Session metrics and traces (ServerTrustHTTP only): small pure-Swift API packages, a
        // default dependency (a clean build of ServerTrustHTTP costs a few seconds more).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // Only with the HummingbirdSigning trait: every use below is conditional on it, so a
        // package that does not enable it neither builds nor (SwiftPM 6.1+) resolves Hummingbird.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // HTTPTypes: the method, status and header fields of ServerTrustHTTP's Request and
        // Response, shared with Hummingbird, Vapor, OpenAPI and AsyncHTTPClient code. A default
        // dependency of ServerTrustHTTP: a small pure-Swift package with no dependencies.
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Only with the OpenAPIAdapter trait, like Hummingbird above: a default build neither
        // builds nor resolves it. Its tests use committed generated code
        // (scripts/generate-openapi-test-client.sh), so no build ever needs swift-openapi-generator.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        // Only with the X509Interop trait, for ServerTrustX509InteropTests: like Hummingbird above,
        // a default build neither builds nor resolves it.
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        // Only with the NIOAdapter trait (ServerTrustNIO and its tests): like Hummingbird above, a
        // default build neither builds nor resolves them. gRPC is used by the tests only.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/grpc/grpc-swift-2", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", from: "2.9.2"),
        // Only with the Examples trait (the example services' metrics): like Hummingbird above,
        // a default build neither builds nor resolves it.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Only with the VaporClient trait (ServerTrustVapor and its tests): like Hummingbird above,
        // a default build neither builds nor resolves it.
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
        // Only with the LifecycleService trait: TrustUpdateClient's `Service` conformance lives
        // in ServerTrustUpdates itself, under `#if LifecycleService` — on the type's own module,
        // so no retroactive conformance and no extra module to import — while a default build,
        // like Hummingbird's above, neither resolves nor builds swift-service-lifecycle and its
        // swift-async-algorithms and swift-collections.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Only with the PostgreSQLLedger trait (PostgresLedgerStore and its tests): like Hummingbird
        // above, a default build neither builds nor resolves it.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // `swift package generate-documentation --target …`: the DocC catalogues, checked in CI.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        // zlib, for decoding gzip/deflate response bodies after their signature is verified
        // (libcurl decodes the others, but only after the bytes are out of reach of a signature).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // SQLite, the ledger's embedded store: the system's library (Debian's security updates),
        // for BEGIN IMMEDIATE transactions, a busy timeout and prepared statements, nothing more.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // Wrappers for OpenSSL macros the Swift importer cannot see. No curl here: the
        // ServerTrust module must build without libcurl in its dependency graph.
        .target(name: "CServerTrustShims", dependencies: ["COpenSSL"]),
        // Wrappers for libcurl's variadic setopt/getinfo calls, used by ServerTrustHTTP only.
        .target(name: "CServerTrustCurlShims", dependencies: ["CCurl", "COpenSSL"]),
        // Wrappers for the OpenSSL macros only ServerTrustLab calls (certificate builder, TLS server).
        .target(name: "CServerTrustLabShims", dependencies: ["COpenSSL"]),
        // Test-only wrappers (the intercepting proxy's client side): only ServerTrustTestSupport
        // depends on it, so nothing of it ships in `servertrust`.
        .target(name: "CServerTrustTestShims", dependencies: ["COpenSSL"]),
        // Certificates, SPKI pins, the signature keys (the verifier SignaturePublicKey, its signing
        // half, and the v1 key types as views of them) and the errors they throw: what a build-time
        // tool needs to compile trust material into a binary. ServerTrust re-exports it,
        // so the plugin's tool builds this module instead of the whole of ServerTrust.
        .target(
            name: "ServerTrustCertificates",
            dependencies: ["COpenSSL", "CServerTrustShims"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "ServerTrust",
            dependencies: [
                "ServerTrustCertificates", "COpenSSL", "CServerTrustShims", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "ServerTrustHTTP",
            dependencies: [
                "ServerTrust", "CCurl", "COpenSSL", "CServerTrustShims", "CServerTrustCurlShims", "CZlib",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSwift
        ),
        // The TUF client: depends on ServerTrustCertificates (SignaturePublicKey, the one signature
        // verifier) and OpenSSL's digests only, so the plugin's tool can verify a TUF root at build
        // time without compiling ServerTrust.
        .target(
            name: "ServerTrustTUF",
            dependencies: ["ServerTrustCertificates", "COpenSSL"],
            swiftSettings: strictSwift
        ),
        // Trust updates (#35): the TUF client over ServerTrustHTTP. A module of its own, so that
        // neither ServerTrustHTTP nor ServerTrustTUF depends on the other.
        .target(
            name: "ServerTrustUpdates",
            dependencies: [
                "ServerTrustHTTP", "ServerTrustTUF", "ServerTrustPurchases", .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["LifecycleService"])),
            ],
            swiftSettings: strictSwift
        ),
        // The plugin compiles Certificates/sample.tufroot.json (a fixture root, made reproducibly
        // by Fixtures/tuf_repo.py) into this target, so `swift build` exercises the plugin's TUF
        // root path and the tests start an updater from the compiled-in constant. ServerTrustHTTP
        // only for its libcurl fetch: TUFOnCITests serves a published repository on loopback and
        // fetches it as `servertrust updates` does.
        .testTarget(
            name: "ServerTrustTUFTests",
            dependencies: [
                "ServerTrustTUF", "ServerTrust", "ServerTrustHTTP", "ServerTrustUpdates", "ServerTrustCodeGeneration",
                "ServerTrustLab", "ServerTrustTestSupport", "servertrust",
            ],
            exclude: ["Certificates"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSwift,
            plugins: [.plugin(name: "ServerTrustPinsPlugin")]
        ),
        // The trust-update client, its floor and its states, against repositories tuf_repo.py
        // publishes (TUFTooling) and served on loopback; `servertrust` for the CLI's reading of
        // the same store.
        .testTarget(
            name: "ServerTrustUpdatesTests",
            dependencies: [
                "ServerTrustUpdates", "ServerTrustTUF", "ServerTrust", "ServerTrustHTTP", "ServerTrustLab", "ServerTrustTestSupport",
                "servertrust", .product(name: "Logging", package: "swift-log"), .product(name: "MetricsTestKit", package: "swift-metrics"),
                // TrustUpdateServiceTests: a ServiceGroup running the update client.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["LifecycleService"])),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle", condition: .when(traits: ["LifecycleService"])),
            ],
            swiftSettings: strictSwift
        ),
        // Apple's three roots (Certificates/, as Apple publishes them) compiled into
        // Generated/AppleRootCertificates+Data.swift by the plugin's generator, committed; a test
        // regenerates it and compares. Not the build plugin itself: a library applying it makes
        // every dependent build the generator tool, and the fuzzing build cannot (libFuzzer's main).
        .target(
            name: "ServerTrustPurchases",
            dependencies: ["ServerTrust", "ServerTrustCertificates"],
            exclude: ["Certificates"],
            swiftSettings: strictSwift
        ),
        // An Apple-like PKI (ServerTrustTestSupport's AppStoreLab) mints the signed data; Apple's
        // own test vectors (MIT) sit in Fixtures/apple with their licence, read from the source tree.
        .testTarget(
            name: "ServerTrustPurchasesTests",
            dependencies: ["ServerTrustPurchases", "ServerTrust", "ServerTrustLab", "ServerTrustTestSupport", "ServerTrustCodeGeneration"],
            exclude: ["Fixtures"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "ServerTrustLedger",
            dependencies: [
                "ServerTrustPurchases", "CSQLite",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQLLedger"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["PostgreSQLLedger"])),
            ],
            swiftSettings: strictSwift
        ),
        // The ledger's contract, run against every store; the App Store's purchases minted by
        // ServerTrustLab's AppStoreLab and verified first, as a server would.
        .testTarget(
            name: "ServerTrustLedgerTests",
            dependencies: [
                "ServerTrustLedger", "ServerTrustPurchases", "ServerTrustLab", "ServerTrustTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQLLedger"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["PostgreSQLLedger"])),
            ],
            swiftSettings: strictSwift
        ),
        // `servertrust demo` starts local TLS servers with a PKI made on the spot, so the tool
        // links ServerTrustLab (LabPKI, LocalTLSServer), which needs only ServerTrust and
        // OpenSSL and so adds no system dependency. It never links ServerTrustTestSupport:
        // scripts/check-shipping-binary.sh fails the release build if a symbol of it appears.
        // The plugin compiles Certificates/ into the constants the demo checks the sample chain with.
        .executableTarget(
            name: "servertrust",
            dependencies: [
                "ServerTrust",
                "ServerTrustHTTP",
                "ServerTrustCodeGeneration",
                "ServerTrustLab",
                "ServerTrustTUF",
                "ServerTrustUpdates",
                "ServerTrustPurchases",
                "ServerTrustLedger",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSwift,
            plugins: [.plugin(name: "ServerTrustPinsPlugin")]
        ),
        // Certificate files and TUF roots → Swift constants; shared by `servertrust generate` and the
        // plugin's tool. ServerTrustCertificates and ServerTrustTUF (which verifies a TUF root as
        // its client would) only, so the tool does not compile ServerTrust a second time.
        .target(
            name: "ServerTrustCodeGeneration",
            dependencies: ["ServerTrustCertificates", "ServerTrustTUF"],
            swiftSettings: strictSwift
        ),
        // The plugin's tool. Separate from `servertrust`, which the plugin is applied to: a plugin
        // running the executable it builds would be a dependency cycle.
        .executableTarget(
            name: "servertrust-generate",
            dependencies: ["ServerTrustCodeGeneration"],
            swiftSettings: strictSwift
        ),
        .plugin(
            name: "ServerTrustPinsPlugin",
            capability: .buildTool(),
            dependencies: ["servertrust-generate"]
        ),
        // The lab: an in-process PKI (LabPKI, LabCA, LabKey, CRLs) and local TLS and HTTP
        // servers, for the demo and for tests — the package's own and its users'. A product,
        // reviewed as library code; nothing in it is meant to attack a client.
        .target(
            name: "ServerTrustLab",
            dependencies: ["ServerTrust", "COpenSSL", "CServerTrustShims", "CServerTrustLabShims"],
            swiftSettings: strictSwift
        ),
        // Test-only, never a product and never linked by `servertrust`: the attacker's pieces
        // (intercepting and body-rewriting CONNECT proxy, forged certificates, hostile OCSP
        // responses) and test plumbing (captured logs, child processes, compression). Re-exports
        // ServerTrustLab.
        .target(
            name: "ServerTrustTestSupport",
            dependencies: [
                "ServerTrust", "ServerTrustLab", "ServerTrustTUF", "COpenSSL", "CServerTrustShims", "CServerTrustLabShims",
                "CServerTrustTestShims", "CZlib", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ServerTrustHTTPTests",
            dependencies: [
                "ServerTrust", "ServerTrustHTTP", "ServerTrustTestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            // rfc9421_peer.py, the Python RFC 9421 peer the interop tests run (from the source tree).
            exclude: ["Fixtures"],
            swiftSettings: strictSwift
        ),
        // Runs the built `servertrust` binary against in-process servers; depending on the
        // executable target makes SwiftPM build it before the tests.
        .testTarget(
            name: "ServerTrustCLITests",
            dependencies: ["servertrust", "ServerTrust", "ServerTrustCodeGeneration", "ServerTrustTestSupport"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "ServerTrustHummingbird",
            dependencies: [
                "ServerTrust",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["HummingbirdSigning"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["HummingbirdSigning"])),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ServerTrustHummingbirdTests",
            dependencies: [
                "ServerTrustHummingbird", "ServerTrust", "ServerTrustHTTP", "ServerTrustTestSupport",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["HummingbirdSigning"])),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["HummingbirdSigning"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["HummingbirdSigning"])),
            ],
            swiftSettings: strictSwift
        ),
        // URLSession's https requests served through a Session; the target compiles to nothing
        // without the URLSessionAdapter trait (its sources are wrapped in `#if URLSessionAdapter`).
        .target(
            name: "ServerTrustURLSession",
            dependencies: ["ServerTrust", "ServerTrustHTTP", .product(name: "HTTPTypes", package: "swift-http-types")],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ServerTrustURLSessionTests",
            dependencies: ["ServerTrustURLSession", "ServerTrust", "ServerTrustHTTP", "ServerTrustTestSupport"],
            swiftSettings: strictSwift
        ),
        // SessionTransport, a swift-openapi-runtime ClientTransport over Session; compiles to
        // nothing without the OpenAPIAdapter trait.
        .target(
            name: "ServerTrustOpenAPI",
            dependencies: [
                "ServerTrust", "ServerTrustHTTP",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["OpenAPIAdapter"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["OpenAPIAdapter"])),
            ],
            swiftSettings: strictSwift
        ),
        // A client generated from Tests/ServerTrustOpenAPITests/openapi.yaml (committed, in
        // Generated/) against live local servers; empty without the trait.
        .testTarget(
            name: "ServerTrustOpenAPITests",
            dependencies: [
                "ServerTrustOpenAPI", "ServerTrust", "ServerTrustHTTP", "ServerTrustTestSupport",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["OpenAPIAdapter"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["OpenAPIAdapter"])),
            ],
            exclude: ["openapi.yaml"],
            swiftSettings: strictSwift
        ),
        // The NIO adapter: depends on ServerTrust, NIOCore, NIOTLS (TLSUserEvent) and NIOSSL only
        // (no libcurl, no gRPC); empty without the NIOAdapter trait.
        .target(
            name: "ServerTrustNIO",
            dependencies: [
                "ServerTrust",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["NIOAdapter"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIOAdapter"])),
                .product(name: "NIOTLS", package: "swift-nio", condition: .when(traits: ["NIOAdapter"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["NIOAdapter"])),
            ],
            swiftSettings: strictSwift
        ),
        // A NIO HTTP/1.1 client against nginx and in-process servers, and a grpc-swift 2 client
        // against a local gRPC server over TLS; empty without the NIOAdapter trait.
        .testTarget(
            name: "ServerTrustNIOTests",
            dependencies: [
                // ServerTrustHTTP for its curl-backed RevocationFetcher, passed to the adapter as a
                // caller would; the ServerTrustNIO library itself does not link libcurl.
                "ServerTrustNIO", "ServerTrust", "ServerTrustHTTP", "ServerTrustTestSupport",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIOAdapter"])),
                .product(name: "NIOEmbedded", package: "swift-nio", condition: .when(traits: ["NIOAdapter"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["NIOAdapter"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["NIOAdapter"])),
                .product(name: "NIOTLS", package: "swift-nio", condition: .when(traits: ["NIOAdapter"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["NIOAdapter"])),
                .product(name: "GRPCCore", package: "grpc-swift-2", condition: .when(traits: ["NIOAdapter"])),
                .product(
                    name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport",
                    condition: .when(traits: ["NIOAdapter"])),
            ],
            swiftSettings: strictSwift
        ),
        // The example services (Examples/, each with a README that CI runs): executables of this
        // package so that CI builds them in the traits step's build, once. Without the Examples
        // trait each compiles to a stub that says how to build it.
        .executableTarget(
            name: "servertrust-example-hummingbird",
            dependencies: [
                "ServerTrust", "ServerTrustHTTP", "ServerTrustTUF", "ServerTrustUpdates",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Examples"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Examples"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Examples"])),
            ],
            path: "Examples/HummingbirdService",
            exclude: ["README.md"],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "servertrust-example-vapor",
            dependencies: [
                "ServerTrust", "ServerTrustHTTP", "ServerTrustTUF", "ServerTrustUpdates", "ServerTrustVapor",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Examples"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Examples"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Examples"])),
            ],
            path: "Examples/VaporService",
            exclude: ["README.md"],
            swiftSettings: strictSwift
        ),
        // A Vapor `Client` over Session: depends on ServerTrustHTTP and Vapor only; compiles to
        // nothing without the VaporClient trait (its sources are wrapped in `#if VaporClient`).
        .target(
            name: "ServerTrustVapor",
            dependencies: [
                "ServerTrust", "ServerTrustHTTP",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["VaporClient"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["VaporClient"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["VaporClient"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["VaporClient"])),
            ],
            swiftSettings: strictSwift
        ),
        // A Vapor application on loopback whose route handlers call `req.client` to pinned local
        // servers; empty without the trait.
        .testTarget(
            name: "ServerTrustVaporTests",
            dependencies: [
                "ServerTrustVapor", "ServerTrust", "ServerTrustHTTP", "ServerTrustTestSupport",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["VaporClient"])),
                .product(name: "VaporTesting", package: "vapor", condition: .when(traits: ["VaporClient"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["VaporClient"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["VaporClient"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["VaporClient"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["VaporClient"])),
            ],
            swiftSettings: strictSwift
        ),
        // Shows that a file importing both ServerTrust and swift-certificates' X509 can name
        // ServerTrust.Certificate and X509.Certificate side by side; empty without the trait.
        .testTarget(
            name: "ServerTrustX509InteropTests",
            dependencies: [
                "ServerTrust", "ServerTrustTestSupport",
                .product(name: "X509", package: "swift-certificates", condition: .when(traits: ["X509Interop"])),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ServerTrustTests",
            dependencies: ["ServerTrust", "ServerTrustTestSupport", "COpenSSL", .product(name: "Logging", package: "swift-log")],
            // Read from the source tree, not bundled: the httpwg RFC 8941 vectors
            // (StructuredFieldVectorTests) and the Certificate Transparency data (OpenSSL's and
            // Conscrypt's certificates, SCT lists, log lists, Conscrypt's cases).
            exclude: ["Fixtures/structured-field-tests", "Fixtures/CT"],
            swiftSettings: strictSwift
        ),
    ]
)
