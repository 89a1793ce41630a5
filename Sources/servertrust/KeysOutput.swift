import Foundation
import ServerTrust

/// The JSON objects of `keys … --json`, one per subcommand.
enum KeysOutput {
    /// `keys create-root --json`: `file` (where the private key was written), `publicKey`
    /// (base64 of the 32 raw Ed25519 bytes), `keyID` (hex).
    struct Root: Encodable {
        let file: String
        let publicKey: String
        let keyID: String

        init(file: String, key: VerificationKey) {
            self.file = file
            publicKey = key.base64
            keyID = key.keyIDHex
        }
    }

    /// `keys issue-intermediate --json`: `file`, `intermediateKey` (base64 public key),
    /// `expires` (RFC 3339), `rootKeyID` (hex), `certificate` (base64 of the intermediate key
    /// certificate).
    struct Intermediate: Encodable {
        let file: String
        let intermediateKey: String
        let expires: Date
        let rootKeyID: String
        let certificate: String

        init(file: String, certificate: IntermediateKeyCertificate, rootKey: VerificationKey) {
            self.file = file
            intermediateKey = certificate.key.base64
            expires = certificate.expires
            rootKeyID = rootKey.keyIDHex
            self.certificate = certificate.base64
        }
    }

    /// `keys root-public --json`: `publicKey`, `keyID`, `version` (the header version the root
    /// signs under), `subjectPublicKeyInfo` (base64 DER).
    struct RootPublic: Encodable {
        let publicKey: String
        let keyID: String
        let version: Int
        let subjectPublicKeyInfo: String

        init(key: VerificationKey, version: Int) {
            publicKey = key.base64
            keyID = key.keyIDHex
            self.version = version
            subjectPublicKeyInfo = Data(key.subjectPublicKeyInfoDER).base64EncodedString()
        }
    }

    /// `keys create-jwk --json`: `file` (the private key), `jwksFile` (the key set's file, or
    /// null when it was not written), `keyID`, `algorithm` (the RFC 9421 name) and `jwks` (the
    /// public key set, `{"keys": [{kty, crv, x, …, kid, alg}]}`).
    struct JWK: Encodable {
        struct KeySet: Encodable {
            let keys: [[String: String]]
        }

        let file: String
        let jwksFile: String?
        let keyID: String
        let algorithm: String
        let jwks: KeySet

        init(file: String, jwksFile: String?, keyID: String, algorithm: String, keys: [(keyID: String, key: SignaturePublicKey)]) {
            self.file = file
            self.jwksFile = jwksFile
            self.keyID = keyID
            self.algorithm = algorithm
            jwks = KeySet(keys: keys.map { entry in
                Dictionary(entry.key.jsonWebKey(keyID: entry.keyID).map { ($0.name, $0.value) }) { first, _ in first }
            })
        }

        private enum CodingKeys: String, CodingKey { case file, jwksFile, keyID, algorithm, jwks }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(file, forKey: .file)
            // Explicitly null: "printed, not written" is an answer.
            try container.encode(jwksFile, forKey: .jwksFile)
            try container.encode(keyID, forKey: .keyID)
            try container.encode(algorithm, forKey: .algorithm)
            try container.encode(jwks, forKey: .jwks)
        }
    }
}
