import Foundation
internal import ServerTrust
public import ServerTrustLab

/// Reusable ``LocalHTTPHandler`` behaviours for servers that misbehave on purpose.
public enum LocalHTTPHandlers {
    /// Drops the first `count` requests for `path` (every path when nil) — closes each one's
    /// connection without a byte of response, as nginx's `return 444` — then declines, so the
    /// requests after them fall through to ``LocalHTTPRoutes``. Pass a negative count to drop
    /// every request. Counts across connections, in the order requests are read.
    public static func dropping(first count: Int, path: String? = nil) -> LocalHTTPHandler {
        let seen = Locked(0)
        return { request in
            guard path == nil || request.path == path else { return nil }
            let index = seen.withLock { seen in
                seen += 1
                return seen
            }
            return count < 0 || index <= count ? .noResponse : nil
        }
    }
}
