import Foundation
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// A PKI, a genuine server for `host`, and sessions that trust the PKI's root.
struct SessionFixture {
    static let host = "api.servertrust.test"

    let root: LabCA
    let intermediate: LabCA
    let leaf: LabLeaf
    let server: LocalTLSServer

    init(
        host: String = SessionFixture.host, minimumTLSVersion: LocalTLSServer.TLSVersion = .v1_2,
        maximumTLSVersion: LocalTLSServer.TLSVersion = .v1_3, sessionTickets: Bool = true, sessionCache: Bool = true
    ) throws {
        root = try LabPKI.makeRoot(commonName: "Session Test Root")
        intermediate = try root.issueIntermediate(commonName: "Session Test Intermediate")
        leaf = try intermediate.issueLeaf(dnsNames: [host], ipAddresses: ["127.0.0.1"])
        var configuration = LocalTLSServer.Configuration(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        configuration.minimumTLSVersion = minimumTLSVersion
        configuration.maximumTLSVersion = maximumTLSVersion
        configuration.sessionTickets = sessionTickets
        configuration.sessionCache = sessionCache
        server = try LocalTLSServer(configuration)
    }

    func url(_ path: String, host: String = SessionFixture.host) -> URL { URL(string: server.url(path, host: host))! }

    /// A configuration trusting only this fixture's root, resolving `hosts` to the server.
    func configuration(hosts: [String] = [SessionFixture.host]) throws -> Session.Configuration {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try root.trustAnchors())
        configuration.resolve = hosts.map { server.resolveEntry(host: $0) }
        // Long enough for a sanitizer-slowed run of the whole suite on two cores (under
        // ThreadSanitizer no test finishes in its first 95 s), finite so a hang still fails.
        // Tests of timeouts set their own.
        configuration.requestTimeout = .seconds(300)
        return configuration
    }

    func session(
        _ evaluators: [String: any ServerTrustEvaluating] = [:], allHostsMustBeEvaluated: Bool = true,
        configure: (inout Session.Configuration) -> Void = { _ in }
    ) throws -> Session {
        var configuration = try self.configuration()
        configure(&configuration)
        let manager = evaluators.isEmpty ? nil : try ServerTrustManager(
            evaluators: Dictionary(uniqueKeysWithValues: try evaluators.map { (try HostPattern($0.key), $0.value) }),
            allHostsMustBeEvaluated: allHostsMustBeEvaluated)
        return try Session(configuration: configuration, trustManager: manager)
    }

    /// Pins of the genuine chain.
    var intermediatePin: Pin { intermediate.certificate.spkiPin }
    var leafPin: Pin { leaf.certificate.spkiPin }

    /// A pin no certificate here has.
    static var unrelatedPin: Pin { get throws { try Pin("sha256/" + Data(repeating: 7, count: 32).base64EncodedString()) } }
}

extension Result where Failure == any Error {
    /// The SessionError this result failed with, if any.
    var sessionError: SessionError? {
        if case .failure(let error) = self { return error as? SessionError }
        return nil
    }
}

func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}
