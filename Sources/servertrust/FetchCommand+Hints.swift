import Foundation
import ServerTrust
import ServerTrustHTTP

extension FetchCommand {
    /// What to do about a failed fetch: the pin to add, the anchors to pass, the address to map,
    /// what a failed signature check points to.
    static func hints(for error: SessionError, url: URL, scheme: SignedResponsePolicy.Scheme?) -> [String] {
        if let trustError = error.trustError { return FixHint.lines(for: trustError, url: URLRedaction.redacted(url)) }
        if let signatureError = error.signatureError { return FixHint.lines(for: signatureError, scheme: scheme ?? .v1) }
        return FixHint.lines(forTransfer: error, url: url)
    }
}
