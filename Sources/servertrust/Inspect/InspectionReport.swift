import Foundation
import ServerTrust
import ServerTrustHTTP

/// `inspect`'s output: checks, then the presented and the validated chain.
struct InspectionReport {
    let result: ServerProbe.Result
    /// The instant days left are counted from.
    let now: Date
    /// The SCTs the server showed.
    let scts: InspectedSCTs

    private var observation: ChainInspection { result.observation }

    private var presentedIndices: [Int?] { observation.presentedIndices }

    func text(style: TextStyle) -> String {
        var lines: [String] = []
        lines.append(style.bold("Inspected \(result.url.absoluteString)"))
        if let status = result.status {
            lines.append("  request       \(result.method.rawValue) / → \(status) (\(result.httpVersion ?? "?"))")
        } else if let failure = result.transferFailure {
            lines.append("  request       \(result.method.rawValue) / did not complete after the handshake: \(firstLine(failure))")
        }
        lines.append("  host          \(observation.host)")
        lines.append("  anchors       \(result.anchorsOrigin)")
        let handshake = observation.handshake
        if let group = handshake.keyExchangeGroup {
            let kind = KeyExchangeRequirement.isPostQuantum(group: group) ? "post-quantum" : "classical"
            let negotiated = [handshake.protocolVersion?.description, handshake.cipherSuite].compactMap { $0 } + ["\(group) (\(kind) key exchange)"]
            lines.append("  negotiated    " + negotiated.joined(separator: ", "))
        }
        lines.append("")
        lines.append(style.bold("Default checks") + " (reported, not enforced)")
        lines.append(checkLine("chain", observation.chain, style: style))
        lines.append(checkLine("host", observation.hostName, style: style))
        lines.append(checkLine("stapled OCSP", observation.stapledOCSP, style: style, informational: true))
        lines.append(
            "  verdict       "
                + (observation.passesDefaultValidation
                    ? style.green("a client with default validation accepts this server")
                    : style.red("a client with default validation rejects this server")))
        lines.append("")
        let presented = observation.presentedChain
        lines.append(style.bold("Presented chain") + " (\(count(presented.count)), as sent)")
        for (index, certificate) in presented.enumerated() {
            lines.append("  [\(index)] \(style.bold(certificate.subject))")
            lines += CertificateDetails(certificate: certificate, now: now).lines(style: style).map { "      " + $0 }
        }
        lines.append("")
        if observation.validatedChain.isEmpty {
            lines.append(style.bold("Validated chain") + " none: the chain does not validate against \(result.anchorsOrigin)")
        } else {
            lines.append(style.bold("Validated chain") + " (\(count(observation.validatedChain.count)), leaf to anchor)")
            for (index, (certificate, presentedIndex)) in zip(observation.validatedChain, presentedIndices).enumerated() {
                if let presentedIndex {
                    lines.append("  [\(index)] \(style.bold(certificate.subject)) (presented [\(presentedIndex)]) \(certificate.spkiPin)")
                } else {
                    lines.append("  [\(index)] \(style.bold(certificate.subject)) (from the anchors, not sent by the server)")
                    lines += CertificateDetails(certificate: certificate, now: now).lines(style: style).map { "      " + $0 }
                }
            }
        }
        if !scts.isEmpty {
            lines.append("")
            lines.append(style.bold("Signed certificate timestamps") + (scts.report == nil ? " (not verified: no --ct-log-list)" : ""))
            lines += scts.lines()
        }
        lines.append("")
        lines.append(style.dim("Pin it: servertrust pins \(result.url.absoluteString) --swift"))
        return lines.joined(separator: "\n")
    }

    /// Hints for the checks that failed.
    var hints: [String] {
        [observation.chain, observation.hostName].flatMap { outcome -> [String] in
            guard case .failed(let error) = outcome else { return [] }
            return FixHint.lines(for: error, url: result.url.absoluteString, suggestInspect: false)
        }
    }

    var json: String { JSONText.render(InspectOutput(result: result, scts: scts)) }

    private func checkLine(_ name: String, _ outcome: ChainInspection.Check, style: TextStyle, informational: Bool = false) -> String {
        let label = name.padding(toLength: 14, withPad: " ", startingAt: 0)
        switch outcome {
        case .passed(let detail):
            return "  \(label)\(style.green("passed"))  \(detail)"
        case .failed(let error):
            let word = informational ? style.yellow("failed") : style.red("FAILED")
            var line = "  \(label)\(word)  \(error.code): \(error.reason)"
            if let text = error.evidence.verifyResultText {
                line += " (OpenSSL: \(text)" + (error.evidence.depth.map { " at depth \($0)" } ?? "") + ")"
            }
            return line
        case .notChecked(let detail):
            return "  \(label)\(style.dim("not checked"))  \(detail)"
        }
    }

    private func count(_ n: Int) -> String { "\(n) certificate\(n == 1 ? "" : "s")" }

    private func firstLine(_ error: any Error) -> String {
        String("\(error)".split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }
}
