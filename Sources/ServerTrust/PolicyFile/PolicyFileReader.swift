import Foundation

/// Reads typed fields out of a ``LocatedJSON`` tree, turning every problem into a
/// `TrustError.Code.invalidPolicyFile` error that names the file, the line and the field:
/// `policy.json:14: hosts["api.example.com"].pins[1].pin: not a sha256/ pin: …`.
struct PolicyFileReader {
    let fileName: String

    /// One value and where it is: its path in the document and its line (for an object
    /// member, the line of its key).
    struct Field {
        let node: LocatedJSON
        let path: String
        let line: Int
    }

    func error(_ line: Int, _ path: String, _ message: String) -> TrustError {
        TrustError(.invalidPolicyFile, "\(fileName):\(line): \(path.isEmpty ? "" : "\(path): ")\(message)")
    }

    func error(_ field: Field, _ message: String) -> TrustError { error(field.line, field.path, message) }

    /// The members of an object, refusing any key not in `allowed` (a misspelt `"pinz"` must
    /// not silently leave a host unpinned).
    func object(_ field: Field, allowed: [String]) throws -> [String: Field] {
        guard case .object(let members) = field.node.value else { throw error(field, "expected an object, found \(kind(field))") }
        var result: [String: Field] = [:]
        for member in members {
            let path = field.path.isEmpty ? member.key : "\(field.path).\(member.key)"
            guard allowed.contains(member.key) else {
                throw error(member.line, path, "unknown field; expected one of \(allowed.sorted().joined(separator: ", "))")
            }
            result[member.key] = Field(node: member.value, path: path, line: member.line)
        }
        return result
    }

    /// The members of an object, any key allowed: for documents whose unknown members cannot
    /// weaken anything (a CT log list, whose newer schema versions add members).
    func members(_ field: Field) throws -> [String: Field] {
        guard case .object(let members) = field.node.value else { throw error(field, "expected an object, found \(kind(field))") }
        var result: [String: Field] = [:]
        for member in members {
            result[member.key] = Field(node: member.value, path: field.path.isEmpty ? member.key : "\(field.path).\(member.key)", line: member.line)
        }
        return result
    }

    /// The members of an object whose keys are data (host patterns), in file order.
    func entries(_ field: Field) throws -> [(key: String, field: Field)] {
        guard case .object(let members) = field.node.value else { throw error(field, "expected an object, found \(kind(field))") }
        return members.map { ($0.key, Field(node: $0.value, path: "\(field.path)[\($0.key.debugDescription)]", line: $0.line)) }
    }

    func array(_ field: Field) throws -> [Field] {
        guard case .array(let elements) = field.node.value else { throw error(field, "expected an array, found \(kind(field))") }
        return elements.enumerated().map { Field(node: $1, path: "\(field.path)[\($0)]", line: $1.line) }
    }

    func string(_ field: Field) throws -> String {
        guard case .string(let text) = field.node.value else { throw error(field, "expected a string, found \(kind(field))") }
        return text
    }

    func bool(_ field: Field) throws -> Bool {
        guard case .bool(let value) = field.node.value else { throw error(field, "expected true or false, found \(kind(field))") }
        return value
    }

    func integer(_ field: Field, in range: ClosedRange<Int>) throws -> Int {
        guard case .number(let text) = field.node.value, let value = Int(text) else {
            throw error(field, "expected a whole number, found \(kind(field))")
        }
        guard range.contains(value) else { throw error(field, "\(value) is out of range \(range.lowerBound)…\(range.upperBound)") }
        return value
    }

    /// An RFC 3339 / ISO 8601 date-time with a time zone: `2027-06-01T00:00:00Z`.
    func date(_ field: Field) throws -> Date {
        let text = try string(field)
        guard let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) else {
            throw error(field, "not an ISO 8601 date-time with a time zone (e.g. 2027-06-01T00:00:00Z): \(text.debugDescription)")
        }
        return date
    }

    /// One of `choices`, spelt exactly.
    func choice(_ field: Field, _ choices: [String]) throws -> String {
        let text = try string(field)
        guard choices.contains(text) else {
            throw error(field, "\(text.debugDescription) is not one of \(choices.joined(separator: ", "))")
        }
        return text
    }

    /// An `https:` URL with a host; reports about pinning failures must not travel in clear.
    func reportURI(_ field: Field) throws -> URL {
        let text = try string(field)
        guard let url = URL(string: text), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else {
            throw error(field, "not an https: URL with a host: \(text.debugDescription)")
        }
        return url
    }

    private func kind(_ field: Field) -> String {
        switch field.node.value {
        case .object: "an object"
        case .array: "an array"
        case .string(let text): "the string \(text.debugDescription)"
        case .number(let text): "the number \(text)"
        case .bool(let value): "\(value)"
        case .null: "null"
        }
    }
}
