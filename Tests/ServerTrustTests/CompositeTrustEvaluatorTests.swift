import Foundation
import ServerTrust
import ServerTrustTestSupport
import Synchronization
import Testing

/// Records that it ran; throws `failure` if given.
private final class Probe: ServerTrustEvaluating {
    let runs = Atomic<Int>(0)
    let failure: TrustError?

    init(failing failure: TrustError? = nil) { self.failure = failure }

    func evaluate(_ trust: PeerTrust, forHost host: String) throws {
        runs.add(1, ordering: .relaxed)
        if let failure { throw failure }
    }
}

@Suite struct CompositeTrustEvaluatorTests {
    let site: SitePKI

    init() throws { site = try SitePKI() }

    @Test func aTrustPassingEveryEvaluatorIsAccepted() throws {
        let first = Probe()
        let last = Probe()
        let composite = try CompositeTrustEvaluator([
            first, DefaultTrustEvaluator(), PinnedKeyHashesTrustEvaluator(pins: [site.intermediate.key.pin]), last,
        ])
        try composite.evaluate(site.trust(), forHost: SitePKI.host)
        #expect(first.runs.load(ordering: .relaxed) == 1)
        #expect(last.runs.load(ordering: .relaxed) == 1)
    }

    @Test func theFirstFailureIsThrownNamingItsEvaluatorAndLaterOnesDoNotRun() throws {
        let later = Probe()
        let composite = try CompositeTrustEvaluator([
            Probe(),
            PinnedKeyHashesTrustEvaluator(pins: [LabKey.ecP256().pin]),
            DefaultTrustEvaluator(),  // would fail too: the host is wrong
            later,
        ])
        let error = #expect(throws: TrustError.pinMismatch) { try composite.evaluate(site.trust(), forHost: "www.example.com") }
        #expect(error?.evaluator == "PinnedKeyHashesTrustEvaluator")
        #expect(error?.host == "www.example.com")
        #expect(later.runs.load(ordering: .relaxed) == 0)
    }

    @Test func anErrorWithoutAnEvaluatorIsAttributedToTheEvaluatorThatThrewIt() throws {
        let composite = try CompositeTrustEvaluator([Probe(), Probe(failing: TrustError(.revoked, "revoked for the test"))])
        let error = #expect(throws: TrustError.revoked) { try composite.evaluate(site.trust(), forHost: SitePKI.host) }
        #expect(error?.evaluator == "Probe")
        #expect(error?.reason == "revoked for the test")
    }

    @Test func anEmptyCompositeIsAnInvalidConfiguration() {
        let error = #expect(throws: TrustError.invalidConfiguration) { try CompositeTrustEvaluator([]) }
        #expect(error?.evaluator == "CompositeTrustEvaluator")
        #expect(throws: TrustError.invalidConfiguration) { try CompositeTrustEvaluator.composite([]) }
    }

    @Test func theNameListsTheEvaluatorsInOrder() throws {
        let composite = try CompositeTrustEvaluator.composite([
            DefaultTrustEvaluator(), PinnedKeyHashesTrustEvaluator(pins: [site.root.key.pin]),
        ])
        #expect(composite.name == "CompositeTrustEvaluator(DefaultTrustEvaluator, PinnedKeyHashesTrustEvaluator)")
        #expect(composite.evaluators.count == 2)
    }
}
