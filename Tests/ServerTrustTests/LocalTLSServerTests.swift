import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// The local servers that integration tests stand on, checked with clients that are not ours:
/// the `curl` and `openssl s_client` command lines.
@Suite struct LocalTLSServerTests {
    // MARK: Handshake and routes

    @Test func presentsTheConfiguredChainAndNegotiatesHTTP1() async throws {
        let site = try LocalSite()
        defer { site.removeFiles() }
        let server = try LocalTLSServer(chain: site.leaf.chain, privateKeyPEM: site.leaf.key.pemPrivateKey)
        defer { server.stop() }

        let run = try await openSSLClient(server, site: site, ["-showcerts", "-alpn", "h2,http/1.1"])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.text.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1 == 2)
        #expect(run.text.contains("Verify return code: 0 (ok)"))
        #expect(run.text.contains("ALPN protocol: http/1.1"))
        let handshake = try #require(server.handshakes.first)
        #expect(handshake.serverName == "localhost")
        #expect(handshake.alpnProtocol == "http/1.1")
        #expect(handshake.tlsVersion == "TLSv1.3")
        #expect(handshake.leafFingerprint == site.leaf.certificate.sha256Fingerprint)
    }

    @Test(arguments: [200, 201, 204, 404, 503])
    func statusRouteAnswersWithTheRequestedCode(code: Int) async throws {
        let (site, server) = try LocalSite.running()
        defer { site.removeFiles(); server.stop() }
        let run = try await curl(server, site: site, ["-o", "/dev/null", "-w", "%{http_code}", server.url("/status/\(code)")])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.text == "\(code)")
    }

    @Test func echoReturnsTheBodyAndDescribesTheRequest() async throws {
        let (site, server) = try LocalSite.running()
        defer { site.removeFiles(); server.stop() }
        for method in ["POST", "PUT"] {
            let run = try await curl(server, site: site, [
                "-X", method, "-D", "/dev/stderr", "-H", "Content-Type: text/plain", "--data-binary", "hello é",
                server.url("/echo?x=1"),
            ])
            #expect(run.status == 0)
            #expect(run.text == "hello é")
            let headers = run.errors.lowercased()
            #expect(headers.contains("x-echo-method: \(method.lowercased())"))
            #expect(headers.contains("x-echo-target: /echo?x=1"))
            #expect(headers.contains("content-type: text/plain"))
            #expect(run.errors.contains(#""target":"/echo?x=1""#))
            #expect(run.errors.contains(#""bodyLength":8"#))
        }
        let get = try await curl(server, site: site, ["-D", "/dev/stderr", server.url("/echo")])
        #expect(get.text.isEmpty)
        #expect(get.errors.lowercased().contains("x-echo-method: get"))
    }

    @Test func echoDecodesAChunkedRequestBody() async throws {
        let (site, server) = try LocalSite.running()
        defer { site.removeFiles(); server.stop() }
        let body = String(repeating: "chunked body ", count: 5000)
        let run = try await curl(
            server, site: site,
            ["-H", "Transfer-Encoding: chunked", "--data-binary", "@-", server.url("/echo")], input: body)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.text == body)
        #expect(server.recentRequests.last?.header("transfer-encoding") == "chunked")
    }

    @Test func echoAnswersExpectContinueOnALargeUpload() async throws {
        let (site, server) = try LocalSite.running()
        defer { site.removeFiles(); server.stop() }
        let body = String(repeating: "0123456789abcdef", count: 3 * 65536)
        let run = try await curl(server, site: site, ["-v", "--data-binary", "@-", server.url("/echo")], input: body)
        #expect(run.status == 0)
        #expect(run.text == body)
        #expect(server.recentRequests.last?.header("Expect") == "100-continue")
        #expect(run.errors.contains("< HTTP/1.1 100 Continue"))
    }

    @Test func headSendsTheHeaderOnlyAndKeepsTheConnection() async throws {
        let (site, server) = try LocalSite.running()
        defer { site.removeFiles(); server.stop() }
        let run = try await curl(server, site: site, ["--head", server.url("/large/1000"), server.url("/status/200")])
        #expect(run.text.lowercased().contains("content-length: 1000\r\n"))
        #expect(run.text.hasSuffix("\r\n\r\n"))
        #expect(server.acceptedConnections == 1)
        #expect(server.requestsServed == 2)
    }

    @Test func redirectSendsTheStatusAndLocation() async throws {
        let (site, server) = try LocalSite.running()
        defer { site.removeFiles(); server.stop() }
        let run = try await curl(server, site: site, [
            "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}",
            server.url("/redirect/307?to=https%3A%2F%2Felsewhere.test%2Fnext%3Fa%3D1"),
        ])
        #expect(run.text == "307 https://elsewhere.test/next?a=1")
    }

    @Test func largeSendsTheDeterministicPattern() async throws {
        let (site, server) = try LocalSite.running()
        defer { site.removeFiles(); server.stop() }
        let count = 1_000_003
        let run = try await curl(server, site: site, [server.url("/large/\(count)")])
        #expect(run.status == 0)
        #expect(run.output.count == count)
        #expect([UInt8](run.output) == LocalHTTPResponse.Body.patternBytes(count: count))
    }

    @Test func aSlowReaderStillGetsTheWholeLargeBody() async throws {
        let (site, server) = try LocalSite.running()
        defer { site.removeFiles(); server.stop() }
        let count = 6 << 20  // beyond loopback socket buffers: the server's writes block
        let run = try await curl(server, site: site, ["--limit-rate", "5M", server.url("/large/\(count)")])
        #expect(run.status == 0, "\(run.errors)")
        #expect([UInt8](run.output) == LocalHTTPResponse.Body.patternBytes(count: count))
    }

    @Test func slowAndDripDelayTheResponse() async throws {
        let (site, server) = try LocalSite.running()
        defer { site.removeFiles(); server.stop() }
        let clock = ContinuousClock()
        let slowStart = clock.now
        let slow = try await curl(server, site: site, [server.url("/slow/300")])
        #expect(slow.text == "slow\n")
        #expect(clock.now - slowStart >= .milliseconds(300))

        let dripStart = clock.now
        let drip = try await curl(server, site: site, [server.url("/drip/4/100")])
        #expect([UInt8](drip.output) == LocalHTTPResponse.Body.patternBytes(count: 4))
        #expect(clock.now - dripStart >= .milliseconds(400))
    }

    @Test func headersRouteShowsWhatTheClientSent() async throws {
        let (site, server) = try LocalSite.running()
        defer { site.removeFiles(); server.stop() }
        let run = try await curl(server, site: site, [
            "-H", "Authorization: Bearer secret", "-b", "session=1", server.url("/headers"),
        ])
        #expect(run.text.contains("Authorization: Bearer secret\n"))
        #expect(run.text.contains("Cookie: session=1\n"))
        #expect(run.text.contains("Host: localhost:\(server.port)\n"))
    }

    @Test func customHandlerIsConsultedBeforeTheRoutes() async throws {
        let site = try LocalSite()
        defer { site.removeFiles() }
        let server = try LocalTLSServer(chain: site.leaf.chain, privateKeyPEM: site.leaf.key.pemPrivateKey) { request in
            request.path == "/teapot" ? .text("short and stout\n", status: 418) : nil
        }
        defer { server.stop() }
        let run = try await curl(server, site: site, [
            "-w", "%{http_code}", "-o", "/dev/null", server.url("/teapot"), "-o", "/dev/null", server.url("/status/202"),
        ])
        #expect(run.text == "418202")
    }

    // MARK: Connections

    @Test func twoRequestsShareOneKeptAliveConnection() async throws {
        let (site, server) = try LocalSite.running()
        defer { site.removeFiles(); server.stop() }
        let run = try await curl(server, site: site, [server.url("/status/200"), server.url("/headers")])
        #expect(run.status == 0)
        #expect(server.acceptedConnections == 1)
        #expect(server.completedHandshakes == 1)
        #expect(server.requestsServed == 2)
        #expect(server.recentRequests.map(\.connectionNumber) == [1, 1])
    }

    @Test func closeRouteEndsTheConnectionAndCurlResumesTheSessionOnTheNext() async throws {
        let (site, server) = try LocalSite.running()
        defer { site.removeFiles(); server.stop() }
        let run = try await curl(server, site: site, [server.url("/close"), server.url("/status/200")])
        #expect(run.text == "closing\n200 OK\n")
        #expect(server.acceptedConnections == 2)
        #expect(server.completedHandshakes == 2)
        #expect(server.resumedHandshakes == 1)
        #expect(server.handshakes.map(\.resumed) == [false, true])
    }

    @Test func stopClosesOpenConnectionsAndInterruptsSlowResponses() async throws {
        let (site, server) = try LocalSite.running()
        defer { site.removeFiles() }
        // One connection that never starts TLS, one waiting on a two-minute response: long enough
        // that a run slowed down by a sanitizer or a loaded machine still sees both open (the
        // response is never waited for: stop() cuts it).
        let idle = try connectedSocket(port: server.port)
        defer { close(idle) }
        // curl's own limit (a later --max-time wins) and the kill deadline outlast the wait below.
        let slow = Task { try await curl(server, site: site, ["--max-time", "150", server.url("/slow/120000")], timeout: .seconds(180)) }
        #expect(await eventually(timeout: .seconds(110)) { server.requestsServed == 1 && server.openConnections == 2 })

        // Not timed: had stop() waited for the two-minute response, curl would have received it
        // in full and succeeded; it fails instead, because stop() cut the connection.
        server.stop()
        #expect(server.openConnections == 0)
        let interrupted = try await slow.value
        #expect(interrupted.status != 0)
        var byte: UInt8 = 0
        #expect(recv(idle, &byte, 1, 0) == 0)
        server.stop()
    }

    // MARK: TLS features

    @Test func staplesTheConfiguredOCSPResponse() async throws {
        let site = try LocalSite()
        defer { site.removeFiles() }
        let issuer = site.leaf.issuer
        var configuration = site.configuration
        configuration.stapledOCSPResponse = try OCSPResponseBuilder(signer: issuer)
            .adding(.good, for: site.leaf.certificate, issuedBy: issuer).build()
        let server = try LocalTLSServer(configuration)
        defer { server.stop() }

        let stapled = try await openSSLClient(server, site: site, ["-status"])
        #expect(stapled.text.contains("OCSP Response Status: successful (0x0)"))
        #expect(stapled.text.contains("Cert Status: good"))
        #expect(server.statistics.stapledResponses == 1)
        #expect(server.handshakes.first?.stapledOCSPResponse == true)
        // curl checks the staple itself: signed by the issuer, about this leaf, current.
        let checked = try await curl(server, site: site, ["--cert-status", server.url("/status/200")])
        #expect(checked.text == "200 OK\n", "\(checked.errors)")

        let unasked = try await openSSLClient(server, site: site, [])
        #expect(!unasked.text.contains("OCSP"))
        #expect(server.handshakes.last?.stapledOCSPResponse == false)

        // An OCSPResponse with status tryLater: the smallest well-formed response, sent as is.
        server.setStapledOCSPResponse([0x30, 0x03, 0x0A, 0x01, 0x03])
        let tryLater = try await openSSLClient(server, site: site, ["-status"])
        #expect(tryLater.text.contains("OCSP Response Status: trylater (0x3)"))

        server.setStapledOCSPResponse(nil)
        let withdrawn = try await openSSLClient(server, site: site, ["-status"])
        #expect(withdrawn.text.contains("OCSP response: no response sent"))
        #expect(server.statistics.stapledResponses == 3)
    }

    @Test(arguments: [
        ResumptionCase(version: .v1_3, tickets: true, cache: true, resumes: true),
        ResumptionCase(version: .v1_3, tickets: true, cache: false, resumes: true),
        ResumptionCase(version: .v1_3, tickets: false, cache: true, resumes: true),
        ResumptionCase(version: .v1_3, tickets: false, cache: false, resumes: false),
        ResumptionCase(version: .v1_2, tickets: true, cache: false, resumes: true),
        ResumptionCase(version: .v1_2, tickets: false, cache: true, resumes: true),
        ResumptionCase(version: .v1_2, tickets: false, cache: false, resumes: false),
    ])
    func sessionResumptionFollowsTheTicketAndCacheSettings(_ resumption: ResumptionCase) async throws {
        let site = try LocalSite()
        defer { site.removeFiles() }
        var configuration = site.configuration
        configuration.maximumTLSVersion = resumption.version
        configuration.sessionTickets = resumption.tickets
        configuration.sessionCache = resumption.cache
        let server = try LocalTLSServer(configuration)
        defer { server.stop() }
        let session = site.directory + "/session.pem"

        let first = try await openSSLClient(server, site: site, ["-sess_out", session])
        #expect(first.text.contains("New, TLSv1.\(resumption.version == .v1_3 ? 3 : 2)"))
        guard resumption.resumes else {
            // Nothing resumable was offered (no ticket, no session ID): s_client saves nothing.
            #expect(!FileManager.default.fileExists(atPath: session))
            #expect(server.resumedHandshakes == 0)
            return
        }
        let second = try await openSSLClient(server, site: site, ["-sess_in", session])
        #expect(second.text.contains("Reused, TLSv1.\(resumption.version == .v1_3 ? 3 : 2)"))
        #expect(server.completedHandshakes == 2)
        #expect(server.resumedHandshakes == 1)
        #expect(server.handshakes.map(\.resumed) == [false, true])
    }

    @Test func versionLimitsAreEnforced() async throws {
        let site = try LocalSite()
        defer { site.removeFiles() }
        var configuration = site.configuration
        configuration.maximumTLSVersion = .v1_2
        let tls12 = try LocalTLSServer(configuration)
        defer { tls12.stop() }
        let refused = try await curl(tls12, site: site, ["--tlsv1.3", tls12.url("/status/200")])
        #expect(refused.status == 35)
        let accepted = try await curl(tls12, site: site, [tls12.url("/status/200")])
        #expect(accepted.text == "200 OK\n")
        #expect(tls12.handshakes.last?.tlsVersion == "TLSv1.2")

        configuration.minimumTLSVersion = .v1_3
        configuration.maximumTLSVersion = .v1_3
        let tls13 = try LocalTLSServer(configuration)
        defer { tls13.stop() }
        let old = try await curl(tls13, site: site, ["--tls-max", "1.2", tls13.url("/status/200")])
        #expect(old.status == 35)
        #expect(await eventually { tls13.statistics.failedHandshakes == 1 })

        configuration.minimumTLSVersion = .v1_3
        configuration.maximumTLSVersion = .v1_2
        #expect(throws: LocalServerError.self) { try LocalTLSServer(configuration) }
    }

    @Test func aKeyThatDoesNotMatchTheLeafIsRefused() throws {
        let site = try LocalSite()
        defer { site.removeFiles() }
        #expect(throws: LocalServerError.self) {
            try LocalTLSServer(chain: site.leaf.chain, privateKeyPEM: LabKey.ecP256().pemPrivateKey)
        }
    }

    // MARK: Identity swap

    @Test func replacedIdentityIsPresentedToNewHandshakes() async throws {
        let (genuine, server) = try LocalSite.running()
        let impostor = try LocalSite(rootName: "Impostor Root")
        defer { genuine.removeFiles(); impostor.removeFiles(); server.stop() }

        let before = try await curl(server, site: genuine, [server.url("/status/200")])
        #expect(before.text == "200 OK\n")
        try server.replaceIdentity(impostor.identity)
        let refused = try await curl(server, site: genuine, [server.url("/status/200")])
        #expect(refused.status == 60)
        let trusting = try await curl(server, site: impostor, [server.url("/status/200")])
        #expect(trusting.text == "200 OK\n")
        #expect(server.handshakes.map(\.leafFingerprint) == [
            genuine.leaf.certificate.sha256Fingerprint, impostor.leaf.certificate.sha256Fingerprint,
        ])
    }

    @Test func sessionsOfTheReplacedIdentityDoNotResume() async throws {
        let (genuine, server) = try LocalSite.running()
        let impostor = try LocalSite(rootName: "Impostor Root")
        defer { genuine.removeFiles(); impostor.removeFiles(); server.stop() }
        let session = genuine.directory + "/session.pem"

        _ = try await openSSLClient(server, site: genuine, ["-sess_out", session])
        try server.replaceIdentity(impostor.identity)
        let second = try await openSSLClient(server, site: genuine, ["-sess_in", session])
        #expect(second.text.contains("New, TLSv1.3"))
        #expect(second.text.contains("Impostor Root"))
        #expect(server.resumedHandshakes == 0)
    }

    @Test func aHandlerCanTurnTheServerIntoAnImpostorMidSession() async throws {
        let (genuine, server) = try LocalSite.running()
        let impostor = try LocalSite(rootName: "Impostor Root")
        defer { genuine.removeFiles(); impostor.removeFiles(); server.stop() }
        server.setHandler { [weak server] request in
            guard request.path == "/become-impostor" else { return nil }
            try? server?.replaceIdentity(impostor.identity)
            return LocalHTTPResponse(status: 200, body: .text("swapped\n"), closesConnection: true)
        }
        // curl's next connection tries to resume; the new identity forces a full handshake,
        // whose certificate curl refuses.
        let run = try await curl(server, site: genuine, [server.url("/become-impostor"), server.url("/status/200")])
        #expect(run.text == "swapped\n")
        #expect(run.status == 60)
        #expect(server.acceptedConnections == 2)
        #expect(server.resumedHandshakes == 0)
    }

    // MARK: Plain HTTP and the proxy

    @Test func plainHTTPServerRunsTheSameEngineWithAHandler() async throws {
        let responder = try LocalHTTPServer { request in
            guard request.method == "POST", request.path == "/ocsp" else { return nil }
            return LocalHTTPResponse(
                headers: [("Content-Type", "application/ocsp-response")], body: .bytes(request.body.reversed()))
        }
        defer { responder.stop() }
        let run = try await runTool("/usr/bin/curl", [
            "-q", "--silent", "--show-error", "-H", "Content-Type: application/ocsp-request",
            "--data-binary", "abc", responder.url("/ocsp"), "-w", " %{http_code}", responder.url("/status/204"),
        ])
        #expect(run.text == "cba 200 204")
        #expect(responder.acceptedConnections == 1)
        #expect(responder.requestsServed == 2)
        #expect(responder.recentRequests.first?.header("content-type") == "application/ocsp-request")
    }

    @Test func connectProxyTunnelsToTheOrigin() async throws {
        let (site, server) = try LocalSite.running()
        let proxy = try LocalConnectProxy()
        defer { site.removeFiles(); server.stop(); proxy.stop() }
        let run = try await curl(server, site: site, ["--proxy", proxy.url, server.url("/status/200"), server.url("/headers")])
        #expect(run.text.hasPrefix("200 OK\n"))
        #expect(proxy.tunnelsOpened == 1)
        #expect(proxy.requestedAuthorities == ["localhost:\(server.port)"])
        #expect(server.handshakes.first?.serverName == "localhost")
        #expect(server.acceptedConnections == 1)

        let refused = try await runTool("/usr/bin/curl", [
            "-q", "--silent", "-o", "/dev/null", "-w", "%{http_code}", "--proxy", proxy.url, "http://origin.test/",
        ])
        #expect(refused.text == "405")
    }

    @Test func connectProxyRoutesAuthoritiesItCannotResolve() async throws {
        let (site, server) = try LocalSite.running(host: "api.servertrust.test")
        let port = server.port
        let proxy = try LocalConnectProxy(.init(route: { _ in "127.0.0.1:\(port)" }))
        defer { site.removeFiles(); server.stop(); proxy.stop() }
        let run = try await curl(server, site: site, ["--proxy", proxy.url, server.url("/status/201", host: "api.servertrust.test")])
        #expect(run.text == "201 Created\n")
        #expect(proxy.requestedAuthorities == ["api.servertrust.test:\(port)"])
    }

    @Test func interceptingProxyIsRefusedUnlessItsRootIsTrusted() async throws {
        let (site, server) = try LocalSite.running()
        let attacker = try LocalSite(rootName: "Attacker Root")
        let proxy = try LocalConnectProxy(.init(interceptingIdentity: attacker.identity))
        defer { site.removeFiles(); attacker.removeFiles(); server.stop(); proxy.stop() }

        let refused = try await curl(server, site: site, ["--proxy", proxy.url, server.url("/status/200")])
        #expect(refused.status == 60)
        #expect(await eventually { proxy.failedInterceptions == 1 })
        #expect(server.requestsServed == 0)

        // A machine that trusts the attacker's root: the proxy reads and relays everything.
        let intercepted = try await curl(server, site: attacker, [
            "--proxy", proxy.url, "-H", "Authorization: Bearer secret", server.url("/headers"),
        ])
        #expect(intercepted.text.contains("Authorization: Bearer secret"))
        #expect(proxy.interceptedHandshakes == 1)
        #expect(server.requestsServed == 1)
        #expect(server.handshakes.first?.serverName == "localhost")
    }

    @Test func interceptingProxyRewritesResponseBodiesAndReframesThem() async throws {
        let (site, server) = try LocalSite.running()
        let attacker = try LocalSite(rootName: "Attacker Root")
        let proxy = try LocalConnectProxy(.init(
            interceptingIdentity: attacker.identity, responseBodyRewrite: .init(replacing: "OK", with: "Rewritten by the proxy")))
        defer { site.removeFiles(); attacker.removeFiles(); server.stop(); proxy.stop() }

        // Two exchanges on one intercepted connection: the first body rewritten (longer, with its
        // Content-Length fixed, or curl would wait for bytes that never come), the second untouched.
        let run = try await curl(server, site: attacker, [
            "--proxy", proxy.url, "--include", server.url("/status/200"), server.url("/status/201"),
        ])
        let rewritten = "200 Rewritten by the proxy\n"
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.text.contains("\r\nContent-Length: \(rewritten.utf8.count)\r\n"))
        #expect(run.text.contains("\r\n\r\n\(rewritten)HTTP/1.1 201 Created\r\n"))
        #expect(run.text.hasSuffix("\r\n\r\n201 Created\n"))
        #expect(proxy.interceptedHandshakes == 1)
        #expect(proxy.relayedResponses == 2)
        #expect(proxy.rewrittenResponses == 1)

        // A request body reaches the origin as sent; the echoed body is rewritten on the way back.
        let posted = try await curl(server, site: attacker, ["--proxy", proxy.url, "--data-binary", "abc OK", server.url("/echo")])
        #expect(posted.text == "abc Rewritten by the proxy")
        #expect(server.requestsServed == 3)
    }

    @Test func aBodyRewriteReplacesEveryOccurrenceAndNeedsAnInterceptingIdentity() {
        let rewrite = LocalConnectProxy.BodyRewrite(replacing: "aa", with: "b")
        #expect(rewrite.apply(to: Array("aaaXaa".utf8)) == Array("baXb".utf8))
        #expect(rewrite.apply(to: Array("none".utf8)) == Array("none".utf8))
        #expect(throws: LocalServerError.self) { try LocalConnectProxy(.init(responseBodyRewrite: rewrite)) }
    }
}

/// One row of the resumption matrix.
struct ResumptionCase: Sendable, CustomTestStringConvertible {
    var version: LocalTLSServer.TLSVersion
    var tickets: Bool
    var cache: Bool
    var resumes: Bool

    var testDescription: String { "\(version) tickets:\(tickets) cache:\(cache)" }
}

// MARK: - Fixture

/// A root, an intermediate and a leaf for `localhost` and 127.0.0.1, with the root written
/// to a file for the command-line clients.
private struct LocalSite {
    let root: LabCA
    let leaf: LabLeaf
    let directory: String
    let rootPath: String

    init(rootName: String = "Local Test Root", host: String = "localhost") throws {
        root = try LabPKI.makeRoot(commonName: rootName)
        leaf = try root.issueIntermediate(commonName: "\(rootName) Intermediate")
            .issueLeaf(dnsNames: [host], ipAddresses: ["127.0.0.1"])
        rootPath = try LabPKI.writeTemporaryFile(root.certificate.pemEncoded, name: "root.pem")
        directory = (rootPath as NSString).deletingLastPathComponent
    }

    static func running(host: String = "localhost") throws -> (LocalSite, LocalTLSServer) {
        let site = try LocalSite(host: host)
        return (site, try LocalTLSServer(site.configuration))
    }

    var identity: LocalTLSServer.Identity {
        LocalTLSServer.Identity(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
    }

    var configuration: LocalTLSServer.Configuration { LocalTLSServer.Configuration(identity: identity) }

    func removeFiles() { LabPKI.removeTemporaryFile(rootPath) }
}

// MARK: - Clients

private struct ToolRun: Sendable {
    var status: Int32
    var output: Data
    var errors: String
    var text: String { String(decoding: output, as: UTF8.self) }
}

/// curl trusting only `site`'s root, with the server's names resolved to 127.0.0.1.
private func curl(
    _ server: LocalTLSServer, site: LocalSite, _ arguments: [String], input: String? = nil, timeout: Duration = .seconds(30)
) async throws -> ToolRun {
    var resolve: [String] = []
    for host in ["localhost", "api.servertrust.test"] {
        resolve += ["--resolve", server.resolveEntry(host: host)]
    }
    return try await runTool(
        "/usr/bin/curl",
        ["-q", "--silent", "--show-error", "--max-time", "20", "--cacert", site.rootPath] + resolve + arguments,
        input: input, timeout: timeout)
}

/// `openssl s_client` to the server as `localhost`, sending one request for `/close` and
/// reading until the server closes.
private func openSSLClient(_ server: LocalTLSServer, site: LocalSite, _ arguments: [String]) async throws -> ToolRun {
    try await runTool(
        "/usr/bin/openssl",
        ["s_client", "-connect", "127.0.0.1:\(server.port)", "-servername", "localhost", "-CAfile", site.rootPath,
         "-ign_eof"] + arguments,
        input: "GET /close HTTP/1.1\r\nHost: localhost\r\n\r\n")
}

/// Runs a tool to completion without blocking a cooperative thread (``ChildProcess``: output
/// through files, SIGKILL after `timeout`, no Foundation `Process`).
private func runTool(
    _ executable: String, _ arguments: [String], input: String? = nil, timeout: Duration = .seconds(30)
) async throws -> ToolRun {
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    let run = try await ChildProcess.run(executable, arguments, input: Array((input ?? "").utf8), timeout: seconds)
    return ToolRun(status: run.status, output: Data(run.output), errors: run.errorText)
}

/// A TCP connection to 127.0.0.1:`port` that sends nothing.
private func connectedSocket(port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    try #require(result == 0)
    return fd
}

/// Polls `condition` until it holds or `timeout` passes: for counts a server updates after the
/// client has already gone (a refused handshake).
private func eventually(timeout: Duration = .seconds(60), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
