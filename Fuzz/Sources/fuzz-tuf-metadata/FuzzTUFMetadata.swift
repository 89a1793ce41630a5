import FuzzSupport
import ServerTrustTUF

/// Input: bytes of a TUF metadata file, to the canonical-JSON parser and the metadata types.
///
/// Properties: the parser either returns a value or throws a `TUFError` (`malformedJSON`); a
/// parsed value's canonical encoding parses back to the same value (members sorted) and encodes
/// to the same bytes — the encoding is a fixed point, so a signature covers one document only —
/// unless a string holds a control character, which canonical JSON writes raw; parsing as
/// each role either succeeds or throws a `TUFError`; bytes trusted as a root never crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTUFMetadata(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput.bytes(start, count)
    let value: JSONValue
    do {
        value = try JSONParser().parse(bytes)
    } catch let error as TUFError {
        require(error.code == .malformedJSON, "the parser threw \(error.code), not malformedJSON")
        return 0
    } catch {
        fatalError("fuzz invariant broken: the parser threw a non-TUFError: \(error)")
    }
    let canonical = CanonicalJSON.encode(value)
    if let again = try? JSONParser().parse(canonical) {
        require(sortedMembers(again) == sortedMembers(value), "canonical JSON parsed back to another value")
        require(CanonicalJSON.encode(again) == canonical, "canonical JSON is not a fixed point")
    } else {
        // securesystemslib writes control characters raw, which no JSON parser reads back; the
        // canonical bytes are only ever signed or verified, never parsed.
        require(containsControlCharacter(value), "canonical JSON without control characters does not parse back")
    }
    _ = try? Metadata<Root>(bytes: bytes)
    _ = try? Metadata<Timestamp>(bytes: bytes)
    _ = try? Metadata<Snapshot>(bytes: bytes)
    _ = try? Metadata<Targets>(bytes: bytes)
    _ = try? InitialRoot(bytes: bytes)
    return 0
}

/// The value with every object's members in canonical (UTF-8 byte) order.
func sortedMembers(_ value: JSONValue) -> JSONValue {
    switch value {
    case .array(let elements): return .array(elements.map(sortedMembers))
    case .object(let members):
        return .object(members.map { (key: $0.key, value: sortedMembers($0.value)) }.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) })
    default: return value
    }
}

func containsControlCharacter(_ value: JSONValue) -> Bool {
    func control(_ text: String) -> Bool { text.unicodeScalars.contains { $0.value < 0x20 } }
    switch value {
    case .string(let text): return control(text)
    case .array(let elements): return elements.contains(where: containsControlCharacter)
    case .object(let members): return members.contains { control($0.key) || containsControlCharacter($0.value) }
    default: return false
    }
}
