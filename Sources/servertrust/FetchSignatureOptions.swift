import ArgumentParser
import Foundation
import ServerTrust
import ServerTrustHTTP

/// `fetch --verify-signature KEY --signature-keys JWKS [--mode enforced|informational]`: check
/// the response's signature for the URL's host — v1 (`X-ServerTrust-Signature`) against a root
/// key, RFC 9421 against a JWKS key set, or either of them during a migration when both are given.
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
            "Verify the response's RFC 9421 signature (Signature, Content-Digest) against this JWKS key set for the URL's host. "
                + "With --verify-signature too, either scheme is accepted (a migration).",
            valueName: "JWKS_FILE"))
    var signatureKeys: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "enforced (a failure exits 1, no body) or informational (the body is printed, the failure reported and, with --report-uri, sent). "
                + "Applies to --pin, --revocation, --verify-signature and --signature-keys; default validation is always enforced.",
            valueName: "enforced|informational"))
    var mode: Mode = .enforced

    /// The scheme the URL's host is checked under: v1, RFC 9421, or either when both a root and
    /// a key set are given; nil when no signature is asked for.
    var scheme: SignedResponsePolicy.Scheme? {
        switch (verifySignature != nil, signatureKeys != nil) {
        case (false, false): nil
        case (true, false): .v1
        case (false, true): .rfc9421
        case (true, true): .either
        }
    }

    /// The signed-response policy the options ask for, for the URL's host policy
    /// (`HostPolicy.signedResponses`); nil when no signature is asked for.
    func policy() throws -> SignedResponsePolicy? {
        let policyMode: SignedResponsePolicy.Mode = mode == .enforced ? .enforced : .informational
        let roots = try verifySignature.map { [try Self.root($0)] }
        let messageSignatures = try signatureKeys.map { MessageSignaturePolicy(keys: try Self.keySet(fromFile: $0)) }
        switch (roots, messageSignatures) {
        case (nil, nil): return nil
        case (let roots?, nil): return SignedResponsePolicy(mode: policyMode, roots: roots)
        case (nil, let messageSignatures?): return SignedResponsePolicy(mode: policyMode, messageSignatures: messageSignatures)
        case (let roots?, let messageSignatures?): return SignedResponsePolicy(migrating: policyMode, roots: roots, messageSignatures: messageSignatures)
        }
    }

    private static func root(_ base64: String) throws -> SignedResponseRoot {
        do {
            return try SignedResponseRoot(base64: base64)
        } catch {
            throw CommandFailure(status: CommandFailure.usage, message: "error: --verify-signature: \(error.reason)")
        }
    }

    /// The key set in `path`; errors name the file (and the line, for a malformed set). An
    /// empty set is refused: nothing could ever verify against it.
    private static func keySet(fromFile path: String) throws -> SigningKeySet {
        guard let contents = FileManager.default.contents(atPath: path) else {
            throw CommandFailure(status: CommandFailure.usage, message: "error: --signature-keys: cannot read \(path).")
        }
        let keys: SigningKeySet
        do {
            keys = try SigningKeySet(jwks: Array(contents), fileName: path)
        } catch let error as TrustError {
            throw CommandFailure(status: CommandFailure.usage, message: "error: --signature-keys: \(error.reason)")
        }
        guard !keys.keys.isEmpty else {
            throw CommandFailure(status: CommandFailure.usage, message: "error: --signature-keys: \(path) holds no keys; no response could verify.")
        }
        return keys
    }

    /// `signature: verified` or the failure, on standard error, when a signature was asked for.
    func report(_ verification: ResponseVerification) {
        guard scheme != nil else { return }
        switch verification {
        case .verified: StandardError.write("signature: " + TextStyle.standardError.green("verified"))
        case .notRequested: StandardError.warn("signature: not checked (the final hop's host is not the URL's host).")
        case .failed(let error): StandardError.write("signature: " + TextStyle.standardError.red("FAILED") + " (\(error.code)): \(error.reason)")
        }
    }
}
