import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// `fetch --compressed`: the fixture's server gzips its body when the request accepts gzip.
@Suite struct FetchCompressedTests {
    static let text = String(repeating: "compressed over the wire, printed decoded\n", count: 50)

    /// Gzips ``text`` when `Accept-Encoding` names gzip, and signs what it sends when given a signer.
    static func serveGzip(_ fixture: CLIFixture, signer: ResponseSigner? = nil) {
        fixture.server.setHandler { request in
            let gzip = request.header("Accept-Encoding")?.contains("gzip") == true
            let body = gzip ? TestCompression.compress(Array(text.utf8), as: .gzip) : Array(text.utf8)
            var response = LocalHTTPResponse(headers: gzip ? [("Content-Encoding", "gzip")] : [], body: .bytes(body))
            if let signer, let signature = try? signer.signatureHeaders(
                method: request.method, path: request.path, query: nil, requestHeaders: request.headers, requestBody: request.body,
                status: 200, body: body)
            {
                response.headers += signature
            }
            return response
        }
    }

    @Test func compressedAsksForEveryCodingLibcurlHasAndPrintsTheDecodedBody() throws {
        let fixture = try CLIFixture()
        Self.serveGzip(fixture)
        let result = CommandRunner.run(["fetch", fixture.url("/text"), "--compressed"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == Self.text)
        let accepted = fixture.server.recentRequests.last?.header("Accept-Encoding")
        #expect(accepted?.hasPrefix("deflate, gzip") == true, "\(accepted ?? "none")")
    }

    @Test func withoutCompressedNothingIsAskedFor() throws {
        let fixture = try CLIFixture()
        Self.serveGzip(fixture)
        let result = CommandRunner.run(["fetch", fixture.url("/text")] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == Self.text)
        #expect(fixture.server.recentRequests.last?.header("Accept-Encoding") == nil)
    }

    @Test func theJSONNamesTheDecodedCodingAndKeepsTheHeader() throws {
        let fixture = try CLIFixture()
        Self.serveGzip(fixture)
        let result = CommandRunner.run(["fetch", fixture.url("/text"), "--compressed", "--json"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(object["body"] as? String == Self.text)
        #expect(object["decodedContentEncodings"] as? [String] == ["gzip"])
        #expect((object["headers"] as? [[String]])?.contains(["Content-Encoding", "gzip"]) == true)
    }

    /// Third security review, finding 3: with `--verify-signature` nothing is asked for and
    /// nothing decoded (a v1 signature does not cover `Content-Encoding`), and the CLI says that
    /// `--compressed` had no effect.
    @Test func finding3ASignedResponseIsNeverDecodedAndCompressedSaysSo() throws {
        let fixture = try CLIFixture()
        let keys = try FetchSignatureCommandTests.Keys()
        Self.serveGzip(fixture, signer: keys.signer)
        let result = CommandRunner.run(
            ["fetch", fixture.url("/text"), "--compressed", "--verify-signature", keys.root.base64] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == Self.text)
        #expect(
            result.standardError == """
                warning: --compressed has no effect with --verify-signature: the signature does not cover Content-Encoding, so nothing is asked for or decoded.
                signature: verified

                """, "\(result)")
        #expect(fixture.server.recentRequests.last?.header("Accept-Encoding") == nil)
    }
}
