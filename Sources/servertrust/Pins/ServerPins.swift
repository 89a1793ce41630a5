import Foundation
import ServerTrust
import ServerTrustCodeGeneration

/// The pins of one server's chain with their roles, in the output formats of `pins`; the
/// roles, names and Swift come from ``PinningSnippet``.
struct ServerPins {
    let url: URL
    let anchorsOrigin: String
    let snippet: PinningSnippet

    init(result: ServerProbe.Result) {
        let observation = result.observation
        url = result.url
        anchorsOrigin = result.anchorsOrigin
        let validated = !observation.validatedChain.isEmpty
        snippet = PinningSnippet(
            host: observation.host, source: result.url.absoluteString,
            chain: validated ? observation.validatedChain : observation.presentedChain, endsAtAnchor: validated,
            validatedAgainst: observation.passesDefaultValidation ? result.anchorsOrigin : nil)
    }

    /// Whether the pins come from a validated chain valid for the host.
    var isVerified: Bool { snippet.validatedAgainst != nil }

    /// One pin per line with its role and subject as a comment; curl's `sha256//` form with
    /// `curlForm`, closed by the `--pinnedpubkey` argument that takes them all.
    func lines(curlForm: Bool) -> String {
        let entries = snippet.entries
        let width = entries.map(\.constantName.count).max() ?? 0
        var lines = entries.map { entry in
            let pin = curlForm ? entry.certificate.spkiPin.curlForm : entry.certificate.spkiPin.description
            return "\(pin)  # \(entry.constantName.padding(toLength: width, withPad: " ", startingAt: 0))  \(entry.certificate.subject)"
        }
        if curlForm {
            lines.append("# curl --pinnedpubkey '" + entries.map(\.certificate.spkiPin.curlForm).joined(separator: ";") + "' \(url.absoluteString)")
        }
        return lines.joined(separator: "\n")
    }

    var swiftSnippet: String { snippet.swiftSource }

    var json: String { JSONText.render(PinsOutput(self)) }
}

/// The JSON object of `pins --json`.
///
/// Fields: `host`, `url` (the probed URL), `anchors` (what the chain was validated against: a
/// file, or the system bundle), `verified` (whether the chain passed default validation for
/// the host; when not, the pins are of the chain as sent), `pins` (leaf first:
/// `{role, name, subject, pin, curl}`, where `role` is `leaf`, `intermediate` or `root`,
/// `name` the Swift constant, `curl` the pin in curl's `sha256//` form) and `swift`
/// (``PinningSnippet/swiftSource``).
struct PinsOutput: Encodable {
    struct Entry: Encodable {
        let role: String
        let name: String
        let subject: String
        let pin: String
        let curl: String
    }

    let host: String
    let url: String
    let anchors: String
    let verified: Bool
    let pins: [Entry]
    let swift: String

    init(_ pins: ServerPins) {
        host = pins.snippet.host
        url = pins.url.absoluteString
        anchors = pins.anchorsOrigin
        verified = pins.isVerified
        self.pins = pins.snippet.entries.map { entry in
            Entry(
                role: entry.role.rawValue, name: entry.constantName, subject: entry.certificate.subject,
                pin: entry.certificate.spkiPin.description, curl: entry.certificate.spkiPin.curlForm)
        }
        swift = pins.swiftSnippet
    }
}
