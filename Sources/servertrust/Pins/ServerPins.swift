import Foundation
import ServerTrust

/// The pins of one server's chain with their roles, in the output formats of `pins`.
struct ServerPins {
    /// One certificate's pin and its place in the chain.
    struct Entry {
        enum Role: String {
            case leaf, intermediate, root
        }
        let role: Role
        /// The Swift constant name: `leaf`, `intermediate` (`intermediate1`, `intermediate2`… when
        /// there are several), `root`.
        let constantName: String
        let certificate: Certificate
    }

    let host: String
    let url: URL
    let anchorsOrigin: String
    /// Whether the pins come from a validated chain valid for the host.
    let isVerified: Bool
    let entries: [Entry]

    init(result: ServerProbe.Result) {
        let observation = result.observation
        host = observation.host
        url = result.url
        anchorsOrigin = result.anchorsOrigin
        isVerified = observation.passesDefaultValidation
        let validated = !observation.validatedChain.isEmpty
        let chain = validated ? observation.validatedChain : observation.presentedChain
        let intermediateCount = max(chain.count - (validated ? 2 : 1), 0)
        entries = chain.enumerated().map { index, certificate in
            if index == 0 { return Entry(role: .leaf, constantName: "leaf", certificate: certificate) }
            if validated, index == chain.count - 1 { return Entry(role: .root, constantName: "root", certificate: certificate) }
            return Entry(role: .intermediate, constantName: intermediateCount == 1 ? "intermediate" : "intermediate\(index)", certificate: certificate)
        }
    }

    /// One pin per line with its role and subject as a comment; curl's `sha256//` form with
    /// `curlForm`, closed by the `--pinnedpubkey` argument that takes them all.
    func lines(curlForm: Bool) -> String {
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

    /// The enum name for the pins: `api.example.com` → `ApiExampleComPins`.
    var namespace: String {
        let words = host.split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }.map(String.init)
        let name = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: words.allSatisfy { $0.allSatisfy(\.isNumber) } ? "_" : "")
        return (name.first?.isLetter == true ? "" : "Host") + name + "Pins"
    }

    /// A `ServerTrustManager` entry for the host with the pins as named constants.
    var swiftSnippet: String {
        var lines = [
            "// SPKI pins of \(host), read from \(url.absoluteString)",
            isVerified
                ? "// and validated against \(anchorsOrigin)."
                : "// WARNING: this chain FAILED default validation; verify these pins out of band.",
            "// Any one matching pin admits the server: keep only the levels you mean to trust",
            "// (leaf: this key; intermediate: what the CA issues from it; root: anything under that CA).",
            "import ServerTrust",
            "",
            "enum \(namespace) {",
        ]
        for entry in entries {
            lines.append("    /// \(entry.role.rawValue.capitalized): \(entry.certificate.subject)")
            lines.append("    static let \(entry.constantName) = \"\(entry.certificate.spkiPin)\"")
        }
        lines += [
            "    // A backup pin is needed: the pin of a key pair you generate now and keep offline (or of",
            "    // your second CA), so that a key rotation or compromise does not lock deployed clients out.",
            "    // `servertrust generate` compiles its certificate into a constant; or from the key:",
            "    //   openssl pkey -in backup.key -pubout -outform der | openssl dgst -sha256 -binary | base64",
            "}",
            "",
            "let manager = try ServerTrustManager(evaluators: [",
            "    \"\(host)\": try .pinnedKeyHashes([",
        ]
        lines += entries.map { "        \(namespace).\($0.constantName)," }
        lines += [
            "        // the backup pin goes here",
            "    ]),",
            "])",
        ]
        return lines.joined(separator: "\n")
    }

    var json: String {
        JSONText.render([
            "host": host,
            "url": url.absoluteString,
            "anchors": anchorsOrigin,
            "verified": isVerified,
            "pins": entries.map { entry in
                [
                    "role": entry.role.rawValue, "name": entry.constantName, "subject": entry.certificate.subject,
                    "pin": entry.certificate.spkiPin.description, "curl": entry.certificate.spkiPin.curlForm,
                ]
            },
            "swift": swiftSnippet,
        ] as [String: Any])
    }
}
