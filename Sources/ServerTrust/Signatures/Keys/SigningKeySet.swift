import Foundation

/// Response-signing public keys by key ID, read from a JSON Web Key Set (RFC 7517): the keys
/// HTTP Message Signatures (RFC 9421) name with `keyid`, delivered and rotated as a trust
/// update target (`jwks.json`).
///
/// Accepted keys: `OKP`/`Ed25519` (`x`), `EC`/`P-256` (`x`, `y`) and `RSA` (`n`, `e`, at least
/// 2,048 bits), each with a `kid`. Members this library does not use (`use`, `alg`, `key_ops`,
/// `x5c`…) are ignored, as RFC 7517 asks. Refused, naming the line and member: a key without
/// `kid`, two keys with one `kid`, another key type or curve, malformed base64url, and any
/// private-key member (`d`, `p`, `q`…) — a set that publishes a private key is a leak, not a
/// configuration.
public struct SigningKeySet: Sendable {
    /// The keys by `kid`.
    public let keys: [String: SignaturePublicKey]

    /// An empty set.
    public init() { keys = [:] }

    /// - Parameter keys: the keys by key ID.
    public init(keys: [String: SignaturePublicKey]) { self.keys = keys }

    /// The key IDs, sorted.
    public var keyIDs: [String] { keys.keys.sorted() }

    /// Whether the set holds no key (every signature it checks is `unknownKey`).
    public var isEmpty: Bool { keys.isEmpty }

    /// The keys of this set that `other` holds too — the same public key, under any key ID —
    /// each under its key ID here: the compiled-in keys a delivered set has not withdrawn.
    /// - Parameter other: the set that bounds this one.
    public func keepingKeys(heldBy other: SigningKeySet) -> SigningKeySet {
        let held = Set(other.keys.values.map(\.pemRepresentation))
        return SigningKeySet(keys: keys.filter { held.contains($0.value.pemRepresentation) })
    }

    /// Reads a JWKS document.
    /// - Parameters:
    ///   - jwks: the JSON text, UTF-8.
    ///   - fileName: how errors name the input; default `jwks.json`.
    /// - Throws: `TrustError` `.invalidPolicyFile` naming the file, line and member.
    public init(jwks: [UInt8], fileName: String = "jwks.json") throws {
        let reader = PolicyFileReader(fileName: fileName)
        let document: LocatedJSON
        do {
            document = try LocatedJSON.parse(jwks)
        } catch {
            throw reader.error(error.line, "", error.message)
        }
        try self.init(field: PolicyFileReader.Field(node: document, path: "", line: document.line), reader: reader)
    }

    /// A JWKS object inside a larger JSON document (a policy file's `keys`); errors name its
    /// lines.
    init(field root: PolicyFileReader.Field, reader: PolicyFileReader) throws {
        let members = Dictionary(try reader.entries(root).map { ($0.key, $0.field) }) { first, _ in first }
        guard let keysField = members["keys"] else { throw reader.error(root, "missing member \"keys\"") }
        var keys: [String: SignaturePublicKey] = [:]
        for element in try reader.array(keysField) {
            var fields: [String: PolicyFileReader.Field] = [:]
            for entry in try reader.entries(element) { fields[entry.key] = entry.field }
            if let secret = ["d", "p", "q", "dp", "dq", "qi", "k", "oth"].first(where: { fields[$0] != nil }) {
                throw reader.error(fields[secret]!, "a private-key member: a JWKS of verification keys must hold public keys only")
            }
            guard let kidField = fields["kid"] else { throw reader.error(element, "missing member \"kid\"") }
            let kid = try reader.string(kidField)
            guard !kid.isEmpty else { throw reader.error(kidField, "an empty key ID") }
            guard keys[kid] == nil else { throw reader.error(kidField, "a second key with key ID \(kid.debugDescription)") }
            guard let ktyField = fields["kty"] else { throw reader.error(element, "missing member \"kty\"") }
            func bytes(_ name: String) throws -> [UInt8] {
                guard let field = fields[name] else { throw reader.error(element, "missing member \"\(name)\"") }
                guard let decoded = Base64URL.decode(try reader.string(field)) else { throw reader.error(field, "not base64url") }
                return decoded
            }
            do {
                switch try reader.string(ktyField) {
                case "OKP":
                    let curve = try fields["crv"].map(reader.string)
                    guard curve == "Ed25519" else { throw reader.error(fields["crv"] ?? element, "an OKP key on \(curve ?? "no curve"); only Ed25519 is accepted") }
                    keys[kid] = try SignaturePublicKey(ed25519RawRepresentation: try bytes("x"))
                case "EC":
                    let curve = try fields["crv"].map(reader.string)
                    guard curve == "P-256" else { throw reader.error(fields["crv"] ?? element, "an EC key on \(curve ?? "no curve"); only P-256 is accepted") }
                    let x = try bytes("x"), y = try bytes("y")
                    guard x.count == 32, y.count == 32 else { throw reader.error(element, "a P-256 coordinate is 32 bytes") }
                    keys[kid] = try SignaturePublicKey(subjectPublicKeyInfoDER: Self.p256Prefix + [0x04] + x + y)
                case "RSA":
                    keys[kid] = try SignaturePublicKey(subjectPublicKeyInfoDER: Self.rsaSPKI(modulus: try bytes("n"), exponent: try bytes("e")))
                case let other:
                    throw reader.error(ktyField, "key type \(other.debugDescription) is not accepted (OKP, EC, RSA)")
                }
            } catch let error as TrustError where error.isKeyRefusal {
                throw reader.error(element, "key \(kid.debugDescription): \(error.reason)")
            }
        }
        self.keys = keys
    }

    /// A JWKS document (`{"keys":[…]}`) of public keys, one JSON Web Key per line, in the
    /// order given: what `servertrust keys create-jwk` writes and a trust update publishes as
    /// `jwks.json`. Read back by ``init(jwks:fileName:)``.
    /// - Parameter keys: key IDs with their public keys.
    public static func jwksDocument(_ keys: [(keyID: String, key: SignaturePublicKey)]) -> String {
        func quoted(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case let c where c.value < 0x20: out += String(format: "\\u%04x", c.value)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        let lines = keys.map { entry in
            "    {" + entry.key.jsonWebKey(keyID: entry.keyID).map { quoted($0.name) + ": " + quoted($0.value) }.joined(separator: ", ") + "}"
        }
        return "{\"keys\": [\n" + lines.joined(separator: ",\n") + "\n]}\n"
    }

    /// SubjectPublicKeyInfo of an uncompressed P-256 point, up to the point.
    static let p256Prefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03,
        0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// SubjectPublicKeyInfo of an RSA key (rsaEncryption, RFC 8017 `RSAPublicKey`).
    static func rsaSPKI(modulus: [UInt8], exponent: [UInt8]) -> [UInt8] {
        func length(_ count: Int) -> [UInt8] {
            if count < 0x80 { return [UInt8(count)] }
            var bytes: [UInt8] = []
            var remaining = count
            while remaining > 0 {
                bytes.insert(UInt8(remaining & 0xFF), at: 0)
                remaining >>= 8
            }
            return [0x80 | UInt8(bytes.count)] + bytes
        }
        func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag] + length(content.count) + content }
        func integer(_ magnitude: [UInt8]) -> [UInt8] {
            var bytes = Array(magnitude.drop { $0 == 0 })
            if bytes.isEmpty { bytes = [0] }
            if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
            return tlv(0x02, bytes)
        }
        let algorithm: [UInt8] = [0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00]
        let publicKey = tlv(0x30, integer(modulus) + integer(exponent))
        return tlv(0x30, algorithm + tlv(0x03, [0x00] + publicKey))
    }
}
