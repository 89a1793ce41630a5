import Foundation
import Testing

@Suite struct InspectCommandTests {
    @Test func reportsBothChainsEveryDetailAndPassingChecks() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["inspect", fixture.url()] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardError.isEmpty, "\(result)")
        expectGolden(result.standardOutput, Self.trustedGolden, literals: fixture.literals.merging(CLIFixture.negotiatedGroupText) { $1 })
    }

    @Test func reportsAnUntrustedChainWithoutBlockingAndExitsOne() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["inspect", fixture.url()] + fixture.resolve())
        #expect(result.status == 1, "\(result)")
        let output = GoldenText.normalised(result.standardOutput)
        #expect(output.contains("  request       HEAD / → 200 (HTTP/1.1)"))
        #expect(output.contains("  chain         FAILED  chainValidationFailed: "))
        #expect(output.contains("  host          passed  the leaf is valid for cli.servertrust.test (checked on the leaf alone, as the chain failed)"))
        #expect(output.contains("  stapled OCSP  not checked  a response was stapled; not verified, as the chain failed"))
        #expect(output.contains("Validated chain none: the chain does not validate against the system CA bundle"))
        #expect(output.contains("Presented chain (2 certificates, as sent)"))
        #expect(result.standardError == "hint: for a private CA, pass its root with --ca FILE\n", "\(result)")
    }

    @Test func reportsAHostMismatchEvenThoughThePolicysHostCheckEndsTheRequest() throws {
        let fixture = try CLIFixture()
        let other = "other.servertrust.test"
        let result = CommandRunner.run(["inspect", fixture.url(host: other), "--ca", fixture.caFile] + fixture.resolve(other))
        #expect(result.status == 1, "\(result)")
        let output = GoldenText.normalised(result.standardOutput)
        #expect(output.contains("did not complete after the handshake"))
        #expect(output.contains("  chain         passed  validates to CN=CLI Test Root (3 certificates)"))
        #expect(output.contains("  host          FAILED  hostMismatch: The certificate is not valid for other.servertrust.test"))
        #expect(output.contains("a client with default validation rejects this server"))
        #expect(result.standardError.contains("hint: use one of those names in the URL"), "\(result)")
    }

    @Test func jsonCarriesChecksAndCertificateFields() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["inspect", fixture.url(), "--json", "--method", "GET"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(object["passesDefaultValidation"] as? Bool == true)
        #expect(object["method"] as? String == "GET")
        #expect((object["response"] as? [String: Any])?["status"] as? Int == 200)
        let checks = try #require(object["checks"] as? [String: [String: Any]])
        #expect(checks["chain"]?["result"] as? String == "passed")
        #expect(checks["host"]?["result"] as? String == "passed")
        #expect(checks["stapledOCSP"]?["result"] as? String == "passed")
        let presented = try #require(object["presentedChain"] as? [[String: Any]])
        let validated = try #require(object["validatedChain"] as? [[String: Any]])
        #expect(presented.count == 2)
        #expect(validated.count == 3)
        #expect(validated[2]["presentedIndex"] is NSNull)
        let leaf = presented[0]
        #expect(leaf["spkiPin"] as? String == fixture.leaf.certificate.spkiPin.description)
        #expect(leaf["dnsNames"] as? [String] == [CLIFixture.host])
        #expect(leaf["ipAddresses"] as? [String] == ["127.0.0.1"])
        #expect(leaf["ocspURLs"] as? [String] == ["http://ocsp.servertrust.test/"])
        #expect(leaf["crlURLs"] as? [String] == ["http://crl.servertrust.test/intermediate.crl"])
        #expect(leaf["keyType"] as? String == "EC P-256")
        #expect(leaf["keySize"] as? Int == 256)
        #expect(leaf["signatureAlgorithm"] as? String == "ecdsa-with-SHA256")
        #expect((leaf["daysLeft"] as? Int).map { (28...30).contains($0) } == true)
        #expect((leaf["sha256"] as? String)?.count == 64)
    }

    @Test func anUnreachableServerExitsThreeWithAHint() throws {
        let fixture = try CLIFixture()
        let port = try fixture.closedPort()
        let url = "https://\(CLIFixture.host):\(port)/"
        let resolve = ["--resolve", "\(CLIFixture.host):\(port):127.0.0.1"]
        let result = CommandRunner.run(["inspect", url] + resolve)
        #expect(result.status == 3, "\(result)")
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.contains("error: could not reach https://\(CLIFixture.host):\(port)/"), "\(result)")
        #expect(result.standardError.contains("hint: nothing accepted a connection at \(CLIFixture.host):\(port)"), "\(result)")
    }

    @Test func usageErrorsExitTwo() {
        #expect(CommandRunner.run(["inspect", "http://example.com/"]).status == 2)
        #expect(CommandRunner.run(["inspect", "https://example.com/", "--method", "POST"]).status == 2)
        #expect(CommandRunner.run(["inspect", "https://example.com/", "--ca", "/nonexistent.pem"]).status == 2)
    }

    static let trustedGolden = """
        Inspected https://cli.servertrust.test:<port>/
          request       HEAD / → 200 (HTTP/1.1)
          host          cli.servertrust.test
          anchors       <ca>
          negotiated    TLS 1.3, TLS_AES_256_GCM_SHA384, <group>

        Default checks (reported, not enforced)
          chain         passed  validates to CN=CLI Test Root (3 certificates): signatures, validity, serverAuth
          host          passed  the leaf is valid for cli.servertrust.test
          stapled OCSP  passed  GOOD: The OCSP response signed by the issuer CN=CLI Test Intermediate says good (thisUpdate <date>, nextUpdate <date>).
          verdict       a client with default validation accepts this server

        Presented chain (2 certificates, as sent)
          [0] CN=cli.servertrust.test
              issuer      CN=CLI Test Intermediate
              validity    <date> → <date> (<n> days left)
              names       DNS:cli.servertrust.test, IP:127.0.0.1
              key         EC P-256, 256 bits
              signature   ecdsa-with-SHA256
              serial      <serial>
              SPKI pin    sha256/<pin>
              SHA-256     <sha256>
              OCSP        http://ocsp.servertrust.test/
              CRL         http://crl.servertrust.test/intermediate.crl
          [1] CN=CLI Test Intermediate
              issuer      CN=CLI Test Root
              validity    <date> → <date> (<n> days left)
              names       none
              key         EC P-256, 256 bits
              signature   ecdsa-with-SHA256
              serial      <serial>
              SPKI pin    sha256/<pin>
              SHA-256     <sha256>
              OCSP        none
              CRL         none

        Validated chain (3 certificates, leaf to anchor)
          [0] CN=cli.servertrust.test (presented [0]) sha256/<pin>
          [1] CN=CLI Test Intermediate (presented [1]) sha256/<pin>
          [2] CN=CLI Test Root (from the anchors, not sent by the server)
              issuer      CN=CLI Test Root
              validity    <date> → <date> (<n> days left)
              names       none
              key         EC P-256, 256 bits
              signature   ecdsa-with-SHA256
              serial      <serial>
              SPKI pin    sha256/<pin>
              SHA-256     <sha256>
              OCSP        none
              CRL         none

        Pin it: servertrust pins https://cli.servertrust.test:<port>/ --swift

        """
}
