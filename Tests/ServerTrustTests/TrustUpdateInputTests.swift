import Foundation
@testable import ServerTrust
import ServerTrustTestSupport
import Testing

/// The inputs trust updates deliver besides a policy: the key deny-list and the response-signing
/// key set (JWKS). Bad input is an error naming the file, line and field — never a crash, never
/// a silently shorter list.
@Suite struct TrustUpdateInputTests {
    @Test func aDenyListReadsKeysAndIssuerSerialPairs() throws {
        let pin = "sha256/" + Data(repeating: 5, count: 32).base64EncodedString()
        let list = try KeyDenyList(data: Array("""
            {"version": 1, "spki": ["\(pin)"],
             "issuerAndSerial": [{"issuer": "CN=Issuing CA,O=Example", "serial": "00:0A:bc"}]}
            """.utf8))
        #expect(list.keys == [try Pin(pin)])
        #expect(list.certificates == [try KeyDenyList.IssuerAndSerial(issuer: "CN=Issuing CA,O=Example", serial: "ABC")])
        #expect(list.certificates.first?.serial == "ABC")
        #expect(KeyDenyList().isEmpty)
    }

    @Test(arguments: [
        ("{\"version\": 2, \"spki\": []}", "denylist.json:1: version: unsupported version"),
        ("{\"version\": 1, \"spki\": [\"sha1/AAAA\"]}", "denylist.json:1: spki[0]: not a sha256/ pin"),
        ("{\"version\": 1,\n \"keys\": []}", "denylist.json:2: keys: unknown field"),
        ("{\"version\": 1, \"issuerAndSerial\": [{\"issuer\": \"CN=x\", \"serial\": \"xyz\"}]}", "is not hexadecimal"),
        ("{\"version\": 1, \"issuerAndSerial\": [{\"serial\": \"01\"}]}", "missing field \"issuer\""),
        ("{\"version\": 1, \"spki\": [], \"spki\": []}", "denylist.json:1"),
        ("[", "denylist.json:1"),
    ])
    func aBadDenyListIsRefusedNamingTheProblem(text: String, expected: String) {
        #expect {
            try KeyDenyList(data: Array(text.utf8))
        } throws: { error in
            let error = error as? TrustError
            return error?.code == .invalidPolicyFile && error?.reason.contains(expected) == true
        }
    }

    /// An EC P-256 and an RSA key as JWKs give exactly the SubjectPublicKeyInfo OpenSSL encodes
    /// for them; Ed25519 by RFC 8037's example.
    @Test func aJWKSGivesTheKeysOpenSSLEncodes() throws {
        let ec = LabKey.ecP256().publicKey.subjectPublicKeyInfoDER
        let point = Array(ec.suffix(64))
        let rsaKey = LabKey.rsa().publicKey.subjectPublicKeyInfoDER
        let (modulus, exponent) = try #require(Self.rsaComponents(rsaKey))
        #expect(SigningKeySet.rsaSPKI(modulus: modulus, exponent: exponent) == rsaKey)
        let jwks = """
            {"keys": [
              {"kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "use": "sig"},
              {"kty": "EC", "crv": "P-256", "kid": "ec", "x": "\(Self.base64URL(point.prefix(32)))", "y": "\(Self.base64URL(point.suffix(32)))"},
              {"kty": "RSA", "kid": "rsa", "n": "\(Self.base64URL(modulus))", "e": "\(Self.base64URL(exponent))", "alg": "PS512"}
            ]}
            """
        let set = try SigningKeySet(jwks: Array(jwks.utf8))
        #expect(set.keyIDs == ["ec", "ed", "rsa"])
        #expect(set.keys["ed"]?.kind == .ed25519)
        #expect(set.keys["ec"]?.kind == .ecdsaP256)
        #expect(set.keys["rsa"]?.kind == .rsa)
    }

    @Test(arguments: [
        ("{\"keys\": [{\"kty\": \"OKP\", \"crv\": \"Ed25519\", \"x\": \"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"}]}", "missing member \"kid\""),
        ("{\"keys\": [{\"kty\": \"OKP\", \"crv\": \"Ed25519\", \"kid\": \"a\", \"x\": \"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\", \"d\": \"AA\"}]}", "private-key member"),
        ("{\"keys\": [{\"kty\": \"OKP\", \"crv\": \"Ed448\", \"kid\": \"a\", \"x\": \"AA\"}]}", "only Ed25519"),
        ("{\"keys\": [{\"kty\": \"oct\", \"kid\": \"a\"}]}", "key type \"oct\" is not accepted"),
        ("{\"keys\": [{\"kty\": \"OKP\", \"crv\": \"Ed25519\", \"kid\": \"a\", \"x\": \"!!\"}]}", "not base64url"),
        ("{\"keys\": [{\"kty\": \"OKP\", \"crv\": \"Ed25519\", \"kid\": \"a\", \"x\": \"AAAA\"}]}", "32 bytes"),
        ("{\"keys\": [{\"kty\": \"OKP\", \"crv\": \"Ed25519\", \"kid\": \"a\", \"x\": \"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"}, {\"kty\": \"OKP\", \"crv\": \"Ed25519\", \"kid\": \"a\", \"x\": \"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"}]}", "a second key with key ID"),
        ("{\"keys\": [{\"kty\": \"RSA\", \"kid\": \"a\", \"n\": \"AQAB\", \"e\": \"AQAB\"}]}", "key \"a\""),
        ("{}", "missing member \"keys\""),
    ])
    func aBadJWKSIsRefusedNamingTheProblem(text: String, expected: String) {
        #expect {
            try SigningKeySet(jwks: Array(text.utf8))
        } throws: { error in
            let error = error as? TrustError
            return error?.code == .invalidPolicyFile && error?.reason.contains(expected) == true
        }
    }

    static func base64URL(_ bytes: some Collection<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// n and e of an RSA SubjectPublicKeyInfo (a minimal DER walk for the test).
    static func rsaComponents(_ der: [UInt8]) -> (modulus: [UInt8], exponent: [UInt8])? {
        var index = 0
        func header() -> (tag: UInt8, length: Int)? {
            guard index + 2 <= der.count else { return nil }
            let tag = der[index]
            var length = Int(der[index + 1])
            index += 2
            if length & 0x80 != 0 {
                let count = length & 0x7F
                length = 0
                for _ in 0..<count { length = length << 8 | Int(der[index]); index += 1 }
            }
            return (tag, length)
        }
        guard header()?.tag == 0x30, let algorithm = header(), algorithm.tag == 0x30 else { return nil }
        index += algorithm.length
        guard header()?.tag == 0x03 else { return nil }
        index += 1
        guard header()?.tag == 0x30, let n = header(), n.tag == 0x02 else { return nil }
        let modulus = Array(der[index..<index + n.length])
        index += n.length
        guard let e = header(), e.tag == 0x02 else { return nil }
        return (Array(modulus.drop { $0 == 0 }), Array(der[index..<index + e.length]))
    }
}
