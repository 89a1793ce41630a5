#if OpenAPIAdapter
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustOpenAPI
import ServerTrustTestSupport

/// The genuine server for ``host`` and the impostor of ``GenuineAndImpostor``, both serving
/// ``greeting``: only the pin can tell the two apart.
struct OpenAPIFixture {
    static let host = "api.servertrust.test"
    static let greetingJSON = #"{"message":"Hello, Ada!"}"#

    let pki: GenuineAndImpostor
    let genuine: LocalTLSServer
    let impostor: LocalTLSServer

    init() throws {
        pki = try GenuineAndImpostor(host: Self.host, name: "OpenAPI Test")
        (genuine, impostor) = try pki.servers(handler: Self.greeting)
    }

    /// The genuine chain's intermediate, which the client pins.
    var pin: Pin { pki.pin }

    /// `GET /greeting[?name=…]` answers JSON; every other route is the lab's (`POST /echo`,
    /// `GET /large/{bytes}`, …).
    static let greeting: LocalHTTPHandler = { request in
        guard request.method == "GET", request.path == "/greeting" else { return nil }
        let name = request.queryValue("name") ?? "stranger"
        return LocalHTTPResponse(
            headers: [("Content-Type", "application/json")], body: .text(#"{"message":"Hello, \#(name)!"}"#))
    }

    /// A session that trusts both roots, pins the genuine intermediate for ``host``, and sends
    /// ``host`` to `server`.
    /// With `signedResponses`, the host's responses must be signed.
    func session(
        reaching server: LocalTLSServer, signedResponses: SignedResponsePolicy? = nil,
        configure: (inout Session.Configuration) -> Void = { _ in }
    ) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try pki.anchors)
        configuration.resolve = [server.resolveEntry(host: Self.host)]
        configuration.requestTimeout = .seconds(300)
        configure(&configuration)
        let manager = try ServerTrustManager(
            policies: [try HostPattern(Self.host): .custom(try .pinnedKeyHashes([pin]), signedResponses: signedResponses)],
            allHostsMustBeEvaluated: true)
        return try Session(configuration: configuration, trustManager: manager)
    }

    /// The generated client for `server` through `session`.
    func client(_ session: Session, server: LocalTLSServer) -> Client {
        Client(serverURL: URL(string: server.url("/", host: Self.host))!, transport: SessionTransport(session: session))
    }
}

/// What a signing server sends: `body` signed over `signedBody` (default: `body` itself; a
/// different one stands in for a proxy that rewrote the body after the server signed).
func signedReply(
    to request: LocalHTTPRequest, signer: ResponseSigner, body: String, signedBody: String? = nil
) -> LocalHTTPResponse {
    var headers = [(name: "Content-Type", value: "application/json")]
    let path = String(request.target.prefix { $0 != "?" })
    let query = request.target.firstIndex(of: "?").map { String(request.target[request.target.index(after: $0)...]) }
    if let signature = try? signer.signatureHeaders(
        method: request.method, path: path, query: query, requestHeaders: request.headers, requestBody: request.body, status: 200,
        body: Array((signedBody ?? body).utf8)
    ) {
        headers += signature
    }
    return LocalHTTPResponse(headers: headers, body: .text(body))
}

#endif
