import Foundation
import HTTPTypes

/// How one transfer asks for content codings and who decodes them: libcurl as the body
/// arrives, or — for a host whose responses are checked by a signature that covers
/// `Content-Encoding` — the session, after the signature has been verified over the bytes as
/// received. A checked host whose signature does not cover it (v1) gets nothing decoded.
struct ContentDecodingPlan: Sendable {
    /// The `Accept-Encoding` value (`CURLOPT_ACCEPT_ENCODING`); nil: none is sent and nothing
    /// is decoded.
    let acceptEncoding: String?
    /// libcurl decodes (`CURLOPT_HTTP_CONTENT_DECODING` 1), else the session does afterwards.
    let decodesInLibcurl: Bool

    /// Nothing asked for, nothing decoded: bodies as received.
    static let off = ContentDecodingPlan(acceptEncoding: nil, decodesInLibcurl: false)

    private init(acceptEncoding: String?, decodesInLibcurl: Bool) {
        self.acceptEncoding = acceptEncoding
        self.decodesInLibcurl = decodesInLibcurl
    }

    /// The plan for `codings` (duplicates dropped, order kept); for a signature-checked host
    /// only the codings the session decodes itself are asked for, and with none left, none.
    ///
    /// A checked host whose signature does not cover `Content-Encoding` gets ``off``, whatever
    /// `codings` says: nothing is asked for and nothing is decoded, so the application receives
    /// the signed bytes as they were received (third security review, finding 3). Decoding by
    /// an unsigned label would let an intermediary that adds `Content-Encoding: gzip` to signed
    /// gzip bytes hand the application their inflated content marked `verified`. The v1 format
    /// never covers it (`SignedResponsePolicy`); a scheme that does may decode.
    init(_ codings: [ContentCoding], verifiesSignatures: Bool, signatureCoversContentEncoding: Bool = false) {
        if verifiesSignatures && !signatureCoversContentEncoding {
            self = .off
            return
        }
        var seen = Set<ContentCoding>()
        let asked = codings.filter { seen.insert($0).inserted && (!verifiesSignatures || $0.isDecodedBySession) }
        self.init(acceptEncoding: asked.isEmpty ? nil : asked.map(\.name).joined(separator: ", "), decodesInLibcurl: !verifiesSignatures)
    }

    /// Refuses a coding the runtime libcurl cannot decode: asking for it would be a promise the
    /// session cannot keep.
    static func validate(_ codings: [ContentCoding], url: String? = nil) throws(SessionError) {
        let missing = codings.filter { !$0.isSupportedByLibcurl }
        guard missing.isEmpty else {
            throw SessionError(
                .invalidRequest,
                "contentDecoding lists \(missing.map(\.name).joined(separator: ", ")), which this libcurl (\(CurlRuntime.libcurlVersion)) cannot decode; it decodes \(ContentCoding.supportedByLibcurl.map(\.name).joined(separator: ", ")).",
                url: url)
        }
    }

    /// The body to hand out and the codings removed from it. Called after the signature check.
    ///
    /// libcurl has already decoded (or failed the transfer with `CURLE_BAD_CONTENT_ENCODING`
    /// for a coding it does not know), so only the record is made; otherwise the session
    /// decodes here, bounded by `limit`.
    /// `headers` are made from the bytes received only when decoding was asked for, and `url`
    /// spelled out only when the session decodes.
    func finish(_ body: [UInt8], headers: @autoclosure () -> HTTPFields, limit: Int, url: URL) throws(SessionError) -> (body: [UInt8], decoded: [ContentCoding]) {
        guard acceptEncoding != nil else { return (body, []) }
        guard !decodesInLibcurl else {
            return (body, body.isEmpty ? [] : ContentCoding.tokens(of: headers()).compactMap(ContentCoding.init(token:)))
        }
        return try ContentDecoder.decode(body, headers: headers(), limit: limit, url: url.absoluteString)
    }
}
