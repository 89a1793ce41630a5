import Foundation

/// An SPKI pin: the SHA-256 digest of a certificate's DER SubjectPublicKeyInfo.
///
/// Written `sha256/<base64>` (the HPKP and OkHttp form); curl's `sha256//<base64>` is accepted
/// on input. Any other algorithm is refused: SHA-1 pins are weak, and a pin whose algorithm we
/// do not compute could never match, which would fail closed but confusingly.
public struct Pin: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The 32-byte SHA-256 digest.
    public let digest: [UInt8]

    package init(sha256Digest: [UInt8]) {
        precondition(sha256Digest.count == 32)
        digest = sha256Digest
    }

    /// Parses `sha256/<base64>` or `sha256//<base64>`.
    ///
    /// - Throws: ``TrustError/Code/unsupportedPinAlgorithm`` for `sha1/…` and any other
    ///   algorithm; ``TrustError/Code/malformedPin`` for a missing prefix, bad base64 or a digest
    ///   that is not 32 bytes.
    public init(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let slash = trimmed.firstIndex(of: "/") else {
            throw TrustError(.malformedPin, "Pin \"\(trimmed)\" has no algorithm prefix; write it as sha256/<base64 of the SPKI SHA-256>.")
        }
        let algorithm = trimmed[..<slash].lowercased()
        var encoded = trimmed[trimmed.index(after: slash)...]
        // curl writes sha256//<base64>; but base64 itself may start with "/" (one digest in 64),
        // so drop the extra slash only when what follows is not already a whole digest.
        if encoded.hasPrefix("/"), Data(base64Encoded: String(encoded))?.count != 32 { encoded = encoded.dropFirst() }
        switch algorithm {
        case "sha256":
            break
        case "sha1", "md5":
            throw TrustError(.unsupportedPinAlgorithm, "Pin \"\(trimmed)\" uses \(algorithm), which is too weak; use sha256/<base64>.")
        default:
            throw TrustError(.unsupportedPinAlgorithm, "Pin \"\(trimmed)\" uses the unknown algorithm \"\(algorithm)\"; only sha256 is supported.")
        }
        guard !encoded.isEmpty else {
            throw TrustError(.malformedPin, "Pin \"\(trimmed)\" has no digest after \"sha256/\".")
        }
        guard let data = Data(base64Encoded: String(encoded)) else {
            throw TrustError(.malformedPin, "Pin \"\(trimmed)\" is not valid base64 (standard alphabet with = padding).")
        }
        guard data.count == 32 else {
            throw TrustError(.malformedPin, "Pin \"\(trimmed)\" decodes to \(data.count) bytes; a SHA-256 digest is 32.")
        }
        digest = [UInt8](data)
    }

    /// The pin as `sha256/<base64>`.
    public var description: String { "sha256/" + base64 }

    /// The base64 digest alone.
    public var base64: String { Data(digest).base64EncodedString() }

    /// The pin in curl's `CURLOPT_PINNEDPUBLICKEY` form, `sha256//<base64>`.
    public var curlForm: String { "sha256//" + base64 }

    public static func < (lhs: Pin, rhs: Pin) -> Bool { lhs.digest.lexicographicallyPrecedes(rhs.digest) }
}
