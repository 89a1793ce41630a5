/// One `X-ServerTrust-Signature` entry: `v1; cert=…; salt=…; nonce=…; time=…; req=…; body=…; sig=…`.
///
/// The parser is written for hostile input: it works on bytes, checks every length before it
/// allocates, accepts each parameter exactly once with a fixed decoded size, and reports any
/// deviation as `ResponseSignatureError.Code.malformedSignature` rather than guessing.
struct SignatureHeader: Equatable {
    /// Longest entry accepted; a real v1 entry is about 420 bytes.
    static let maximumLength = 1024
    /// Most fields and comma-separated entries looked at in one response.
    static let maximumEntries = 8
    /// Versions are `v1` to `v999`.
    static let versions = 1...999
    static let saltLength = 16
    static let digestLength = 32

    var version: Int
    var certificate: [UInt8]
    var salt: [UInt8]
    var nonce: [UInt8]
    var requestTime: Int64
    var requestDigest: [UInt8]
    var bodyDigest: [UInt8]
    var signature: [UInt8]

    /// The field value, parameters in canonical order.
    var text: String {
        "v\(version); cert=\(StrictBase64.encode(certificate)); salt=\(StrictBase64.encode(salt)); "
            + "nonce=\(StrictBase64.encode(nonce)); time=\(requestTime); req=\(StrictBase64.encode(requestDigest)); "
            + "body=\(StrictBase64.encode(bodyDigest)); sig=\(StrictBase64.encode(signature))"
    }

    // MARK: Selecting an entry

    /// The entries of every `X-ServerTrust-Signature` field (fields may arrive repeated or
    /// comma-joined by an intermediary), each with its version, or a failure.
    static func entries(in headers: [(name: String, value: String)]) throws(ResponseSignatureError) -> [(version: Int, text: ArraySlice<UInt8>)] {
        var entries: [(version: Int, text: ArraySlice<UInt8>)] = []
        var fields = 0
        for field in headers where field.name.caseInsensitiveCompare(SignedResponseHeader.signature) == .orderedSame {
            fields += 1
            let value = Array(field.value.utf8)
            guard fields <= maximumEntries, value.count <= maximumLength * maximumEntries else {
                throw malformed("The response has too many or too long \(SignedResponseHeader.signature) fields.")
            }
            for part in value.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
                let entry = trim(part)
                guard entries.count < maximumEntries else { throw malformed("The response has more than \(maximumEntries) signature entries.") }
                guard !entry.isEmpty else { throw malformed("A \(SignedResponseHeader.signature) entry is empty.") }
                guard entry.count <= maximumLength else {
                    throw malformed("A \(SignedResponseHeader.signature) entry is \(entry.count) bytes; at most \(maximumLength) are accepted.")
                }
                let token = trim(entry.prefix { $0 != UInt8(ascii: ";") })
                guard let version = parseVersion(token) else {
                    throw malformed("A \(SignedResponseHeader.signature) entry does not start with a version such as \"v1\".")
                }
                entries.append((version, entry))
            }
        }
        return entries
    }

    /// `v` followed by 1 to 3 digits without a leading zero.
    static func parseVersion(_ token: ArraySlice<UInt8>) -> Int? {
        guard token.first == UInt8(ascii: "v"), let number = decimal(token.dropFirst(), maximumDigits: 3), versions.contains(Int(number)) else {
            return nil
        }
        return Int(number)
    }

    // MARK: Parsing one entry

    private enum Parameter: String, CaseIterable {
        case cert, salt, nonce, time, req, body, sig
    }

    /// Parses a whole entry whose version token was already read.
    init(parsing entry: ArraySlice<UInt8>, version: Int) throws(ResponseSignatureError) {
        var values: [Parameter: ArraySlice<UInt8>] = [:]
        let parts = entry.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false).dropFirst()
        guard parts.count <= Parameter.allCases.count else { throw Self.malformed("The signature has more than \(Parameter.allCases.count) parameters.") }
        for part in parts {
            let item = Self.trim(part)
            guard let equals = item.firstIndex(of: UInt8(ascii: "=")),
                let parameter = Parameter(rawValue: String(decoding: item[..<equals], as: UTF8.self))
            else {
                throw Self.malformed("The signature has an unknown or unnamed parameter.")
            }
            guard values[parameter] == nil else { throw Self.malformed("The signature repeats \"\(parameter.rawValue)\".") }
            values[parameter] = item[item.index(after: equals)...]
        }
        if let missing = Parameter.allCases.first(where: { values[$0] == nil }) {
            throw Self.malformed("The signature is truncated: \"\(missing.rawValue)\" is missing.")
        }
        func bytes(_ parameter: Parameter, _ lengths: ClosedRange<Int>) throws(ResponseSignatureError) -> [UInt8] {
            guard let decoded = StrictBase64.decode(values[parameter]!), lengths.contains(decoded.count) else {
                throw Self.malformed("The signature's \"\(parameter.rawValue)\" is not canonical base64 of \(lengths.lowerBound == lengths.upperBound ? "\(lengths.lowerBound)" : "\(lengths.lowerBound)–\(lengths.upperBound)") bytes.")
            }
            return decoded
        }
        self.version = version
        certificate = try bytes(.cert, IntermediateKeyCertificate.encodedLength...IntermediateKeyCertificate.encodedLength)
        salt = try bytes(.salt, Self.saltLength...Self.saltLength)
        nonce = try bytes(.nonce, SignatureChallenge.nonceLengths)
        requestDigest = try bytes(.req, Self.digestLength...Self.digestLength)
        bodyDigest = try bytes(.body, Self.digestLength...Self.digestLength)
        signature = try bytes(.sig, VerificationKey.signatureLength...VerificationKey.signatureLength)
        guard let time = Self.decimal(values[.time]!), time <= IntermediateKeyCertificate.latestTime else {
            throw Self.malformed("The signature's \"time\" is not a decimal number of seconds before 9999.")
        }
        requestTime = time
    }

    init(
        version: Int, certificate: [UInt8], salt: [UInt8], nonce: [UInt8], requestTime: Int64,
        requestDigest: [UInt8], bodyDigest: [UInt8], signature: [UInt8]
    ) {
        self.version = version
        self.certificate = certificate
        self.salt = salt
        self.nonce = nonce
        self.requestTime = requestTime
        self.requestDigest = requestDigest
        self.bodyDigest = bodyDigest
        self.signature = signature
    }

    // MARK: The signed message

    /// `"ServerTrust-Response-Signature-v<N>" 0x00`, then length-prefixed: salt, nonce, request
    /// time (8 bytes), request digest, status (2 bytes), ETag, Location, body digest.
    static func message(
        version: Int, salt: [UInt8], nonce: [UInt8], requestTime: Int64, requestDigest: [UInt8],
        status: Int, etag: String, location: String, bodyDigest: [UInt8]
    ) -> [UInt8] {
        SignedFields.message(
            domain: Array("ServerTrust-Response-Signature-v\(version)".utf8) + [0],
            [
                salt, nonce, SignedFields.uint64(UInt64(requestTime)), requestDigest, SignedFields.uint16(UInt16(clamping: status)),
                Array(etag.utf8), Array(location.utf8), bodyDigest,
            ])
    }

    /// The message this entry's signature must cover, for a response with these fields.
    func message(status: Int, etag: String, location: String) -> [UInt8] {
        Self.message(
            version: version, salt: salt, nonce: nonce, requestTime: requestTime, requestDigest: requestDigest,
            status: status, etag: etag, location: location, bodyDigest: bodyDigest)
    }

    /// The signed value of a response header: the one field of that name, trimmed of spaces and
    /// tabs as the session's header parser trims it, or empty when absent.
    ///
    /// More than one field is refused rather than joined: an application reads the first, so
    /// a joined value would let an intermediary split `ETag: "a, b"` into `"a` and `b"` and keep
    /// the signature valid while the application reads something the server never sent.
    ///
    /// - Throws: `ResponseSignatureError.Code.duplicateSignedField` for two or more fields.
    static func signedValue(of name: String, in headers: [(name: String, value: String)]) throws(ResponseSignatureError) -> String {
        let values = headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
        guard values.count <= 1 else {
            throw ResponseSignatureError(
                .duplicateSignedField, "The response has \(values.count) \(name) fields; a signed response has at most one, since only one is signed.")
        }
        return values.first.map { String(decoding: trim(ArraySlice($0.utf8)), as: UTF8.self) } ?? ""
    }

    // MARK: Lexical helpers

    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    static func trim(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isSpace: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return [] }
        return bytes[first...last]
    }

    /// A non-negative decimal without sign, spaces or leading zeros, of at most `maximumDigits`.
    static func decimal<S: Collection>(_ digits: S, maximumDigits: Int = 12) -> Int64? where S.Element == UInt8 {
        guard !digits.isEmpty, digits.count <= maximumDigits, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        guard digits.count == 1 || digits.first != UInt8(ascii: "0") else { return nil }
        return digits.reduce(0) { $0 * 10 + Int64($1 - 0x30) }
    }

    static func malformed(_ reason: String) -> ResponseSignatureError {
        ResponseSignatureError(.malformedSignature, reason)
    }
}
