import ServerTrust

extension TrustAudit.HostReport {
    /// The text output of `audit` for this host.
    var lines: [String] {
        let name = pattern.description + (host.map { $0 == pattern.description ? "" : " (\($0))" } ?? "")
        switch status {
        case .skipped, .unreachable:
            return ["\(name): \(status.rawValue): \(note ?? "")"]
        case .ok, .fails, .failsWithinWarnDays:
            var lines = ["\(name): \(status.rawValue)"]
            if let failure { lines.append("  rejected today: \(failure.code): \(failure.reason)") }
            if let failureAtWarnHorizon {
                lines.append("  rejected at the warning horizon: \(failureAtWarnHorizon.code): \(failureAtWarnHorizon.reason)")
            }
            for finding in findings { lines.append("  \(finding.mode) failure: \(finding.error.code): \(finding.error.reason)") }
            if isPinned {
                lines.append("  matching pins: " + (matchingPins.isEmpty ? "none" : matchingPins.map(\.description).joined(separator: ", ")))
                switch hasBackup {
                case true?: lines.append("  backup pin: yes")
                case false?: lines.append("  backup pin: NO — every active pin is in the live chain, or none is")
                case nil: break
                }
            }
            for expiry in expirations {
                lines.append("  \(expiry.what) expires in \(expiry.days) day\(expiry.days == 1 ? "" : "s") (\(JSONText.date(expiry.date)))")
            }
            return lines
        }
    }
}
