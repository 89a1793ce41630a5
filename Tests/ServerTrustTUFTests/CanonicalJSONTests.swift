import Foundation
import ServerTrustTestSupport
import Testing
@testable import ServerTrustTUF

@Suite struct CanonicalJSONTests {
    struct Vectors: Decodable {
        struct Canonical: Decodable {
            let json: String
            let canonical_hex: String
        }
        let canonical: [Canonical]
    }

    static let vectors: Vectors = {
        let data = try! Data(contentsOf: TUFFixtures.fixtures.appendingPathComponent("vectors.json"))
        return try! JSONDecoder().decode(Vectors.self, from: data)
    }()

    @Test func encodingMatchesSecuresystemslibEncodeCanonicalByteForByte() throws {
        #expect(Self.vectors.canonical.count == 6)
        for vector in Self.vectors.canonical {
            let value = try JSONParser().parse(Array(vector.json.utf8))
            #expect(Digest.hex(CanonicalJSON.encode(value)) == vector.canonical_hex, "\(vector.json)")
        }
    }

    /// The fuzz target's seeds and regressions, in the normal test run: each parses (or is
    /// refused as malformed JSON) and its canonical encoding is a fixed point.
    @Test func fuzzSeedsAndRegressionsHaveAFixedPointCanonicalEncoding() throws {
        let fuzz = PackageFiles.root.appendingPathComponent("Fuzz")
        var checked = 0
        for folder in ["Corpus/tuf-metadata", "Regressions/tuf-metadata"] {
            let directory = fuzz.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where !name.hasSuffix(".md") {
                let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
                let value: JSONValue
                do throws(TUFError) {
                    value = try JSONParser().parse(bytes)
                } catch {
                    #expect(error.code == .malformedJSON, "\(folder)/\(name): \(error)")
                    continue
                }
                let canonical = CanonicalJSON.encode(value)
                #expect(CanonicalJSON.encode(try JSONParser().parse(canonical)) == canonical, "\(folder)/\(name)")
                checked += 1
            }
        }
        #expect(checked >= 6)
    }

    @Test func duplicateKeysAreRefusedAtAnyDepth() {
        for text in [#"{"a":1,"a":2}"#, #"{"x":{"k":true,"k":true}}"#, #"[{"\u0061":1,"a":2}]"#] {
            #expect(throws: TUFError(.malformedJSON, "")) { try JSONParser().parse(Array(text.utf8)) }
        }
    }

    @Test func floatsExponentsAndNonFiniteNumbersAreRefused() {
        for text in ["1.5", "1e3", "-0.0", "NaN", "Infinity", "01", "18446744073709551616"] {
            #expect(throws: TUFError(.malformedJSON, ""), "\(text)") { try JSONParser().parse(Array(text.utf8)) }
        }
    }

    @Test func loneSurrogatesInvalidUTF8AndControlCharactersAreRefused() {
        let inputs: [[UInt8]] = [Array(#""\ud800""#.utf8), Array(#""\udc00x""#.utf8), [0x22, 0xC3, 0x28, 0x22], [0x22, 0x01, 0x22]]
        for bytes in inputs {
            #expect(throws: TUFError(.malformedJSON, "")) { try JSONParser().parse(bytes) }
        }
    }

    @Test func nestingBeyondTheDepthLimitAndTrailingDataAreRefused() throws {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: TUFError(.malformedJSON, "")) { try JSONParser().parse(Array(deep.utf8)) }
        _ = try JSONParser().parse(Array((String(repeating: "[", count: 64) + String(repeating: "]", count: 64)).utf8))
        #expect(throws: TUFError(.malformedJSON, "")) { try JSONParser().parse(Array("{} {}".utf8)) }
        #expect(throws: TUFError(.malformedJSON, "")) { try JSONParser(maximumLength: 4).parse(Array("[1,2]".utf8)) }
    }
}

@Suite struct PathPatternTests {
    func matches(_ target: String, _ pattern: String) -> Bool {
        PathPattern.matches(Array(target.unicodeScalars), pattern: Array(pattern.unicodeScalars))
    }

    @Test func segmentsMatchAsPythonFnmatchcase() {
        #expect(matches("file.txt", "*.txt"))
        #expect(matches("file.txt", "f?le.*"))
        #expect(matches("a1", "a[0-9]"))
        #expect(!matches("ab", "a[!b]"))
        #expect(matches("a]", "a[]]"))
        #expect(matches("[x", "[x"))
        #expect(!matches("File.txt", "file.*"))
        #expect(!matches("file.txt.bak", "*.txt"))
    }

    @Test func succinctHashBinsNameTheBinOfTheFirstBitsOfSHA256() throws {
        // sha256("packages/p0.json") and the bin names python-tuf's SuccinctRoles gives for
        // bit_length 3 ("bin-0" … "bin-7") and 8 ("bin-00" … "bin-ff").
        let value = try JSONParser().parse(Array(#"{"keyids":[],"threshold":1,"bit_length":3,"name_prefix":"bin"}"#.utf8))
        let roles = try SuccinctRoles(value, "succinct_roles")
        let digest = Digest.sha256(Array("packages/p0.json".utf8))
        #expect(roles.roleName(for: "packages/p0.json") == "bin-\(digest[0] >> 5)")
        #expect(roles.isDelegated(roleName: "bin-7"))
        #expect(!roles.isDelegated(roleName: "bin-8"))
        #expect(!roles.isDelegated(roleName: "bin-07"))
    }
}
