// Test vectors of RFC 9421 (HTTP Message Signatures) and RFC 9530 (Digest Fields), data only.
//
// Source: the final text of draft-ietf-httpbis-message-signatures (-19, published as RFC 9421) and
// draft-ietf-httpbis-digest-headers (-13, published as RFC 9530), as kept in
// github.com/httpwg/http-extensions (archive/*.md). Values were unwrapped mechanically from the
// RFC 8792 '\' line wrapping the RFCs print; nothing was retyped by hand. Cross-checked against
// the RFC vector files of remitly-oss/httpsig-go (testdata/b2x_*), yaronf/httpsign and the
// http-message-signatures 3.0.0 test suite.
//
// Checked cryptographically (Python `cryptography`, `hashlib`, `hmac`):
// - every public/private PEM pair below holds the same key, and the JWK raw values match the PEMs;
// - ed25519 (B.2.6, B.4): re-signing the signature base with the private key gives the same bytes;
// - hmac-sha256 (B.2.5): HMAC over the signature base with the decoded secret gives the same bytes;
// - rsa-pss-sha512 (B.2.1-B.2.3, Sections 2.4, 3.2; MGF1-SHA-512, salt 64 bytes),
//   ecdsa-p256-sha256 (B.2.4, B.3, Sections 2.4, 4.3; raw r||s) and rsa-v1_5-sha256 (Section 4.3)
//   verify against the public keys (these algorithms are randomized, only verifiable);
// - every digest in `digestExamples` was recomputed over its content.
//
// Discrepancy: draft -19 prints the Appendix B.2 test-response's Content-Digest as
// sha-512=:JlEy2bfUz7WrWIjc1qV6KVLpdr/7L5/L4h7Sxvh6sNHpDQWDCL+GauFQWcZBvVDhiyOnAQsxzZFYwi0wDH+1pw==:
// which is not the digest of its content (httpwg/http-extensions PR #2669, left to the RFC Editor).
// `responseHeaders` carries the correct value, sha-512=:mEWXIS7M...aGgfLQ==:, the one B.2.4's
// signature base covers (and the B.2.4 signature verifies over).
//
// Signature bases are the exact bytes signed: lines joined by "\n", no trailing newline.

/// RFC 9421 / RFC 9530 test vectors.
enum RFC9421Vectors {
    /// One HTTP field line, in message order (names as printed; compare case-insensitively).
    struct Field: Sendable, Equatable {
        let name: String
        let value: String
    }

    /// An HTTP message as printed in the RFC. `target` is the request-target in origin form;
    /// `authority` is the Host value. Signature-Input/Signature fields are NOT included here:
    /// append `Example.signatureInputHeader` / `Example.signatureHeader` to get the signed message.
    struct Message: Sendable {
        let method: String?
        let target: String?
        let authority: String?
        let status: Int?
        let headers: [Field]
        let body: String
    }

    /// One signature example.
    struct Example: Sendable {
        /// Where the example is in the RFC.
        let name: String
        /// The signature label (the Dictionary key in Signature-Input and Signature).
        let label: String
        let keyID: String
        /// The algorithm that produced the signature (known from the key when there is no `alg` parameter).
        let algorithm: String
        /// The `alg` signature parameter's value, nil when the Signature-Input has none.
        let algParameter: String?
        let created: Int
        let expires: Int?
        let nonce: String?
        let tag: String?
        /// Serialized component identifiers in order, quotes and parameters included,
        /// e.g. `"@authority"`, `"@query-param";name="Pet"`, `"@method";req`.
        let coveredComponents: [String]
        /// The serialized `@signature-params` value (the Signature-Input member value).
        let signatureParams: String
        /// The Signature-Input field value carrying this signature (`label=(...)...`).
        let signatureInputHeader: String
        /// The Signature field value carrying this signature (`label=:base64:`).
        let signatureHeader: String
        /// The signature bytes, base64 (the Byte Sequence in `signatureHeader`).
        let signature: String
        /// The exact signature base: lines joined by "\n", no trailing newline.
        let signatureBase: String
        /// False when the RFC shows the signed message but not its signature base; the base was
        /// then derived from the message and confirmed by verifying the signature against it.
        let signatureBaseIsPrintedInRFC: Bool
        let isResponse: Bool
        /// True when signing `signatureBase` with the key reproduces `signature` byte for byte
        /// (ed25519, hmac-sha256, rsa-v1_5-sha256); RSA-PSS and ECDSA can only be verified.
        let isDeterministic: Bool
        /// The message the signature is over (without Signature-Input/Signature fields).
        let message: Message
        /// For responses with `;req` components (or bound to a request): the request.
        let request: Message?
    }

    /// An RFC 9530 (or RFC 9421 example) digest: `fieldValue` is the Dictionary member printed in
    /// the RFC, over exactly the UTF-8 bytes of `content`.
    struct DigestExample: Sendable {
        let name: String
        /// "Content-Digest" or "Repr-Digest" (same algorithm; Repr-Digest is over the representation).
        let field: String
        let content: String
        let algorithm: String
        let digestBase64: String
        let fieldValue: String
    }

    /// Raw key values from the RFC's JWK forms (base64url, no padding): `d` private scalar or seed,
    /// `x`/`y` public coordinates (Ed25519: `x` is the 32-byte public key, `y` is nil).
    struct RawKey: Sendable {
        let d: String
        let x: String
        let y: String?
    }

    // MARK: - Keys (RFC 9421 Appendix B.1), PEM text as the RFC prints it, no trailing newline

    static let rsaKeyID = "test-key-rsa"
    static let rsaPSSKeyID = "test-key-rsa-pss"
    static let eccP256KeyID = "test-key-ecc-p256"
    static let ed25519KeyID = "test-key-ed25519"
    static let sharedSecretKeyID = "test-shared-secret"

    /// B.1.1 test-key-rsa, 2048-bit, PKCS#1 RSAPublicKey.
    static let testKeyRSAPublicPEM = [
        #"-----BEGIN RSA PUBLIC KEY-----"#,
        #"MIIBCgKCAQEAhAKYdtoeoy8zcAcR874L8cnZxKzAGwd7v36APp7Pv6Q2jdsPBRrw"#,
        #"WEBnez6d0UDKDwGbc6nxfEXAy5mbhgajzrw3MOEt8uA5txSKobBpKDeBLOsdJKFq"#,
        #"MGmXCQvEG7YemcxDTRPxAleIAgYYRjTSd/QBwVW9OwNFhekro3RtlinV0a75jfZg"#,
        #"kne/YiktSvLG34lw2zqXBDTC5NHROUqGTlML4PlNZS5Ri2U4aCNx2rUPRcKIlE0P"#,
        #"uKxI4T+HIaFpv8+rdV6eUgOrB2xeI1dSFFn/nnv5OoZJEIB+VmuKn3DCUcCZSFlQ"#,
        #"PSXSfBDiUGhwOw76WuSSsf1D4b/vLoJ10wIDAQAB"#,
        #"-----END RSA PUBLIC KEY-----"#,
    ].joined(separator: "\n")
    /// B.1.1 test-key-rsa, PKCS#1 RSAPrivateKey.
    static let testKeyRSAPrivatePEM = [
        #"-----BEGIN RSA PRIVATE KEY-----"#,
        #"MIIEqAIBAAKCAQEAhAKYdtoeoy8zcAcR874L8cnZxKzAGwd7v36APp7Pv6Q2jdsP"#,
        #"BRrwWEBnez6d0UDKDwGbc6nxfEXAy5mbhgajzrw3MOEt8uA5txSKobBpKDeBLOsd"#,
        #"JKFqMGmXCQvEG7YemcxDTRPxAleIAgYYRjTSd/QBwVW9OwNFhekro3RtlinV0a75"#,
        #"jfZgkne/YiktSvLG34lw2zqXBDTC5NHROUqGTlML4PlNZS5Ri2U4aCNx2rUPRcKI"#,
        #"lE0PuKxI4T+HIaFpv8+rdV6eUgOrB2xeI1dSFFn/nnv5OoZJEIB+VmuKn3DCUcCZ"#,
        #"SFlQPSXSfBDiUGhwOw76WuSSsf1D4b/vLoJ10wIDAQABAoIBAG/JZuSWdoVHbi56"#,
        #"vjgCgkjg3lkO1KrO3nrdm6nrgA9P9qaPjxuKoWaKO1cBQlE1pSWp/cKncYgD5WxE"#,
        #"CpAnRUXG2pG4zdkzCYzAh1i+c34L6oZoHsirK6oNcEnHveydfzJL5934egm6p8DW"#,
        #"+m1RQ70yUt4uRc0YSor+q1LGJvGQHReF0WmJBZHrhz5e63Pq7lE0gIwuBqL8SMaA"#,
        #"yRXtK+JGxZpImTq+NHvEWWCu09SCq0r838ceQI55SvzmTkwqtC+8AT2zFviMZkKR"#,
        #"Qo6SPsrqItxZWRty2izawTF0Bf5S2VAx7O+6t3wBsQ1sLptoSgX3QblELY5asI0J"#,
        #"YFz7LJECgYkAsqeUJmqXE3LP8tYoIjMIAKiTm9o6psPlc8CrLI9CH0UbuaA2JCOM"#,
        #"cCNq8SyYbTqgnWlB9ZfcAm/cFpA8tYci9m5vYK8HNxQr+8FS3Qo8N9RJ8d0U5Csw"#,
        #"DzMYfRghAfUGwmlWj5hp1pQzAuhwbOXFtxKHVsMPhz1IBtF9Y8jvgqgYHLbmyiu1"#,
        #"mwJ5AL0pYF0G7x81prlARURwHo0Yf52kEw1dxpx+JXER7hQRWQki5/NsUEtv+8RT"#,
        #"qn2m6qte5DXLyn83b1qRscSdnCCwKtKWUug5q2ZbwVOCJCtmRwmnP131lWRYfj67"#,
        #"B/xJ1ZA6X3GEf4sNReNAtaucPEelgR2nsN0gKQKBiGoqHWbK1qYvBxX2X3kbPDkv"#,
        #"9C+celgZd2PW7aGYLCHq7nPbmfDV0yHcWjOhXZ8jRMjmANVR/eLQ2EfsRLdW69bn"#,
        #"f3ZD7JS1fwGnO3exGmHO3HZG+6AvberKYVYNHahNFEw5TsAcQWDLRpkGybBcxqZo"#,
        #"81YCqlqidwfeO5YtlO7etx1xLyqa2NsCeG9A86UjG+aeNnXEIDk1PDK+EuiThIUa"#,
        #"/2IxKzJKWl1BKr2d4xAfR0ZnEYuRrbeDQYgTImOlfW6/GuYIxKYgEKCFHFqJATAG"#,
        #"IxHrq1PDOiSwXd2GmVVYyEmhZnbcp8CxaEMQoevxAta0ssMK3w6UsDtvUvYvF22m"#,
        #"qQKBiD5GwESzsFPy3Ga0MvZpn3D6EJQLgsnrtUPZx+z2Ep2x0xc5orneB5fGyF1P"#,
        #"WtP+fG5Q6Dpdz3LRfm+KwBCWFKQjg7uTxcjerhBWEYPmEMKYwTJF5PBG9/ddvHLQ"#,
        #"EQeNC8fHGg4UXU8mhHnSBt3EA10qQJfRDs15M38eG2cYwB1PZpDHScDnDA0="#,
        #"-----END RSA PRIVATE KEY-----"#,
    ].joined(separator: "\n")
    /// B.1.2 test-key-rsa-pss, SubjectPublicKeyInfo (rsaEncryption OID).
    static let testKeyRSAPSSPublicPEM = [
        #"-----BEGIN PUBLIC KEY-----"#,
        #"MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAr4tmm3r20Wd/PbqvP1s2"#,
        #"+QEtvpuRaV8Yq40gjUR8y2Rjxa6dpG2GXHbPfvMs8ct+Lh1GH45x28Rw3Ry53mm+"#,
        #"oAXjyQ86OnDkZ5N8lYbggD4O3w6M6pAvLkhk95AndTrifbIFPNU8PPMO7OyrFAHq"#,
        #"gDsznjPFmTOtCEcN2Z1FpWgchwuYLPL+Wokqltd11nqqzi+bJ9cvSKADYdUAAN5W"#,
        #"Utzdpiy6LbTgSxP7ociU4Tn0g5I6aDZJ7A8Lzo0KSyZYoA485mqcO0GVAdVw9lq4"#,
        #"aOT9v6d+nb4bnNkQVklLQ3fVAvJm+xdDOp9LCNCN48V2pnDOkFV6+U9nV5oyc6XI"#,
        #"2wIDAQAB"#,
        #"-----END PUBLIC KEY-----"#,
    ].joined(separator: "\n")
    /// B.1.2 test-key-rsa-pss, PKCS#8 whose AlgorithmIdentifier is id-RSASSA-PSS (1.2.840.113549.1.1.10),
    /// not rsaEncryption: some parsers reject it; the inner RSAPrivateKey is ordinary PKCS#1.
    static let testKeyRSAPSSPrivatePEM = [
        #"-----BEGIN PRIVATE KEY-----"#,
        #"MIIEvgIBADALBgkqhkiG9w0BAQoEggSqMIIEpgIBAAKCAQEAr4tmm3r20Wd/Pbqv"#,
        #"P1s2+QEtvpuRaV8Yq40gjUR8y2Rjxa6dpG2GXHbPfvMs8ct+Lh1GH45x28Rw3Ry5"#,
        #"3mm+oAXjyQ86OnDkZ5N8lYbggD4O3w6M6pAvLkhk95AndTrifbIFPNU8PPMO7Oyr"#,
        #"FAHqgDsznjPFmTOtCEcN2Z1FpWgchwuYLPL+Wokqltd11nqqzi+bJ9cvSKADYdUA"#,
        #"AN5WUtzdpiy6LbTgSxP7ociU4Tn0g5I6aDZJ7A8Lzo0KSyZYoA485mqcO0GVAdVw"#,
        #"9lq4aOT9v6d+nb4bnNkQVklLQ3fVAvJm+xdDOp9LCNCN48V2pnDOkFV6+U9nV5oy"#,
        #"c6XI2wIDAQABAoIBAQCUB8ip+kJiiZVKF8AqfB/aUP0jTAqOQewK1kKJ/iQCXBCq"#,
        #"pbo360gvdt05H5VZ/RDVkEgO2k73VSsbulqezKs8RFs2tEmU+JgTI9MeQJPWcP6X"#,
        #"aKy6LIYs0E2cWgp8GADgoBs8llBq0UhX0KffglIeek3n7Z6Gt4YFge2TAcW2WbN4"#,
        #"XfK7lupFyo6HHyWRiYHMMARQXLJeOSdTn5aMBP0PO4bQyk5ORxTUSeOciPJUFktQ"#,
        #"HkvGbym7KryEfwH8Tks0L7WhzyP60PL3xS9FNOJi9m+zztwYIXGDQuKM2GDsITeD"#,
        #"2mI2oHoPMyAD0wdI7BwSVW18p1h+jgfc4dlexKYRAoGBAOVfuiEiOchGghV5vn5N"#,
        #"RDNscAFnpHj1QgMr6/UG05RTgmcLfVsI1I4bSkbrIuVKviGGf7atlkROALOG/xRx"#,
        #"DLadgBEeNyHL5lz6ihQaFJLVQ0u3U4SB67J0YtVO3R6lXcIjBDHuY8SjYJ7Ci6Z6"#,
        #"vuDcoaEujnlrtUhaMxvSfcUJAoGBAMPsCHXte1uWNAqYad2WdLjPDlKtQJK1diCm"#,
        #"rqmB2g8QE99hDOHItjDBEdpyFBKOIP+NpVtM2KLhRajjcL9Ph8jrID6XUqikQuVi"#,
        #"4J9FV2m42jXMuioTT13idAILanYg8D3idvy/3isDVkON0X3UAVKrgMEne0hJpkPL"#,
        #"FYqgetvDAoGBAKLQ6JZMbSe0pPIJkSamQhsehgL5Rs51iX4m1z7+sYFAJfhvN3Q/"#,
        #"OGIHDRp6HjMUcxHpHw7U+S1TETxePwKLnLKj6hw8jnX2/nZRgWHzgVcY+sPsReRx"#,
        #"NJVf+Cfh6yOtznfX00p+JWOXdSY8glSSHJwRAMog+hFGW1AYdt7w80XBAoGBAImR"#,
        #"NUugqapgaEA8TrFxkJmngXYaAqpA0iYRA7kv3S4QavPBUGtFJHBNULzitydkNtVZ"#,
        #"3w6hgce0h9YThTo/nKc+OZDZbgfN9s7cQ75x0PQCAO4fx2P91Q+mDzDUVTeG30mE"#,
        #"t2m3S0dGe47JiJxifV9P3wNBNrZGSIF3mrORBVNDAoGBAI0QKn2Iv7Sgo4T/XjND"#,
        #"dl2kZTXqGAk8dOhpUiw/HdM3OGWbhHj2NdCzBliOmPyQtAr770GITWvbAI+IRYyF"#,
        #"S7Fnk6ZVVVHsxjtaHy1uJGFlaZzKR4AGNaUTOJMs6NadzCmGPAxNQQOCqoUjn4XR"#,
        #"rOjr9w349JooGXhOxbu8nOxX"#,
        #"-----END PRIVATE KEY-----"#,
    ].joined(separator: "\n")
    /// B.1.3 test-key-ecc-p256, SubjectPublicKeyInfo.
    static let testKeyECCP256PublicPEM = [
        #"-----BEGIN PUBLIC KEY-----"#,
        #"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqIVYZVLCrPZHGHjP17CTW0/+D9Lf"#,
        #"w0EkjqF7xB4FivAxzic30tMM4GF+hR6Dxh71Z50VGGdldkkDXZCnTNnoXQ=="#,
        #"-----END PUBLIC KEY-----"#,
    ].joined(separator: "\n")
    /// B.1.3 test-key-ecc-p256, SEC 1 ECPrivateKey.
    static let testKeyECCP256PrivatePEM = [
        #"-----BEGIN EC PRIVATE KEY-----"#,
        #"MHcCAQEEIFKbhfNZfpDsW43+0+JjUr9K+bTeuxopu653+hBaXGA7oAoGCCqGSM49"#,
        #"AwEHoUQDQgAEqIVYZVLCrPZHGHjP17CTW0/+D9Lfw0EkjqF7xB4FivAxzic30tMM"#,
        #"4GF+hR6Dxh71Z50VGGdldkkDXZCnTNnoXQ=="#,
        #"-----END EC PRIVATE KEY-----"#,
    ].joined(separator: "\n")
    /// B.1.4 test-key-ed25519, SubjectPublicKeyInfo.
    static let testKeyEd25519PublicPEM = [
        #"-----BEGIN PUBLIC KEY-----"#,
        #"MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs="#,
        #"-----END PUBLIC KEY-----"#,
    ].joined(separator: "\n")
    /// B.1.4 test-key-ed25519, PKCS#8.
    static let testKeyEd25519PrivatePEM = [
        #"-----BEGIN PRIVATE KEY-----"#,
        #"MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF"#,
        #"-----END PRIVATE KEY-----"#,
    ].joined(separator: "\n")
    /// B.1.5 test-shared-secret: 64 bytes, base64 (the RFC wraps it over two lines).
    static let testSharedSecretBase64 = #"uzvJfB4u3N0Jy4T7NZ75MDVcr8zSTInedJtkgcu46YW4XByzNJjxBdtjUkdJPBtbmHhIDi6pcl8jsasjlTMtDQ=="#

    /// The same keys' raw values from the RFC's JWK forms (base64url, no padding).
    static let testKeyECCP256JWK = RawKey(d: #"UpuF81l-kOxbjf7T4mNSv0r5tN67Gim7rnf6EFpcYDs"#, x: #"qIVYZVLCrPZHGHjP17CTW0_-D9Lfw0EkjqF7xB4FivA"#, y: #"Mc4nN9LTDOBhfoUeg8Ye9WedFRhnZXZJA12Qp0zZ6F0"#)
    static let testKeyEd25519JWK = RawKey(d: #"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU"#, x: #"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"#, y: nil)

    // MARK: - Messages

    /// RFC 9421 Appendix B.2 test-request.
    static let requestMethod = #"POST"#
    static let requestTarget = #"/foo?param=Value&Pet=dog"#
    static let requestAuthority = #"example.com"#
    static let requestHeaders: [Field] = [
        Field(name: #"Host"#, value: #"example.com"#),
        Field(name: #"Date"#, value: #"Tue, 20 Apr 2021 02:07:55 GMT"#),
        Field(name: #"Content-Type"#, value: #"application/json"#),
        Field(name: #"Content-Digest"#, value: #"sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#),
        Field(name: #"Content-Length"#, value: #"18"#),
    ]
    static let requestBody = #"{"hello": "world"}"#
    static let testRequest = Message(
        method: requestMethod, target: requestTarget, authority: requestAuthority, status: nil,
        headers: requestHeaders, body: requestBody)

    /// RFC 9421 Appendix B.2 test-response (Content-Digest corrected, see the file header).
    static let responseStatus = 200
    static let responseHeaders: [Field] = [
        Field(name: #"Date"#, value: #"Tue, 20 Apr 2021 02:07:56 GMT"#),
        Field(name: #"Content-Type"#, value: #"application/json"#),
        Field(name: #"Content-Digest"#, value: #"sha-512=:mEWXIS7MaLRuGgxOBdODa3xqM1XdEvxoYhvlCFJ41QJgJc4GTsPp29l5oGX69wWdXymyU0rjJuahq4l5aGgfLQ==:"#),
        Field(name: #"Content-Length"#, value: #"23"#),
    ]
    static let responseBody = #"{"message": "good dog"}"#
    static let testResponse = Message(
        method: nil, target: nil, authority: nil, status: responseStatus,
        headers: responseHeaders, body: responseBody)

    /// RFC 9421 Section 2.4: the request (header order differs from test-request). The second
    /// response example answers this request signed as `signedRequestForResponse`.
    static let requestResponseRequest = Message(
        method: #"POST"#, target: #"/foo?param=Value&Pet=dog"#, authority: #"example.com"#, status: nil,
        headers: [
            Field(name: #"Host"#, value: #"example.com"#),
            Field(name: #"Date"#, value: #"Tue, 20 Apr 2021 02:07:55 GMT"#),
            Field(name: #"Content-Digest"#, value: #"sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#),
            Field(name: #"Content-Type"#, value: #"application/json"#),
            Field(name: #"Content-Length"#, value: #"18"#),
        ],
        body: #"{"hello": "world"}"#)

    /// RFC 9421 Section 2.4: the 503 response.
    static let requestResponseResponse = Message(
        method: nil, target: nil, authority: nil, status: 503,
        headers: [
            Field(name: #"Date"#, value: #"Tue, 20 Apr 2021 02:07:56 GMT"#),
            Field(name: #"Content-Type"#, value: #"application/json"#),
            Field(name: #"Content-Length"#, value: #"62"#),
            Field(name: #"Content-Digest"#, value: #"sha-512=:0Y6iCBzGg5rZtoXS95Ijz03mslf6KAMCloESHObfwnHJDbkkWWQz6PhhU9kxsTbARtY2PTBOzq24uJFpHsMuAg==:"#),
        ],
        body: #"{"busy": true, "message": "Your call is very important to us"}"#)

    /// RFC 9421 Appendix B.3: the client's request to the TLS-terminating proxy (mutual TLS, unsigned).
    static let proxyClientRequest = Message(
        method: #"POST"#, target: #"/foo?param=Value&Pet=dog"#, authority: #"example.com"#, status: nil,
        headers: [
            Field(name: #"Host"#, value: #"example.com"#),
            Field(name: #"Date"#, value: #"Tue, 20 Apr 2021 02:07:55 GMT"#),
            Field(name: #"Content-Type"#, value: #"application/json"#),
            Field(name: #"Content-Length"#, value: #"18"#),
        ],
        body: #"{"hello": "world"}"#)

    /// RFC 9421 Appendix B.3: the proxy's request to service.internal.example, with Client-Cert.
    static let proxyForwardedRequest = Message(
        method: #"POST"#, target: #"/foo?param=Value&Pet=dog"#, authority: #"service.internal.example"#, status: nil,
        headers: [
            Field(name: #"Host"#, value: #"service.internal.example"#),
            Field(name: #"Date"#, value: #"Tue, 20 Apr 2021 02:07:55 GMT"#),
            Field(name: #"Content-Type"#, value: #"application/json"#),
            Field(name: #"Content-Length"#, value: #"18"#),
            Field(name: #"Client-Cert"#, value: #":MIIBqDCCAU6gAwIBAgIBBzAKBggqhkjOPQQDAjA6MRswGQYDVQQKDBJMZXQncyBBdXRoZW50aWNhdGUxGzAZBgNVBAMMEkxBIEludGVybWVkaWF0ZSBDQTAeFw0yMDAxMTQyMjU1MzNaFw0yMTAxMjMyMjU1MzNaMA0xCzAJBgNVBAMMAkJDMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE8YnXXfaUgmnMtOXU/IncWalRhebrXmckC8vdgJ1p5Be5F/3YC8OthxM4+k1M6aEAEFcGzkJiNy6J84y7uzo9M6NyMHAwCQYDVR0TBAIwADAfBgNVHSMEGDAWgBRm3WjLa38lbEYCuiCPct0ZaSED2DAOBgNVHQ8BAf8EBAMCBsAwEwYDVR0lBAwwCgYIKwYBBQUHAwIwHQYDVR0RAQH/BBMwEYEPYmRjQGV4YW1wbGUuY29tMAoGCCqGSM49BAMCA0gAMEUCIBHda/r1vaL6G3VliL4/Di6YK0Q6bMjeSkC3dFCOOB8TAiEAx/kHSB4urmiZ0NX5r5XarmPk0wmuydBVoU4hBVZ1yhk=:"#),
        ],
        body: #"{"hello": "world"}"#)

    /// RFC 9421 Appendix B.4: the original signed request (signature fields removed; see `transformations`).
    static let transformRequest = Message(
        method: #"GET"#, target: #"/demo?name1=Value1&Name2=value2"#, authority: #"example.org"#, status: nil,
        headers: [
            Field(name: #"Host"#, value: #"example.org"#),
            Field(name: #"Date"#, value: #"Fri, 15 Jul 2022 14:24:55 GMT"#),
            Field(name: #"Accept"#, value: #"application/json"#),
            Field(name: #"Accept"#, value: #"*/*"#),
        ],
        body: #""#)

    /// RFC 9421 Appendix B.4: transformed messages for which the `transformations` signature still verifies.
    static let transformStillValid: [Message] = [
        Message(
            method: #"GET"#, target: #"/demo?name1=Value1&Name2=value2&param=added"#, authority: #"example.org"#, status: nil,
            headers: [
                Field(name: #"Host"#, value: #"example.org"#),
                Field(name: #"Date"#, value: #"Fri, 15 Jul 2022 14:24:55 GMT"#),
                Field(name: #"Accept"#, value: #"application/json"#),
                Field(name: #"Accept"#, value: #"*/*"#),
                Field(name: #"Accept-Language"#, value: #"en-US,en;q=0.5"#),
            ],
            body: #""#),
        Message(
            method: #"GET"#, target: #"/demo?name1=Value1&Name2=value2"#, authority: #"example.org"#, status: nil,
            headers: [
                Field(name: #"Host"#, value: #"example.org"#),
                Field(name: #"Referer"#, value: #"https://developer.example.org/demo"#),
                Field(name: #"Accept"#, value: #"application/json, */*"#),
            ],
            body: #""#),
        Message(
            method: #"GET"#, target: #"/demo?name1=Value1&Name2=value2"#, authority: #"example.org"#, status: nil,
            headers: [
                Field(name: #"Accept"#, value: #"application/json"#),
                Field(name: #"Accept"#, value: #"*/*"#),
                Field(name: #"Date"#, value: #"Fri, 15 Jul 2022 14:24:55 GMT"#),
                Field(name: #"Host"#, value: #"example.org"#),
            ],
            body: #""#),
    ]

    /// RFC 9421 Appendix B.4: transformed messages for which the `transformations` signature must NOT verify
    /// (method and authority changed; the two Accept lines swapped).
    static let transformNoLongerValid: [Message] = [
        Message(
            method: #"POST"#, target: #"/demo?name1=Value1&Name2=value2"#, authority: #"example.com"#, status: nil,
            headers: [
                Field(name: #"Host"#, value: #"example.com"#),
                Field(name: #"Date"#, value: #"Fri, 15 Jul 2022 14:24:55 GMT"#),
                Field(name: #"Accept"#, value: #"application/json"#),
                Field(name: #"Accept"#, value: #"*/*"#),
            ],
            body: #""#),
        Message(
            method: #"GET"#, target: #"/demo?name1=Value1&Name2=value2"#, authority: #"example.org"#, status: nil,
            headers: [
                Field(name: #"Host"#, value: #"example.org"#),
                Field(name: #"Date"#, value: #"Fri, 15 Jul 2022 14:24:55 GMT"#),
                Field(name: #"Accept"#, value: #"*/*"#),
                Field(name: #"Accept"#, value: #"application/json"#),
            ],
            body: #""#),
    ]

    /// RFC 9421 Section 4.3: the client's request (signed as `multipleSignaturesClient`).
    static let multipleSignaturesClientRequest = Message(
        method: #"POST"#, target: #"/foo?param=Value&Pet=dog"#, authority: #"example.com"#, status: nil,
        headers: [
            Field(name: #"Host"#, value: #"example.com"#),
            Field(name: #"Date"#, value: #"Tue, 20 Apr 2021 02:07:55 GMT"#),
            Field(name: #"Content-Type"#, value: #"application/json"#),
            Field(name: #"Content-Length"#, value: #"18"#),
            Field(name: #"Content-Digest"#, value: #"sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#),
        ],
        body: #"{"hello": "world"}"#)

    /// RFC 9421 Section 4.3: the request the proxy forwards (client's sig1 fields removed).
    static let multipleSignaturesForwardedRequest = Message(
        method: #"POST"#, target: #"/foo?param=Value&Pet=dog"#, authority: #"origin.host.internal.example"#, status: nil,
        headers: [
            Field(name: #"Host"#, value: #"origin.host.internal.example"#),
            Field(name: #"Date"#, value: #"Tue, 20 Apr 2021 02:07:56 GMT"#),
            Field(name: #"Content-Type"#, value: #"application/json"#),
            Field(name: #"Content-Length"#, value: #"18"#),
            Field(name: #"Forwarded"#, value: #"for=192.0.2.123;host=example.com;proto=https"#),
            Field(name: #"Content-Digest"#, value: #"sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#),
        ],
        body: #"{"hello": "world"}"#)

    /// RFC 9421 Section 4.3: the final message's Signature-Input and Signature field values (two members each).
    static let multipleSignaturesInputHeader = #"sig1=("@method" "@authority" "@path" "content-digest" "content-type" "content-length");created=1618884475;keyid="test-key-ecc-p256", proxy_sig=("@method" "@authority" "@path" "content-digest" "content-type" "content-length" "forwarded");created=1618884480;keyid="test-key-rsa";alg="rsa-v1_5-sha256";expires=1618884540"#
    static let multipleSignaturesSignatureHeader = #"sig1=:X5spyd6CFnAG5QnDyHfqoSNICd+BUP4LYMz2Q0JXlb//4Ijpzp+kve2w4NIyqeAuM7jTDX+sNalzA8ESSaHD3A==:, proxy_sig=:S6ZzPXSdAMOPjN/6KXfXWNO/f7V6cHm7BXYUh3YD/fRad4BCaRZxP+JH+8XY1I6+8Cy+CM5g92iHgxtRPz+MjniOaYmdkDcnL9cCpXJleXsOckpURl49GwiyUpZ10KHgOEe11sx3G2gxI8S0jnxQB+Pu68U9vVcasqOWAEObtNKKZd8tSFu7LB5YAv0RAGhB8tmpv7sFnIm9y+7X5kXQfi8NMaZaA8i2ZHwpBdg7a6CMfwnnrtflzvZdXAsD3LH2TwevU+/PBPv0B6NMNk93wUs/vfJvye+YuI87HU38lZHowtznbLVdp770I6VHR6WfgS9ddzirrswsE1w5o0LV/g==:"#

    // MARK: - Signatures

    /// RFC 9421 Appendix B.2.1 (Minimal Signature Using rsa-pss-sha512).
    static let b21 = Example(
        name: #"RFC 9421 Appendix B.2.1 (Minimal Signature Using rsa-pss-sha512)"#,
        label: #"sig-b21"#,
        keyID: #"test-key-rsa-pss"#,
        algorithm: #"rsa-pss-sha512"#,
        algParameter: nil,
        created: 1618884473,
        expires: nil,
        nonce: #"b3k2pp5k7z-50gnwp.yemd"#,
        tag: nil,
        coveredComponents: [],
        signatureParams: #"();created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd""#,
        signatureInputHeader: #"sig-b21=();created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd""#,
        signatureHeader: #"sig-b21=:d2pmTvmbncD3xQm8E9ZV2828BjQWGgiwAaw5bAkgibUopemLJcWDy/lkbbHAve4cRAtx31Iq786U7it++wgGxbtRxf8Udx7zFZsckzXaJMkA7ChG52eSkFxykJeNqsrWH5S+oxNFlD4dzVuwe8DhTSja8xxbR/Z2cOGdCbzR72rgFWhzx2VjBqJzsPLMIQKhO4DGezXehhWwE56YCE+O6c0mKZsfxVrogUvA4HELjVKWmAvtl6UnCh8jYzuVG5WSb/QEVPnP5TmcAnLH1g+s++v6d4s8m0gCw1fV5/SITLq9mhho8K3+7EPYTU8IU1bLhdxO5Nyt8C8ssinQ98Xw9Q==:"#,
        signature: #"d2pmTvmbncD3xQm8E9ZV2828BjQWGgiwAaw5bAkgibUopemLJcWDy/lkbbHAve4cRAtx31Iq786U7it++wgGxbtRxf8Udx7zFZsckzXaJMkA7ChG52eSkFxykJeNqsrWH5S+oxNFlD4dzVuwe8DhTSja8xxbR/Z2cOGdCbzR72rgFWhzx2VjBqJzsPLMIQKhO4DGezXehhWwE56YCE+O6c0mKZsfxVrogUvA4HELjVKWmAvtl6UnCh8jYzuVG5WSb/QEVPnP5TmcAnLH1g+s++v6d4s8m0gCw1fV5/SITLq9mhho8K3+7EPYTU8IU1bLhdxO5Nyt8C8ssinQ98Xw9Q=="#,
        signatureBase: [
            #""@signature-params": ();created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd""#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: true,
        isResponse: false,
        isDeterministic: false,
        message: testRequest,
        request: nil
    )

    /// RFC 9421 Appendix B.2.2 (Selective Covered Components Using rsa-pss-sha512).
    static let b22 = Example(
        name: #"RFC 9421 Appendix B.2.2 (Selective Covered Components Using rsa-pss-sha512)"#,
        label: #"sig-b22"#,
        keyID: #"test-key-rsa-pss"#,
        algorithm: #"rsa-pss-sha512"#,
        algParameter: nil,
        created: 1618884473,
        expires: nil,
        nonce: nil,
        tag: #"header-example"#,
        coveredComponents: [#""@authority""#, #""content-digest""#, #""@query-param";name="Pet""#],
        signatureParams: #"("@authority" "content-digest" "@query-param";name="Pet");created=1618884473;keyid="test-key-rsa-pss";tag="header-example""#,
        signatureInputHeader: #"sig-b22=("@authority" "content-digest" "@query-param";name="Pet");created=1618884473;keyid="test-key-rsa-pss";tag="header-example""#,
        signatureHeader: #"sig-b22=:LjbtqUbfmvjj5C5kr1Ugj4PmLYvx9wVjZvD9GsTT4F7GrcQEdJzgI9qHxICagShLRiLMlAJjtq6N4CDfKtjvuJyE5qH7KT8UCMkSowOB4+ECxCmT8rtAmj/0PIXxi0A0nxKyB09RNrCQibbUjsLS/2YyFYXEu4TRJQzRw1rLEuEfY17SARYhpTlaqwZVtR8NV7+4UKkjqpcAoFqWFQh62s7Cl+H2fjBSpqfZUJcsIk4N6wiKYd4je2U/lankenQ99PZfB4jY3I5rSV2DSBVkSFsURIjYErOs0tFTQosMTAoxk//0RoKUqiYY8Bh0aaUEb0rQl3/XaVe4bXTugEjHSw==:"#,
        signature: #"LjbtqUbfmvjj5C5kr1Ugj4PmLYvx9wVjZvD9GsTT4F7GrcQEdJzgI9qHxICagShLRiLMlAJjtq6N4CDfKtjvuJyE5qH7KT8UCMkSowOB4+ECxCmT8rtAmj/0PIXxi0A0nxKyB09RNrCQibbUjsLS/2YyFYXEu4TRJQzRw1rLEuEfY17SARYhpTlaqwZVtR8NV7+4UKkjqpcAoFqWFQh62s7Cl+H2fjBSpqfZUJcsIk4N6wiKYd4je2U/lankenQ99PZfB4jY3I5rSV2DSBVkSFsURIjYErOs0tFTQosMTAoxk//0RoKUqiYY8Bh0aaUEb0rQl3/XaVe4bXTugEjHSw=="#,
        signatureBase: [
            #""@authority": example.com"#,
            #""content-digest": sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#,
            #""@query-param";name="Pet": dog"#,
            #""@signature-params": ("@authority" "content-digest" "@query-param";name="Pet");created=1618884473;keyid="test-key-rsa-pss";tag="header-example""#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: true,
        isResponse: false,
        isDeterministic: false,
        message: testRequest,
        request: nil
    )

    /// RFC 9421 Appendix B.2.3 (Full Coverage Using rsa-pss-sha512).
    static let b23 = Example(
        name: #"RFC 9421 Appendix B.2.3 (Full Coverage Using rsa-pss-sha512)"#,
        label: #"sig-b23"#,
        keyID: #"test-key-rsa-pss"#,
        algorithm: #"rsa-pss-sha512"#,
        algParameter: nil,
        created: 1618884473,
        expires: nil,
        nonce: nil,
        tag: nil,
        coveredComponents: [#""date""#, #""@method""#, #""@path""#, #""@query""#, #""@authority""#, #""content-type""#, #""content-digest""#, #""content-length""#],
        signatureParams: #"("date" "@method" "@path" "@query" "@authority" "content-type" "content-digest" "content-length");created=1618884473;keyid="test-key-rsa-pss""#,
        signatureInputHeader: #"sig-b23=("date" "@method" "@path" "@query" "@authority" "content-type" "content-digest" "content-length");created=1618884473;keyid="test-key-rsa-pss""#,
        signatureHeader: #"sig-b23=:bbN8oArOxYoyylQQUU6QYwrTuaxLwjAC9fbY2F6SVWvh0yBiMIRGOnMYwZ/5MR6fb0Kh1rIRASVxFkeGt683+qRpRRU5p2voTp768ZrCUb38K0fUxN0O0iC59DzYx8DFll5GmydPxSmme9v6ULbMFkl+V5B1TP/yPViV7KsLNmvKiLJH1pFkh/aYA2HXXZzNBXmIkoQoLd7YfW91kE9o/CCoC1xMy7JA1ipwvKvfrs65ldmlu9bpG6A9BmzhuzF8Eim5f8ui9eH8LZH896+QIF61ka39VBrohr9iyMUJpvRX2Zbhl5ZJzSRxpJyoEZAFL2FUo5fTIztsDZKEgM4cUA==:"#,
        signature: #"bbN8oArOxYoyylQQUU6QYwrTuaxLwjAC9fbY2F6SVWvh0yBiMIRGOnMYwZ/5MR6fb0Kh1rIRASVxFkeGt683+qRpRRU5p2voTp768ZrCUb38K0fUxN0O0iC59DzYx8DFll5GmydPxSmme9v6ULbMFkl+V5B1TP/yPViV7KsLNmvKiLJH1pFkh/aYA2HXXZzNBXmIkoQoLd7YfW91kE9o/CCoC1xMy7JA1ipwvKvfrs65ldmlu9bpG6A9BmzhuzF8Eim5f8ui9eH8LZH896+QIF61ka39VBrohr9iyMUJpvRX2Zbhl5ZJzSRxpJyoEZAFL2FUo5fTIztsDZKEgM4cUA=="#,
        signatureBase: [
            #""date": Tue, 20 Apr 2021 02:07:55 GMT"#,
            #""@method": POST"#,
            #""@path": /foo"#,
            #""@query": ?param=Value&Pet=dog"#,
            #""@authority": example.com"#,
            #""content-type": application/json"#,
            #""content-digest": sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#,
            #""content-length": 18"#,
            #""@signature-params": ("date" "@method" "@path" "@query" "@authority" "content-type" "content-digest" "content-length");created=1618884473;keyid="test-key-rsa-pss""#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: true,
        isResponse: false,
        isDeterministic: false,
        message: testRequest,
        request: nil
    )

    /// RFC 9421 Appendix B.2.4 (Signing a Response Using ecdsa-p256-sha256).
    static let b24 = Example(
        name: #"RFC 9421 Appendix B.2.4 (Signing a Response Using ecdsa-p256-sha256)"#,
        label: #"sig-b24"#,
        keyID: #"test-key-ecc-p256"#,
        algorithm: #"ecdsa-p256-sha256"#,
        algParameter: nil,
        created: 1618884473,
        expires: nil,
        nonce: nil,
        tag: nil,
        coveredComponents: [#""@status""#, #""content-type""#, #""content-digest""#, #""content-length""#],
        signatureParams: #"("@status" "content-type" "content-digest" "content-length");created=1618884473;keyid="test-key-ecc-p256""#,
        signatureInputHeader: #"sig-b24=("@status" "content-type" "content-digest" "content-length");created=1618884473;keyid="test-key-ecc-p256""#,
        signatureHeader: #"sig-b24=:wNmSUAhwb5LxtOtOpNa6W5xj067m5hFrj0XQ4fvpaCLx0NKocgPquLgyahnzDnDAUy5eCdlYUEkLIj+32oiasw==:"#,
        signature: #"wNmSUAhwb5LxtOtOpNa6W5xj067m5hFrj0XQ4fvpaCLx0NKocgPquLgyahnzDnDAUy5eCdlYUEkLIj+32oiasw=="#,
        signatureBase: [
            #""@status": 200"#,
            #""content-type": application/json"#,
            #""content-digest": sha-512=:mEWXIS7MaLRuGgxOBdODa3xqM1XdEvxoYhvlCFJ41QJgJc4GTsPp29l5oGX69wWdXymyU0rjJuahq4l5aGgfLQ==:"#,
            #""content-length": 23"#,
            #""@signature-params": ("@status" "content-type" "content-digest" "content-length");created=1618884473;keyid="test-key-ecc-p256""#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: true,
        isResponse: true,
        isDeterministic: false,
        message: testResponse,
        request: nil
    )

    /// RFC 9421 Appendix B.2.5 (Signing a Request Using hmac-sha256).
    static let b25 = Example(
        name: #"RFC 9421 Appendix B.2.5 (Signing a Request Using hmac-sha256)"#,
        label: #"sig-b25"#,
        keyID: #"test-shared-secret"#,
        algorithm: #"hmac-sha256"#,
        algParameter: nil,
        created: 1618884473,
        expires: nil,
        nonce: nil,
        tag: nil,
        coveredComponents: [#""date""#, #""@authority""#, #""content-type""#],
        signatureParams: #"("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret""#,
        signatureInputHeader: #"sig-b25=("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret""#,
        signatureHeader: #"sig-b25=:pxcQw6G3AjtMBQjwo8XzkZf/bws5LelbaMk5rGIGtE8=:"#,
        signature: #"pxcQw6G3AjtMBQjwo8XzkZf/bws5LelbaMk5rGIGtE8="#,
        signatureBase: [
            #""date": Tue, 20 Apr 2021 02:07:55 GMT"#,
            #""@authority": example.com"#,
            #""content-type": application/json"#,
            #""@signature-params": ("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret""#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: true,
        isResponse: false,
        isDeterministic: true,
        message: testRequest,
        request: nil
    )

    /// RFC 9421 Appendix B.2.6 (Signing a Request Using ed25519).
    static let b26 = Example(
        name: #"RFC 9421 Appendix B.2.6 (Signing a Request Using ed25519)"#,
        label: #"sig-b26"#,
        keyID: #"test-key-ed25519"#,
        algorithm: #"ed25519"#,
        algParameter: nil,
        created: 1618884473,
        expires: nil,
        nonce: nil,
        tag: nil,
        coveredComponents: [#""date""#, #""@method""#, #""@path""#, #""@authority""#, #""content-type""#, #""content-length""#],
        signatureParams: #"("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519""#,
        signatureInputHeader: #"sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519""#,
        signatureHeader: #"sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:"#,
        signature: #"wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw=="#,
        signatureBase: [
            #""date": Tue, 20 Apr 2021 02:07:55 GMT"#,
            #""@method": POST"#,
            #""@path": /foo"#,
            #""@authority": example.com"#,
            #""content-type": application/json"#,
            #""content-length": 18"#,
            #""@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519""#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: true,
        isResponse: false,
        isDeterministic: true,
        message: testRequest,
        request: nil
    )

    /// RFC 9421 Appendix B.3 (TLS-Terminating Proxies).
    static let tlsTerminatingProxy = Example(
        name: #"RFC 9421 Appendix B.3 (TLS-Terminating Proxies)"#,
        label: #"ttrp"#,
        keyID: #"test-key-ecc-p256"#,
        algorithm: #"ecdsa-p256-sha256"#,
        algParameter: nil,
        created: 1618884473,
        expires: nil,
        nonce: nil,
        tag: nil,
        coveredComponents: [#""@path""#, #""@query""#, #""@method""#, #""@authority""#, #""client-cert""#],
        signatureParams: #"("@path" "@query" "@method" "@authority" "client-cert");created=1618884473;keyid="test-key-ecc-p256""#,
        signatureInputHeader: #"ttrp=("@path" "@query" "@method" "@authority" "client-cert");created=1618884473;keyid="test-key-ecc-p256""#,
        signatureHeader: #"ttrp=:xVMHVpawaAC/0SbHrKRs9i8I3eOs5RtTMGCWXm/9nvZzoHsIg6Mce9315T6xoklyy0yzhD9ah4JHRwMLOgmizw==:"#,
        signature: #"xVMHVpawaAC/0SbHrKRs9i8I3eOs5RtTMGCWXm/9nvZzoHsIg6Mce9315T6xoklyy0yzhD9ah4JHRwMLOgmizw=="#,
        signatureBase: [
            #""@path": /foo"#,
            #""@query": ?param=Value&Pet=dog"#,
            #""@method": POST"#,
            #""@authority": service.internal.example"#,
            #""client-cert": :MIIBqDCCAU6gAwIBAgIBBzAKBggqhkjOPQQDAjA6MRswGQYDVQQKDBJMZXQncyBBdXRoZW50aWNhdGUxGzAZBgNVBAMMEkxBIEludGVybWVkaWF0ZSBDQTAeFw0yMDAxMTQyMjU1MzNaFw0yMTAxMjMyMjU1MzNaMA0xCzAJBgNVBAMMAkJDMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE8YnXXfaUgmnMtOXU/IncWalRhebrXmckC8vdgJ1p5Be5F/3YC8OthxM4+k1M6aEAEFcGzkJiNy6J84y7uzo9M6NyMHAwCQYDVR0TBAIwADAfBgNVHSMEGDAWgBRm3WjLa38lbEYCuiCPct0ZaSED2DAOBgNVHQ8BAf8EBAMCBsAwEwYDVR0lBAwwCgYIKwYBBQUHAwIwHQYDVR0RAQH/BBMwEYEPYmRjQGV4YW1wbGUuY29tMAoGCCqGSM49BAMCA0gAMEUCIBHda/r1vaL6G3VliL4/Di6YK0Q6bMjeSkC3dFCOOB8TAiEAx/kHSB4urmiZ0NX5r5XarmPk0wmuydBVoU4hBVZ1yhk=:"#,
            #""@signature-params": ("@path" "@query" "@method" "@authority" "client-cert");created=1618884473;keyid="test-key-ecc-p256""#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: true,
        isResponse: false,
        isDeterministic: false,
        message: proxyForwardedRequest,
        request: nil
    )

    /// RFC 9421 Appendix B.4 (HTTP Message Transformations).
    static let transformations = Example(
        name: #"RFC 9421 Appendix B.4 (HTTP Message Transformations)"#,
        label: #"transform"#,
        keyID: #"test-key-ed25519"#,
        algorithm: #"ed25519"#,
        algParameter: nil,
        created: 1618884473,
        expires: nil,
        nonce: nil,
        tag: nil,
        coveredComponents: [#""@method""#, #""@path""#, #""@authority""#, #""accept""#],
        signatureParams: #"("@method" "@path" "@authority" "accept");created=1618884473;keyid="test-key-ed25519""#,
        signatureInputHeader: #"transform=("@method" "@path" "@authority" "accept");created=1618884473;keyid="test-key-ed25519""#,
        signatureHeader: #"transform=:ZT1kooQsEHpZ0I1IjCqtQppOmIqlJPeo7DHR3SoMn0s5JZ1eRGS0A+vyYP9t/LXlh5QMFFQ6cpLt2m0pmj3NDA==:"#,
        signature: #"ZT1kooQsEHpZ0I1IjCqtQppOmIqlJPeo7DHR3SoMn0s5JZ1eRGS0A+vyYP9t/LXlh5QMFFQ6cpLt2m0pmj3NDA=="#,
        signatureBase: [
            #""@method": GET"#,
            #""@path": /demo"#,
            #""@authority": example.org"#,
            #""accept": application/json, */*"#,
            #""@signature-params": ("@method" "@path" "@authority" "accept");created=1618884473;keyid="test-key-ed25519""#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: true,
        isResponse: false,
        isDeterministic: true,
        message: transformRequest,
        request: nil
    )

    /// RFC 9421 Sections 2.5 (signature base) and 3.2 (signed message).
    static let verifyingASignature = Example(
        name: #"RFC 9421 Sections 2.5 (signature base) and 3.2 (signed message)"#,
        label: #"sig1"#,
        keyID: #"test-key-rsa-pss"#,
        algorithm: #"rsa-pss-sha512"#,
        algParameter: nil,
        created: 1618884473,
        expires: nil,
        nonce: nil,
        tag: nil,
        coveredComponents: [#""@method""#, #""@authority""#, #""@path""#, #""content-digest""#, #""content-length""#, #""content-type""#],
        signatureParams: #"("@method" "@authority" "@path" "content-digest" "content-length" "content-type");created=1618884473;keyid="test-key-rsa-pss""#,
        signatureInputHeader: #"sig1=("@method" "@authority" "@path" "content-digest" "content-length" "content-type");created=1618884473;keyid="test-key-rsa-pss""#,
        signatureHeader: #"sig1=:HIbjHC5rS0BYaa9v4QfD4193TORw7u9edguPh0AW3dMq9WImrlFrCGUDih47vAxi4L2YRZ3XMJc1uOKk/J0ZmZ+wcta4nKIgBkKq0rM9hs3CQyxXGxHLMCy8uqK488o+9jrptQ+xFPHK7a9sRL1IXNaagCNN3ZxJsYapFj+JXbmaI5rtAdSfSvzPuBCh+ARHBmWuNo1UzVVdHXrl8ePL4cccqlazIJdC4QEjrF+Sn4IxBQzTZsL9y9TP5FsZYzHvDqbInkTNigBcE9cKOYNFCn4D/WM7F6TNuZO9EgtzepLWcjTymlHzK7aXq6Am6sfOrpIC49yXjj3ae6HRalVc/g==:"#,
        signature: #"HIbjHC5rS0BYaa9v4QfD4193TORw7u9edguPh0AW3dMq9WImrlFrCGUDih47vAxi4L2YRZ3XMJc1uOKk/J0ZmZ+wcta4nKIgBkKq0rM9hs3CQyxXGxHLMCy8uqK488o+9jrptQ+xFPHK7a9sRL1IXNaagCNN3ZxJsYapFj+JXbmaI5rtAdSfSvzPuBCh+ARHBmWuNo1UzVVdHXrl8ePL4cccqlazIJdC4QEjrF+Sn4IxBQzTZsL9y9TP5FsZYzHvDqbInkTNigBcE9cKOYNFCn4D/WM7F6TNuZO9EgtzepLWcjTymlHzK7aXq6Am6sfOrpIC49yXjj3ae6HRalVc/g=="#,
        signatureBase: [
            #""@method": POST"#,
            #""@authority": example.com"#,
            #""@path": /foo"#,
            #""content-digest": sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#,
            #""content-length": 18"#,
            #""content-type": application/json"#,
            #""@signature-params": ("@method" "@authority" "@path" "content-digest" "content-length" "content-type");created=1618884473;keyid="test-key-rsa-pss""#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: true,
        isResponse: false,
        isDeterministic: false,
        message: testRequest,
        request: nil
    )

    /// RFC 9421 Section 2.4 (response signed with request components).
    static let responseToUnsignedRequest = Example(
        name: #"RFC 9421 Section 2.4 (response signed with request components)"#,
        label: #"reqres"#,
        keyID: #"test-key-ecc-p256"#,
        algorithm: #"ecdsa-p256-sha256"#,
        algParameter: nil,
        created: 1618884479,
        expires: nil,
        nonce: nil,
        tag: nil,
        coveredComponents: [#""@status""#, #""content-digest""#, #""content-type""#, #""@authority";req"#, #""@method";req"#, #""@path";req"#, #""content-digest";req"#],
        signatureParams: #"("@status" "content-digest" "content-type" "@authority";req "@method";req "@path";req "content-digest";req);created=1618884479;keyid="test-key-ecc-p256""#,
        signatureInputHeader: #"reqres=("@status" "content-digest" "content-type" "@authority";req "@method";req "@path";req "content-digest";req);created=1618884479;keyid="test-key-ecc-p256""#,
        signatureHeader: #"reqres=:dMT/A/76ehrdBTD/2Xx8QuKV6FoyzEP/I9hdzKN8LQJLNgzU4W767HK05rx1i8meNQQgQPgQp8wq2ive3tV5Ag==:"#,
        signature: #"dMT/A/76ehrdBTD/2Xx8QuKV6FoyzEP/I9hdzKN8LQJLNgzU4W767HK05rx1i8meNQQgQPgQp8wq2ive3tV5Ag=="#,
        signatureBase: [
            #""@status": 503"#,
            #""content-digest": sha-512=:0Y6iCBzGg5rZtoXS95Ijz03mslf6KAMCloESHObfwnHJDbkkWWQz6PhhU9kxsTbARtY2PTBOzq24uJFpHsMuAg==:"#,
            #""content-type": application/json"#,
            #""@authority";req: example.com"#,
            #""@method";req: POST"#,
            #""@path";req: /foo"#,
            #""content-digest";req: sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#,
            #""@signature-params": ("@status" "content-digest" "content-type" "@authority";req "@method";req "@path";req "content-digest";req);created=1618884479;keyid="test-key-ecc-p256""#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: true,
        isResponse: true,
        isDeterministic: false,
        message: requestResponseResponse,
        request: requestResponseRequest
    )

    /// RFC 9421 Section 2.4 (the signed request answered by the next example).
    static let signedRequestForResponse = Example(
        name: #"RFC 9421 Section 2.4 (the signed request answered by the next example)"#,
        label: #"sig1"#,
        keyID: #"test-key-rsa-pss"#,
        algorithm: #"rsa-pss-sha512"#,
        algParameter: nil,
        created: 1618884475,
        expires: nil,
        nonce: nil,
        tag: nil,
        coveredComponents: [#""@method""#, #""@authority""#, #""@path""#, #""@query""#, #""content-digest""#, #""content-type""#, #""content-length""#],
        signatureParams: #"("@method" "@authority" "@path" "@query" "content-digest" "content-type" "content-length");created=1618884475;keyid="test-key-rsa-pss""#,
        signatureInputHeader: #"sig1=("@method" "@authority" "@path" "@query" "content-digest" "content-type" "content-length");created=1618884475;keyid="test-key-rsa-pss""#,
        signatureHeader: #"sig1=:e8UJ5wMiRaonlth5ERtE8GIiEH7Akcr493nQ07VPNo6y3qvjdKt0fo8VHO8xXDjmtYoatGYBGJVlMfIp06eVMEyNW2I4vN7XDAz7m5v1108vGzaDljrd0H8+SJ28g7bzn6h2xeL/8q+qUwahWA/JmC8aOC9iVnwbOKCc0WSrLgWQwTY6VLp42Qt7jjhYT5W7/wCvfK9A1VmHH1lJXsV873Z6hpxesd50PSmO+xaNeYvDLvVdZlhtw5PCtUYzKjHqwmaQ6DEuM8udRjYsoNqp2xZKcuCO1nKc0V3RjpqMZLuuyVbHDAbCzr0pg2d2VM/OC33JAU7meEjjaNz+d7LWPg==:"#,
        signature: #"e8UJ5wMiRaonlth5ERtE8GIiEH7Akcr493nQ07VPNo6y3qvjdKt0fo8VHO8xXDjmtYoatGYBGJVlMfIp06eVMEyNW2I4vN7XDAz7m5v1108vGzaDljrd0H8+SJ28g7bzn6h2xeL/8q+qUwahWA/JmC8aOC9iVnwbOKCc0WSrLgWQwTY6VLp42Qt7jjhYT5W7/wCvfK9A1VmHH1lJXsV873Z6hpxesd50PSmO+xaNeYvDLvVdZlhtw5PCtUYzKjHqwmaQ6DEuM8udRjYsoNqp2xZKcuCO1nKc0V3RjpqMZLuuyVbHDAbCzr0pg2d2VM/OC33JAU7meEjjaNz+d7LWPg=="#,
        signatureBase: [
            #""@method": POST"#,
            #""@authority": example.com"#,
            #""@path": /foo"#,
            #""@query": ?param=Value&Pet=dog"#,
            #""content-digest": sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#,
            #""content-type": application/json"#,
            #""content-length": 18"#,
            #""@signature-params": ("@method" "@authority" "@path" "@query" "content-digest" "content-type" "content-length");created=1618884475;keyid="test-key-rsa-pss""#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: false,
        isResponse: false,
        isDeterministic: false,
        message: requestResponseRequest,
        request: nil
    )

    /// RFC 9421 Section 2.4 (response to the signed request, covering its components).
    static let responseToSignedRequest = Example(
        name: #"RFC 9421 Section 2.4 (response to the signed request, covering its components)"#,
        label: #"reqres"#,
        keyID: #"test-key-ecc-p256"#,
        algorithm: #"ecdsa-p256-sha256"#,
        algParameter: nil,
        created: 1618884479,
        expires: nil,
        nonce: nil,
        tag: nil,
        coveredComponents: [#""@status""#, #""content-digest""#, #""content-type""#, #""@authority";req"#, #""@method";req"#, #""@path";req"#, #""@query";req"#, #""content-digest";req"#, #""content-type";req"#, #""content-length";req"#],
        signatureParams: #"("@status" "content-digest" "content-type" "@authority";req "@method";req "@path";req "@query";req "content-digest";req "content-type";req "content-length";req);created=1618884479;keyid="test-key-ecc-p256""#,
        signatureInputHeader: #"reqres=("@status" "content-digest" "content-type" "@authority";req "@method";req "@path";req "@query";req "content-digest";req "content-type";req "content-length";req);created=1618884479;keyid="test-key-ecc-p256""#,
        signatureHeader: #"reqres=:C73J41GVKc+TYXbSobvZf0CmNcptRiWN+NY1Or0A36ISg6ymdRN6ZgR2QfrtopFNzqAyv+CeWrMsNbcV2Ojsgg==:"#,
        signature: #"C73J41GVKc+TYXbSobvZf0CmNcptRiWN+NY1Or0A36ISg6ymdRN6ZgR2QfrtopFNzqAyv+CeWrMsNbcV2Ojsgg=="#,
        signatureBase: [
            #""@status": 503"#,
            #""content-digest": sha-512=:0Y6iCBzGg5rZtoXS95Ijz03mslf6KAMCloESHObfwnHJDbkkWWQz6PhhU9kxsTbARtY2PTBOzq24uJFpHsMuAg==:"#,
            #""content-type": application/json"#,
            #""@authority";req: example.com"#,
            #""@method";req: POST"#,
            #""@path";req: /foo"#,
            #""@query";req: ?param=Value&Pet=dog"#,
            #""content-digest";req: sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#,
            #""content-type";req: application/json"#,
            #""content-length";req: 18"#,
            #""@signature-params": ("@status" "content-digest" "content-type" "@authority";req "@method";req "@path";req "@query";req "content-digest";req "content-type";req "content-length";req);created=1618884479;keyid="test-key-ecc-p256""#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: true,
        isResponse: true,
        isDeterministic: false,
        message: requestResponseResponse,
        request: requestResponseRequest
    )

    /// RFC 9421 Section 4.3 (client signature sig1; the prose says test-key-rsa-pss, the Signature-Input and the signature are test-key-ecc-p256).
    static let multipleSignaturesClient = Example(
        name: #"RFC 9421 Section 4.3 (client signature sig1; the prose says test-key-rsa-pss, the Signature-Input and the signature are test-key-ecc-p256)"#,
        label: #"sig1"#,
        keyID: #"test-key-ecc-p256"#,
        algorithm: #"ecdsa-p256-sha256"#,
        algParameter: nil,
        created: 1618884475,
        expires: nil,
        nonce: nil,
        tag: nil,
        coveredComponents: [#""@method""#, #""@authority""#, #""@path""#, #""content-digest""#, #""content-type""#, #""content-length""#],
        signatureParams: #"("@method" "@authority" "@path" "content-digest" "content-type" "content-length");created=1618884475;keyid="test-key-ecc-p256""#,
        signatureInputHeader: #"sig1=("@method" "@authority" "@path" "content-digest" "content-type" "content-length");created=1618884475;keyid="test-key-ecc-p256""#,
        signatureHeader: #"sig1=:X5spyd6CFnAG5QnDyHfqoSNICd+BUP4LYMz2Q0JXlb//4Ijpzp+kve2w4NIyqeAuM7jTDX+sNalzA8ESSaHD3A==:"#,
        signature: #"X5spyd6CFnAG5QnDyHfqoSNICd+BUP4LYMz2Q0JXlb//4Ijpzp+kve2w4NIyqeAuM7jTDX+sNalzA8ESSaHD3A=="#,
        signatureBase: [
            #""@method": POST"#,
            #""@authority": example.com"#,
            #""@path": /foo"#,
            #""content-digest": sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#,
            #""content-type": application/json"#,
            #""content-length": 18"#,
            #""@signature-params": ("@method" "@authority" "@path" "content-digest" "content-type" "content-length");created=1618884475;keyid="test-key-ecc-p256""#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: false,
        isResponse: false,
        isDeterministic: false,
        message: multipleSignaturesClientRequest,
        request: nil
    )

    /// RFC 9421 Section 4.3 (proxy signature proxy_sig, rsa-v1_5-sha256 with test-key-rsa).
    static let multipleSignaturesProxy = Example(
        name: #"RFC 9421 Section 4.3 (proxy signature proxy_sig, rsa-v1_5-sha256 with test-key-rsa)"#,
        label: #"proxy_sig"#,
        keyID: #"test-key-rsa"#,
        algorithm: #"rsa-v1_5-sha256"#,
        algParameter: #"rsa-v1_5-sha256"#,
        created: 1618884480,
        expires: 1618884540,
        nonce: nil,
        tag: nil,
        coveredComponents: [#""@method""#, #""@authority""#, #""@path""#, #""content-digest""#, #""content-type""#, #""content-length""#, #""forwarded""#],
        signatureParams: #"("@method" "@authority" "@path" "content-digest" "content-type" "content-length" "forwarded");created=1618884480;keyid="test-key-rsa";alg="rsa-v1_5-sha256";expires=1618884540"#,
        signatureInputHeader: #"proxy_sig=("@method" "@authority" "@path" "content-digest" "content-type" "content-length" "forwarded");created=1618884480;keyid="test-key-rsa";alg="rsa-v1_5-sha256";expires=1618884540"#,
        signatureHeader: #"proxy_sig=:S6ZzPXSdAMOPjN/6KXfXWNO/f7V6cHm7BXYUh3YD/fRad4BCaRZxP+JH+8XY1I6+8Cy+CM5g92iHgxtRPz+MjniOaYmdkDcnL9cCpXJleXsOckpURl49GwiyUpZ10KHgOEe11sx3G2gxI8S0jnxQB+Pu68U9vVcasqOWAEObtNKKZd8tSFu7LB5YAv0RAGhB8tmpv7sFnIm9y+7X5kXQfi8NMaZaA8i2ZHwpBdg7a6CMfwnnrtflzvZdXAsD3LH2TwevU+/PBPv0B6NMNk93wUs/vfJvye+YuI87HU38lZHowtznbLVdp770I6VHR6WfgS9ddzirrswsE1w5o0LV/g==:"#,
        signature: #"S6ZzPXSdAMOPjN/6KXfXWNO/f7V6cHm7BXYUh3YD/fRad4BCaRZxP+JH+8XY1I6+8Cy+CM5g92iHgxtRPz+MjniOaYmdkDcnL9cCpXJleXsOckpURl49GwiyUpZ10KHgOEe11sx3G2gxI8S0jnxQB+Pu68U9vVcasqOWAEObtNKKZd8tSFu7LB5YAv0RAGhB8tmpv7sFnIm9y+7X5kXQfi8NMaZaA8i2ZHwpBdg7a6CMfwnnrtflzvZdXAsD3LH2TwevU+/PBPv0B6NMNk93wUs/vfJvye+YuI87HU38lZHowtznbLVdp770I6VHR6WfgS9ddzirrswsE1w5o0LV/g=="#,
        signatureBase: [
            #""@method": POST"#,
            #""@authority": origin.host.internal.example"#,
            #""@path": /foo"#,
            #""content-digest": sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#,
            #""content-type": application/json"#,
            #""content-length": 18"#,
            #""forwarded": for=192.0.2.123;host=example.com;proto=https"#,
            #""@signature-params": ("@method" "@authority" "@path" "content-digest" "content-type" "content-length" "forwarded");created=1618884480;keyid="test-key-rsa";alg="rsa-v1_5-sha256";expires=1618884540"#,
        ].joined(separator: "\n"),
        signatureBaseIsPrintedInRFC: true,
        isResponse: false,
        isDeterministic: true,
        message: multipleSignaturesForwardedRequest,
        request: nil
    )

    /// The Appendix B.2 examples, in order.
    static let appendixB2: [Example] = [b21, b22, b23, b24, b25, b26]

    /// Every signature example in this file.
    static let allExamples: [Example] = [
        b21, b22, b23, b24, b25, b26,
        tlsTerminatingProxy,
        transformations,
        verifyingASignature,
        responseToUnsignedRequest,
        signedRequestForResponse,
        responseToSignedRequest,
        multipleSignaturesClient,
        multipleSignaturesProxy,
    ]

    // MARK: - Digests (RFC 9530)

    static let digestExamples: [DigestExample] = [
        DigestExample(
            name: #"RFC 9530 Section 2 (Content-Digest example)"#, field: #"Content-Digest"#,
            content: "{\"hello\": \"world\"}\n", algorithm: #"sha-512"#,
            digestBase64: #"YMAam51Jz/jOATT6/zvHrLVgOYTGFy1d6GJiOHTohq4yP+pgk4vf2aCsyRZOtw8MjkM7iw7yZ/WkppmM44T3qg=="#,
            fieldValue: #"sha-512=:YMAam51Jz/jOATT6/zvHrLVgOYTGFy1d6GJiOHTohq4yP+pgk4vf2aCsyRZOtw8MjkM7iw7yZ/WkppmM44T3qg==:"#),
        DigestExample(
            name: #"RFC 9530 Appendix B.1 (Server Returns Full Representation Data)"#, field: #"Content-Digest"#,
            content: "{\"hello\": \"world\"}\n", algorithm: #"sha-256"#,
            digestBase64: #"RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg="#,
            fieldValue: #"sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:"#),
        DigestExample(
            name: #"RFC 9530 Appendix B.2 (Server Returns No Representation Data: empty content)"#, field: #"Content-Digest"#,
            content: #""#, algorithm: #"sha-256"#,
            digestBase64: #"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="#,
            fieldValue: #"sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:"#),
        DigestExample(
            name: #"RFC 9530 Appendix B.3 (Server Returns Partial Representation Data: bytes 10-18)"#, field: #"Content-Digest"#,
            content: "\"world\"}\n", algorithm: #"sha-256"#,
            digestBase64: #"jjcgBDWNAtbYUXI37CVG3gRuGOAjaaDRGpIUFsdyepQ="#,
            fieldValue: #"sha-256=:jjcgBDWNAtbYUXI37CVG3gRuGOAjaaDRGpIUFsdyepQ=:"#),
        DigestExample(
            name: #"RFC 9530 Appendix B.7 (POST request)"#, field: #"Repr-Digest"#,
            content: "{\"title\": \"New Title\"}\n", algorithm: #"sha-256"#,
            digestBase64: #"mEkdbO7Srd9LIOegftO0aBX+VPTVz7/CSHes2Z27gc4="#,
            fieldValue: #"sha-256=:mEkdbO7Srd9LIOegftO0aBX+VPTVz7/CSHes2Z27gc4=:"#),
        DigestExample(
            name: #"RFC 9530 Appendix B.7 (POST response)"#, field: #"Repr-Digest"#,
            content: "{\n  \"id\": \"123\",\n  \"title\": \"New Title\"\n}\n", algorithm: #"sha-256"#,
            digestBase64: #"uVSlinTTdQUwm2On4k8TJUikGN1bf/Ds8WPX4oe0h9I="#,
            fieldValue: #"sha-256=:uVSlinTTdQUwm2On4k8TJUikGN1bf/Ds8WPX4oe0h9I=:"#),
        DigestExample(
            name: #"RFC 9530 Appendix B.8 (POST response describing the request status)"#, field: #"Repr-Digest"#,
            content: "{\n  \"status\": \"created\",\n  \"id\": \"123\",\n  \"ts\": 1569327729,\n  \"instance\": \"/books/123\"\n}\n", algorithm: #"sha-256"#,
            digestBase64: #"yXIGDTN5VrfoyisKlXgRKUHHMs35SNtyC3szSz1dbO8="#,
            fieldValue: #"sha-256=:yXIGDTN5VrfoyisKlXgRKUHHMs35SNtyC3szSz1dbO8=:"#),
        DigestExample(
            name: #"RFC 9530 Appendix B.10 (error response)"#, field: #"Repr-Digest"#,
            content: "{\n  \"title\": \"Not Found\",\n  \"detail\": \"Cannot PATCH a non-existent resource\",\n  \"status\": 404\n}\n", algorithm: #"sha-256"#,
            digestBase64: #"EXB0S2VF2H7ijkAVJkH1Sm0pBho0iDZcvVUHHXTTZSA="#,
            fieldValue: #"sha-256=:EXB0S2VF2H7ijkAVJkH1Sm0pBho0iDZcvVUHHXTTZSA=:"#),
        DigestExample(
            name: #"RFC 9530 Appendix D (sample digest values, sha-512)"#, field: #"Content-Digest"#,
            content: #"{"hello": "world"}"#, algorithm: #"sha-512"#,
            digestBase64: #"WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew=="#,
            fieldValue: #"sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#),
        DigestExample(
            name: #"RFC 9530 Appendix D (sample digest values, sha-256)"#, field: #"Content-Digest"#,
            content: #"{"hello": "world"}"#, algorithm: #"sha-256"#,
            digestBase64: #"X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="#,
            fieldValue: #"sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"#),
        DigestExample(
            name: #"RFC 9421 Appendix B.2 (test-request content)"#, field: #"Content-Digest"#,
            content: #"{"hello": "world"}"#, algorithm: #"sha-512"#,
            digestBase64: #"WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew=="#,
            fieldValue: #"sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"#),
        DigestExample(
            name: #"RFC 9421 Appendix B.2 (test-response content; value as in B.2.4)"#, field: #"Content-Digest"#,
            content: #"{"message": "good dog"}"#, algorithm: #"sha-512"#,
            digestBase64: #"mEWXIS7MaLRuGgxOBdODa3xqM1XdEvxoYhvlCFJ41QJgJc4GTsPp29l5oGX69wWdXymyU0rjJuahq4l5aGgfLQ=="#,
            fieldValue: #"sha-512=:mEWXIS7MaLRuGgxOBdODa3xqM1XdEvxoYhvlCFJ41QJgJc4GTsPp29l5oGX69wWdXymyU0rjJuahq4l5aGgfLQ==:"#),
        DigestExample(
            name: #"RFC 9421 Section 2.4 (503 response content)"#, field: #"Content-Digest"#,
            content: #"{"busy": true, "message": "Your call is very important to us"}"#, algorithm: #"sha-512"#,
            digestBase64: #"0Y6iCBzGg5rZtoXS95Ijz03mslf6KAMCloESHObfwnHJDbkkWWQz6PhhU9kxsTbARtY2PTBOzq24uJFpHsMuAg=="#,
            fieldValue: #"sha-512=:0Y6iCBzGg5rZtoXS95Ijz03mslf6KAMCloESHObfwnHJDbkkWWQz6PhhU9kxsTbARtY2PTBOzq24uJFpHsMuAg==:"#),
    ]

    /// RFC 9530 Section 2: a Content-Digest with two members, unwrapped per RFC 8792 (so no space after
    /// the comma). For parsing only: its sha-256 member (d435Qo...) is not the sha-256 of the content
    /// whose sha-512 is the second member (that would be RK/0qy18...); the RFC reuses the value it gives
    /// for a brotli-coded representation in Appendix B.4-B.6, which could not be reproduced either.
    static let contentDigestTwoMembers = #"sha-256=:d435Qo+nKZ+gLcUHn7GQtQ72hiBVAgqoLsZnZPiTGPk=:,sha-512=:YMAam51Jz/jOATT6/zvHrLVgOYTGFy1d6GJiOHTohq4yP+pgk4vf2aCsyRZOtw8MjkM7iw7yZ/WkppmM44T3qg==:"#
}
