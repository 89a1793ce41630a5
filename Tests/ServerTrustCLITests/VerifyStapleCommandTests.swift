import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// `verify --ocsp-response/--require-ocsp`: the staple judged by the library's revocation
/// evaluator, with `verify`'s exit codes, messages and JSON.
@Suite final class VerifyStapleCommandTests {
    let root: LabCA
    let intermediate: LabCA
    let leaf: LabLeaf
    let chainFile: String
    let rootFile: String
    /// Whole seconds, so `--time` and the response's dates are exact.
    let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))

    init() throws {
        root = try LabPKI.makeRoot(commonName: "Staple Root")
        intermediate = try root.issueIntermediate(commonName: "Staple Intermediate")
        leaf = try intermediate.issueLeaf(dnsNames: ["staple.servertrust.test"])
        chainFile = try LabPKI.writeTemporaryFile(leaf.chain.map(\.pemEncoded).joined(), name: "chain.pem")
        rootFile = try LabPKI.writeTemporaryFile(root.certificate.pemEncoded, name: "root.pem")
    }

    deinit {
        LabPKI.removeTemporaryFile(chainFile)
        LabPKI.removeTemporaryFile(rootFile)
    }

    private func verify(staple: OCSPResponseBuilder.CertificateStatus?, _ extra: [String]) throws -> CommandResult {
        var arguments = [
            "verify", "--chain", chainFile, "--roots", rootFile, "--host", "staple.servertrust.test",
            "--time", JSONTextDate.format(now),
        ]
        var files: [String] = []
        if let staple {
            let response = try intermediate.makeOCSPResponseDER(
                staple, for: leaf.certificate, thisUpdate: now.addingTimeInterval(-3600), nextUpdate: now.addingTimeInterval(86_400))
            let file = try LabPKI.writeTemporaryFile(response, name: "leaf.ocsp")
            files.append(file)
            arguments += ["--ocsp-response", file]
        }
        defer { files.forEach(LabPKI.removeTemporaryFile) }
        return CommandRunner.run(arguments + extra)
    }

    @Test func aGoodStapleIsTrustedAndPrintedWithTheRevocationLine() throws {
        let result = try verify(staple: .good, ["--require-ocsp"])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput.hasPrefix("trusted: DefaultTrustEvaluator accepted 3-certificate chain ending at CN=Staple Root\nrevocation: good: "), "\(result)")
    }

    @Test func aRevokedStapleIsRejectedByTheRevocationEvaluator() throws {
        let result = try verify(staple: .revoked(reason: .keyCompromise, date: now.addingTimeInterval(-7200)), [])
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.hasPrefix("rejected: RevocationTrustEvaluator: CN=staple.servertrust.test (depth 0, serial "), "\(result)")
        #expect(result.standardError.contains("reason keyCompromise, according to the stapled OCSP"), "\(result)")
    }

    @Test func withoutAStapleRequireOCSPRejectsAndWithoutItNothingIsChecked() throws {
        let required = try verify(staple: nil, ["--require-ocsp"])
        #expect(required.status == 1, "\(required)")
        #expect(required.standardError.contains("(hard-fail)"), "\(required)")
        let plain = try verify(staple: nil, [])
        #expect(plain.status == 0, "\(plain)")
        #expect(!plain.standardOutput.contains("revocation:"), "\(plain)")
    }

    @Test func anUnknownStapleIsAcceptedWithAWarningUnlessRequired() throws {
        let soft = try verify(staple: .unknown, [])
        #expect(soft.status == 0, "\(soft)")
        #expect(soft.standardError.hasPrefix("warning: revocation status UNKNOWN ("), "\(soft)")
        #expect(soft.standardError.hasSuffix("Accepted because --require-ocsp is not set.\n"), "\(soft)")
        #expect(try verify(staple: .unknown, ["--require-ocsp"]).status == 1)
    }

    @Test func aNonPositiveMaximumAgeIsAUsageError() throws {
        let result = try verify(staple: .good, ["--ocsp-max-age", "0"])
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError == "error: --ocsp-max-age must be a positive number of seconds, not 0.\n", "\(result)")
    }

    /// The schema of `verify --json` (``ChainVerification/Report``), for a revoked staple.
    @Test func theJSONOfARejectionIsGolden() throws {
        let result = try verify(staple: .revoked(reason: .keyCompromise, date: now.addingTimeInterval(-7200)), ["--json"])
        #expect(result.status == 1, "\(result)")
        expectGolden(result.standardOutput, """
            {
              "error" : {
                "chain" : [
                  {
                    "pin" : "sha256/<pin>",
                    "subject" : "CN=staple.servertrust.test"
                  },
                  {
                    "pin" : "sha256/<pin>",
                    "subject" : "CN=Staple Intermediate"
                  },
                  {
                    "pin" : "sha256/<pin>",
                    "subject" : "CN=Staple Root"
                  }
                ],
                "code" : "revoked",
                "message" : "RevocationTrustEvaluator: CN=staple.servertrust.test (depth 0, serial <serial>) is revoked since <date>, reason keyCompromise, according to the stapled OCSP. <explanation>\\n  Chain:\\n    sha256/<pin>: CN=staple.servertrust.test\\n    sha256/<pin>: CN=Staple Intermediate\\n    sha256/<pin>: CN=Staple Root\\n  Revocation:\\n    CN=staple.servertrust.test: revoked (keyCompromise) at <date> from stapled OCSP: <explanation>",
                "reason" : "CN=staple.servertrust.test (depth 0, serial <serial>) is revoked since <date>, reason keyCompromise, according to the stapled OCSP. <explanation>"
              },
              "evaluator" : "RevocationTrustEvaluator",
              "host" : "staple.servertrust.test",
              "revocation" : {
                "explanation" : "<explanation>",
                "nextUpdate" : "<date>",
                "reason" : "keyCompromise",
                "revokedAt" : "<date>",
                "status" : "revoked",
                "thisUpdate" : "<date>"
              },
              "trusted" : false,
              "validatedChain" : [
                {
                  "pin" : "sha256/<pin>",
                  "subject" : "CN=staple.servertrust.test"
                },
                {
                  "pin" : "sha256/<pin>",
                  "subject" : "CN=Staple Intermediate"
                },
                {
                  "pin" : "sha256/<pin>",
                  "subject" : "CN=Staple Root"
                }
              ]
            }

            """, literals: [explanation(result.standardOutput): "<explanation>"])
    }

    /// The OCSP verifier's own explanation (dates and signer), which `GoldenText` leaves alone.
    private func explanation(_ json: String) -> String {
        let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        return (object?["revocation"] as? [String: Any])?["explanation"] as? String ?? "<none>"
    }
}
