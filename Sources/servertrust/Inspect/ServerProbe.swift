import Foundation
import HTTPTypes
import ServerTrust
import ServerTrustHTTP

/// One connection to a server to see its chain, for `inspect` and `pins`: the only user of
/// ``InspectionTrustEvaluator``.
///
/// Sends a single `HEAD` (or `GET`) of `/` without credentials, follows no redirect, and keeps
/// only the status line of what comes back.
struct ServerProbe {
    /// The request method, `HEAD` or `GET`.
    enum Method: String, CaseIterable, Sendable {
        case head = "HEAD"
        case get = "GET"

        var httpMethod: HTTPRequest.Method { self == .head ? .head : .get }
    }

    let url: URL
    let method: Method
    let options: ConnectionOptions

    struct Result {
        let url: URL
        let method: Method
        /// Where the anchors came from: a file, or the system bundle.
        let anchorsOrigin: String
        let observation: ChainInspection
        /// Status and HTTP version, when the request completed.
        let status: Int?
        let httpVersion: String?
        /// Why the request did not complete after the chain was seen. The policy's host check
        /// (and libcurl's after it) runs after the evaluator has recorded the inspection, so a
        /// name mismatch ends here with the report intact.
        let transferFailure: (any Error)?
    }

    /// Connects and returns what the evaluator saw.
    ///
    /// - Throws: ``CommandFailure`` with status 3 (and a hint) when no handshake reached the
    ///   evaluator: nothing to report.
    func run() async throws(CommandFailure) -> Result {
        let probeURL = rootURL
        let (configuration, anchorsOrigin) = try options.sessionConfiguration()
        let evaluator = InspectionTrustEvaluator()
        let session: Session
        do {
            session = try Session(configuration: configuration)
        } catch {
            throw CommandFailure(status: CommandFailure.transfer, message: "error: \(error)")
        }
        defer { session.shutdown() }
        var status: Int?
        var httpVersion: String?
        var failure: (any Error)?
        do {
            let response = try await session.data(for: Request(method: method.httpMethod, url: probeURL, trustEvaluator: evaluator))
            status = response.status.code
            httpVersion = response.httpVersion
        } catch {
            failure = error
        }
        guard let observation = evaluator.observation else {
            let hints = (failure as? SessionError).map { FixHint.lines(forTransfer: $0, url: probeURL) } ?? []
            throw CommandFailure(
                status: CommandFailure.transfer,
                message: "error: could not reach \(probeURL.absoluteString): \(failure.map { "\($0)" } ?? "no TLS handshake took place")",
                hints: hints)
        }
        return Result(
            url: probeURL, method: method, anchorsOrigin: anchorsOrigin, observation: observation,
            status: status, httpVersion: httpVersion, transferFailure: failure)
    }

    /// The URL with path `/` and no query: the probe asks for nothing else.
    private var rootURL: URL {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.path = "/"
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return components.url ?? url
    }
}
