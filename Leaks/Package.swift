// swift-tools-version:6.1
import PackageDescription

// A leak check for the whole client path: many Session requests, each a full TLS handshake with
// the evaluators in OpenSSL's verify callback, against an `openssl s_server` that
// scripts/sanitizers.sh starts. Run it with `scripts/sanitizers.sh leaks` (LeakSanitizer).
// A separate package: it is a tool, not a test. The server is external (not ServerTrustLab's
// LocalTLSServer) so that the process LeakSanitizer checks holds the client path alone.
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
