import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// Hostile `X-ServerTrust-Signature` values: the verifier must never crash, never allocate
/// without bound, and never accept anything but the genuine header (and its whitespace
/// variants). Seeded, so a failure reproduces.
@Suite struct SignedResponseHeaderFuzzTests {
    let body = Array("fuzzed body".utf8)

    private func genuine() throws -> (SigningFixture, SignatureChallenge, [(name: String, value: String)]) {
        let fixture = try SigningFixture()
        let challenge = try fixture.challenge()
        return (fixture, challenge, try fixture.signedHeaders(for: challenge, etag: "\"e\"", body: body))
    }

    @Test func randomBytesNeverVerify() throws {
        let (fixture, challenge, _) = try genuine()
        let verifier = try fixture.verifier()
        var random = SeededGenerator(seed: 0x5EED)
        let alphabet = Array("v1;=, \tcertsaltnoncetimereqbodysigABCXYZabcxyz0189+/=\u{0}\u{7F}é".utf8)
        for round in 0..<10_000 {
            let length = Int.random(in: 0...(round % 20 == 0 ? 1500 : 200), using: &random)
            let bytes = (0..<length).map { _ in
                round.isMultiple(of: 2) ? UInt8.random(in: 0...255, using: &random) : alphabet.randomElement(using: &random)!
            }
            let value = String(decoding: bytes, as: UTF8.self)
            let error = signatureFailure { try verifier.verify(status: 200, headers: [(SignedResponseHeader.signature, value)], body: body, answering: challenge) }
            #expect(error != nil)
        }
    }

    @Test func everySingleByteMutationOfAGenuineHeaderFailsUnlessItOnlyChangesWhitespace() throws {
        let (fixture, challenge, headers) = try genuine()
        let value = Array(signatureValue(headers).utf8)
        let replacements: [UInt8] = [0x00, 0x09, 0x20, 0x2B, 0x2C, 0x2F, 0x3B, 0x3D, 0x41, 0x61, 0x7A, 0xFF]
        for index in value.indices {
            for replacement in replacements where replacement != value[index] {
                var mutated = value
                mutated[index] = replacement
                let text = String(decoding: mutated, as: UTF8.self)
                let error = signatureFailure {
                    try fixture.verifier().verify(
                        status: 200, headers: replacingSignature(headers, with: [text]), body: body, answering: challenge)
                }
                let whitespaceOnly = value[index] == 0x20 && (replacement == 0x09 || replacement == 0x20)
                #expect((error == nil) == whitespaceOnly, "byte \(index) → \(replacement): \(String(describing: error))")
            }
        }
    }

    @Test func insertedAndDeletedBytesNeverVerify() throws {
        let (fixture, challenge, headers) = try genuine()
        let value = Array(signatureValue(headers).utf8)
        var random = SeededGenerator(seed: 42)
        for _ in 0..<3_000 {
            var mutated = value
            let index = Int.random(in: 0..<mutated.count, using: &random)
            if Bool.random(using: &random) {
                if value[index] == 0x20 { continue }  // deleting optional whitespace is harmless
                mutated.remove(at: index)
            } else {
                let byte = UInt8.random(in: 0x21...0x7E, using: &random)
                mutated.insert(byte, at: index)
            }
            let text = String(decoding: mutated, as: UTF8.self)
            let error = signatureFailure {
                try fixture.verifier().verify(status: 200, headers: replacingSignature(headers, with: [text]), body: body, answering: challenge)
            }
            #expect(error != nil, "\(text)")
        }
    }

    @Test func manyOrHugeFieldsAreRefusedCheaply() throws {
        let (fixture, challenge, headers) = try genuine()
        let value = signatureValue(headers)
        let verifier = try fixture.verifier()
        let many = Array(repeating: (name: SignedResponseHeader.signature, value: "v7; x=y"), count: 10_000)
        #expect(signatureFailure { try verifier.verify(status: 200, headers: many, body: body, answering: challenge) } == .malformedSignature)
        let commas = String(repeating: ",", count: 100_000)
        #expect(signatureFailure { try verifier.verify(status: 200, headers: [(SignedResponseHeader.signature, commas)], body: body, answering: challenge) } == .malformedSignature)
        let huge = value + String(repeating: " ", count: 1 << 20)
        #expect(signatureFailure { try verifier.verify(status: 200, headers: [(SignedResponseHeader.signature, huge)], body: body, answering: challenge) } == .malformedSignature)
        let semicolons = "v1" + String(repeating: ";", count: 100_000)
        #expect(signatureFailure { try verifier.verify(status: 200, headers: [(SignedResponseHeader.signature, semicolons)], body: body, answering: challenge) } == .malformedSignature)
    }
}
