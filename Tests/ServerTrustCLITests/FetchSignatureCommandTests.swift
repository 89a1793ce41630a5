import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// `servertrust fetch --verify-signature BASE64_ROOT_KEY [--mode …]` against the CLI fixture's
/// server signing its responses, directly and through an intercepting proxy that rewrites the
/// signed body — human and `--json` output, exit status.
@Suite struct FetchSignatureCommandTests {
    static let genuineBody = #"{"licence":"free","seats":1}"# + "\n"
    static let rewrittenBody = #"{"licence":"premium","seats":1}"# + "\n"
    static let rewrite = LocalConnectProxy.BodyRewrite(replacing: #""licence":"free""#, with: #""licence":"premium""#)

    /// A root and an intermediate it certified, made in-process.
    struct Keys {
        let root: VerificationKey
        let signer: ResponseSigner

        init() throws {
            let root = try SigningKey.generate()
            let intermediate = try SigningKey.generate()
            self.root = root.verificationKey
            signer = try ResponseSigner(
                key: intermediate,
                certificate: try IntermediateKeyCertificate.issue(
                    for: intermediate.verificationKey, expires: Date().addingTimeInterval(7 * 86_400), signedBy: root))
        }
    }

    /// What the verifier says about the rewritten body.
    static let bodyMismatchReason = "The body (\(rewrittenBody.utf8.count) bytes) is not the one the server signed."
    static let statusBody = #"{"status":"ok"}"# + "\n"

    /// The fixture's server answering `/v1/licence` with ``genuineBody`` (which the proxy
    /// rewrites) and anything else with ``statusBody`` (which it leaves alone), signed by
    /// `signer` for requests that ask for a signature, the way a server using
    /// ``ResponseSigner`` does.
    static func serveSigned(_ fixture: CLIFixture, by signer: ResponseSigner) {
        fixture.server.setHandler { request in
            let body = Array((request.path == "/v1/licence" ? Self.genuineBody : Self.statusBody).utf8)
            var response = LocalHTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: .bytes(body))
            let query = request.target.firstIndex(of: "?").map { String(request.target[request.target.index(after: $0)...]) }
            if let signature = try? signer.signatureHeaders(
                method: request.method, path: request.path, query: query, requestHeaders: request.headers, requestBody: request.body,
                status: 200, body: body)
            {
                response.headers += signature
            }
            return response
        }
    }

    /// The fixture's signing server behind an intercepting proxy whose CA is trusted next to
    /// the fixture's root (both in ``caFile``), rewriting the body of every response it relays.
    final class RewritingInterception {
        let fixture: CLIFixture
        let keys: Keys
        let proxy: LocalConnectProxy
        let caFile: String

        init() throws {
            fixture = try CLIFixture()
            keys = try Keys()
            FetchSignatureCommandTests.serveSigned(fixture, by: keys.signer)
            let proxyCA = try LabPKI.makeRoot(commonName: "Corporate Inspection CA")
            let forged = try proxyCA.issueLeaf(dnsNames: [CLIFixture.host])
            let port = fixture.server.port
            proxy = try LocalConnectProxy(.init(
                interceptingIdentity: .init(chain: forged.chain, privateKeyPEM: forged.key.pemPrivateKey),
                route: { _ in "127.0.0.1:\(port)" }, responseBodyRewrite: FetchSignatureCommandTests.rewrite))
            caFile = try LabPKI.writeTemporaryFile(LabPKI.pemBundle([fixture.root.certificate, proxyCA.certificate]), name: "roots.pem")
        }

        deinit {
            proxy.stop()
            LabPKI.removeTemporaryFile(caFile)
        }

        /// `servertrust fetch` of `path` through the proxy, checking signatures against the genuine root.
        func fetch(_ path: String, _ options: [String] = []) -> CommandResult {
            CommandRunner.run(["fetch", fixture.url(path), "--verify-signature", keys.root.base64, "--proxy", proxy.url, "--ca", caFile] + options)
        }
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    // MARK: Verified

    @Test func aSignedResponsePrintsTheBodyAndReportsVerified() throws {
        let fixture = try CLIFixture()
        let keys = try Keys()
        Self.serveSigned(fixture, by: keys.signer)
        let result = CommandRunner.run(["fetch", fixture.url("/v1/licence?device=7"), "--verify-signature", keys.root.base64] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == Self.genuineBody)
        #expect(result.standardError == "signature: verified\n")
        // The server was asked for a signature: the client sent a nonce.
        #expect(fixture.server.recentRequests.last?.header(SignedResponseHeader.nonce) != nil)
    }

    @Test func aSignedResponseInJSONCarriesAVerifiedVerification() throws {
        let fixture = try CLIFixture()
        let keys = try Keys()
        Self.serveSigned(fixture, by: keys.signer)
        let result = CommandRunner.run(
            ["fetch", fixture.url("/v1/licence"), "--verify-signature", keys.root.base64, "--mode", "informational", "--json"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardError.isEmpty, "\(result)")
        let object = try Self.json(result.standardOutput)
        #expect(object["status"] as? Int == 200)
        #expect(object["body"] as? String == Self.genuineBody)
        #expect(object["verification"] as? [String: String] == ["result": "verified", "scheme": "v1"])
        #expect(object["hopVerifications"] as? [[String: String]] == [["result": "verified", "scheme": "v1"]])
    }

    /// The operator's flow from the command line only: `keys create-root`, `keys
    /// issue-intermediate`, `keys root-public`; the server loads the intermediate file, the
    /// client checks with the printed root key.
    @Test func keysMadeWithTheKeysCommandsVerifyOverFetch() throws {
        let folder = try KeysCommandTests.KeyFolder()
        _ = try KeysCommandTests.createRoot(in: folder)
        let intermediate = folder.path("intermediate.pem")
        let issued = CommandRunner.run([
            "keys", "issue-intermediate", "--root", folder.path("root.pem"), "--expires", KeysCommandTests.rfc3339(daysFromNow: 7).text,
            "--out", intermediate,
        ])
        try #require(issued.status == 0, "\(issued)")
        let rootKey = CommandRunner.run(["keys", "root-public", "--root", folder.path("root.pem")]).standardOutput
            .trimmingCharacters(in: .newlines)

        let fixture = try CLIFixture()
        Self.serveSigned(fixture, by: try ResponseSigner(pem: String(contentsOfFile: intermediate, encoding: .utf8)))
        let result = CommandRunner.run(["fetch", fixture.url("/v1/licence"), "--verify-signature", rootKey] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == Self.genuineBody)
        #expect(result.standardError == "signature: verified\n")
    }

    // MARK: Failed: a proxy whose CA is trusted rewrites the signed body

    @Test func aRewrittenBodyIsRefusedWhenEnforcedWithoutPrintingIt() throws {
        let scene = try RewritingInterception()
        let proxy = scene.proxy
        let result = scene.fetch("/v1/licence")
        #expect(proxy.interceptedHandshakes == 1)
        #expect(proxy.rewrittenResponses == 1)
        #expect(result.status == 1, "\(result)")
        #expect(result.standardOutput.isEmpty, "the body of a response that failed verification is withheld")
        expectGolden(result.standardError, """
            error: The response (status 200) failed signature verification: \(Self.bodyMismatchReason) [https://cli.servertrust.test:<port>/v1/licence]
            hint: the body changed after the server signed it: something between you and the server rewrote it (a proxy whose CA this machine trusts), or the server compresses after signing
            hint: --mode informational prints the body and the result instead of failing; never act on a body that failed

            """)
    }

    @Test func aRewrittenBodyIsPrintedAndReportedFailedWhenInformational() throws {
        let scene = try RewritingInterception()
        let proxy = scene.proxy
        let result = scene.fetch("/v1/licence", ["--mode", "informational"])
        #expect(proxy.rewrittenResponses == 1)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == Self.rewrittenBody)
        #expect(result.standardError == "signature: FAILED (bodyMismatch): \(Self.bodyMismatchReason)\n")
    }

    @Test func aRewrittenBodyInJSONWhenEnforcedIsAnErrorWithTheVerification() throws {
        let scene = try RewritingInterception()
        let proxy = scene.proxy
        let result = scene.fetch("/v1/licence", ["--json"])
        #expect(proxy.rewrittenResponses == 1)
        #expect(result.status == 1, "\(result)")
        let object = try Self.json(result.standardOutput)
        #expect(object["body"] == nil)
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["code"] as? String == "responseSignatureInvalid")
        let verification = try #require(object["verification"] as? [String: Any])
        #expect(verification["result"] as? String == "failed")
        #expect(verification["scheme"] as? String == "v1")
        #expect(verification["code"] as? String == "bodyMismatch")
        #expect(verification["status"] as? Int == 200)
        #expect(verification["reason"] as? String == Self.bodyMismatchReason)
    }

    @Test func aRewrittenBodyInJSONWhenInformationalIsReturnedMarkedFailed() throws {
        let scene = try RewritingInterception()
        let proxy = scene.proxy
        let result = scene.fetch("/v1/licence", ["--mode", "informational", "--json"])
        #expect(proxy.rewrittenResponses == 1)
        #expect(result.status == 0, "\(result)")
        let object = try Self.json(result.standardOutput)
        #expect(object["body"] as? String == Self.rewrittenBody)
        // TLS passed: the chain ends at the proxy's CA, which the client was made to trust.
        let trust = try #require(object["trust"] as? [String: Any])
        #expect(trust["trusted"] as? Bool == true)
        #expect((trust["validatedChain"] as? [[String: String]])?.last?["subject"] == "CN=Corporate Inspection CA")
        #expect(object["verification"] as? [String: String] == [
            "result": "failed", "scheme": "v1", "code": "bodyMismatch",
            "reason": Self.bodyMismatchReason,
        ])
    }

    /// The control for the tests above: the same proxy, the same client arguments, a body the
    /// rewrite does not match — verified, so what fails them is the rewritten body.
    @Test func theSameProxyLeavingTheBodyAloneIsVerified() throws {
        let scene = try RewritingInterception()
        let proxy = scene.proxy
        let result = scene.fetch("/v1/status")
        #expect(proxy.interceptedHandshakes == 1)
        #expect(proxy.relayedResponses == 1)
        #expect(proxy.rewrittenResponses == 0)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == Self.statusBody)
        #expect(result.standardError == "signature: verified\n")
    }

    // MARK: Failed: the wrong root, and usage

    @Test func aResponseSignedUnderAnotherRootIsRefused() throws {
        let fixture = try CLIFixture()
        let keys = try Keys()
        let other = try Keys()
        Self.serveSigned(fixture, by: keys.signer)
        let human = CommandRunner.run(["fetch", fixture.url("/v1/licence"), "--verify-signature", other.root.base64] + fixture.trusting)
        #expect(human.status == 1, "\(human)")
        #expect(human.standardOutput.isEmpty)
        expectGolden(human.standardError, """
            error: The response (status 200) failed signature verification: The intermediate key was issued by root <keys-root-id>, which is not a configured v1 root (<other-root-id>). [https://cli.servertrust.test:<port>/v1/licence]
            hint: the response is signed under another root: compare --verify-signature with `servertrust keys root-public`; if they match, the response is forged
            hint: --mode informational prints the body and the result instead of failing; never act on a body that failed

            """, literals: [keys.root.keyIDHex: "<keys-root-id>", other.root.keyIDHex: "<other-root-id>"])

        let result = CommandRunner.run(["fetch", fixture.url("/v1/licence"), "--verify-signature", other.root.base64, "--json"] + fixture.trusting)
        #expect(result.status == 1, "\(result)")
        let verification = try #require(Self.json(result.standardOutput)["verification"] as? [String: Any])
        #expect(verification["code"] as? String == "untrustedIntermediate")
        #expect(verification["status"] as? Int == 200)
    }

    @Test func aKeyThatIsNotEd25519IsAUsageError() throws {
        let result = CommandRunner.run(["fetch", "https://cli.servertrust.test/", "--verify-signature", "AAAA"])
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError.hasPrefix("error: --verify-signature: "), "\(result)")
    }
}
