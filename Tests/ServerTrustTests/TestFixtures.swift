import Foundation
import Testing
import ServerTrust
import ServerTrustTestSupport

/// A site with the usual shape — root, issuing intermediate, server leaf — built fresh per test.
struct SitePKI {
    static let host = "api.example.com"

    let root: LabCA
    let intermediate: LabCA
    let leaf: LabLeaf

    init(rootName: String = "Genuine Root CA", intermediateName: String = "Genuine Issuing CA", host: String = SitePKI.host) throws {
        root = try LabPKI.makeRoot(commonName: rootName)
        intermediate = try root.issueIntermediate(commonName: intermediateName)
        leaf = try intermediate.issueLeaf(dnsNames: [host])
    }

    /// A trust presenting `chain` (default the leaf's chain) against `anchors` (default this root).
    func trust(
        presenting chain: [Certificate]? = nil, anchors: [Certificate]? = nil, at time: Date = Date()
    ) throws -> PeerTrust {
        PeerTrust(
            presentedChain: chain ?? leaf.chain, anchors: try TrustAnchors(anchors ?? [root.certificate]),
            validationTime: time)
    }
}

extension Date {
    /// `days` days from now (negative: in the past).
    static func days(_ days: Double) -> Date { Date(timeIntervalSinceNow: days * 86400) }
}

/// The three pinning evaluators, so a behaviour they share is tested on each.
enum PinningKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case keyHashes = "PinnedKeyHashesTrustEvaluator"
    case publicKeys = "PublicKeysTrustEvaluator"
    case certificates = "PinnedCertificatesTrustEvaluator"

    var testDescription: String { rawValue }

    /// The evaluator's name, as errors report it.
    var evaluatorName: String { rawValue }

    /// An evaluator pinning `pinned` — their SPKI hashes, their keys or the certificates themselves.
    func evaluator(
        pinning pinned: [Certificate], performDefaultValidation: Bool = true
    ) throws -> any ServerTrustEvaluating {
        switch self {
        case .keyHashes:
            try PinnedKeyHashesTrustEvaluator(
                pins: pinned.map(\.spkiPin), performDefaultValidation: performDefaultValidation)
        case .publicKeys:
            try PublicKeysTrustEvaluator(
                keys: pinned.map(\.publicKey), performDefaultValidation: performDefaultValidation)
        case .certificates:
            try PinnedCertificatesTrustEvaluator(
                certificates: pinned, performDefaultValidation: performDefaultValidation)
        }
    }
}

/// Runs `command` with `/bin/sh -c` and returns its trimmed standard output, recording an issue
/// when it exits with a failure.
///
/// Waits for the child to exit on its own: a child started from a test thread can inherit a
/// blocked SIGTERM (DESIGN.md §4), so it is never terminated, only reaped.
func shell(_ command: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    let run = try ChildProcess.run("/bin/sh", ["-c", command])
    #expect(run.status == 0, "\(command) exited with \(run.status)", sourceLocation: sourceLocation)
    return run.outputText.trimmingCharacters(in: .whitespacesAndNewlines)
}
