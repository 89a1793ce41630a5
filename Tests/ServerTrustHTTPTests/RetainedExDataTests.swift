import COpenSSL
import Testing
@testable import ServerTrustHTTP

/// `RetainedExData`: the one owner of Swift objects handed to OpenSSL ex_data.
@Suite struct RetainedExDataTests {
    final class Token {}

    private static let contexts = RetainedExData<Token>(.sslContext)
    private static let connections = RetainedExData<Token>(.ssl)

    @Test func anSSLContextKeepsItsObjectUntilOpenSSLFreesIt() throws {
        let ctx = try #require(SSL_CTX_new(TLS_client_method()))
        weak var weakToken: Token?
        do {
            let token = Token()
            weakToken = token
            #expect(Self.contexts.store(token, in: ctx) != nil)
        }
        #expect(weakToken != nil, "held by the SSL_CTX")
        #expect(Self.contexts.object(in: ctx) === weakToken)
        SSL_CTX_free(ctx)
        #expect(weakToken == nil, "released by the slot's free callback")
    }

    @Test func storingAgainReleasesTheReplacedObject() throws {
        let ctx = try #require(SSL_CTX_new(TLS_client_method()))
        defer { SSL_CTX_free(ctx) }
        let ssl = try #require(SSL_new(ctx))
        weak var first: Token?
        weak var second: Token?
        do {
            let a = Token()
            let b = Token()
            first = a
            second = b
            Self.connections.store(a, in: ssl)
            Self.connections.store(b, in: ssl)
        }
        #expect(first == nil, "the replaced stamp was released")
        #expect(second != nil)
        #expect(Self.connections.object(in: ssl) === second)
        SSL_free(ssl)
        #expect(second == nil)
    }

    @Test func anSSLHoldsNothingUntilStored() throws {
        let ctx = try #require(SSL_CTX_new(TLS_client_method()))
        defer { SSL_CTX_free(ctx) }
        let ssl = try #require(SSL_new(ctx))
        defer { SSL_free(ssl) }
        #expect(Self.connections.object(in: ssl) == nil)
        #expect(Self.contexts.object(in: ctx) == nil)
    }
}
