#if URLSessionAdapter
public import Foundation
import ServerTrust
public import ServerTrustHTTP

/// A `SessionError` as the `URLError` URLSession's callers expect.
///
/// No text in the error carries the request URL's user-info, query or fragment: the failing URL
/// (`URLError.failingURL`) is the redacted one, as in the description, because printing an
/// `NSError` prints its `userInfo` and apps log errors whole. The caller has its own request's
/// URL, and the underlying `SessionError.url` keeps it whole.
enum URLErrorMapping {
    /// - Parameter refusedBeforeSending: the adapter refused the request before the session saw
    ///   it (no session, an unsupported task, a request the admission rule refuses): `badURL`
    ///   for an `invalidRequest`, else `unsupportedURL`, whatever the URL's scheme.
    static func urlError(for error: any Error, url: URL?, refusedBeforeSending: Bool = false) -> URLError {
        var userInfo: [String: Any] = [NSUnderlyingErrorKey: error]
        if let url, let redacted = URL(string: URLRedaction.redacted(url)) { userInfo[NSURLErrorFailingURLErrorKey] = redacted }
        let code: URLError.Code
        switch error {
        case let error as SessionError:
            code = refusedBeforeSending ? (error.code == .invalidRequest ? .badURL : .unsupportedURL) : self.code(for: error, url: url)
            userInfo[NSLocalizedDescriptionKey] = error.description
            if let report = error.rejectedTrust { userInfo[ServerTrustURLProtocol.trustReportKey] = report }
        default:
            // A `Session` throws only `SessionError`; kept for whatever a later one might add.
            code = .unknown
            userInfo[NSLocalizedDescriptionKey] = "\(error)"
        }
        return URLError(code, userInfo: userInfo)
    }

    /// The URLError code for a session failure; the transport failure decides among transfer
    /// failures.
    static func code(for error: SessionError, url: URL?) -> URLError.Code {
        switch error.code {
        case .trustEvaluationFailed: return .serverCertificateUntrusted
        case .timedOut: return .timedOut
        case .cancelled, .sessionShutDown: return .cancelled
        case .tooManyRedirects: return .httpTooManyRedirects
        case .insecureRedirect: return .appTransportSecurityRequiresSecureConnection
        case .invalidRequest:
            // The session refuses plain http: (without allowsPlainHTTP) and every other scheme.
            switch url?.scheme?.lowercased() {
            case "https"?: return .badURL
            case "http"?: return .appTransportSecurityRequiresSecureConnection
            default: return .unsupportedURL
            }
        case .responseTooLarge, .requestBodyTooLarge: return .dataLengthExceedsMaximum
        case .contentDecodingFailed: return .cannotDecodeContentData
        case .responseSignatureInvalid: return .badServerResponse
        case .uploadFailed, .bodyNotReplayable: return .requestBodyStreamExhausted
        case .transferFailed: return error.transportFailure.map(code(for:)) ?? .cannotLoadFromNetwork
        default: return .unknown
        }
    }

    private static func code(for failure: SessionError.TransportFailure) -> URLError.Code {
        switch failure {
        case .nameResolutionFailed: return .cannotFindHost
        case .connectionFailed: return .cannotConnectToHost
        case .timedOut: return .timedOut
        case .tlsHandshakeFailed, .tlsFailed: return .secureConnectionFailed
        case .trustRejected: return .serverCertificateUntrusted
        case .tooManyRedirects: return .httpTooManyRedirects
        case .emptyReply: return .zeroByteResource
        case .responseTruncated, .connectionReset, .tlsAlertReceived, .http2StreamFailed: return .networkConnectionLost
        default: return .cannotLoadFromNetwork
        }
    }
}

extension URLError {
    /// The `SessionError` behind a failure of a request served by ``ServerTrustURLProtocol``,
    /// from `NSUnderlyingErrorKey`; its `trustError` says why a server was rejected.
    public var sessionError: SessionError? { userInfo[NSUnderlyingErrorKey] as? SessionError }

    /// The rejected evaluation (`SessionError.rejectedTrust`) of a request served by
    /// ``ServerTrustURLProtocol``, from ``ServerTrustURLProtocol/trustReportKey``.
    public var rejectedTrust: TrustReport? { userInfo[ServerTrustURLProtocol.trustReportKey] as? TrustReport }
}
#endif
