/// What referring metadata says of a file: its version, and optionally its length and hashes.
package struct MetaFile: Sendable {
    package let version: Int64
    package let length: Int64?
    /// Algorithm and hex digest, in document order.
    package let hashes: [(algorithm: String, digest: String)]?

    init(_ value: JSONValue, _ path: String) throws(TUFError) {
        let fields = try Fields(value, path)
        version = try fields.integer("version")
        guard version > 0 else { throw TUFError(.malformedMetadata, "\(path).version is below 1") }
        length = try fields.optionalInteger("length")
        if let length, length < 0 { throw TUFError(.malformedMetadata, "\(path).length is negative") }
        hashes = try fields.optional("hashes").map { (value) throws(TUFError) in try parseHashes(value, "\(path).hashes") }
    }

    /// Checks `data` against the length and hashes, when given.
    func verify(_ data: [UInt8], name: String) throws(TUFError) {
        if let length, Int64(data.count) != length {
            throw TUFError(.lengthOrHashMismatch, "\(name): \(data.count) bytes, expected \(length)")
        }
        if let hashes { try verifyHashes(data, hashes, name: name) }
    }
}

func parseHashes(_ value: JSONValue, _ path: String) throws(TUFError) -> [(algorithm: String, digest: String)] {
    guard case .object(let members) = value, !members.isEmpty else { throw TUFError(.malformedMetadata, "\(path) is not a non-empty object") }
    var hashes: [(algorithm: String, digest: String)] = []
    for member in members {
        guard case .string(let digest) = member.value else { throw TUFError(.malformedMetadata, "\(path).\(member.key) is not a string") }
        hashes.append((member.key, digest))
    }
    return hashes
}

func verifyHashes(_ data: [UInt8], _ hashes: [(algorithm: String, digest: String)], name: String) throws(TUFError) {
    for (algorithm, expected) in hashes {
        guard let digest = Digest.algorithm(named: algorithm) else {
            throw TUFError(.lengthOrHashMismatch, "\(name): unsupported hash algorithm \(algorithm)")
        }
        let observed = Digest.hex(Digest.hash(data, algorithm: digest))
        guard observed == expected else {
            throw TUFError(.lengthOrHashMismatch, "\(name): \(algorithm) \(observed), expected \(expected)")
        }
    }
}

/// A target file: its length and hashes, and whatever `custom` holds.
public struct TargetFile: Sendable {
    public let path: String
    public let length: Int64
    public let hashes: [(algorithm: String, digest: String)]
    public let custom: JSONValue?

    init(path: String, _ value: JSONValue, _ fieldPath: String) throws(TUFError) {
        let fields = try Fields(value, fieldPath)
        self.path = path
        length = try fields.integer("length")
        guard length >= 0 else { throw TUFError(.malformedMetadata, "\(fieldPath).length is negative") }
        hashes = try parseHashes(try fields.required("hashes"), "\(fieldPath).hashes")
        custom = fields.optional("custom")
    }

    /// Checks downloaded or cached bytes against the length and every hash.
    package func verify(_ data: [UInt8]) throws(TUFError) {
        guard Int64(data.count) == length else {
            throw TUFError(.lengthOrHashMismatch, "target \(path): \(data.count) bytes, expected \(length)")
        }
        try verifyHashes(data, hashes, name: "target \(path)")
    }
}
