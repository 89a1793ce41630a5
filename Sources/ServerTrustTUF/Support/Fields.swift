/// Typed reads of metadata fields, each failure a ``TUFError/Code/malformedMetadata`` naming the
/// field's path.
package struct Fields {
    let members: [(key: String, value: JSONValue)]
    let path: String

    init(_ value: JSONValue, _ path: String) throws(TUFError) {
        guard case .object(let members) = value else { throw TUFError(.malformedMetadata, "\(path) is not an object") }
        self.members = members
        self.path = path
    }

    func optional(_ key: String) -> JSONValue? {
        members.first { $0.key == key }?.value
    }

    func required(_ key: String) throws(TUFError) -> JSONValue {
        guard let value = optional(key) else { throw TUFError(.malformedMetadata, "\(path).\(key) is missing") }
        return value
    }

    func string(_ key: String) throws(TUFError) -> String {
        guard case .string(let text) = try required(key) else { throw TUFError(.malformedMetadata, "\(path).\(key) is not a string") }
        return text
    }

    func integer(_ key: String) throws(TUFError) -> Int64 {
        guard case .integer(let number) = try required(key) else { throw TUFError(.malformedMetadata, "\(path).\(key) is not an integer") }
        return number
    }

    func optionalInteger(_ key: String) throws(TUFError) -> Int64? {
        guard let value = optional(key) else { return nil }
        guard case .integer(let number) = value else { throw TUFError(.malformedMetadata, "\(path).\(key) is not an integer") }
        return number
    }

    func bool(_ key: String) throws(TUFError) -> Bool {
        guard case .bool(let flag) = try required(key) else { throw TUFError(.malformedMetadata, "\(path).\(key) is not a boolean") }
        return flag
    }

    func object(_ key: String) throws(TUFError) -> Fields { try Fields(try required(key), "\(path).\(key)") }

    func strings(_ key: String) throws(TUFError) -> [String] {
        guard case .array(let elements) = try required(key) else { throw TUFError(.malformedMetadata, "\(path).\(key) is not an array") }
        var result: [String] = []
        for element in elements {
            guard case .string(let text) = element else { throw TUFError(.malformedMetadata, "\(path).\(key) holds a non-string") }
            result.append(text)
        }
        return result
    }
}
