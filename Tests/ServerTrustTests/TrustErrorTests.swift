import COpenSSL
import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

@Suite struct TrustErrorTests {
    @Test func errorsAreEqualWhenTheirCodesAre() {
        let a = TrustError(.pinMismatch, "one reason", evaluator: "A", host: "a.example")
        let b = TrustError(.pinMismatch, "another reason", evaluator: "B", host: "b.example")
        let c = TrustError(.hostMismatch, "one reason", evaluator: "A", host: "a.example")
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != c)
        #expect(a == TrustError.pinMismatch)
    }

    @Test func codesDescribeThemselves() {
        #expect(TrustError.Code.pinMismatch.description == "pinMismatch")
        #expect(TrustError.Code.chainValidationFailed.description == "chainValidationFailed")
        #expect(TrustError.pinMismatch.code == .pinMismatch)
    }

    @Test func thePinMismatchDescriptionListsConfiguredPinsAndEveryChainCertificateWithItsPin() throws {
        let site = try SitePKI()
        let configured = [LabKey.ecP256().pin, LabKey.ecP256().pin].sorted()
        let error = #expect(throws: TrustError.pinMismatch) {
            try PinnedKeyHashesTrustEvaluator(pins: configured).evaluate(site.trust(), forHost: SitePKI.host)
        }
        let chain = [site.leaf.certificate, site.intermediate.certificate, site.root.certificate]
        let expected = "PinnedKeyHashesTrustEvaluator: " + (error?.reason ?? "") + " (host \"api.example.com\")"
            + "\n  Configured pins:\n    \(configured[0])\n    \(configured[1])"
            + "\n  Peer certificate chain:"
            + chain.map { "\n    sha256/\($0.spkiPin.base64): \($0.subject)" }.joined()
        #expect(error?.description == expected)
        #expect(error?.reason.contains("validated chain (3 certificates)") == true)
    }

    @Test func aChainFailureDescriptionGivesOpenSSLsErrorNumberTextAndDepth() throws {
        let root = try LabPKI.makeRoot()
        let leaf = try root.issueLeaf(dnsNames: ["api.example.com"], notBefore: .days(-30), notAfter: .days(-1))
        let error = #expect(throws: TrustError.chainValidationFailed) {
            try DefaultTrustEvaluator().evaluate(leaf.serverTrust(), forHost: "api.example.com")
        }
        #expect(error?.description.hasPrefix("DefaultTrustEvaluator: Certificate chain validation failed: certificate has expired") == true)
        #expect(error?.description.contains("\n  OpenSSL verify error \(X509_V_ERR_CERT_HAS_EXPIRED) (certificate has expired) at depth 0") == true)
        #expect(error?.description.contains("\n  Chain:\n    \(leaf.certificate.spkiPin): CN=api.example.com") == true)
    }

    @Test func theHostIsAddedWhenTheReasonDoesNotNameIt() {
        #expect(TrustError(.revoked, "Revoked.", host: "a.example").description == "Revoked. (host \"a.example\")")
        #expect(TrustError(.revoked, "Revoked.", host: "").description == "Revoked.")
        #expect(TrustError(.revoked, "a.example is revoked.", host: "a.example").description == "a.example is revoked.")
    }

    @Test func aCertificateSummaryIsPinThenSubject() throws {
        let pin = LabKey.ecP256().pin
        #expect(TrustError.CertificateSummary(pin: pin, subject: "CN=x").description == "\(pin): CN=x")
    }

    @Test func errorsRecordWhereTheyWereThrown() {
        let error = TrustError(.openSSLFailure, "x")
        #expect(error.file == "ServerTrustTests/TrustErrorTests.swift")
        #expect(error.line == #line - 2)
    }
}
