#if OpenAPIAdapter
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustOpenAPI
import ServerTrustTestSupport

/// A genuine server for ``host`` with the chain the client pins, and an impostor for the same
/// name whose chain comes from a second CA the client *also* trusts — a corporate proxy's CA,
/// say — so that only the pin can tell the two apart.
struct OpenAPIFixture {
    static let host = "api.servertrust.test"
    static let greetingJSON = #"{"message":"Hello, Ada!"}"#

    let root: LabCA
    let intermediate: LabCA
    let genuine: LocalTLSServer
    let impostorRoot: LabCA
    let impostor: LocalTLSServer

    init() throws {
        root = try LabPKI.makeRoot(commonName: "OpenAPI Test Root")
        intermediate = try root.issueIntermediate(commonName: "OpenAPI Test Intermediate")
        let leaf = try intermediate.issueLeaf(dnsNames: [Self.host])
        genuine = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey, handler: Self.greeting)
        impostorRoot = try LabPKI.makeRoot(commonName: "Trusted Proxy Root")
        let impostorLeaf = try impostorRoot.issueIntermediate(commonName: "Trusted Proxy CA").issueLeaf(dnsNames: [Self.host])
        impostor = try LocalTLSServer(chain: impostorLeaf.chain, privateKeyPEM: impostorLeaf.key.pemPrivateKey, handler: Self.greeting)
    }

    /// The genuine chain's intermediate, which the client pins.
    var pin: Pin { intermediate.certificate.spkiPin }

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
        configuration.anchors = .bundle(try TrustAnchors([root.certificate, impostorRoot.certificate]))
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
