public import Foundation

/// SPKI pins with the metadata a production rotation needs: a label and an optional not-after
/// date per pin, an expiration date for the set, what happens after expiry, and how early to
/// warn about it.
///
/// ```swift
/// let pins = try PinSet([
///     .init("sha256/…current", label: "2026 key"),
///     .init("sha256/…backup", label: "2027 key, offline", notAfter: backupRetires),
/// ], expiration: releaseSupportEnds, expiryBehaviour: .failClosed)
/// ```
///
/// A pin past its not-after date no longer matches anything. A set past its expiration date —
/// or whose every pin is past its own date — is *expired*, and ``expiryBehaviour`` decides what
/// the evaluator does: fail closed (the default) or fall back to default validation, loudly.
/// There is no silent switch-off.
///
/// At least ``minimumPinCount`` distinct pins are required (default 2, TrustKit's rule for an
/// enforcing policy): one pin is a single point of failure, since a lost or compromised key
/// then bricks every client that pins it. A set trialled in informational mode may lower it.
public struct PinSet: Hashable, Sendable {
    /// One pin and its metadata.
    public struct Entry: Hashable, Sendable, CustomStringConvertible {
        public let pin: Pin
        /// A human name for the key (`"2026 leaf key"`, `"backup, HSM 2"`), shown in logs,
        /// reports and audits.
        public let label: String
        /// The last instant the pin matches; `nil` for no date.
        public let notAfter: Date?

        public init(_ pin: Pin, label: String, notAfter: Date? = nil) {
            self.pin = pin
            self.label = label
            self.notAfter = notAfter
        }

        /// Parses `sha256/<base64>`.
        /// - Throws: `TrustError.Code.malformedPin` or `.unsupportedPinAlgorithm`.
        public init(_ pin: String, label: String, notAfter: Date? = nil) throws {
            self.init(try Pin(pin), label: label, notAfter: notAfter)
        }

        /// Whether the pin still matches at `time`.
        public func isActive(at time: Date) -> Bool { notAfter.map { time <= $0 } ?? true }

        public var description: String { label.isEmpty ? pin.description : "\(pin) (\(label))" }
    }

    /// What an evaluator does once the set has expired.
    public struct ExpiryBehaviour: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable { case failClosed, fallBackToDefaultValidation }
        private let base: Base
        private init(base: Base) { self.base = base }

        /// Reject every server with `TrustError.Code.pinSetExpired`. The default: an app that
        /// was not updated in time stops talking to the host instead of losing its pins silently.
        public static let failClosed = ExpiryBehaviour(base: .failClosed)
        /// Apply default validation only (chain to the anchors, host name), log an error for
        /// every evaluation, and record a ``TrustFinding`` so responses report the trust result
        /// as failed and failure reports are sent.
        /// - Warning: after expiry any CA the machine trusts, including an intercepting proxy's,
        ///   is accepted for the host.
        public static let fallBackToDefaultValidation = ExpiryBehaviour(base: .fallBackToDefaultValidation)

        /// `failClosed` or `fallBackToDefaultValidation`, as the policy file spells them.
        public init?(rawValue: String) {
            guard let base = Base(rawValue: rawValue) else { return nil }
            self.base = base
        }

        public var description: String { base.rawValue }
    }

    /// Something that expires soon, as logged and audited.
    package struct ExpiryNotice: Hashable, Sendable, CustomStringConvertible {
        /// The pin that expires, or nil for the set itself.
        package let entry: Entry?
        package let date: Date
        /// Whole days from the evaluation time to `date`, rounded down.
        package let daysRemaining: Int

        package var description: String {
            let what = entry.map { "pin \($0)" } ?? "pin set"
            return "\(what) expires in \(daysRemaining) day\(daysRemaining == 1 ? "" : "s") (\(PinSet.format(date)))"
        }
    }

    public let entries: [Entry]
    /// After this instant the set is expired; `nil` for no date.
    public let expiration: Date?
    public let expiryBehaviour: ExpiryBehaviour
    /// How many days before a pin or the set expires a warning is logged.
    public let warningDays: Int
    /// The fewest distinct pins the set was allowed to hold.
    public let minimumPinCount: Int

    /// - Parameters:
    ///   - entries: the pins; duplicates are refused.
    ///   - expiration: when the whole set expires. Default none.
    ///   - expiryBehaviour: default ``ExpiryBehaviour/failClosed``.
    ///   - warningDays: warn this many days before a pin or the set expires. Default 30.
    ///   - minimumPinCount: default 2 (a current and a backup pin).
    ///     - Warning: 1 leaves no backup: a lost key locks every client out until it updates.
    /// - Throws: `TrustError.Code.invalidConfiguration` naming the problem: fewer pins than
    ///   `minimumPinCount`, a repeated pin, `minimumPinCount` below 1, negative `warningDays`.
    public init(
        _ entries: [Entry], expiration: Date? = nil, expiryBehaviour: ExpiryBehaviour = .failClosed,
        warningDays: Int = 30, minimumPinCount: Int = 2
    ) throws {
        guard minimumPinCount >= 1 else {
            throw TrustError(.invalidConfiguration, "minimumPinCount must be at least 1 (it is \(minimumPinCount)).", evaluator: "PinSet")
        }
        guard warningDays >= 0 else {
            throw TrustError(.invalidConfiguration, "warningDays must not be negative (it is \(warningDays)).", evaluator: "PinSet")
        }
        var seen: Set<Pin> = []
        for entry in entries where !seen.insert(entry.pin).inserted {
            throw TrustError(.invalidConfiguration, "Pin \(entry.pin) appears twice in the pin set; list each key once.", evaluator: "PinSet")
        }
        guard seen.count >= minimumPinCount else {
            throw TrustError(
                .invalidConfiguration,
                "An enforcing pin set needs at least \(minimumPinCount) pins (it has \(seen.count)): pin the current key and a backup "
                    + "key kept offline, so a lost or compromised key does not lock clients out. To trial a single pin in "
                    + "informational mode, pass minimumPinCount: 1.",
                evaluator: "PinSet")
        }
        self.entries = entries
        self.expiration = expiration
        self.expiryBehaviour = expiryBehaviour
        self.warningDays = warningDays
        self.minimumPinCount = minimumPinCount
    }

    /// The pins that still match at `time`.
    package func activeEntries(at time: Date) -> [Entry] { entries.filter { $0.isActive(at: time) } }

    /// Whether the set is expired at `time`: past ``expiration``, or no pin is active.
    public func isExpired(at time: Date) -> Bool {
        if let expiration, time > expiration { return true }
        return activeEntries(at: time).isEmpty
    }

    /// The set's effective expiration: ``expiration``, or the last pin's not-after date when
    /// every pin has one (RFC 7469's effective-expiration-date).
    package var effectiveExpiration: Date? {
        let pinDates = entries.map(\.notAfter)
        let lastPin = pinDates.contains(nil) ? nil : pinDates.compactMap { $0 }.max()
        switch (expiration, lastPin) {
        case (let set?, let pin?): return min(set, pin)
        case (let set?, nil): return set
        case (nil, let pin?): return pin
        case (nil, nil): return nil
        }
    }

    /// The pins and the set that expire within ``warningDays`` of `time` but have not yet.
    package func expiryNotices(at time: Date) -> [ExpiryNotice] {
        let window = TimeInterval(warningDays) * 86_400
        var notices: [ExpiryNotice] = []
        for entry in entries {
            guard let date = entry.notAfter, date >= time, date.timeIntervalSince(time) <= window else { continue }
            notices.append(ExpiryNotice(entry: entry, date: date, daysRemaining: Self.days(from: time, to: date)))
        }
        if let expiration, expiration >= time, expiration.timeIntervalSince(time) <= window {
            notices.append(ExpiryNotice(entry: nil, date: expiration, daysRemaining: Self.days(from: time, to: expiration)))
        }
        return notices
    }

    /// The active entries whose pin is the SPKI of a certificate in `chain`.
    package func matchingEntries(in chain: [Certificate], at time: Date) -> [Entry] {
        let pins = Set(chain.map(\.spkiPin))
        return activeEntries(at: time).filter { pins.contains($0.pin) }
    }

    /// Whether at least one active pin is *not* in `chain` — a backup the server could move to.
    /// False when every pin matches the current chain (pinning a leaf and its issuer is not a
    /// backup: both change hands with the same CA account) or when nothing matches.
    package func hasBackup(for chain: [Certificate], at time: Date) -> Bool {
        let active = activeEntries(at: time)
        let matching = matchingEntries(in: chain, at: time)
        return !matching.isEmpty && matching.count < active.count
    }

    /// Whole days from `start` to `end`, rounded down (negative when `end` is earlier).
    package static func days(from start: Date, to end: Date) -> Int {
        Int((end.timeIntervalSince(start) / 86_400).rounded(.down))
    }

    /// An ISO 8601 UTC timestamp, as logs, reports and audits print dates.
    package static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }
}
