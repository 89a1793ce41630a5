#if URLSessionAdapter
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServerTrust
import ServerTrustHTTP
import ServerTrustTestSupport
import ServerTrustURLSession
import Testing

/// Session failures other than trust, as the URLError codes URLSession's callers expect.
@Suite struct URLSessionErrorMappingTests {
    @Test func aRequestTimeoutIsTimedOutWithTheSessionErrorUnderneath() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        // Not timed: the response comes after 5 s, inside the session's own 60 s limit, so had the
        // request's 0.3 s been ignored the load would succeed; it times out instead.
        let request = URLRequest(url: fixture.redirectorURL("/slow/5000"), timeoutInterval: 0.3)
        let error = try #require(await urlError { try await fixture.urlSession().data(for: request) })
        #expect(error.code == .timedOut)
        #expect(error.sessionError?.code == .timedOut)
    }

    /// The session refuses to leave TLS on a redirect; URLSession's callers see the code its
    /// own stack uses for a plain-http load it will not make.
    @Test func aRedirectToPlainHTTPIsRefused() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        let plain = try LocalHTTPServer()
        defer { plain.stop() }
        let error = try #require(await urlError { try await fixture.urlSession().data(from: fixture.redirect(to: URL(string: plain.url("/status/200"))!)) })
        #expect(error.code == .appTransportSecurityRequiresSecureConnection)
        #expect(error.sessionError?.code == .insecureRedirect)
        #expect(plain.acceptedConnections == 0)
    }

    @Test(arguments: [("GE T", "X-Fine"), ("GET", "Bad Name")])
    func anInvalidMethodOrHeaderNameIsABadURLNotSent(method: String, headerName: String) async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        var request = URLRequest(url: fixture.redirectorURL("/status/200"))
        request.httpMethod = method
        request.setValue("1", forHTTPHeaderField: headerName)
        let error = try #require(await urlError { try await fixture.urlSession().data(for: request) })
        #expect(error.code == .badURL)
        #expect((error.userInfo[NSUnderlyingErrorKey] as? SessionError)?.code == .invalidRequest)
        #expect(fixture.redirector.acceptedConnections == 0)
    }

    /// Port 1 on loopback: nothing listens, so the connection is refused at once.
    @Test func aRefusedConnectionIsCannotConnectToHost() async throws {
        var configuration = Session.Configuration()
        configuration.resolve = ["refused.servertrust.test:1:127.0.0.1"]
        let session = try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [
            try HostPattern("refused.servertrust.test"): DefaultTrustEvaluator()
        ]))
        defer { session.shutdown() }
        let urlSession = URLSession(configuration: .serverTrust(session: session))
        let error = try #require(await urlError { try await urlSession.data(from: URL(string: "https://refused.servertrust.test:1/")!) })
        #expect(error.code == .cannotConnectToHost)
        #expect(error.sessionError?.code == .transferFailed)
        #expect(error.sessionError?.curlCode == 7)
    }

    /// Third review, finding 4: nothing in the `URLError` a caller might print — its
    /// description, its `userInfo`, the failing URL — carries the URL's credentials or token;
    /// the underlying `SessionError.url` keeps them for the program.
    @Test func finding4TheURLErrorCarriesNoUserInfoOrQuery() async throws {
        var configuration = Session.Configuration()
        configuration.resolve = ["refused.servertrust.test:1:127.0.0.1"]
        let session = try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [
            try HostPattern("refused.servertrust.test"): DefaultTrustEvaluator()
        ]))
        defer { session.shutdown() }
        let urlSession = URLSession(configuration: .serverTrust(session: session))
        let url = URL(string: "https://user:pw@refused.servertrust.test:1/p?access_token=SECRET")!
        let error = try #require(await urlError { try await urlSession.data(from: url) })
        #expect(error.code == .cannotConnectToHost)
        #expect(error.failingURL?.absoluteString == "https://refused.servertrust.test:1/p")
        #expect(error.localizedDescription.contains("[https://refused.servertrust.test:1/p]"), "\(error.localizedDescription)")
        #expect(error.sessionError?.url == url.absoluteString)
        let nsError = error as NSError
        let texts = [nsError.description, nsError.localizedDescription, "\(error)"] + nsError.userInfo.map { "\($0.key)=\($0.value)" }
        for text in texts {
            #expect(!text.contains("pw"), "\(text)")
            #expect(!text.contains("SECRET"), "\(text)")
        }
    }
}
#endif
