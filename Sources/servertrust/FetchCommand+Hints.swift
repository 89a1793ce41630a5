import Foundation
import ServerTrustHTTP

extension FetchCommand {
    /// What to do about a failed fetch: the pin to add, the anchors to pass, the address to map.
    static func hints(for error: SessionError, url: URL) -> [String] {
        if let trustError = error.trustError { return FixHint.lines(for: trustError, url: url.absoluteString) }
        return FixHint.lines(forTransfer: error, url: url)
    }
}
