// swift-tools-version:6.1
import PackageDescription

// A leak check for the whole client path: many Session requests, each a full TLS handshake with
// the evaluators in OpenSSL's verify callback, against an `openssl s_server` that
// scripts/sanitizers.sh starts. Run it with `scripts/sanitizers.sh leaks` (LeakSanitizer).
// A separate package: it is a tool, not a test, and it cannot
// reach ServerTrustTestSupport (not a product), hence the external server.
let package = Package(
    name: "ServerTrustLeaks",
    dependencies: [
        .package(name: "ServerTrust", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "handshake-leaks",
            dependencies: [
                .product(name: "ServerTrust", package: "ServerTrust"),
                .product(name: "ServerTrustHTTP", package: "ServerTrust"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
