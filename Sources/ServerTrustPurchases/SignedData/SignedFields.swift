import Foundation
import ServerTrust

/// The members of one JSON object of signed data, read strictly: the document is UTF-8 with
/// no byte-order mark, no duplicate key, nothing after the value and within ServerTrust's size
/// and depth bounds (``LocatedJSON``); each field is read as the type Apple documents, and a
/// field of another type is refused by name, never coerced. `null` reads as absent.
///
/// Dates are integers of milliseconds since 1970, as the App Store writes them.
struct SignedFields {
    private let members: [String: LocatedJSON.Value]
    private let what: String
    private let code: PurchaseVerificationError.Code

    /// The object in `json`; `what` names it in errors ("transaction", "JWS header"), `code` is
    /// what a malformed one is refused with.
    init(json: [UInt8], what: String, code: PurchaseVerificationError.Code = .malformedPayload) throws(PurchaseVerificationError) {
        guard !json.starts(with: [0xEF, 0xBB, 0xBF]) else {
            throw PurchaseVerificationError(code, "The \(what) starts with a byte-order mark.")
        }
        let document: LocatedJSON
        do {
            document = try LocatedJSON.parse(json)
        } catch {
            throw PurchaseVerificationError(code, "The \(what) is not strict JSON: \(error.message).")
        }
        try self.init(document.value, what: what, code: code)
    }

    private init(_ value: LocatedJSON.Value, what: String, code: PurchaseVerificationError.Code) throws(PurchaseVerificationError) {
        guard case .object(let list) = value else {
            throw PurchaseVerificationError(code, "The \(what) is not a JSON object.")
        }
        var members: [String: LocatedJSON.Value] = [:]
        for member in list { members[member.key] = member.value.value }  // keys are unique: LocatedJSON refuses duplicates
        self.members = members
        self.what = what
        self.code = code
    }

    func has(_ key: String) -> Bool { members[key] != nil }

    /// The member names.
    var keys: Set<String> { Set(members.keys) }

    private func wrongType(_ key: String, _ expected: String) -> PurchaseVerificationError {
        PurchaseVerificationError(code, "The \(what)'s \"\(key)\" is not \(expected).")
    }

    private func present(_ key: String) -> LocatedJSON.Value? {
        guard let value = members[key] else { return nil }
        if case .null = value { return nil }
        return value
    }

    func string(_ key: String) throws(PurchaseVerificationError) -> String? {
        guard let value = present(key) else { return nil }
        guard case .string(let text) = value else { throw wrongType(key, "a string") }
        return text
    }

    func int64(_ key: String) throws(PurchaseVerificationError) -> Int64? {
        guard let value = present(key) else { return nil }
        guard case .number(let text) = value, let number = Int64(text) else { throw wrongType(key, "an integer") }
        return number
    }

    func int(_ key: String) throws(PurchaseVerificationError) -> Int? {
        guard let number = try int64(key) else { return nil }
        guard let value = Int(exactly: number), value >= Int(Int32.min), value <= Int(Int32.max) else {
            throw wrongType(key, "a 32-bit integer")
        }
        return value
    }

    func bool(_ key: String) throws(PurchaseVerificationError) -> Bool? {
        guard let value = present(key) else { return nil }
        guard case .bool(let flag) = value else { throw wrongType(key, "true or false") }
        return flag
    }

    /// Milliseconds since 1970 (UTC), within the years 0 to 9999: an integer as the App Store
    /// writes it, or a decimal fraction of a millisecond as StoreKit Testing in Xcode writes
    /// it (and `-62135769600000`, late in the year 0, for a date it does not have). No exponent.
    func date(_ key: String) throws(PurchaseVerificationError) -> Date? {
        guard let value = present(key) else { return nil }
        guard case .number(let text) = value else { throw wrongType(key, "a date in milliseconds since 1970") }
        let milliseconds: Double
        if let whole = Int64(text) {
            milliseconds = Double(whole)
        } else if text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let fractional = Double(text)
        {
            milliseconds = fractional
        } else {
            throw wrongType(key, "a date in milliseconds since 1970")
        }
        guard milliseconds >= -62_135_769_600_000, milliseconds <= 253_402_300_799_999 else {
            throw wrongType(key, "a date in milliseconds since 1970 within the years 0 to 9999")
        }
        return Date(timeIntervalSince1970: milliseconds / 1000)
    }

    func strings(_ key: String) throws(PurchaseVerificationError) -> [String]? {
        guard let value = present(key) else { return nil }
        guard case .array(let items) = value else { throw wrongType(key, "an array of strings") }
        var strings: [String] = []
        for item in items {
            guard case .string(let text) = item.value else { throw wrongType(key, "an array of strings") }
            strings.append(text)
        }
        return strings
    }

    func object(_ key: String) throws(PurchaseVerificationError) -> SignedFields? {
        guard let value = present(key) else { return nil }
        guard case .object = value else { throw wrongType(key, "an object") }
        return try SignedFields(value, what: "\(what)'s \"\(key)\"", code: code)
    }

    /// A field the type needs: absent (or `null`) is refused by name.
    func required<T>(_ key: String, _ read: (String) throws(PurchaseVerificationError) -> T?) throws(PurchaseVerificationError) -> T {
        guard let value = try read(key) else {
            throw PurchaseVerificationError(code, "The \(what) has no \"\(key)\".")
        }
        return value
    }
}
