import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// The `--json` schema of each command that probes a server, golden: one documented report
/// type each (`inspect`: ChainInspection + InspectOutput; `pins`: PinsOutput; `audit`:
/// TrustAudit.Report). Volatile values are placeholders (see ``GoldenText``).
@Suite struct JSONSchemaGoldenTests {
    @Test func inspectJSON() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["inspect", fixture.url(), "--json"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        expectGolden(result.standardOutput, """
            {
              "anchors" : "<ca>",
              "checks" : {
                "chain" : {
                  "detail" : "validates to CN=CLI Test Root (3 certificates): signatures, validity, serverAuth",
                  "result" : "passed"
                },
                "host" : {
                  "detail" : "the leaf is valid for cli.servertrust.test",
                  "result" : "passed"
                },
                "stapledOCSP" : {
                  "detail" : "GOOD: The OCSP response signed by the issuer CN=CLI Test Intermediate says good (thisUpdate <date>, nextUpdate <date>).",
                  "result" : "passed"
                }
              },
              "host" : "cli.servertrust.test",
              "method" : "HEAD",
              "negotiated" : {
                "applicationProtocol" : "http/1.1",
                "cipherSuite" : "TLS_AES_256_GCM_SHA384",
                <group>
                "protocol" : "TLS 1.3"
              },
              "passesDefaultValidation" : true,
              "presentedChain" : [
                {
                  "crlURLs" : [
                    "http://crl.servertrust.test/intermediate.crl"
                  ],
                  "daysLeft" : <n>,
                  "dnsNames" : [
                    "cli.servertrust.test"
                  ],
                  "ipAddresses" : [
                    "127.0.0.1"
                  ],
                  "issuer" : "CN=CLI Test Intermediate",
                  "keySize" : 256,
                  "keyType" : "EC P-256",
                  "notAfter" : "<date>",
                  "notBefore" : "<date>",
                  "ocspURLs" : [
                    "http://ocsp.servertrust.test/"
                  ],
                  "selfIssued" : false,
                  "serialNumber" : "<serial>",
                  "sha256" : "<sha256>",
                  "signatureAlgorithm" : "ecdsa-with-SHA256",
                  "spkiPin" : "sha256/<pin>",
                  "subject" : "CN=cli.servertrust.test"
                },
                {
                  "crlURLs" : [

                  ],
                  "daysLeft" : <n>,
                  "dnsNames" : [

                  ],
                  "ipAddresses" : [

                  ],
                  "issuer" : "CN=CLI Test Root",
                  "keySize" : 256,
                  "keyType" : "EC P-256",
                  "notAfter" : "<date>",
                  "notBefore" : "<date>",
                  "ocspURLs" : [

                  ],
                  "selfIssued" : false,
                  "serialNumber" : "<serial>",
                  "sha256" : "<sha256>",
                  "signatureAlgorithm" : "ecdsa-with-SHA256",
                  "spkiPin" : "sha256/<pin>",
                  "subject" : "CN=CLI Test Intermediate"
                }
              ],
              "response" : {
                "httpVersion" : "HTTP/1.1",
                "status" : 200
              },
              "url" : "https://cli.servertrust.test:<port>/",
              "validatedChain" : [
                {
                  "crlURLs" : [
                    "http://crl.servertrust.test/intermediate.crl"
                  ],
                  "daysLeft" : <n>,
                  "dnsNames" : [
                    "cli.servertrust.test"
                  ],
                  "ipAddresses" : [
                    "127.0.0.1"
                  ],
                  "issuer" : "CN=CLI Test Intermediate",
                  "keySize" : 256,
                  "keyType" : "EC P-256",
                  "notAfter" : "<date>",
                  "notBefore" : "<date>",
                  "ocspURLs" : [
                    "http://ocsp.servertrust.test/"
                  ],
                  "presentedIndex" : 0,
                  "selfIssued" : false,
                  "serialNumber" : "<serial>",
                  "sha256" : "<sha256>",
                  "signatureAlgorithm" : "ecdsa-with-SHA256",
                  "spkiPin" : "sha256/<pin>",
                  "subject" : "CN=cli.servertrust.test"
                },
                {
                  "crlURLs" : [

                  ],
                  "daysLeft" : <n>,
                  "dnsNames" : [

                  ],
                  "ipAddresses" : [

                  ],
                  "issuer" : "CN=CLI Test Root",
                  "keySize" : 256,
                  "keyType" : "EC P-256",
                  "notAfter" : "<date>",
                  "notBefore" : "<date>",
                  "ocspURLs" : [

                  ],
                  "presentedIndex" : 1,
                  "selfIssued" : false,
                  "serialNumber" : "<serial>",
                  "sha256" : "<sha256>",
                  "signatureAlgorithm" : "ecdsa-with-SHA256",
                  "spkiPin" : "sha256/<pin>",
                  "subject" : "CN=CLI Test Intermediate"
                },
                {
                  "crlURLs" : [

                  ],
                  "daysLeft" : <n>,
                  "dnsNames" : [

                  ],
                  "ipAddresses" : [

                  ],
                  "issuer" : "CN=CLI Test Root",
                  "keySize" : 256,
                  "keyType" : "EC P-256",
                  "notAfter" : "<date>",
                  "notBefore" : "<date>",
                  "ocspURLs" : [

                  ],
                  "presentedIndex" : null,
                  "selfIssued" : true,
                  "serialNumber" : "<serial>",
                  "sha256" : "<sha256>",
                  "signatureAlgorithm" : "ecdsa-with-SHA256",
                  "spkiPin" : "sha256/<pin>",
                  "subject" : "CN=CLI Test Root"
                }
              ],
              "validationTime" : "<date>"
            }

            """, literals: fixture.literals.merging(CLIFixture.negotiatedGroupText) { $1 })
    }

    @Test func pinsJSON() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["pins", fixture.url(), "--json"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        expectGolden(result.standardOutput, """
            {
              "anchors" : "<ca>",
              "host" : "cli.servertrust.test",
              "pins" : [
                {
                  "curl" : "sha256//<pin>",
                  "name" : "leaf",
                  "pin" : "sha256/<pin>",
                  "role" : "leaf",
                  "subject" : "CN=cli.servertrust.test"
                },
                {
                  "curl" : "sha256//<pin>",
                  "name" : "intermediate",
                  "pin" : "sha256/<pin>",
                  "role" : "intermediate",
                  "subject" : "CN=CLI Test Intermediate"
                },
                {
                  "curl" : "sha256//<pin>",
                  "name" : "root",
                  "pin" : "sha256/<pin>",
                  "role" : "root",
                  "subject" : "CN=CLI Test Root"
                }
              ],
              "swift" : "// SPKI pins of cli.servertrust.test, read from https://cli.servertrust.test:<port>/\\n// and validated against <ca>.\\n// Any one matching pin admits the server: keep only the levels you mean to trust\\n// (leaf: this key; intermediate: what the CA issues from it; root: anything under that CA).\\nimport ServerTrust\\n\\nenum CliServertrustTestPins {\\n    /// Leaf: CN=cli.servertrust.test\\n    static let leaf = \\"sha256/<pin>\\"\\n    /// Intermediate: CN=CLI Test Intermediate\\n    static let intermediate = \\"sha256/<pin>\\"\\n    /// Root: CN=CLI Test Root\\n    static let root = \\"sha256/<pin>\\"\\n    // A backup pin is needed: the pin of a key pair you generate now and keep offline (or of\\n    // your second CA), so that a key rotation or compromise does not lock deployed clients out.\\n    // `servertrust generate` compiles its certificate into a constant; or from the key:\\n    //   openssl pkey -in backup.key -pubout -outform der | openssl dgst -sha256 -binary | base64\\n}\\n\\nlet manager = try ServerTrustManager(evaluators: [\\n    try HostPattern(\\"cli.servertrust.test\\"): try .pinnedKeyHashes([\\n        CliServertrustTestPins.leaf,\\n        CliServertrustTestPins.intermediate,\\n        CliServertrustTestPins.root,\\n        // the backup pin goes here\\n    ]),\\n])",
              "url" : "https://cli.servertrust.test:<port>/",
              "verified" : true
            }

            """, literals: fixture.literals)
    }

    @Test func auditJSON() throws {
        let fixture = try CLIFixture()
        let file = try LabPKI.writeTemporaryFile("""
            { "version": 1, "hosts": {
                "\(CLIFixture.host)": { "pins": [
                    { "pin": "\(fixture.intermediate.certificate.spkiPin)", "label": "current" },
                    { "pin": "sha256/\(Data(repeating: 5, count: 32).base64EncodedString())", "label": "backup" }] },
                "*.wild.servertrust.test": {} } }
            """, name: "policy.json")
        defer { LabPKI.removeTemporaryFile(file) }
        // A 7-day horizon: the fixture's leaf lives 30 days, so the default 30-day horizon would
        // fall on its notAfter and the outcome would depend on how long the run took.
        let result = CommandRunner.run(
            ["audit", "--policy", file, "--port", String(fixture.server.port), "--warn-days", "7", "--json"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        expectGolden(result.standardOutput, """
            {
              "date" : "<date>",
              "hosts" : [
                {
                  "expirations" : [
                    {
                      "date" : "<date>",
                      "days" : 29,
                      "what" : "leaf certificate CN=cli.servertrust.test"
                    },
                    {
                      "date" : "<date>",
                      "days" : 1824,
                      "what" : "issuer certificate CN=CLI Test Intermediate"
                    }
                  ],
                  "findings" : [

                  ],
                  "hasBackup" : true,
                  "host" : "cli.servertrust.test",
                  "line" : 2,
                  "matchingPins" : [
                    {
                      "label" : "current",
                      "pin" : "sha256/<pin>"
                    }
                  ],
                  "mode" : "enforced",
                  "pattern" : "cli.servertrust.test",
                  "status" : "ok"
                },
                {
                  "expirations" : [

                  ],
                  "findings" : [

                  ],
                  "line" : 5,
                  "matchingPins" : [

                  ],
                  "mode" : "enforced",
                  "note" : "a wildcard pattern; name a host to probe with --probe '*.wild.servertrust.test=HOST'",
                  "pattern" : "*.wild.servertrust.test",
                  "status" : "skipped"
                }
              ],
              "passed" : true,
              "policy" : "<policy>",
              "warnDays" : 7
            }

            """, literals: fixture.literals.merging([file: "<policy>"]) { $1 })
    }
}
