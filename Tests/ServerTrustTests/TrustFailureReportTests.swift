import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

@Suite struct TrustFailureReportTests {
    /// The bytes a report collector receives: RFC 7469's keys sorted, slashes and non-ASCII
    /// written as they are, strings escaped as JSON requires, `null` for no expiration date.
    @Test func theJSONIsTheRFC7469ObjectWithSortedKeysAndNullForNoExpirationDate() throws {
        let leaf = try LabPKI.makeRoot().issueLeaf(dnsNames: ["api.example.com"])
        let pin = try Pin("sha256/////AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        let report = TrustFailureReport(
            dateTime: Date(timeIntervalSince1970: 1_795_424_400), hostname: "api.example.com", port: 443,
            effectiveExpirationDate: nil, includeSubdomains: false, notedHostname: "example.com",
            servedCertificateChain: [leaf.certificate], validatedCertificateChain: [], knownPins: [pin],
            evaluator: "PinSetTrustEvaluator", reason: .pinMismatch, message: "No pin matched \"é\" /\tthere.", mode: .enforced)
        let pem = leaf.certificate.pemEncoded.replacingOccurrences(of: "\n", with: "\\n")
        let expected = #"{"date-time":"2026-11-23T09:00:00Z","effective-expiration-date":null,"evaluator":"PinSetTrustEvaluator","#
            + #""hostname":"api.example.com","include-subdomains":false,"#
            + #""known-pins":["pin-sha256=\"////AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\""],"#
            + #""message":"No pin matched \"é\" /\tthere.","mode":"enforced","noted-hostname":"example.com","port":443,"#
            + #""reason":"pinMismatch","served-certificate-chain":[""# + pem + #""],"validated-certificate-chain":[]}"#
        #expect(String(decoding: report.jsonData(), as: UTF8.self) == expected)
    }

    @Test func anExpirationDateIsWrittenAsRFC3339() throws {
        let report = TrustFailureReport(
            dateTime: Date(timeIntervalSince1970: 0), hostname: "a.test", port: 8443,
            effectiveExpirationDate: Date(timeIntervalSince1970: 1_811_808_000), includeSubdomains: true, notedHostname: "a.test",
            servedCertificateChain: [], validatedCertificateChain: [], knownPins: [], evaluator: "E", reason: .pinMismatch,
            message: "m", mode: .informational)
        let object = try JSONSerialization.jsonObject(with: report.jsonData()) as? [String: Any]
        #expect(object?["effective-expiration-date"] as? String == "2027-06-01T00:00:00Z")
        #expect(object?["include-subdomains"] as? Bool == true)
        #expect(object?["port"] as? Int == 8443)
    }
}
