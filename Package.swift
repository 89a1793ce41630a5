// swift-tools-version:6.1
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "ServerTrust",
    products: [
        .library(name: "ServerTrust", targets: ["ServerTrust"]),
        .library(name: "ServerTrustHTTP", targets: ["ServerTrustHTTP"]),
        .executable(name: "servertrust", targets: ["servertrust"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Wrappers for OpenSSL macros the Swift importer cannot see. No curl here: the
        // ServerTrust module must build without libcurl in its dependency graph.
        .target(name: "CServerTrustShims", dependencies: ["COpenSSL"]),
        // Wrappers for libcurl's variadic setopt/getinfo calls, used by ServerTrustHTTP only.
        .target(name: "CServerTrustCurlShims", dependencies: ["CCurl", "COpenSSL"]),
        .target(
            name: "ServerTrust",
            dependencies: ["COpenSSL", "CServerTrustShims"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "ServerTrustHTTP",
            dependencies: ["ServerTrust", "CCurl", "COpenSSL", "CServerTrustShims", "CServerTrustCurlShims"],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "servertrust",
            dependencies: [
                "ServerTrust",
                "ServerTrustHTTP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "ServerTrustTestSupport",
            dependencies: ["ServerTrust", "COpenSSL", "CServerTrustShims"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ServerTrustHTTPTests",
            dependencies: ["ServerTrust", "ServerTrustHTTP", "ServerTrustTestSupport"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ServerTrustTests",
            dependencies: ["ServerTrust", "ServerTrustTestSupport", "COpenSSL"],
            swiftSettings: strictSwift
        ),
    ]
)
