package import Foundation

/// A URL as text that is safe to show: in an error's description, a log line, a failure report,
/// a span attribute or the command line's output.
///
/// What is kept and what is dropped follows OpenTelemetry's `url.full` convention at its
/// strictest: the user-info (`user:password@`), the query and the fragment are removed —
/// credentials travel in the user-info, and a query often carries a token (`access_token=`,
/// `sig=`) — while the scheme, host, port and path stay, so that the text still says where a
/// request went. A path that itself carries a secret is not recognised.
///
/// Only text is redacted: wherever an API hands out a URL as a value (`Response.url`,
/// `SessionError.url`) it is the URL as made, for the program that made it.
package enum URLRedaction {
    /// `url` without user-info, query or fragment: `https://user:pw@host:8443/p?token=x#f`
    /// becomes `https://host:8443/p`.
    package static func redacted(_ url: URL) -> String {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true), components.host != nil else {
            return redacted(url.absoluteString)
        }
        return redacted(components) ?? fallback(url.absoluteString)
    }

    /// `text`, meant as a URL, redacted as the `URL` form is. Text that does not parse as
    /// a URL with a host (a bare `host[:port]`, a `Location` field that is no URL) is cut
    /// instead: everything from the first `?` or `#`, and the authority up to its last `@`.
    package static func redacted(_ text: String) -> String {
        if let components = URLComponents(string: text), components.host != nil, let redacted = redacted(components) {
            return redacted
        }
        return fallback(text)
    }

    private static func redacted(_ components: URLComponents) -> String? {
        var components = components
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string
    }

    private static func fallback(_ text: String) -> String {
        var kept = Substring(text.prefix { $0 != "?" && $0 != "#" })
        let authorityStart = kept.range(of: "://")?.upperBound ?? kept.startIndex
        let authority = kept[authorityStart...].prefix { $0 != "/" }
        if let at = authority.lastIndex(of: "@") { kept.removeSubrange(authorityStart...at) }
        return String(kept)
    }
}
