import Foundation
import HTTPTypes
internal import ServerTrust

/// What a session does with a redirect: whether to follow it, and the next hop's request.
///
/// - Follows 301, 302, 303, 307 and 308 with a `Location`, at most ``maximumHops`` times
///   (``SessionError/Code/tooManyRedirects`` past that).
/// - Refuses to leave TLS: https → http is ``SessionError/Code/insecureRedirect``, and http → http
///   only with ``allowsPlainHTTP``.
/// - 303 (except for `HEAD`), and 301/302 for `POST`, become a `GET` without the body and its
///   `Content-Type`/`Content-Length`; every other redirect resends the body, which a stream cannot
///   do (``SessionError/Code/bodyNotReplayable``).
/// - Across origins (scheme, normalised host, port) `Authorization`, `Cookie` and
///   `Proxy-Authorization` are dropped; across hosts a request's own trust evaluator is dropped
///   too, as it speaks for its own host only. The next hop's host is evaluated under its own
///   policy by the session.
struct RedirectRules: Sendable {
    var maximumHops: Int
    var allowsPlainHTTP: Bool

    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]
    static let credentialHeaders: Set<HTTPField.Name> = [.authorization, .cookie, .proxyAuthorization]

    /// The request for the next hop, or nil when the response is not a redirect to follow.
    /// - Parameter hopsSoFar: the hops already made, this response's included.
    func nextRequest(
        after request: Request, status: Int, headers: @autoclosure () -> HTTPFields, hopsSoFar: Int
    ) throws(SessionError) -> Request? {
        // The fields are made from the bytes received only for a redirect status.
        guard maximumHops > 0, Self.redirectStatuses.contains(status),
            let location = headers().first(where: { $0.name == .location })?.value
        else { return nil }
        guard hopsSoFar <= maximumHops else {
            throw SessionError(.tooManyRedirects, "More than \(maximumHops) redirects.", url: request.url.absoluteString)
        }
        guard let target = URL(string: location, relativeTo: request.url)?.absoluteURL, target.host != nil else {
            throw SessionError(.invalidRequest, "The redirect Location \"\(URLRedaction.redacted(location))\" is not a valid URL.", url: request.url.absoluteString)
        }
        let fromScheme = request.url.scheme?.lowercased()
        let toScheme = target.scheme?.lowercased()
        guard toScheme == "https" || (toScheme == "http" && fromScheme == "http" && allowsPlainHTTP) else {
            throw SessionError(
                .insecureRedirect, "Refusing a redirect from \(fromScheme ?? "?"): to \(toScheme ?? "?"): (\(URLRedaction.redacted(target))).",
                url: request.url.absoluteString)
        }
        var next = request
        next.url = target
        // Compared upper-cased, as the method is sent (`Method("post")` goes out as `POST`).
        let method = request.method.sentName
        if status == 303 && method != "HEAD" || (status == 301 || status == 302) && method == "POST" {
            next.method = .get
            next.body = nil
            next.headers.removeAll { $0.name == .contentType || $0.name == .contentLength }
        }
        if let body = next.uploadBody, !body.isReplayable {
            throw SessionError(
                .bodyNotReplayable,
                "The \(status) redirect to \(URLRedaction.redacted(target)) must resend the request body, and a streamed body can be read only once; send a file or bytes body, or send to the final URL.",
                url: request.url.absoluteString)
        }
        if !Self.sameOrigin(request.url, target) {
            next.headers.removeAll { Self.credentialHeaders.contains($0.name) }
        }
        if NormalizedHost(request.url.host ?? "") != NormalizedHost(target.host ?? "") {
            next.trustEvaluator = nil  // a per-request evaluator speaks for its own host only
        }
        return next
    }

    /// Same scheme, normalised host and (default-filled) port.
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil) }
        return a.scheme?.lowercased() == b.scheme?.lowercased()
            && NormalizedHost(a.host ?? "") == NormalizedHost(b.host ?? "") && port(a) == port(b)
    }
}
