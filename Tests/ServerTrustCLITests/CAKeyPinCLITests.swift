import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// Issue #42, finding 4, through `servertrust fetch` and `servertrust verify`: a pin on the root
/// keeps matching when the anchors (`--ca`, `--roots`) also hold the intermediate, and the
/// report names the certificate that matched.
@Suite struct CAKeyPinCLITests {
    enum Pinned: String, CaseIterable, Sendable {
        case root, intermediate, leaf, unknown

        func pin(_ fixture: CLIFixture) -> String {
            switch self {
            case .root: fixture.root.certificate.spkiPin.description
            case .intermediate: fixture.intermediate.certificate.spkiPin.description
            case .leaf: fixture.leaf.certificate.spkiPin.description
            case .unknown: "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()
            }
        }

        var depth: Int? { ["leaf": 0, "intermediate": 1, "root": 2][rawValue] }
    }

    /// A PEM file of the anchors: the root, and the intermediate when asked.
    private static func anchorsFile(_ fixture: CLIFixture, intermediateIsAnchor: Bool) throws -> String {
        let anchors = [fixture.root.certificate] + (intermediateIsAnchor ? [fixture.intermediate.certificate] : [])
        return try LabPKI.writeTemporaryFile(LabPKI.pemBundle(anchors), name: "anchors.pem")
    }

    private static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test(arguments: Pinned.allCases, [false, true])
    func fetchMatchesAPinOnTheRootIntermediateOrLeafWithOrWithoutTheIntermediateAmongTheAnchors(
        _ pinned: Pinned, intermediateIsAnchor: Bool
    ) throws {
        let fixture = try CLIFixture()
        let anchors = try Self.anchorsFile(fixture, intermediateIsAnchor: intermediateIsAnchor)
        defer { LabPKI.removeTemporaryFile(anchors) }
        let result = CommandRunner.run(["fetch", fixture.url(), "--json", "--pin", pinned.pin(fixture), "--ca", anchors] + fixture.resolve())
        let object = try Self.json(result.standardOutput)
        guard let depth = pinned.depth else {
            #expect(result.status == 1, "\(result)")
            let trustResult = object["trustResult"] as? [String: Any]
            #expect(trustResult?["code"] as? String == "pinMismatch", "\(result)")
            #expect((trustResult?["reason"] as? String)?.contains("No certificate of the validated chain (3 certificates") == true, "\(result)")
            return
        }
        #expect(result.status == 0, "\(result)")
        let trust = try #require(object["trust"] as? [String: Any])
        #expect((trust["validatedChain"] as? [[String: String]])?.count == 3)
        let matched = try #require(trust["matchedPins"] as? [[String: Any]])
        #expect(matched.count == 1)
        #expect(matched.first?["pin"] as? String == pinned.pin(fixture))
        #expect(matched.first?["depth"] as? Int == depth)
        #expect(matched.first?["anchorExtension"] as? Bool == (pinned == .root && intermediateIsAnchor))
    }

    @Test(arguments: Pinned.allCases, [false, true])
    func verifyMatchesAPinOnTheRootIntermediateOrLeafWithOrWithoutTheIntermediateAmongTheAnchors(
        _ pinned: Pinned, intermediateIsAnchor: Bool
    ) throws {
        let fixture = try CLIFixture()
        let anchors = try Self.anchorsFile(fixture, intermediateIsAnchor: intermediateIsAnchor)
        let chain = try LabPKI.writeTemporaryFile(LabPKI.pemBundle(fixture.leaf.chain), name: "chain.pem")
        defer {
            LabPKI.removeTemporaryFile(anchors)
            LabPKI.removeTemporaryFile(chain)
        }
        let arguments = ["verify", "--chain", chain, "--roots", anchors, "--host", CLIFixture.host, "--pin", pinned.pin(fixture)]
        let text = CommandRunner.run(arguments)
        let result = CommandRunner.run(arguments + ["--json"])
        let report = try Self.json(result.standardOutput)
        guard let depth = pinned.depth else {
            #expect(result.status == 1, "\(result)")
            #expect((report["error"] as? [String: Any])?["code"] as? String == "pinMismatch")
            #expect((report["matchedPins"] as? [Any])?.isEmpty == true)
            return
        }
        #expect(result.status == 0, "\(result)")
        let matched = try #require(report["matchedPins"] as? [[String: Any]])
        #expect(matched.count == 1)
        #expect(matched.first?["pin"] as? String == pinned.pin(fixture))
        #expect(matched.first?["depth"] as? Int == depth)
        let byExtension = pinned == .root && intermediateIsAnchor
        #expect(matched.first?["anchorExtension"] as? Bool == byExtension)
        #expect(text.status == 0, "\(text)")
        #expect(text.standardOutput.contains(
            "matched pin: \(pinned.pin(fixture)): \(matched.first?["subject"] as? String ?? "?") (depth \(depth)"
                + (byExtension ? ", an anchor above the validated path)" : ")")), "\(text)")
    }

    @Test func verifyNeverMatchesARootTheChainCarriesWithTheRootsNameAndAnotherKey() throws {
        let fixture = try CLIFixture()
        let bogus = try LabPKI.makeRoot(commonName: "CLI Test Root")
        let anchors = try Self.anchorsFile(fixture, intermediateIsAnchor: true)
        let chain = try LabPKI.writeTemporaryFile(LabPKI.pemBundle(fixture.leaf.chain + [bogus.certificate]), name: "chain.pem")
        defer {
            LabPKI.removeTemporaryFile(anchors)
            LabPKI.removeTemporaryFile(chain)
        }
        let result = CommandRunner.run([
            "verify", "--chain", chain, "--roots", anchors, "--host", CLIFixture.host, "--pin", bogus.certificate.spkiPin.description,
            "--json",
        ])
        #expect(result.status == 1, "\(result)")
        let error = try #require(try Self.json(result.standardOutput)["error"] as? [String: Any])
        #expect(error["code"] as? String == "pinMismatch")
        #expect((error["chain"] as? [[String: String]])?.map { $0["subject"] } == [
            "CN=\(CLIFixture.host)", "CN=CLI Test Intermediate", "CN=CLI Test Root",
        ])
        #expect((error["chain"] as? [[String: String]])?.contains { $0["pin"] == bogus.certificate.spkiPin.description } == false)
    }
}
