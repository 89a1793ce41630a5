import Foundation
import ServerTrust
import ServerTrustHTTP

/// The JSON object of `inspect --json`: the library's ``ChainInspection`` (its fields at the
/// top level) and what only the probe knows.
///
/// Fields added here: `url` (the probed URL), `method` (`HEAD` or `GET`), `anchors` (a file,
/// or the system bundle), `response` (`{status, httpVersion}`, when the request completed)
/// and `transferError` (`{message, code, curlCode}`, when it did not complete after the
/// handshake; `code` and `curlCode` for a ``SessionError``), `certificateTransparency` (with
/// `--ct-log-list`: the report-only outcome, as `fetch --json`'s) and
/// `signedCertificateTimestamps` (without a list, when the server showed any:
/// `[{source, logID, timestamp}]`).
struct InspectOutput: Encodable {
    struct Response: Encodable {
        let status: Int
        let httpVersion: String
    }

    struct TransferError: Encodable {
        let message: String
        let code: String?
        let curlCode: Int?
    }

    let result: ServerProbe.Result
    let scts: InspectedSCTs

    private enum CodingKeys: String, CodingKey {
        case url, method, anchors, response, transferError, certificateTransparency, signedCertificateTimestamps
    }

    func encode(to encoder: any Encoder) throws {
        try result.observation.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(result.url.absoluteString, forKey: .url)
        try container.encode(result.method.rawValue, forKey: .method)
        try container.encode(result.anchorsOrigin, forKey: .anchors)
        try container.encodeIfPresent(
            result.status.map { Response(status: $0, httpVersion: result.httpVersion ?? "") }, forKey: .response)
        if let failure = result.transferFailure {
            let session = failure as? SessionError
            try container.encode(
                TransferError(message: "\(failure)", code: session?.code.description, curlCode: session?.curlCode),
                forKey: .transferError)
        }
        try container.encodeIfPresent(scts.report, forKey: .certificateTransparency)
        if !scts.entries.isEmpty { try container.encode(scts.entries, forKey: .signedCertificateTimestamps) }
    }
}
