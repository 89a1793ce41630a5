import Foundation
import ServerTrust

/// The SCTs a server showed `inspect`: embedded in its leaf, sent in the TLS extension and
/// stapled in its OCSP response. With a log list (`--ct-log-list`), each is verified against
/// its log and the whole judged by the policy, reported only (``report``); without one, they
/// are read and listed by log ID (``scts``).
struct InspectedSCTs {
    /// The policy's outcome under a report-only requirement, when a list was given.
    let report: CertificateTransparencyReport?
    /// The SCTs read, when no list was given.
    let scts: [SignedCertificateTimestamp]
    /// SCTs that did not parse, by source, when no list was given (the report names them otherwise).
    let unreadable: [String]

    init(_ observation: ChainInspection, logs: CTLogStore?) {
        let chain = observation.validatedChain.isEmpty ? observation.presentedChain : observation.validatedChain
        var handshake = observation.handshake
        if handshake.stapledOCSPResponse == nil { handshake.stapledOCSPResponse = observation.stapledOCSPResponse }
        if let logs {
            let requirement = CertificateTransparencyRequirement.reportOnly()
            report = CertificateTransparencyReport(
                logs.evaluate(chain, handshake: handshake, requirement: requirement, at: observation.validationTime), requirement: requirement)
            scts = []
            unreadable = []
            return
        }
        report = nil
        var scts: [SignedCertificateTimestamp] = []
        var unreadable: [String] = []
        func read(_ what: String, _ body: () throws -> [SignedCertificateTimestamp]) {
            do { scts += try body() } catch { unreadable.append("\(what): \((error as? TrustError)?.reason ?? "\(error)")") }
        }
        if let leaf = chain.first { read("embedded") { try SignedCertificateTimestamp.embedded(in: leaf) } }
        for encoded in handshake.signedCertificateTimestamps {
            read("TLS extension") { [try SignedCertificateTimestamp(tlsEncoded: encoded, source: .tlsExtension)] }
        }
        if let staple = handshake.stapledOCSPResponse {
            read("OCSP staple") { try SignedCertificateTimestamp.stapled(inOCSPResponse: staple) }
        }
        self.scts = scts
        self.unreadable = unreadable
    }

    /// Whether there is anything to print: a list was given, or an SCT was seen.
    var isEmpty: Bool { report == nil && scts.isEmpty && unreadable.isEmpty }

    func lines() -> [String] {
        if let report {
            return CTText.lines(report) + (report.detail.map { ["  " + $0] } ?? [])
        }
        return scts.map { "  sct: " + CTText.line($0) } + unreadable.map { "  unreadable SCT: " + $0 }
    }

    /// `inspect --json`'s `signedCertificateTimestamps`, without a list: `[{source, logID, timestamp}]`.
    struct Entry: Encodable {
        let source: String
        let logID: String
        let timestamp: Date
    }

    var entries: [Entry] { scts.map { Entry(source: $0.source.rawValue, logID: $0.logIDBase64, timestamp: $0.timestamp) } }
}
