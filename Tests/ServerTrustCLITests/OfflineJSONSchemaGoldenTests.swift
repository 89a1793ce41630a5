import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// The `--json` schema of `fetch`, `keys`, `generate` and `demo`, golden: one documented type
/// each (`FetchJSON.Success`/`Failure`, `KeysOutput`, `GenerateOutput`, `DemoOutput`).
/// Keys made per run are replaced by placeholders read back from the output.
@Suite struct OfflineJSONSchemaGoldenTests {
    /// `literals` plus a placeholder for each of `fields`' string values in the top-level object.
    private func placeholders(_ json: String, _ fields: [String], _ literals: [String: String] = [:]) -> [String: String] {
        let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] ?? [:]
        var result = literals
        for field in fields { if let value = object[field] as? String { result[value] = "<\(field)>" } }
        return result
    }

    /// The group is each stack's default for TLS 1.3 (`OpenSSLDefaults.tls13KeyExchangeGroup`):
    /// X25519 on OpenSSL 3.0, the post-quantum hybrid X25519MLKEM768 on OpenSSL 3.5.
    @Test func fetchJSON() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["fetch", fixture.url(), "--json"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        expectGolden(result.standardOutput, """
            {
              "body" : "hello from the CLI fixture\\n",
              "decodedContentEncodings" : [

              ],
              "headers" : [
                [
                  "Content-Type",
                  "text/plain; charset=utf-8"
                ],
                [
                  "Content-Length",
                  "27"
                ]
              ],
              "hopVerifications" : [
                {
                  "result" : "notRequested"
                }
              ],
              "hops" : [
                {
                  "evaluator" : "DefaultTrustEvaluator",
                  "host" : "cli.servertrust.test",
                  "matchedPattern" : "cli.servertrust.test",
                  "matchedPins" : [

                  ],
                  "revocation" : [

                  ],
                  "tls" : {
                    "alpn" : "http/1.1",
                    "cipherSuite" : "TLS_AES_256_GCM_SHA384",
                    "group" : "\(OpenSSLDefaults.tls13KeyExchangeGroup)",
                    "protocol" : "TLS 1.3"
                  },
                  "trusted" : true,
                  "validatedChain" : [
                    {
                      "pin" : "sha256/<pin>",
                      "subject" : "CN=cli.servertrust.test"
                    },
                    {
                      "pin" : "sha256/<pin>",
                      "subject" : "CN=CLI Test Intermediate"
                    },
                    {
                      "pin" : "sha256/<pin>",
                      "subject" : "CN=CLI Test Root"
                    }
                  ]
                }
              ],
              "httpVersion" : "HTTP/1.1",
              "reportQueued" : false,
              "reportsDropped" : 0,
              "reportsSent" : 0,
              "status" : 200,
              "trust" : {
                "evaluator" : "DefaultTrustEvaluator",
                "host" : "cli.servertrust.test",
                "matchedPattern" : "cli.servertrust.test",
                "matchedPins" : [

                ],
                "revocation" : [

                ],
                "tls" : {
                  "alpn" : "http/1.1",
                  "cipherSuite" : "TLS_AES_256_GCM_SHA384",
                  "group" : "\(OpenSSLDefaults.tls13KeyExchangeGroup)",
                  "protocol" : "TLS 1.3"
                },
                "trusted" : true,
                "validatedChain" : [
                  {
                    "pin" : "sha256/<pin>",
                    "subject" : "CN=cli.servertrust.test"
                  },
                  {
                    "pin" : "sha256/<pin>",
                    "subject" : "CN=CLI Test Intermediate"
                  },
                  {
                    "pin" : "sha256/<pin>",
                    "subject" : "CN=CLI Test Root"
                  }
                ]
              },
              "trustFailures" : [

              ],
              "trustResult" : {
                "result" : "verified"
              },
              "url" : "https://cli.servertrust.test:<port>/",
              "verification" : {
                "result" : "notRequested"
              }
            }

            """, literals: fixture.literals)
    }

    @Test func fetchFailureJSON() throws {
        let fixture = try CLIFixture()
        let wrongPin = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()
        let result = CommandRunner.run(["fetch", fixture.url(), "--pin", wrongPin, "--json"] + fixture.trusting)
        #expect(result.status == 1, "\(result)")
        expectGolden(result.standardOutput, """
            {
              "error" : {
                "code" : "trustEvaluationFailed",
                "curlCode" : 60,
                "curlMessage" : "SSL certificate problem: application verification failure",
                "reason" : "Trust evaluation rejected cli.servertrust.test.",
                "transportFailure" : "trustRejected"
              },
              "reportQueued" : false,
              "reportsDropped" : 0,
              "reportsSent" : 0,
              "trust" : {
                "chain" : [
                  {
                    "pin" : "sha256/<pin>",
                    "subject" : "CN=cli.servertrust.test"
                  },
                  {
                    "pin" : "sha256/<pin>",
                    "subject" : "CN=CLI Test Intermediate"
                  },
                  {
                    "pin" : "sha256/<pin>",
                    "subject" : "CN=CLI Test Root"
                  }
                ],
                "code" : "pinMismatch",
                "configuredPins" : [
                  "sha256/<pin>"
                ],
                "evaluator" : "PinSetTrustEvaluator",
                "host" : "cli.servertrust.test",
                "reason" : "No certificate of the validated chain (3 certificates) matches a configured pin. If this server is genuine, pin one of the peer keys listed below (servertrust fetch --pin sha256/…).",
                "trusted" : false
              },
              "trustFailures" : [
                {
                  "evaluator" : "PinSetTrustEvaluator",
                  "message" : "No certificate of the validated chain (3 certificates) matches a configured pin. If this server is genuine, pin one of the peer keys listed below (servertrust fetch --pin sha256/…).",
                  "mode" : "enforced",
                  "reason" : "pinMismatch",
                  "report" : "noReportURI",
                  "reportQueued" : false,
                  "url" : "https://cli.servertrust.test:<port>/"
                }
              ],
              "trustResult" : {
                "code" : "pinMismatch",
                "evaluator" : "PinSetTrustEvaluator",
                "reason" : "No certificate of the validated chain (3 certificates) matches a configured pin. If this server is genuine, pin one of the peer keys listed below (servertrust fetch --pin sha256/…).",
                "result" : "failed"
              }
            }

            """, literals: fixture.literals)
    }

    @Test func keysJSON() throws {
        let folder = try KeysCommandTests.KeyFolder()
        let root = CommandRunner.run(["keys", "create-root", "--out", folder.path("root.pem"), "--json"])
        #expect(root.status == 0, "\(root)")
        expectGolden(root.standardOutput, """
            {
              "file" : "<root>",
              "keyID" : "<keyID>",
              "publicKey" : "<publicKey>"
            }

            """, literals: placeholders(root.standardOutput, ["publicKey", "keyID"], [folder.path("root.pem"): "<root>"]))

        let expiry = Date(timeIntervalSinceNow: 30 * 86_400).formatted(Date.ISO8601FormatStyle())
        let intermediate = CommandRunner.run(
            ["keys", "issue-intermediate", "--root", folder.path("root.pem"), "--expires", expiry, "--out", folder.path("i.pem"), "--json"])
        #expect(intermediate.status == 0, "\(intermediate)")
        expectGolden(
            intermediate.standardOutput, """
            {
              "certificate" : "<certificate>",
              "expires" : "<date>",
              "file" : "<file>",
              "intermediateKey" : "<intermediateKey>",
              "rootKeyID" : "<rootKeyID>"
            }

            """,
            literals: placeholders(intermediate.standardOutput, ["intermediateKey", "rootKeyID", "certificate"], [folder.path("i.pem"): "<file>"]))

        let rootPublic = CommandRunner.run(["keys", "root-public", "--root", folder.path("root.pem"), "--json"])
        #expect(rootPublic.status == 0, "\(rootPublic)")
        expectGolden(rootPublic.standardOutput, """
            {
              "keyID" : "<keyID>",
              "publicKey" : "<publicKey>",
              "subjectPublicKeyInfo" : "<subjectPublicKeyInfo>",
              "version" : 1
            }

            """, literals: placeholders(rootPublic.standardOutput, ["publicKey", "keyID", "subjectPublicKeyInfo"]))
    }

    @Test func generateJSON() throws {
        let certificates = PackageFiles.root.appendingPathComponent("Certificates").path
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("OfflineJSONSchema-\(UUID().uuidString).swift").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = CommandRunner.run(["generate", certificates, "-o", out, "--json"])
        #expect(result.status == 0, "\(result)")
        expectGolden(result.standardOutput, """
            {
              "certificates" : [
                {
                  "derConstant" : "sampleBackupDER",
                  "file" : "sample-backup.pem",
                  "name" : "sampleBackup",
                  "notAfter" : "<date>",
                  "pin" : "sha256/<pin>",
                  "pinConstant" : "sampleBackupPin",
                  "subject" : "CN=ServerTrust Sample Backup Key,O=ServerTrust Samples"
                },
                {
                  "derConstant" : "sampleIntermediateDER",
                  "file" : "sample-intermediate.pem",
                  "name" : "sampleIntermediate",
                  "notAfter" : "<date>",
                  "pin" : "sha256/<pin>",
                  "pinConstant" : "sampleIntermediatePin",
                  "subject" : "CN=ServerTrust Sample Intermediate,O=ServerTrust Samples"
                },
                {
                  "derConstant" : "sampleLeafDER",
                  "file" : "sample-leaf.pem",
                  "name" : "sampleLeaf",
                  "notAfter" : "<date>",
                  "pin" : "sha256/<pin>",
                  "pinConstant" : "sampleLeafPin",
                  "subject" : "CN=demo.servertrust.test"
                },
                {
                  "derConstant" : "sampleRootDER",
                  "file" : "sample-root.pem",
                  "name" : "sampleRoot",
                  "notAfter" : "<date>",
                  "pin" : "sha256/<pin>",
                  "pinConstant" : "sampleRootPin",
                  "subject" : "CN=ServerTrust Sample Root,O=ServerTrust Samples"
                }
              ],
              "directory" : "<certificates>",
              "output" : "<out>",
              "tufRoots" : [

              ],
              "typeName" : "Certificates"
            }

            """, literals: [out: "<out>", certificates: "<certificates>"])
    }

    @Test func demoJSON() throws {
        let result = CommandRunner.run(["demo", "--json"])
        #expect(result.status == 0, "\(result)")
        expectGolden(result.standardOutput, """
            {
              "allAsExpected" : true,
              "anchors" : [
                "CN=Demo Genuine Root CA",
                "CN=Demo Inspection Proxy CA"
              ],
              "compiledCertificates" : [
                {
                  "file" : "sample-backup.pem",
                  "pin" : "sha256/<pin>",
                  "subject" : "CN=ServerTrust Sample Backup Key,O=ServerTrust Samples"
                },
                {
                  "file" : "sample-intermediate.pem",
                  "pin" : "sha256/<pin>",
                  "subject" : "CN=ServerTrust Sample Intermediate,O=ServerTrust Samples"
                },
                {
                  "file" : "sample-leaf.pem",
                  "pin" : "sha256/<pin>",
                  "subject" : "CN=demo.servertrust.test"
                },
                {
                  "file" : "sample-root.pem",
                  "pin" : "sha256/<pin>",
                  "subject" : "CN=ServerTrust Sample Root,O=ServerTrust Samples"
                }
              ],
              "host" : "demo.servertrust.test",
              "pins" : {
                "backup" : "sha256/<pin>",
                "current" : "sha256/<pin>"
              },
              "purchases" : [
                {
                  "asExpected" : true,
                  "purchase" : "genuine signed transaction",
                  "reason" : "transaction 2000000000000001 of com.example.app.gems.100, signed by the lab's Apple-like chain",
                  "verdict" : "verified"
                },
                {
                  "asExpected" : true,
                  "code" : "untrustedRoot",
                  "expectedCode" : "untrustedRoot",
                  "purchase" : "look-alike root in x5c",
                  "reason" : "untrustedRoot: The x5c root (CN=Demo Apple Root CA - G3,O=Apple Inc., sha256/<pin>) is not one of the configured roots.",
                  "verdict" : "refused"
                },
                {
                  "asExpected" : true,
                  "code" : "invalidSignature",
                  "expectedCode" : "invalidSignature",
                  "purchase" : "tampered payload",
                  "reason" : "invalidSignature: The signature is not the leaf's over the signed transaction.",
                  "verdict" : "refused"
                },
                {
                  "asExpected" : true,
                  "code" : "wrongChainLength",
                  "expectedCode" : "wrongChainLength",
                  "purchase" : "Xcode-signed transaction",
                  "reason" : "wrongChainLength: The x5c chain has 1 certificates; App Store signed data carries 3 (leaf, intermediate, root).",
                  "verdict" : "refused"
                },
                {
                  "asExpected" : true,
                  "purchase" : "genuine receipt",
                  "reason" : "receipt of com.example.app with 1 in-app purchase, signed by the lab's Apple-like RSA chain",
                  "verdict" : "verified"
                },
                {
                  "asExpected" : true,
                  "code" : "invalidSignature",
                  "expectedCode" : "invalidSignature",
                  "purchase" : "receipt with altered content",
                  "reason" : "invalidSignature: The signature is not the signer certificate's (CN=Lab Mac App Store and iTunes Store Receipt Signing,O=Apple Inc.) RSA PKCS#1 v1.5 SHA-256 signature over the receipt.",
                  "verdict" : "refused"
                },
                {
                  "asExpected" : true,
                  "purchase" : "claimed by alice",
                  "reason" : "granted to alice: transaction 2000000000000001, on disk before the answer",
                  "verdict" : "granted"
                },
                {
                  "asExpected" : true,
                  "purchase" : "claimed again by alice (lost answer)",
                  "reason" : "the same grant back to alice (granted <date>): nothing granted twice",
                  "verdict" : "granted"
                },
                {
                  "asExpected" : true,
                  "code" : "replay",
                  "expectedCode" : "replay",
                  "purchase" : "claimed by mallory",
                  "reason" : "replay: Transaction 2000000000000001 is granted to another account, alice, since <date>: refused as a replay.",
                  "verdict" : "refused"
                },
                {
                  "asExpected" : true,
                  "purchase" : "refund notification",
                  "reason" : "the grant to alice revoked: the refund ends it",
                  "verdict" : "applied"
                },
                {
                  "asExpected" : true,
                  "code" : "revoked",
                  "expectedCode" : "revoked",
                  "purchase" : "claimed by alice after the refund",
                  "reason" : "revoked: Transaction 2000000000000001 was granted, then revoked at <date>.",
                  "verdict" : "refused"
                }
              ],
              "rows" : [
                {
                  "asExpected" : true,
                  "evaluator" : "pinned + CRL",
                  "expected" : "accepted",
                  "reason" : "pin matched: current key (CN=demo.servertrust.test)",
                  "server" : "genuine",
                  "verdict" : "accepted"
                },
                {
                  "asExpected" : true,
                  "evaluator" : "default only",
                  "expected" : "accepted",
                  "reason" : "chain validates to CN=Demo Inspection Proxy CA: without a pin, the impostor gets in",
                  "server" : "impostor (proxy CA)",
                  "verdict" : "accepted"
                },
                {
                  "asExpected" : true,
                  "code" : "pinMismatch",
                  "evaluator" : "pinned + CRL",
                  "expected" : "rejected",
                  "expectedCode" : "pinMismatch",
                  "reason" : "pinMismatch: No certificate of the validated chain (2 certificates) matches a configured pin.",
                  "server" : "impostor (proxy CA)",
                  "verdict" : "rejected"
                },
                {
                  "asExpected" : true,
                  "code" : "revoked",
                  "evaluator" : "pinned + CRL",
                  "expected" : "rejected",
                  "expectedCode" : "revoked",
                  "reason" : "revoked: CN=demo.servertrust.test (depth 0, serial <serial>) is revoked since <date>, reason superseded, according to the local CRL.",
                  "server" : "revoked certificate",
                  "verdict" : "rejected"
                },
                {
                  "asExpected" : true,
                  "evaluator" : "pinned + CRL",
                  "expected" : "accepted",
                  "reason" : "pin matched: backup key (CN=demo.servertrust.test)",
                  "server" : "rotated to backup key",
                  "verdict" : "accepted"
                },
                {
                  "asExpected" : true,
                  "code" : "pinMismatch",
                  "evaluator" : "pinned + CRL",
                  "expected" : "rejected",
                  "expectedCode" : "pinMismatch",
                  "reason" : "pinMismatch: No certificate of the validated chain (3 certificates) matches a configured pin.",
                  "server" : "rotated to unpinned key",
                  "verdict" : "rejected"
                },
                {
                  "asExpected" : true,
                  "evaluator" : "compiled pins",
                  "expected" : "accepted",
                  "reason" : "pin matched: compiled sampleIntermediatePin (CN=ServerTrust Sample Intermediate,O=ServerTrust Samples)",
                  "server" : "sample chain (compiled in)",
                  "verdict" : "accepted"
                }
              ]
            }

            """)
    }
}
