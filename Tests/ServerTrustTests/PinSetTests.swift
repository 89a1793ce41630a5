import Foundation
import Testing
import ServerTrust
import ServerTrustTestSupport

/// Pin sets: construction rules, expiry at an injected time, warnings, backup detection.
@Suite struct PinSetTests {
    static var spare: Pin { get throws { try Pin("sha256/" + Data(repeating: 9, count: 32).base64EncodedString()) } }
    static var other: Pin { get throws { try Pin("sha256/" + Data(repeating: 8, count: 32).base64EncodedString()) } }

    @Test func anEnforcingSetNeedsTwoPinsByDefaultAndSaysHowToTrialOne() throws {
        let error = #expect(throws: TrustError.invalidConfiguration) {
            try PinSet([.init(Self.spare, label: "only")])
        }
        #expect(error?.reason.contains("at least 2 pins") == true)
        #expect(error?.reason.contains("minimumPinCount: 1") == true)
        let single = try PinSet([.init(Self.spare, label: "only")], minimumPinCount: 1)
        #expect(single.entries.count == 1)
    }

    @Test func aRepeatedPinDoesNotCountAsABackup() {
        let error = #expect(throws: TrustError.invalidConfiguration) {
            try PinSet([.init(Self.spare, label: "a"), .init(Self.spare, label: "b")])
        }
        #expect(error?.reason.contains("appears twice") == true)
    }

    @Test func aSetExpiresAtItsDateOrWhenItsLastPinExpires() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let dated = try PinSet(
            [.init(Self.spare, label: "a", notAfter: start + 10 * 86_400), .init(Self.other, label: "b", notAfter: start + 20 * 86_400)])
        #expect(!dated.isExpired(at: start))
        #expect(dated.activeEntries(at: start + 15 * 86_400).map(\.label) == ["b"])
        #expect(!dated.isExpired(at: start + 20 * 86_400))
        #expect(dated.isExpired(at: start + 20 * 86_400 + 1))
        #expect(dated.effectiveExpiration == start + 20 * 86_400)

        let setDate = try PinSet([.init(Self.spare, label: "a"), .init(Self.other, label: "b")], expiration: start)
        #expect(!setDate.isExpired(at: start))
        #expect(setDate.isExpired(at: start + 1))
        #expect(setDate.effectiveExpiration == start)
    }

    @Test func noticesCoverPinsAndTheSetInsideTheWarningWindowOnly() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let set = try PinSet(
            [.init(Self.spare, label: "soon", notAfter: now + 5.5 * 86_400), .init(Self.other, label: "later", notAfter: now + 90 * 86_400)],
            expiration: now + 29 * 86_400, warningDays: 30)
        let notices = set.expiryNotices(at: now)
        #expect(notices.map { $0.entry?.label ?? "set" } == ["soon", "set"])
        #expect(notices.map(\.daysRemaining) == [5, 29])
        #expect(try PinSet(set.entries, expiration: set.expiration, warningDays: 3).expiryNotices(at: now).isEmpty)
    }
}

/// The pin-set evaluator at injected times, with a captured log.
@Suite struct PinSetTrustEvaluatorTests {
    let site: SitePKI
    let logs = CapturedLogs()

    init() throws { site = try SitePKI() }

    func evaluator(_ set: PinSet) throws -> PinSetTrustEvaluator {
        try PinSetTrustEvaluator(pinSet: set, logger: logs.logger)
    }

    @Test func acceptsAnActivePinAndRejectsWhenTheOnlyMatchingPinIsPastItsDate() throws {
        let now = Date()
        let set = try PinSet([
            .init(site.intermediate.certificate.spkiPin, label: "issuing CA", notAfter: now + 86_400),
            .init(PinSetTests.spare, label: "backup"),
        ])
        let evaluator = try evaluator(set)
        try evaluator.evaluate(try site.trust(at: now), forHost: SitePKI.host)
        let error = #expect(throws: TrustError.pinMismatch) {
            try evaluator.evaluate(try site.trust(at: now + 2 * 86_400), forHost: SitePKI.host)
        }
        #expect(error?.evaluator == "PinSetTrustEvaluator")
    }

    @Test func anExpiredSetFailsClosedByDefaultEvenWhenAPinMatches() throws {
        let now = Date()
        let set = try PinSet(
            [.init(site.intermediate.certificate.spkiPin, label: "issuing CA"), .init(PinSetTests.spare, label: "backup")],
            expiration: now + 86_400)
        let evaluator = try evaluator(set)
        try evaluator.evaluate(try site.trust(at: now), forHost: SitePKI.host)
        let error = #expect(throws: TrustError.pinSetExpired) {
            try evaluator.evaluate(try site.trust(at: now + 2 * 86_400), forHost: SitePKI.host)
        }
        #expect(error?.reason.contains("failClosed") == true)
        #expect(try error?.evidence.configuredPins.contains(PinSetTests.spare) == true)
    }

    @Test func anExpiredSetWithFallbackValidatesByDefaultLogsAnErrorAndRecordsAFinding() throws {
        let now = Date()
        // Neither pin matches: after expiry only default validation applies, and it passes.
        let set = try PinSet(
            [.init(PinSetTests.other, label: "old"), .init(PinSetTests.spare, label: "backup")],
            expiration: now, expiryBehaviour: .fallBackToDefaultValidation)
        let trust = try site.trust(at: now + 86_400)
        try evaluator(set).evaluate(trust, forHost: SitePKI.host)
        #expect(trust.findings.map(\.error.code) == [.pinSetExpired])
        #expect(trust.findings.first?.mode == .informational)
        // Logged here; a session then counts and reports the finding without logging it again.
        #expect(trust.findings.first?.isLogged == true)
        let errors = logs.at(.error)
        #expect(errors.count == 1)
        #expect(errors.first?.metadata["host"] == SitePKI.host)
        #expect(errors.first?.metadata["reason"] == "pinSetExpired")
        #expect(errors.first?.message.contains("NOT enforced") == true)
    }

    @Test func theFallbackStillRejectsWhatDefaultValidationRejects() throws {
        let now = Date()
        let set = try PinSet(
            [.init(PinSetTests.other, label: "old"), .init(PinSetTests.spare, label: "backup")],
            expiration: now, expiryBehaviour: .fallBackToDefaultValidation)
        let stranger = try LabPKI.makeRoot(commonName: "Stranger")
        #expect(throws: TrustError.chainValidationFailed) {
            try evaluator(set).evaluate(try site.trust(anchors: [stranger.certificate], at: now + 86_400), forHost: SitePKI.host)
        }
        #expect(throws: TrustError.hostMismatch) {
            try evaluator(set).evaluate(try site.trust(at: now + 86_400), forHost: "other.example.com")
        }
    }

    @Test func warnsOnceForEachPinAndSetInsideTheWindow() throws {
        let now = Date()
        let set = try PinSet(
            [.init(site.intermediate.certificate.spkiPin, label: "issuing CA", notAfter: now + 10 * 86_400),
             .init(PinSetTests.spare, label: "backup")],
            expiration: now + 20 * 86_400, warningDays: 30)
        let evaluator = try evaluator(set)
        for _ in 0..<3 { try evaluator.evaluate(try site.trust(at: now), forHost: SitePKI.host) }
        let warnings = logs.at(.warning)
        #expect(warnings.count == 2)
        #expect(warnings.first?.metadata["label"] == "issuing CA")
        #expect(warnings.first?.metadata["daysRemaining"] == "9" || warnings.first?.metadata["daysRemaining"] == "10")
        #expect(warnings.contains { $0.message.contains("pin set expires") })
    }

    @Test func warnsWhenEveryPinMatchesTheServedChainBecauseNoneIsABackup() throws {
        let set = try PinSet([
            .init(site.leaf.certificate.spkiPin, label: "leaf"), .init(site.intermediate.certificate.spkiPin, label: "issuing CA"),
        ])
        try evaluator(set).evaluate(try site.trust(), forHost: SitePKI.host)
        #expect(logs.at(.warning).count == 1)
        #expect(logs.at(.warning).first?.message.contains("no pin is a backup") == true)
        #expect(!set.hasBackup(for: site.leaf.chain, at: Date()))

        let withBackup = try PinSet([.init(site.leaf.certificate.spkiPin, label: "leaf"), .init(PinSetTests.spare, label: "spare")])
        let quiet = CapturedLogs()
        try PinSetTrustEvaluator(pinSet: withBackup, logger: quiet.logger).evaluate(try site.trust(), forHost: SitePKI.host)
        #expect(quiet.all.isEmpty)
        #expect(withBackup.hasBackup(for: site.leaf.chain, at: Date()))
    }

    /// The backup check reads the chain this evaluator validated (here the leaf alone, its
    /// pinned key being the anchor), not one another evaluator of the trust validated against
    /// other anchors (here default validation's, which reaches the root and so matches both pins).
    @Test func theBackupCheckReadsTheChainThisEvaluationValidatedNotAnotherEvaluatorsChain() throws {
        let set = try PinSet([.init(site.leaf.certificate.spkiPin, label: "leaf"), .init(site.root.certificate.spkiPin, label: "root")])
        let pins = try PinSetTrustEvaluator(pinSet: set, performDefaultValidation: false, logger: logs.logger)
        let trust = try site.trust()
        try CompositeTrustEvaluator([.default(), pins]).evaluate(trust, forHost: SitePKI.host)
        #expect(trust.validatedChainIfComputed?.last == site.root.certificate)
        #expect(logs.at(.warning).isEmpty, "\(logs.at(.warning).map(\.message))")
    }
}
