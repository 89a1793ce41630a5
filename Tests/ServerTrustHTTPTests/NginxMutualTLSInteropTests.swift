import Foundation
import Testing
import ServerTrustTestSupport
import ServerTrust
@testable import ServerTrustHTTP

/// Client certificates (mutual TLS) against a real nginx: `MTLS_REQUIRED` (TLS 1.3, HTTP/2)
/// has `ssl_verify_client on`, `MTLS_OPTIONAL` (TLS 1.2) asks for a certificate and answers with
/// what it received (`client-verify=SUCCESS|NONE client-dn=…`). The client PKI and files were
/// made by the openssl command line (scripts/interop/nginx.sh), not by us.
@Suite struct NginxMutualTLSInteropTests {
    static let presented = "client-verify=SUCCESS client-dn=CN=interop-client,O=ServerTrust Interop\n"
    static let notPresented = "client-verify=NONE client-dn=\n"

    private func session(_ nginx: NginxInterop.Environment, identities: [String: ClientIdentity]) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: nginx.root))
        configuration.resolve = nginx.resolve + ["MTLS_REQUIRED", "MTLS_OPTIONAL"].map { "localhost:\(nginx.port($0)):127.0.0.1" }
        let policies = Dictionary(uniqueKeysWithValues: try identities.map { (try HostPattern($0.key), HostPolicy(clientIdentity: $0.value)) })
        return try Session(configuration: configuration, trustManager: ServerTrustManager(policies: policies, allHostsMustBeEvaluated: false))
    }

    private func identity(_ nginx: NginxInterop.Environment) throws -> ClientIdentity {
        try ClientIdentity(certificateFile: nginx.values["SERVERTRUST_INTEROP_CLIENT_CERT"]!, privateKeyFile: nginx.values["SERVERTRUST_INTEROP_CLIENT_KEY"]!)
    }

    private func localhostURL(_ nginx: NginxInterop.Environment, _ portName: String, _ path: String = "/") -> String {
        "https://localhost:\(nginx.port(portName))\(path)"
    }

    @Test func aServerRequiringAClientCertificateAcceptsTheConfiguredIdentity() async throws {
        let nginx = try NginxInterop.environment()
        let session = try session(nginx, identities: [nginx.host: try identity(nginx)])
        defer { session.shutdown() }
        let response = try await session.get(nginx.url("MTLS_REQUIRED"))
        #expect(response.status == 200)
        #expect(response.text == Self.presented)
        #expect(response.httpVersion == "HTTP/2")
        #expect(response.trust.isTrusted)
    }

    @Test func aServerRequiringAClientCertificateRefusesASessionWithoutOne() async throws {
        let nginx = try NginxInterop.environment()
        let session = try session(nginx, identities: [:])
        defer { session.shutdown() }
        let response = try await session.get(nginx.url("MTLS_REQUIRED"))
        #expect(response.status == 400)
        #expect(response.text.contains("No required SSL certificate was sent"))
    }

    @Test func theIdentityIsSentOverTLS12Too() async throws {
        let nginx = try NginxInterop.environment()
        let session = try session(nginx, identities: [nginx.host: try identity(nginx)])
        defer { session.shutdown() }
        let response = try await session.get(nginx.url("MTLS_OPTIONAL"))
        #expect(response.text == Self.presented)
        #expect(response.httpVersion == "HTTP/1.1")
    }

    /// `/redirect-elsewhere` on the host the identity is for answers 302 to `localhost`, which
    /// asks for a certificate and says whether it got one. The session follows the redirect
    /// under `localhost`'s own policy, which has no identity.
    @Test func theIdentityIsNotSentToARedirectTargetOnAnotherHost() async throws {
        let nginx = try NginxInterop.environment()
        let session = try session(nginx, identities: [nginx.host: try identity(nginx)])
        defer { session.shutdown() }
        let response = try await session.get(nginx.url("MTLS_REQUIRED", "/redirect-elsewhere"))
        #expect(response.hops.count == 2)
        #expect(response.url.absoluteString == localhostURL(nginx, "MTLS_OPTIONAL"))
        #expect(response.text == Self.notPresented)
    }

    /// Two host names on one address and port: curl keeps connections (and TLS sessions) per
    /// host name, and each host's `SSL_CTX` carries its own identity or none, so a connection
    /// or a resumed session opened with the identity never serves the other host, in either
    /// order, sequentially or concurrently over HTTP/2.
    @Test func aConnectionOpenedWithTheIdentityNeverServesAnotherHostOnTheSameAddress() async throws {
        let nginx = try NginxInterop.environment()
        let session = try session(nginx, identities: [nginx.host: try identity(nginx)])
        defer { session.shutdown() }
        let withIdentity = nginx.url("MTLS_REQUIRED")
        let without = localhostURL(nginx, "MTLS_REQUIRED")
        #expect(try await session.get(withIdentity).status == 200)
        #expect(try await session.get(without).status == 400)
        #expect(try await session.get(withIdentity).status == 200)
        let statuses = try await withThrowingTaskGroup(of: (String, Int).self) { group in
            for index in 0..<8 {
                let url = index % 2 == 0 ? withIdentity : without
                group.addTask { (url, try await session.get(url).status.code) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for (url, status) in statuses { #expect(status == (url == withIdentity ? 200 : 400), "\(url)") }
        let optional = try await session.get(localhostURL(nginx, "MTLS_OPTIONAL"))
        #expect(optional.text == Self.notPresented)
    }

    @Test func anEncryptedKeyAndAPKCS12FileMadeByTheOpenSSLCommandLineWork() async throws {
        let nginx = try NginxInterop.environment()
        let passphrase = try String(contentsOfFile: nginx.values["SERVERTRUST_INTEROP_CLIENT_PASSPHRASE_FILE"]!, encoding: .utf8)
            .trimmingCharacters(in: .newlines)
        let encrypted = try ClientIdentity(
            certificateFile: nginx.values["SERVERTRUST_INTEROP_CLIENT_CERT"]!,
            privateKeyFile: nginx.values["SERVERTRUST_INTEROP_CLIENT_ENCRYPTED_KEY"]!, passphrase: passphrase)
        let pkcs12 = try ClientIdentity(pkcs12File: nginx.values["SERVERTRUST_INTEROP_CLIENT_PKCS12"]!, passphrase: passphrase)
        for identity in [encrypted, pkcs12] {
            let session = try session(nginx, identities: [nginx.host: identity])
            defer { session.shutdown() }
            let response = try await session.get(nginx.url("MTLS_REQUIRED"))
            #expect(response.text == Self.presented, "\(identity)")
        }
    }
}
