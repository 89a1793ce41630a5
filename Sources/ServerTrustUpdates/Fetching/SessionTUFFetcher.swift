import Foundation
public import ServerTrustHTTP
public import ServerTrustTUF

/// Fetches a TUF repository's files over a ServerTrust `Session`: the update host is evaluated
/// like any other host — its pins, its revocation policy, its TLS floor, on every connection —
/// and each download is held to the limits the `Updater` sets.
///
/// TUF's signatures decide what is trusted; the session decides whom the client talks to. Pin
/// the update host in the session's trust manager (its compiled-in pins): an interceptor then
/// gets no connection at all, so it can neither watch which targets a client asks for nor
/// serve it old, still-signed metadata until that expires.
///
/// The rules of `TUFFetching`, kept here:
/// - at most `maximumLength` bytes are read; more is `downloadTooLarge` (the endless-data
///   defence), and the transfer is cancelled there;
/// - the download ends by `deadline`; later is `slowRetrieval`;
/// - HTTP 403 and 404 are `notFound` (the end of the root chain), any other status but 200 is
///   `downloadFailed`;
/// - `https:` to any host; plain `http:` only to a loopback host (`localhost`, 127.0.0.0/8,
///   `[::1]`) and never with user-info; any other scheme is `invalidURL`. Plain `http:` also
///   needs a session made with `Session.Configuration.allowsPlainHTTP` (a test repository on
///   `http://127.0.0.1:PORT`): without it the session refuses the request, and the download
///   fails with `downloadFailed` naming `invalidRequest`.
///
/// A trust failure (a pin mismatch, a revoked certificate) is `downloadFailed` with the
/// session's reason: the refresh fails and the trusted metadata stays as it was.
public struct SessionTUFFetcher: TUFFetching {
    /// The session every download goes through.
    public let session: Session

    /// - Parameter session: the session to fetch with. Its redirect and retry policies apply;
    ///   for an update host, a session with `redirectPolicy = .disallow` keeps the client on the
    ///   host whose pins it checks. A repository served over plain http on loopback (a test, a
    ///   local mirror) also needs the session's `allowsPlainHTTP`; the fetcher still refuses
    ///   plain http to any other host.
    public init(session: Session) {
        self.session = session
    }

    public func fetch(_ url: String, maximumLength: Int, deadline: ContinuousClock.Instant) async throws(TUFError) -> [UInt8] {
        let target = try Self.checkedURL(url)
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else { throw TUFError(.slowRetrieval, "\(url): no time left for the download") }
        do {
            let response = try await session.stream(Request(url: target, timeout: remaining))
            switch response.status.code {
            case 200:
                break
            case 403, 404:
                response.body.cancel()
                throw TUFError(.notFound, "\(url): HTTP \(response.status.code)")
            default:
                response.body.cancel()
                throw TUFError(.downloadFailed, "\(url): HTTP \(response.status.code)")
            }
            var bytes: [UInt8] = []
            for try await chunk in response.body {
                guard bytes.count + chunk.count <= maximumLength else {
                    response.body.cancel()
                    throw TUFError(.downloadTooLarge, "\(url): over \(maximumLength) bytes")
                }
                bytes += chunk
                guard ContinuousClock.now < deadline else {
                    response.body.cancel()
                    throw TUFError(.slowRetrieval, "\(url): not downloaded within its time budget")
                }
            }
            return bytes
        } catch let error as TUFError {
            throw error
        } catch let error as SessionError {
            // A refused host is a trust failure whenever it comes — never "slow retrieval",
            // even when the refusal arrives after the deadline on a loaded machine.
            if let trustError = error.trustError {
                // Which check refused the host (pinMismatch, revoked…), not only that one did.
                throw TUFError(.downloadFailed, "\(url): \(error.code): \(trustError.code): \(trustError.reason)")
            }
            if error.code == .timedOut || error.transportFailure == .timedOut || ContinuousClock.now >= deadline {
                throw TUFError(.slowRetrieval, "\(url): \(error.reason)")
            }
            throw TUFError(.downloadFailed, "\(url): \(error.code): \(error.reason)")
        } catch {
            throw TUFError(.downloadFailed, "\(url): \(error)")
        }
    }

    /// `url` as a URL the fetcher may use: `https:`, or `http:` to a loopback host.
    static func checkedURL(_ url: String) throws(TUFError) -> URL {
        let lower = url.lowercased()
        if lower.hasPrefix("http://") {
            guard isLoopback(url) else { throw TUFError(.invalidURL, "\(url): plain http is accepted only for loopback hosts") }
        } else if !lower.hasPrefix("https://") {
            throw TUFError(.invalidURL, "\(url): not an http or https URL")
        }
        guard let parsed = URL(string: url), parsed.host != nil else { throw TUFError(.invalidURL, "\(url): not a valid URL") }
        return parsed
    }

    /// Whether the URL's host is `localhost`, an address in 127.0.0.0/8, or `[::1]`, with no
    /// user-info (`http://user@127.0.0.1/` is refused: what it names is not obvious to a reader).
    public static func isLoopback(_ url: String) -> Bool {
        guard let schemeEnd = url.range(of: "://") else { return false }
        var authority = url[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.contains("@") { return false }
        if authority.hasPrefix("[") {
            return authority.lowercased().hasPrefix("[::1]")
        }
        if let colon = authority.firstIndex(of: ":") { authority = authority[..<colon] }
        let host = authority.lowercased()
        if host == "localhost" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
