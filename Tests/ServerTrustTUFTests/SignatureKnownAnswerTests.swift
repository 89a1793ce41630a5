import Foundation
@testable import ServerTrust
import Testing
@testable import ServerTrustTUF

/// Signatures made by securesystemslib (tuf_repo.py vectors) verify through ServerTrust's one
/// primitive, and fail when one bit changes.
@Suite struct SignatureKnownAnswerTests {
    struct Vectors: Decodable {
        struct Signature: Decodable {
            let key: [String: JSONish]
            let message_hex: String
            let sig: String
        }
        let signatures: [Signature]
    }

    enum JSONish: Decodable {
        case string(String)
        case object([String: String])
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) { self = .string(text) } else { self = .object(try container.decode([String: String].self)) }
        }
    }

    static func keys() throws -> [(TUFKey, [UInt8], String)] {
        let data = try Data(contentsOf: TUFFixtures.fixtures.appendingPathComponent("vectors.json"))
        let vectors = try JSONDecoder().decode(Vectors.self, from: data)
        return try vectors.signatures.map { vector in
            guard case .string(let keyType) = vector.key["keytype"], case .string(let scheme) = vector.key["scheme"],
                case .object(let keyval) = vector.key["keyval"], let publicValue = keyval["public"]
            else { throw TUFError(.malformedMetadata, "vector") }
            let json = JSONValue.object([
                ("keytype", .string(keyType)), ("scheme", .string(scheme)), ("keyval", .object([("public", .string(publicValue))])),
            ])
            return (try TUFKey(json, "key"), Digest.bytes(hex: vector.message_hex)!, vector.sig)
        }
    }

    @Test func ed25519EcdsaAndRsaPssSignaturesBySecuresystemslibVerify() throws {
        let keys = try Self.keys()
        #expect(keys.map(\.0.scheme) == ["ed25519", "ecdsa-sha2-nistp256", "rsassa-pss-sha256"])
        for (key, message, signature) in keys {
            #expect(key.verifies(signatureHex: signature, payload: message), "\(key.scheme)")
            #expect(key.verifies(signatureHex: signature.uppercased(), payload: message), "\(key.scheme): hex in either case")
            var altered = message
            altered[0] ^= 1
            #expect(!key.verifies(signatureHex: signature, payload: altered), "\(key.scheme)")
        }
    }

    @Test func aSignatureNeverVerifiesUnderAnotherSchemeThanTheKeys() throws {
        let keys = try Self.keys()
        let (ed, message, signature) = keys[0]
        let raw = Digest.bytes(hex: ed.publicValue)!
        let key = try SignaturePublicKey(ed25519RawRepresentation: raw)
        let bytes = Digest.bytes(hex: signature)!
        #expect(key.isValidSignature(bytes, for: message, algorithm: .ed25519))
        #expect(!key.isValidSignature(bytes, for: message, algorithm: .ecdsaP256SHA256))
        #expect(!key.isValidSignature(bytes, for: message, algorithm: .rsaPSSSHA256))
    }

    @Test func malformedKeysAreRefusedWithTheirKind() {
        let pem = #expect(throws: TrustError.self) { try SignaturePublicKey(pem: "not a key") }
        #expect(pem?.code == .malformedPublicKey)
        let raw = #expect(throws: TrustError.self) { try SignaturePublicKey(ed25519RawRepresentation: [1, 2, 3]) }
        #expect(raw?.code == .malformedPublicKey)
    }

    @Test func rawECDSASignaturesAreReencodedAsDER() {
        let raw = [UInt8](repeating: 0x80, count: 32) + [UInt8](repeating: 0, count: 31) + [1]
        let der = EVPSignature.derFromRawECDSA(raw, componentLength: 32) ?? []
        #expect(der.first == 0x30)
        #expect(der.count == 2 + (2 + 33) + (2 + 1))
    }
}
