import HTTPTypes

/// Decodes the body of a response whose signature has been verified over the bytes as received
/// (docs/SIGNED_RESPONSES_V1.md, section 6): the session turns libcurl's decoding off for a
/// signed-response host and decodes here, afterwards.
///
/// gzip (`x-gzip`), `deflate` (zlib-wrapped or raw) and `identity`, stacked in the order of the
/// `Content-Encoding` fields; the decoded size of every layer is bounded by the body limit, and
/// inflating stops within one 64 KiB chunk of it. Everything else fails closed with
/// ``SessionError/Code/contentDecodingFailed``: the session never hands out encoded bytes as if
/// they were decoded.
enum ContentDecoder {
    /// At most this many codings are undone, as libcurl (CVE-2023-23916) limits its stack.
    static let maximumLayers = 5

    /// `body` with every coding of `headers`' `Content-Encoding` removed, and the codings
    /// removed (in the order the server applied them). An empty body, or one with no coding
    /// but `identity`, is returned as it is.
    ///
    /// - Throws: ``SessionError/Code/responseTooLarge`` when a decoded layer passes `limit`;
    ///   ``SessionError/Code/contentDecodingFailed`` for a coding the session cannot decode, or
    ///   data that is not a valid, complete stream of its coding.
    static func decode(
        _ body: [UInt8], headers: HTTPFields, limit: Int, url: String
    ) throws(SessionError) -> (body: [UInt8], decoded: [ContentCoding]) {
        let tokens = ContentCoding.tokens(of: headers)
        guard !tokens.isEmpty, !body.isEmpty else { return (body, []) }
        guard tokens.count <= maximumLayers else {
            throw SessionError(
                .contentDecodingFailed, "The response has \(tokens.count) content codings (\(tokens.joined(separator: ", "))); at most \(maximumLayers) are decoded.",
                url: url)
        }
        var codings: [ContentCoding] = []
        for token in tokens {
            guard let coding = ContentCoding(token: token), coding.isDecodedBySession else {
                throw SessionError(
                    .contentDecodingFailed,
                    "The response is encoded with \"\(token)\", which the session cannot decode for a host with a signed-response policy (it asked for gzip and deflate only); the body is withheld rather than handed out encoded.",
                    url: url)
            }
            codings.append(coding)
        }
        var decoded = body
        for coding in codings.reversed() {
            decoded = try inflate(decoded, coding: coding, limit: limit, url: url)
        }
        return (decoded, codings)
    }

    private static func inflate(_ data: [UInt8], coding: ContentCoding, limit: Int, url: String) throws(SessionError) -> [UInt8] {
        let format: ZlibInflater.Format = coding == .gzip ? .gzip : looksZlibWrapped(data) ? .zlib : .raw
        do throws(ZlibInflater.Failure) {
            return try ZlibInflater(format).inflateAll(data, limit: limit)
        } catch {
            switch error {
            case .limitExceeded:
                throw SessionError(.responseTooLarge, "The decoded response body (\(coding)) exceeds the \(limit)-byte limit.", url: url)
            case .truncated:
                throw SessionError(.contentDecodingFailed, "The \(coding)-encoded response body ends before its compressed stream does.", url: url)
            case .trailingData:
                throw SessionError(.contentDecodingFailed, "Bytes follow the end of the \(coding)-encoded response body's compressed stream.", url: url)
            case .corrupt(let message):
                throw SessionError(.contentDecodingFailed, "The \(coding)-encoded response body is not valid \(coding) data: \(message).", url: url)
            }
        }
    }

    /// Whether `data` starts with a zlib header (RFC 1950: method 8, header checksum a
    /// multiple of 31); otherwise `deflate` is read as a raw stream, as libcurl does.
    static func looksZlibWrapped(_ data: [UInt8]) -> Bool {
        guard data.count >= 2 else { return false }
        return data[0] & 0x0F == 8 && (UInt16(data[0]) << 8 | UInt16(data[1])) % 31 == 0
    }
}
