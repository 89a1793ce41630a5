import Foundation

/// Golden-output comparison that ignores what changes between runs: pins and fingerprints of
/// keys made per run, dates, days left, serial numbers, ports and temporary paths.
enum GoldenText {
    /// `text` with every volatile field replaced by a placeholder.
    static func normalised(_ text: String, replacing literals: [String: String] = [:]) -> String {
        var result = text
        for (literal, placeholder) in literals.sorted(by: { $0.key.count > $1.key.count }) {
            result = result.replacingOccurrences(of: literal, with: placeholder)
        }
        for (pattern, template) in rules {
            result = pattern.stringByReplacingMatches(
                in: result, range: NSRange(result.startIndex..., in: result), withTemplate: template)
        }
        return result
    }

    private static let rules: [(NSRegularExpression, String)] = [
        (#"sha256//[A-Za-z0-9+/]{43}="#, "sha256//<pin>"),
        (#"sha256/[A-Za-z0-9+/]{43}="#, "sha256/<pin>"),
        (#"\b([0-9A-F]{2}:){31}[0-9A-F]{2}\b"#, "<sha256>"),
        (#"\b[0-9a-f]{64}\b"#, "<sha256>"),
        (#"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z"#, "<date>"),
        (#"\(\d+ days? left\)"#, "(<n> days left)"),
        (#"("daysLeft" : )-?\d+"#, "$1<n>"),
        (#"(serial {6})[0-9A-F]+"#, "$1<serial>"),
        (#"(serial )[0-9A-F]{8,}"#, "$1<serial>"),
        (#"("serialNumber" : ")[0-9A-F]+"#, "$1<serial>"),
        (#"(127\.0\.0\.1|localhost|\.test):\d{2,5}\b"#, "$1:<port>"),
    ].map { (try! NSRegularExpression(pattern: $0.0), $0.1) }

    /// Lines that differ, for a readable failure message.
    static func difference(expected: String, actual: String) -> String {
        let e = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let a = actual.split(separator: "\n", omittingEmptySubsequences: false)
        var out: [String] = []
        for index in 0..<max(e.count, a.count) {
            let left = index < e.count ? String(e[index]) : "<none>"
            let right = index < a.count ? String(a[index]) : "<none>"
            if left != right { out.append("line \(index + 1):\n  expected: \(left)\n  actual:   \(right)") }
        }
        return out.joined(separator: "\n")
    }
}

import Testing

/// Expects `actual`, normalised, to equal `golden`; on a difference, records the lines that
/// differ and the whole normalised text, ready to paste as the new golden.
func expectGolden(
    _ actual: String, _ golden: String, literals: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation
) {
    let normalised = GoldenText.normalised(actual, replacing: literals)
    #expect(
        normalised == golden,
        "\(GoldenText.difference(expected: golden, actual: normalised))\n--- normalised output:\n\(normalised)",
        sourceLocation: sourceLocation)
}
