import Foundation
@testable import ServerTrust
import Testing

/// The httpwg `structured-field-tests` vectors (Fixtures/structured-field-tests, with their
/// licence and the commit they were taken from) run against the RFC 8941 parser RFC 9421 reads
/// `Signature-Input`, `Signature`, `Accept-Signature` and `Content-Digest` with.
///
/// Every vector of the files that apply to RFC 8941 runs: a `must_fail` vector must be refused;
/// any other must parse to its `expected` value and serialize back to its `canonical` form (or
/// to its `raw` one) — a `can_fail` vector (a SHOULD) may be refused instead. Not run:
/// `date.json` and `display-string.json`, types RFC 9651 added after RFC 8941 and RFC 9421 do not
/// use, and `serialisation-tests/`, which check that a serializer refuses values a parser can
/// never produce (we serialize only what we parsed or built from our own components).
///
/// One deliberate difference from RFC 8941, listed in ``refusedOnPurpose``: a Dictionary with a
/// key twice is refused where RFC 8941 keeps the last value — otherwise a second
/// `Signature-Input` line from an intermediary could replace the server's signature parameters.
@Suite struct StructuredFieldVectorTests {
    static let files = [
        "binary", "boolean", "dictionary", "examples", "item", "key-generated", "large-generated", "list", "listlist", "number",
        "number-generated", "param-dict", "param-list", "param-listlist", "string", "string-generated", "token", "token-generated",
    ]

    /// Vectors RFC 8941 accepts and this parser refuses on purpose (see the suite's discussion).
    static let refusedOnPurpose: Set<String> = ["dictionary.json: duplicate key dictionary", "key-generated.json: 0x2c in dictionary key"]

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/structured-field-tests")

    @Test(arguments: files) func everyVectorParsesOrIsRefusedAsTheFileSays(_ file: String) throws {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent("\(file).json"))
        let vectors = try JSONDecoder().decode([StructuredFieldVector].self, from: data)
        #expect(!vectors.isEmpty)
        for vector in vectors {
            let name = "\(file).json: \(vector.name)"
            let raw = vector.raw.joined(separator: ", ")
            let parsed: StructuredFieldJSON
            let serialized: String
            do {
                (parsed, serialized) = try Self.parse(raw, as: vector.headerType)
            } catch {
                if vector.mustFail || vector.canFail || Self.refusedOnPurpose.contains(name) { continue }
                Issue.record("\(name): \(raw.debugDescription) was refused: \(error.message) at byte \(error.offset)")
                continue
            }
            guard !vector.mustFail else {
                Issue.record("\(name): \(raw.debugDescription) must fail but parsed to \(parsed)")
                continue
            }
            #expect(!Self.refusedOnPurpose.contains(name), "\(name) is listed as refused on purpose but parsed")
            let expected = try #require(vector.expected, "\(name) has no expected value")
            #expect(parsed == expected, "\(name): \(raw.debugDescription)")
            let canonical = (vector.canonical ?? vector.raw).joined(separator: ", ")
            #expect(serialized == canonical, "\(name): \(raw.debugDescription) serialized")
        }
    }

    @Test func aDictionaryWithAKeyTwiceIsRefused() throws {
        let error = #expect(throws: StructuredField.ParseError.self) { try StructuredField.dictionary("a=1,b=2,a=3") }
        #expect(error?.message == "the key \"a\" appears twice")
    }

    /// `::` is an empty byte sequence, not a parse error; an empty digest or signature still
    /// fails, as a mismatch.
    @Test func anEmptyByteSequenceParsesAndAnEmptyDigestIsABodyMismatch() throws {
        let item = try StructuredField.item("::")
        #expect(item.value == .bytes([]))
        let digest = ContentDigest()
        digest.update(Array("body".utf8))
        #expect(throws: ResponseSignatureError.bodyMismatch) { try digest.check("sha-256=::") }
    }

    // MARK: The parser's results in the vectors' JSON form, and its serialization

    /// Parses `raw` as `type`: the result as the vectors' JSON, and its serialization.
    static func parse(_ raw: String, as type: String) throws(StructuredField.ParseError) -> (StructuredFieldJSON, String) {
        switch type {
        case "item":
            let item = try StructuredField.item(raw)
            return (json(item), StructuredField.serialize(item))
        case "list":
            let members = try StructuredField.list(raw)
            return (.array(members.map(json)), members.map(serialize).joined(separator: ", "))
        case "dictionary":
            let members = try StructuredField.dictionary(raw)
            let serialized = members.map { key, member in
                if case .item(let item) = member, item.value == .boolean(true) { return key + StructuredField.serialize(item.parameters) }
                return key + "=" + serialize(member)
            }
            return (.array(members.map { .array([.string($0.key), json($0.member)]) }), serialized.joined(separator: ", "))
        default:
            preconditionFailure("header_type \(type)")
        }
    }

    static func serialize(_ member: StructuredField.Member) -> String {
        switch member {
        case .item(let item): StructuredField.serialize(item)
        case .innerList(let items, let parameters): StructuredField.serialize(innerList: items, parameters: parameters)
        }
    }

    static func json(_ member: StructuredField.Member) -> StructuredFieldJSON {
        switch member {
        case .item(let item): json(item)
        case .innerList(let items, let parameters): .array([.array(items.map(json)), json(parameters)])
        }
    }

    static func json(_ item: StructuredField.Item) -> StructuredFieldJSON { .array([json(item.value), json(item.parameters)]) }

    static func json(_ parameters: StructuredField.Parameters) -> StructuredFieldJSON {
        .array(parameters.map { .array([.string($0.key), json($0.value)]) })
    }

    static func json(_ value: StructuredField.BareItem) -> StructuredFieldJSON {
        switch value {
        case .integer(let number): .number(Double(number))
        case .decimal(let text): .number(Double(text)!)
        case .string(let text): .string(text)
        case .token(let text): .object(["__type": .string("token"), "value": .string(text)])
        case .bytes(let bytes): .object(["__type": .string("binary"), "value": .string(base32(bytes))])
        case .boolean(let flag): .bool(flag)
        }
    }

    /// RFC 4648 section 6, with padding: how the vectors write binary values.
    static func base32(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var out = ""
        var buffer = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        while out.count % 8 != 0 { out.append("=") }
        return out
    }
}

/// One test record (the repository's README, "Test Format").
struct StructuredFieldVector: Decodable {
    let name: String
    let raw: [String]
    let headerType: String
    let expected: StructuredFieldJSON?
    let mustFail: Bool
    let canFail: Bool
    let canonical: [String]?

    enum CodingKeys: String, CodingKey {
        case name, raw, expected, canonical
        case headerType = "header_type", mustFail = "must_fail", canFail = "can_fail"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        raw = try container.decode([String].self, forKey: .raw)
        headerType = try container.decode(String.self, forKey: .headerType)
        expected = try container.decodeIfPresent(StructuredFieldJSON.self, forKey: .expected)
        mustFail = try container.decodeIfPresent(Bool.self, forKey: .mustFail) ?? false
        canFail = try container.decodeIfPresent(Bool.self, forKey: .canFail) ?? false
        canonical = try container.decodeIfPresent([String].self, forKey: .canonical)
    }
}

/// A JSON value; numbers compare as the vectors' JSON numbers do, by value.
indirect enum StructuredFieldJSON: Decodable, Equatable, CustomStringConvertible {
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([StructuredFieldJSON])
    case object([String: StructuredFieldJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let array = try? container.decode([StructuredFieldJSON].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: StructuredFieldJSON].self))
        }
    }

    var description: String {
        switch self {
        case .bool(let flag): String(flag)
        case .number(let number): String(number)
        case .string(let text): text.debugDescription
        case .array(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .object(let members): "{" + members.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}
