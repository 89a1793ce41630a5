import Foundation
import ServerTrust

/// The sample chain of `Certificates/`, compiled into this binary by ServerTrustPinsPlugin
/// (`Certificates.sampleLeafDER`, `Certificates.sampleIntermediatePin`…): the demo verifies it
/// offline with the compiled pins, which proves the constants are in the binary and right.
enum CompiledSamples {
    static let host = "demo.servertrust.test"

    /// The compiled constants.
    static var all: [Certificates.PinnedCertificateConstant] { Certificates.all }

    /// The sample leaf and intermediate, pinned to the compiled intermediate pin and backup pin,
    /// validated against the compiled root.
    static func verify() -> DemoOutcome {
        do {
            let leaf = try Certificate(base64Encoded: Certificates.sampleLeafDER)
            let intermediate = try Certificate(base64Encoded: Certificates.sampleIntermediateDER)
            let root = try Certificate(base64Encoded: Certificates.sampleRootDER)
            let manager = try ServerTrustManager(policies: [
                try HostPattern(host): .custom(try PinnedKeyHashesTrustEvaluator([Certificates.sampleIntermediatePin, Certificates.sampleBackupPin]))
            ])
            let context = TrustEvaluationContext(anchors: try TrustAnchors([root], origin: "compiled in"))
            let evaluation = try manager.resolve(host: host).evaluate([leaf, intermediate], in: context)
            if let failure = evaluation.failure { return .rejected(failure) }
            return .accepted("pin matched: compiled sampleIntermediatePin (\(intermediate.subject))")
        } catch let error as TrustError {
            return .rejected(error)
        } catch {
            return .broken(error)
        }
    }
}
