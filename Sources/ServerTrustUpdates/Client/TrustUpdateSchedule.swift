public import Foundation
public import ServerTrust

/// When ``TrustUpdateClient/run()`` refreshes: every ``interval`` with ``jitter`` (so a fleet
/// does not hit the repository at once), earlier when something the client relies on nears
/// its end, and with exponential back-off after failures.
public struct TrustUpdateSchedule: Sendable, Hashable {
    /// Between successful refreshes; default one hour.
    public var interval: TimeInterval = 3_600
    /// The fraction of each delay drawn at random, ±; default 0.1 (±10 %).
    public var jitter: Double = 0.1
    /// The first delay after a failure; doubled for each further one, up to ``interval``;
    /// default one minute.
    public var retryAfterFailure: TimeInterval = 60
    /// How long before a pin set, the delivered policy or the TUF metadata expires the client
    /// refreshes, at the latest; default one day.
    public var refreshBeforeExpiry: TimeInterval = 86_400
    /// The shortest delay ever used; default 30 s.
    public var minimumDelay: TimeInterval = 30

    public init() {}

    /// The delay before the next refresh.
    ///
    /// - Parameters:
    ///   - status: the status after the last refresh.
    ///   - policy: the delivered policy in force, whose pin sets' expirations count.
    ///   - now: the current time.
    ///   - random: a number in 0…1 (default a random one), for the jitter.
    public func delay(after status: TrustUpdateStatus, policy: TrustPolicyFile?, now: Date, random: Double = .random(in: 0...1)) -> TimeInterval {
        var delay = interval
        if status.lastOutcome == .failed {
            let exponent = Double(max(0, min(status.consecutiveFailures - 1, 30)))
            delay = min(interval, retryAfterFailure * pow(2, exponent))
        }
        var deadlines = [status.policyExpires, status.metadataExpires].compactMap { $0 }
        deadlines += policy?.hosts.compactMap { $0.policy.pins?.expiration } ?? []
        for deadline in deadlines {
            let due = deadline.timeIntervalSince(now) - refreshBeforeExpiry
            // Within the window: refresh at the retry pace until something new arrives.
            delay = min(delay, due > 0 ? due : retryAfterFailure)
        }
        let jittered = delay * (1 + jitter * (2 * random - 1))
        return max(minimumDelay, jittered)
    }
}
