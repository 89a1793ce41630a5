import Foundation
import Testing
import ServerTrust
import ServerTrustTestSupport

/// Third review, finding 1: the host check belongs to the policy
/// (`ServerTrustEvaluating.evaluateAsPolicy`), not to the evaluator a user picked.
@Suite struct EvaluateAsPolicyTests {
    /// A custom evaluator that trusts every server.
    struct AcceptsEverything: ServerTrustEvaluating {
        func evaluate(_ trust: PeerTrust, forHost host: String) throws {}
    }

    /// A certificate from the trusted CA for another domain: each evaluator accepts it alone, the
    /// policy refuses it with the evaluators' host-check code.
    @Test func thePolicyRefusesACertificateForAnotherHostThatTheEvaluatorAccepts() throws {
        let site = try SitePKI(host: "evil.example.com")
        let evaluators: [any ServerTrustEvaluating] = [
            RevocationTrustEvaluator(options: .softFail, cache: RevocationCache()),
            CanaryTrustEvaluator(enforced: RevocationTrustEvaluator(options: .softFail, cache: RevocationCache()), trial: DefaultTrustEvaluator()),
            AcceptsEverything(),
        ]
        for evaluator in evaluators {
            try evaluator.evaluate(try site.trust(), forHost: SitePKI.host)
            let error = #expect(throws: TrustError.self, "\(evaluator.name)") {
                try evaluator.evaluateAsPolicy(try site.trust(), forHost: SitePKI.host)
            }
            #expect(error?.code == .hostMismatch, "\(evaluator.name)")
            #expect(error?.host == SitePKI.host)
            #expect(error?.evaluator == evaluator.name)
        }
    }

    @Test func thePolicyAcceptsTheLeafOfTheHost() throws {
        let site = try SitePKI()
        try RevocationTrustEvaluator(options: .softFail, cache: RevocationCache()).evaluateAsPolicy(try site.trust(), forHost: SitePKI.host)
        try AcceptsEverything().evaluateAsPolicy(try site.trust(), forHost: SitePKI.host)
    }

    /// An evaluator's own failure comes first: the policy adds its check only to an acceptance.
    @Test func theEvaluatorsOwnFailureIsTheOneThrown() throws {
        let site = try SitePKI(host: "evil.example.com")
        let other = try SitePKI(rootName: "Other Root", host: "evil.example.com")
        let error = #expect(throws: TrustError.self) {
            try PinnedKeyHashesTrustEvaluator(pins: [other.leaf.certificate.spkiPin]).evaluateAsPolicy(try site.trust(), forHost: SitePKI.host)
        }
        #expect(error?.code == .pinMismatch)
    }

    @Test func anAcceptingCustomEvaluatorWithNoCertificateIsRefused() throws {
        let trust = PeerTrust(presentedChain: [], anchors: try TrustAnchors([try SitePKI().root.certificate]))
        #expect(throws: TrustError.noCertificates) { try AcceptsEverything().evaluateAsPolicy(trust, forHost: SitePKI.host) }
    }

    /// The one exception: an active `DisabledTrustEvaluator`, which checks nothing by design.
    /// An inactive one refuses before any host check.
    @Test func onlyAnActiveDisabledEvaluatorSkipsTheHostCheck() throws {
        let site = try SitePKI(host: "evil.example.com")
        try DisabledTrustEvaluator(unsafeAcceptAnyCertificateInReleaseBuilds: true).evaluateAsPolicy(try site.trust(), forHost: SitePKI.host)
        #expect(throws: TrustError.invalidConfiguration) {
            try DisabledTrustEvaluator().evaluateAsPolicy(try site.trust(), forHost: SitePKI.host)
        }
    }
}
