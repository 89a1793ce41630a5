import Foundation
public import Logging

/// SPKI-hash pinning with a ``PinSet``: per-pin not-after dates, a set expiration with an
/// explicit ``PinSet/ExpiryBehaviour``, early warnings, and a backup-pin check.
///
/// Time is the ``PeerTrust/validationTime`` of the trust being evaluated, so tests and audits
/// can ask "what happens on that date" without waiting. For each evaluation:
///
/// 1. An expired set fails closed with `TrustError.Code.pinSetExpired`, or — with
///    ``PinSet/ExpiryBehaviour/fallBackToDefaultValidation`` — is logged at error level,
///    recorded as an informational ``TrustFinding`` (marked ``TrustFinding/isLogged``, so a
///    session does not log it twice) and replaced by default validation.
/// 2. Pins and the set within ``PinSet/warningDays`` of expiry are logged at warning level,
///    once per evaluator and item.
/// 3. The validated chain must contain an *active* pin (as ``PinnedKeyHashesTrustEvaluator``).
/// 4. When every active pin matches the chain, there is no real backup: logged at warning level
///    once per evaluator.
public final class PinSetTrustEvaluator: ServerTrustEvaluating {
    public let pinSet: PinSet
    let core: PinningCore
    private let logger: Logger
    /// Warnings already logged (keys: pin, "set", "backup"), so a warning is not repeated on
    /// every handshake.
    private let warned = Locked<Set<String>>([])

    /// - Parameters:
    ///   - pinSet: the pins and their dates.
    ///   - performDefaultValidation: validate the chain to the anchors first. Default `true`.
    ///     When `false` the pinned keys act as the anchors, under the rule of
    ///     ``PinnedKeyHashesTrustEvaluator/init(pins:performDefaultValidation:)``:
    ///     the presented certificate carrying a pinned key is the anchor only when it is the
    ///     leaf or that key signed it itself (verified), never an intermediate whose validity and
    ///     constraints only its unpinned issuer vouches for.
    ///   - logger: where warnings and expiry errors go. Default `Logger(label: "servertrust")`.
    public init(
        pinSet: PinSet, performDefaultValidation: Bool = true, logger: Logger = TrustLogging.defaultLogger
    ) throws {
        self.pinSet = pinSet
        self.logger = logger
        core = try PinningCore(
            evaluatorName: "PinSetTrustEvaluator", configuredPins: pinSet.entries.map(\.pin).sorted(),
            performDefaultValidation: performDefaultValidation, validateHost: true)
    }

    public func evaluate(_ trust: PeerTrust, forHost host: String) throws {
        let now = trust.validationTime
        if pinSet.isExpired(at: now) {
            try evaluateExpired(trust, host: host, at: now)
            return
        }
        for notice in pinSet.expiryNotices(at: now) {
            warnOnce(key: notice.entry?.pin.description ?? "set", host: host) {
                var metadata: Logger.Metadata = ["expires": .string(PinSet.format(notice.date)), "daysRemaining": .stringConvertible(notice.daysRemaining)]
                if let entry = notice.entry {
                    metadata["pin"] = .string(entry.pin.description)
                    metadata["label"] = .string(entry.label)
                }
                return ("Pinning for \(host): \(notice); ship a pin set with a later date before then.", metadata)
            }
        }
        let activeEntries = pinSet.activeEntries(at: now)
        let active = Set(activeEntries.map(\.pin))
        // The backup check reads the chain this evaluation validated, not whichever chain another
        // evaluator of the trust validated (perhaps against other anchors).
        let chain = try core.evaluate(trust, host: host) { active.contains($0.spkiPin) }
        if let until = relianceEnd(of: activeEntries, chain: chain) { trust.relyOn(until: until) }
        if !pinSet.hasBackup(for: chain, at: now) {
            warnOnce(key: "backup", host: host) {
                ("Pinning for \(host): every active pin matches the chain the server presents, so no pin is a backup; "
                    + "add the pin of a spare key kept offline.", [:])
            }
        }
    }

    /// Until when this acceptance holds: the set's expiration, and the last not-after date of
    /// the active pins the chain matched (after it, no pin vouches for this chain any more).
    private func relianceEnd(of activeEntries: [PinSet.Entry], chain: [Certificate]?) -> Date? {
        let chainPins = Set((chain ?? []).map(\.spkiPin))
        let matched = activeEntries.filter { chainPins.contains($0.pin) }
        let lastMatch = matched.isEmpty || matched.contains { $0.notAfter == nil } ? nil : matched.compactMap(\.notAfter).max()
        return [pinSet.effectiveExpiration, lastMatch].compactMap { $0 }.min()
    }

    private func evaluateExpired(_ trust: PeerTrust, host: String, at now: Date) throws {
        let when = pinSet.expiration.map { $0 < now ? "expired on \(PinSet.format($0))" : "" } ?? ""
        let what = when.isEmpty ? "has no pin left before its not-after date" : when
        var evidence = TrustError.Evidence()
        evidence.configuredPins = core.configuredPins
        if pinSet.expiryBehaviour == .failClosed {
            throw TrustError(
                .pinSetExpired,
                "The pin set \(what), and its expiry behaviour is failClosed: ship an update with current pins.",
                evaluator: name, host: host, evidence: evidence)
        }
        let finding = TrustError(
            .pinSetExpired,
            "The pin set \(what); pins are NOT enforced, default validation only (expiry behaviour fallBackToDefaultValidation).",
            evaluator: name, host: host, evidence: evidence)
        // Logged here rather than left to a session: whoever runs this evaluator, in a session
        // or not, learns that pinning is off. Marked as logged, so a session does not log it again.
        logger.error(
            "Pinning for \(host) is off: \(finding.reason)",
            metadata: TrustLogging.metadata(for: finding, host: host, mode: .informational))
        trust.record(TrustFinding(error: finding, mode: .informational, isLogged: true))
        try attributing(host: host) {
            let chain = try trust.validatedChain()
            try HostNameVerifier.verify(chain[0], host: host)
        }
    }

    private func warnOnce(key: String, host: String, _ message: () -> (String, Logger.Metadata)) {
        guard warned.withLock({ $0.insert(host + " " + key).inserted }) else { return }
        let (text, extra) = message()
        var metadata: Logger.Metadata = ["host": .string(host), "evaluator": .string(name)]
        metadata.merge(extra) { $1 }
        logger.warning("\(text)", metadata: metadata)
    }
}

extension ServerTrustEvaluating where Self == PinSetTrustEvaluator {
    /// Pinning with a ``PinSet`` (labels, dates, expiry behaviour).
    public static func pinSet(
        _ pinSet: PinSet, performDefaultValidation: Bool = true, logger: Logger = TrustLogging.defaultLogger
    ) throws -> PinSetTrustEvaluator {
        try PinSetTrustEvaluator(pinSet: pinSet, performDefaultValidation: performDefaultValidation, logger: logger)
    }
}
