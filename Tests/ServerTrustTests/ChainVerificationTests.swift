import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// ``ChainVerification``: the offline verdict is the evaluators' — the staple judged by a
/// ``RevocationTrustEvaluator`` composed after the chain check — and the report says which
/// evaluator decided, with which status.
@Suite struct ChainVerificationTests {
    let pki: RevocationPKI

    init() throws { pki = try RevocationPKI() }

    private func verification(staple: ChainVerification.StapleCheck?, pins: [Pin] = []) throws -> ChainVerification {
        ChainVerification(
            presentedChain: pki.leaf.chain, anchors: try TrustAnchors([pki.root.certificate]), pins: pins, staple: staple)
    }

    @Test func withoutAStapleCheckTheDefaultEvaluatorAcceptsAndRevocationIsNotRequested() throws {
        let report = try verification(staple: nil).verify(host: RevocationPKI.host)
        #expect(report.trusted)
        #expect(report.evaluator == "DefaultTrustEvaluator")
        #expect(report.validatedChain.map(\.subject) == [pki.leaf.certificate, pki.ca.certificate, pki.root.certificate].map(\.subject))
        #expect(report.revocation.status == "notChecked")
        #expect(report.revocation.reason == "notRequested")
    }

    @Test func aGoodStapleIsReportedWithItsDates() throws {
        let thisUpdate = Date(timeIntervalSinceNow: -3600).rounded
        let staple = try pki.leafOCSP(.good, thisUpdate: thisUpdate, nextUpdate: .days(1))
        let report = try verification(staple: .init(response: staple, required: true)).verify(host: RevocationPKI.host)
        #expect(report.trusted, "\(String(describing: report.failure))")
        #expect(report.evaluator == "DefaultTrustEvaluator")
        #expect(report.revocation.status == "good")
        #expect(report.revocation.thisUpdate == thisUpdate)
        #expect(report.revocation.nextUpdate != nil)
    }

    @Test func aRevokedStapleIsRejectedByTheRevocationEvaluatorEvenWhenNotRequired() throws {
        let revokedAt = Date(timeIntervalSinceNow: -7200).rounded
        let staple = try pki.leafOCSP(.revoked(reason: .keyCompromise, date: revokedAt))
        let report = try verification(staple: .init(response: staple, required: false)).verify(host: RevocationPKI.host)
        #expect(report.failure?.code == .revoked)
        #expect(report.evaluator == "RevocationTrustEvaluator")
        #expect(report.revocation.status == "revoked")
        #expect(report.revocation.reason == "keyCompromise")
        #expect(report.revocation.revokedAt == revokedAt)
    }

    @Test func anUnreadableStapleIsAcceptedAsUnknownUnlessRequired() throws {
        let garbage: [UInt8] = [0x30, 0x03, 0x02, 0x01, 0x00]
        let soft = try verification(staple: .init(response: garbage, required: false)).verify(host: RevocationPKI.host)
        #expect(soft.trusted)
        #expect(soft.revocation.status == "unknown")
        #expect(soft.revocation.reason == "malformed")
        let hard = try verification(staple: .init(response: garbage, required: true)).verify(host: RevocationPKI.host)
        #expect(hard.failure?.code == .revocationStatusUnknown)
        #expect(hard.evaluator == "RevocationTrustEvaluator")
        #expect(hard.revocation.reason == "malformed")
    }

    @Test func aMustStapleLeafWithoutAValidStapleIsRejectedEvenWhenNotRequired() throws {
        let mustStaple = try RevocationPKI(mustStaple: true)
        let verification = ChainVerification(
            presentedChain: mustStaple.leaf.chain, anchors: try TrustAnchors([mustStaple.root.certificate]),
            staple: try .init(response: nil, required: false))
        let report = verification.verify(host: RevocationPKI.host)
        #expect(report.failure?.code == .revocationStatusUnknown)
        #expect(report.failure?.reason.contains("must-staple") == true)
        #expect(report.revocation.status == "unknown")
    }

    @Test func aStapleIsNotCheckedForAChainThePinsReject() throws {
        let staple = try pki.leafOCSP(.revoked(reason: .keyCompromise, date: .days(-1)))
        let otherKey = try LabPKI.makeRoot(commonName: "Unrelated").certificate.spkiPin
        let report = try verification(staple: .init(response: staple, required: true), pins: [otherKey]).verify(host: RevocationPKI.host)
        #expect(report.failure?.code == .pinMismatch)
        #expect(report.evaluator == "PinnedKeyHashesTrustEvaluator")
        #expect(report.revocation.status == "notChecked")
        #expect(report.revocation.reason == "chainValidationFailed")
    }

    @Test func aMaximumAgeThatIsNotPositiveIsAConfigurationError() {
        #expect(throws: TrustError.invalidConfiguration) { try ChainVerification.StapleCheck(response: nil, required: false, maximumAge: 0) }
    }

    @Test func theReportEncodesTheVerifyJSONSchema() throws {
        let report = try verification(staple: nil).verify(host: "other.example.com")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let object = try #require(try JSONSerialization.jsonObject(with: encoder.encode(report)) as? [String: Any])
        #expect(object.keys.sorted() == ["error", "evaluator", "host", "revocation", "trusted", "validatedChain"])
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["code"] as? String == "hostMismatch")
        #expect(object["trusted"] as? Bool == false)
    }
}

extension Date {
    /// Whole seconds, as DER times carry them.
    fileprivate var rounded: Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}
