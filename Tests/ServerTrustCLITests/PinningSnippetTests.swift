import Foundation
import ServerTrust
import ServerTrustCodeGeneration
import ServerTrustTestSupport
import Testing

/// ``PinningSnippet``, the library half of `pins --swift`: roles and names from the chain, the
/// namespace from the host, and the Swift it writes (the full text is golden-tested through the
/// command in `PinsCommandTests`).
@Suite struct PinningSnippetTests {
    let root: LabCA
    let first: LabCA
    let second: LabCA
    let leaf: LabLeaf

    init() throws {
        root = try LabPKI.makeRoot(commonName: "Snippet Root")
        first = try root.issueIntermediate(commonName: "Snippet Intermediate 1")
        second = try first.issueIntermediate(commonName: "Snippet Intermediate 2")
        leaf = try second.issueLeaf(dnsNames: ["api.example.com"])
    }

    @Test func aValidatedChainEndsAtTheRootAndNumbersSeveralIntermediates() {
        let chain = [leaf.certificate, second.certificate, first.certificate, root.certificate]
        let snippet = PinningSnippet(
            host: "api.example.com", source: "https://api.example.com/", chain: chain, endsAtAnchor: true, validatedAgainst: "roots.pem")
        #expect(snippet.entries.map(\.role) == [.leaf, .intermediate, .intermediate, .root])
        #expect(snippet.entries.map(\.constantName) == ["leaf", "intermediate1", "intermediate2", "root"])
        #expect(snippet.entries.map(\.certificate) == chain)
        #expect(snippet.swiftSource.contains("    static let intermediate2 = \"\(first.certificate.spkiPin)\""))
        #expect(snippet.swiftSource.contains("// and validated against roots.pem."))
    }

    @Test func aChainAsSentHasNoRootAndTheSnippetWarns() {
        let snippet = PinningSnippet(
            host: "api.example.com", source: "https://api.example.com/", chain: [leaf.certificate, second.certificate],
            endsAtAnchor: false, validatedAgainst: nil)
        #expect(snippet.entries.map(\.constantName) == ["leaf", "intermediate"])
        #expect(snippet.swiftSource.contains("// WARNING: this chain FAILED default validation; verify these pins out of band."))
        #expect(!snippet.swiftSource.contains("validated against"))
    }

    @Test(arguments: [
        ("api.example.com", "ApiExampleComPins"),
        ("10.0.0.1", "Host10_0_0_1Pins"),
        ("xn--bcher-kva.example", "XnBcherKvaExamplePins"),
        ("1password.com", "Host1passwordComPins"),
    ])
    func theNamespaceIsASwiftTypeNameMadeFromTheHost(host: String, namespace: String) {
        let snippet = PinningSnippet(host: host, source: "https://\(host)/", chain: [leaf.certificate], endsAtAnchor: false, validatedAgainst: nil)
        #expect(snippet.namespace == namespace)
        #expect(snippet.swiftSource.contains("enum \(namespace) {"))
        #expect(snippet.swiftSource.contains("        \(namespace).leaf,"))
    }
}
