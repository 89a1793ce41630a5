import COpenSSL
import CServerTrustShims
import Logging
import ServerTrust
import ServerTrustTestSupport
import Testing
@testable import ServerTrustHTTP

/// Third security review, finding 2: every `SSL_CTX` ServerTrust configures (the session's, the
/// revocation fetcher's) is raised to TLS 1.2 and security level 2, whatever libcurl or an
/// `OPENSSL_CONF` set before our callback ran. The end-to-end proof, with `OPENSSL_CONF` and a
/// TLS 1.0 server, is `TLSFloorCommandTests` (a process of its own); this one pins the context.
@Suite struct TLSFloorTests {
    private func context(minimum: Int32, securityLevel: Int32) throws -> OpaquePointer {
        let ctx = try #require(SSL_CTX_new(TLS_client_method()))
        #expect(CServerTrustShims_SSL_CTX_set_min_proto_version(ctx, minimum) == 1)
        SSL_CTX_set_security_level(ctx, securityLevel)
        return ctx
    }

    @Test(arguments: [Int32(0), TLS1_VERSION, TLS1_1_VERSION])
    func finding2AContextAllowingLessThanTLS12IsRaisedToTheFloor(minimum: Int32) throws {
        let ctx = try context(minimum: minimum, securityLevel: 0)
        defer { SSL_CTX_free(ctx) }
        #expect(TLSFloor.apply(to: ctx))
        #expect(CServerTrustShims_SSL_CTX_get_min_proto_version(ctx) == TLS1_2_VERSION)
        #expect(SSL_CTX_get_security_level(ctx) == 2)
    }

    @Test func finding2AHigherFloorIsKept() throws {
        let ctx = try context(minimum: TLS1_3_VERSION, securityLevel: 3)
        defer { SSL_CTX_free(ctx) }
        #expect(TLSFloor.apply(to: ctx))
        #expect(CServerTrustShims_SSL_CTX_get_min_proto_version(ctx) == TLS1_3_VERSION)
        #expect(SSL_CTX_get_security_level(ctx) == 3)
    }

    @Test func finding2TheSessionsConnectionContextsGetTheFloor() throws {
        let ctx = try context(minimum: TLS1_VERSION, securityLevel: 0)
        defer { SSL_CTX_free(ctx) }
        let policy = TrustPolicy(
            host: NormalizedHost("floor.servertrust.test"), pattern: nil, evaluator: DefaultTrustEvaluator(),
            anchors: try LabPKI.makeRoot().trustAnchors(), validationOptions: PathValidationOptions(), revocationFetcher: nil,
            counters: TrustCounters(), logger: Logger(label: "servertrust.test"))
        #expect(TLSBridge.configure(sslContext: ctx, for: ConnectionContext(policy: policy, validatedChains: nil)))
        #expect(CServerTrustShims_SSL_CTX_get_min_proto_version(ctx) == TLS1_2_VERSION)
        #expect(SSL_CTX_get_security_level(ctx) == 2)
    }

    @Test func finding2AProtocolVersionRefusalIsRecognised() {
        #expect(TLSFloor.isProtocolVersionRefusal("OpenSSL/3.0.19: error:0A00042E:SSL routines::tlsv1 alert protocol version"))
        #expect(TLSFloor.isProtocolVersionRefusal("OpenSSL/3.0.19: error:0A000102:SSL routines::unsupported protocol"))
        #expect(!TLSFloor.isProtocolVersionRefusal("OpenSSL/3.0.19: error:0A000410:SSL routines::sslv3 alert handshake failure"))
    }
}
