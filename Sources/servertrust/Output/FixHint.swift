import Foundation
import ServerTrust
import ServerTrustHTTP

/// What to do about a failure, as `hint:` lines for standard error: the flag to add, the value
/// to give it, or the command that shows more.
enum FixHint {
    /// Hints for a trust evaluation that rejected the server at `url`; `suggestInspect: false`
    /// leaves out "run `servertrust inspect`", for `inspect` itself.
    static func lines(for error: TrustError, url: String, suggestInspect: Bool = true) -> [String] {
        let inspect = "`servertrust inspect \(url)`"
        let lines = allLines(for: error, url: url)
        return suggestInspect ? lines : lines.filter { !$0.contains(inspect) }
    }

    private static func allLines(for error: TrustError, url: String) -> [String] {
        switch error.code {
        case .pinMismatch:
            var lines: [String] = []
            if let intermediate = error.evidence.chain.dropFirst().first ?? error.evidence.chain.first {
                lines.append("if this server is genuine, pin one of the keys listed above, e.g. --pin \(intermediate.pin) (\(intermediate.subject))")
            }
            lines.append("`servertrust pins \(url)` prints the server's pins; add --swift for a ServerTrustManager entry")
            lines.append("if you did not expect these keys, something between you and the server presents its own certificate: do not pin it")
            return lines
        case .chainValidationFailed:
            return [
                "the chain does not lead to a trusted CA at this time; `servertrust inspect \(url)` shows the chain and which check fails",
                "for a private CA, pass its root with --ca FILE",
            ]
        case .hostMismatch:
            return [
                "`servertrust inspect \(url)` lists the names the certificate is valid for",
                "use one of those names in the URL, with --resolve NAME:PORT:ADDR to reach this address",
            ]
        case .revoked:
            return ["the CA revoked this certificate: the server needs a new one; nothing on the client side should override this"]
        case .revocationStatusUnknown:
            return ["the revocation status could not be established; check that the server staples OCSP or that its CRL is reachable"]
        case .noEvaluatorForHost:
            return ["add a pattern for this host to the ServerTrustManager"]
        default:
            return []
        }
    }

    /// Hints for a response that failed its signature check under `scheme` (`fetch
    /// --verify-signature`, `--signature-keys`).
    static func lines(for error: ResponseSignatureError, scheme: SignedResponsePolicy.Scheme) -> [String] {
        let missing = switch scheme {
        case .rfc9421: "no RFC 9421 Signature answering this request"
        case .either: "neither an X-ServerTrust-Signature nor an RFC 9421 Signature answering this request"
        default: "no X-ServerTrust-Signature"
        }
        let cause: [String] = switch error.code {
        case .bodyMismatch:
            ["the body changed after the server signed it: something between you and the server rewrote it (a proxy whose CA this machine trusts), or the server compresses after signing"]
        case .missingSignature:
            ["the response carries \(missing): the server does not sign this route, or something other than the server answered"]
        case .unknownKey:
            ["the signature names a key ID that is not in --signature-keys: compare it with the key set the server publishes (`servertrust keys export-jwks`); a key the server never published means the response is forged"]
        case .untrustedIntermediate:
            ["the response is signed under another root: compare --verify-signature with `servertrust keys root-public`; if they match, the response is forged"]
        case .intermediateExpired:
            ["the server's intermediate key has expired: issue the next one with `servertrust keys issue-intermediate` and load it on the server"]
        case .duplicateSignedField:
            ["the response has two ETag or two Location fields where the server signs one: something on the way split or added a field"]
        case .requestMismatch:
            ["the server signed a different request: it was altered on its way (path, port, query or body), or a proxy in front of the server rewrites Host (pass the public host, with its port if not 443, to the signer)"]
        default:
            []
        }
        return cause + ["--mode informational prints the body and the result instead of failing; never act on a body that failed"]
    }

    /// Hints for a transfer that failed before or outside trust evaluation.
    static func lines(forTransfer error: SessionError, url: URL) -> [String] {
        let host = url.host ?? "the host"
        let port = url.port ?? 443
        switch error.transportFailure {
        case .nameResolutionFailed?:
            return ["\(host) does not resolve; to reach a server by address, add --resolve \(host):\(port):ADDR"]
        case .connectionFailed?:
            return ["nothing accepted a connection at \(host):\(port); check the port, or map the name with --resolve \(host):\(port):ADDR"]
        case .timedOut?:
            return ["no answer in time; check the address and any firewall, or pass --proxy URL if this network needs one"]
        case .tlsHandshakeFailed?:
            return ["the TLS handshake failed: is this port speaking HTTPS? `openssl s_client -connect \(host):\(port)` shows the server's side"]
        default:
            return []
        }
    }

    /// `hint: text` lines for standard error.
    static func format(_ hints: [String]) -> [String] {
        hints.map { TextStyle.standardError.bold("hint:") + " " + $0 }
    }
}
