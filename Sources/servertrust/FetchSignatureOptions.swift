import ArgumentParser
import Foundation
import ServerTrust
import ServerTrustHTTP

/// `fetch --verify-signature KEY [--mode enforced|informational]`: check the response's
/// `X-ServerTrust-Signature` against a root key, for the URL's host.
struct FetchSignatureOptions: ParsableArguments {
    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case enforced, informational
    }

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Verify the response signature against this root public key (base64 of 32 raw bytes, or SPKI) for the URL's host.",
            valueName: "BASE64_ROOT_KEY"))
    var verifySignature: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "enforced (a failure exits 1, no body) or informational (the body is printed, the failure reported and, with --report-uri, sent). "
                + "Applies to --pin, --revocation and --verify-signature; default validation is always enforced.",
            valueName: "enforced|informational"))
    var mode: Mode = .enforced

    /// Adds the signed-response policy for `host` to `configuration`.
    func apply(to configuration: inout Session.Configuration, host: String) throws {
        guard let verifySignature else { return }
        let root: SignedResponseRoot
        do {
            root = try SignedResponseRoot(base64: verifySignature)
        } catch {
            throw CommandFailure(status: CommandFailure.usage, message: "error: --verify-signature: \(error.reason)")
        }
        configuration.signedResponses[host] = SignedResponsePolicy(mode: mode == .enforced ? .enforced : .informational, roots: [root])
    }

    /// `signature: verified` or the failure, on standard error, when a signature was asked for.
    func report(_ verification: ResponseVerification) {
        guard verifySignature != nil else { return }
        switch verification {
        case .verified: StandardError.write("signature: " + TextStyle.standardError.green("verified"))
        case .notRequested: StandardError.warn("signature: not checked (the final hop's host is not the URL's host).")
        case .failed(let error): StandardError.write("signature: " + TextStyle.standardError.red("FAILED") + " (\(error.code)): \(error.reason)")
        }
    }
}
