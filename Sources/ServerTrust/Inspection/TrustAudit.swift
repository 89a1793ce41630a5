package import Foundation

/// A pin-rotation audit: each host of a policy file judged against the chain its server
/// presents, today and at a warning horizon, with the backup situation and the dates that
/// matter. What `servertrust audit` prints; meant for an application's own daily CI job, so a
/// rotation that would lock clients out is found before it reaches them.
///
/// Fetching the chains is the caller's (`servertrust audit` connects with `ServerTrustHTTP`);
/// the judgement is here, with the policy's own evaluators, and live revocation queries go
/// through the ``RevocationFetcher`` given.
package enum TrustAudit {
    /// The whole audit: the JSON object of `servertrust audit --json`.
    ///
    /// Fields: `policy` (the policy file), `date` (the audit's "today", RFC 3339),
    /// `warnDays`, `hosts` (``HostReport``, in the policy's order) and `passed`.
    package struct Report: Sendable, Encodable {
        package let policy: String
        package let date: Date
        package let warnDays: Int
        package let hosts: [HostReport]
        /// Whether no host fails today or at the horizon, and every host was reached.
        package var passed: Bool { !hosts.contains { $0.status.isFailure || $0.status == .unreachable } }

        package init(policy: String, date: Date, warnDays: Int, hosts: [HostReport]) {
            self.policy = policy
            self.date = date
            self.warnDays = warnDays
            self.hosts = hosts
        }

        private enum CodingKeys: String, CodingKey {
            case policy, date, warnDays, hosts, passed
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(policy, forKey: .policy)
            try container.encode(date, forKey: .date)
            try container.encode(warnDays, forKey: .warnDays)
            try container.encode(hosts, forKey: .hosts)
            try container.encode(passed, forKey: .passed)
        }
    }

    /// The verdict on one host.
    package enum Status: String, Sendable, Encodable {
        /// Passes today and at the warning horizon.
        case ok
        /// Passes today, fails at the horizon (a pin, the set or a certificate expires first).
        case failsWithinWarnDays
        /// The policy rejects the live chain today.
        case fails
        /// No handshake: nothing to judge.
        case unreachable
        /// A wildcard pattern with no host to probe.
        case skipped

        /// A rejection, today or at the horizon.
        package var isFailure: Bool { self == .failsWithinWarnDays || self == .fails }
    }

    /// One dated item and the whole days left until it: `{what, date, days}`.
    package struct Expiry: Sendable, Encodable {
        package let what: String
        package let date: Date
        package let days: Int
    }
}
