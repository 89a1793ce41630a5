public import Foundation

/// The payload of a legacy App Store receipt (the app receipt of `Bundle.appStoreReceiptURL`),
/// every field Apple documents typed.
///
/// The payload is a SET of attributes, each `SEQUENCE { type INTEGER, version INTEGER, value
/// OCTET STRING }`, the value holding the DER of the field's type. Apple's "Receipt Fields" and
/// the fields every receipt carries:
///
/// | type | field | value |
/// |---|---|---|
/// | 0 | ``receiptType`` | UTF8String (`Production`, `ProductionSandbox`, `Xcode`, …) |
/// | 1 | ``appItemID`` | INTEGER |
/// | 2 | ``bundleID`` (and ``bundleIDValue``) | UTF8String |
/// | 3 | ``applicationVersion`` | UTF8String |
/// | 4 | ``opaqueValue`` | bytes |
/// | 5 | ``sha1Hash`` | 20 bytes |
/// | 12 | ``creationDate`` | IA5String, RFC 3339 |
/// | 17 | ``inAppPurchases`` | SET of in-app purchase attributes, one per purchase |
/// | 19 | ``originalApplicationVersion`` | UTF8String |
/// | 21 | ``expirationDate`` | IA5String, RFC 3339 |
///
/// Attributes of other types are reserved by Apple and kept as they are in
/// ``otherAttributes``. A single-valued field twice, a value of another type, a date that is not
/// RFC 3339 in UTC (`2023-10-19T01:45:40Z`, fractional seconds allowed), or a missing bundle ID,
/// opaque value, hash or creation date is ``PurchaseVerificationError/Code/malformedReceipt``.
/// An empty date string, which Apple writes for a date that does not apply, reads as nil.
public struct AppStoreReceipt: Sendable {
    /// Field 0: the environment the receipt was made in (`Production`, `ProductionSandbox`,
    /// `ProductionVPP`, `ProductionVPPSandbox`, `Xcode`).
    public let receiptType: String?
    /// Field 1: the app's Apple ID (0 outside production).
    public let appItemID: Int64?
    /// Field 2: the app's bundle ID.
    public let bundleID: String
    /// Field 2's value as received (the DER of the UTF8String): what the device hash covers.
    public let bundleIDValue: [UInt8]
    /// Field 3: the app version (`CFBundleVersion` on iOS) the receipt was made for.
    public let applicationVersion: String?
    /// Field 4: an opaque value the device hash covers.
    public let opaqueValue: [UInt8]
    /// Field 5: the SHA-1 hash of the device identifier, ``opaqueValue`` and ``bundleIDValue``.
    public let sha1Hash: [UInt8]
    /// Field 12: when the receipt was made; the signing chain is judged then.
    public let creationDate: Date
    /// Field 17: the in-app purchases, in the receipt's order.
    public let inAppPurchases: [AppStoreReceiptInAppPurchase]
    /// Field 19: the app version the customer first bought.
    public let originalApplicationVersion: String?
    /// Field 21: when the receipt expires (Volume Purchase Program receipts).
    public let expirationDate: Date?
    /// The attributes of types Apple does not document, as received.
    public let otherAttributes: [AppStoreReceiptAttribute]

    /// The environment ``receiptType`` names: `Production` and `ProductionVPP` are production,
    /// `ProductionSandbox` and `ProductionVPPSandbox` sandbox, `Xcode` Xcode; nil otherwise.
    public var environment: AppStoreEnvironment? {
        switch receiptType {
        case "Production", "ProductionVPP": .production
        case "ProductionSandbox", "ProductionVPPSandbox": .sandbox
        case "Xcode": .xcode
        default: nil
        }
    }

    /// Reads the payload (the SignedData's content), without any signature check: the verifier
    /// reads it before the signature only to learn the time to judge the chain at.
    package init(payload: [UInt8]) throws(PurchaseVerificationError) {
        var fields = try ReceiptAttributeSet(payload, what: "the receipt payload")
        receiptType = try fields.single(0) { value throws(PurchaseVerificationError) in try value.utf8String() }
        appItemID = try fields.single(1) { value throws(PurchaseVerificationError) in try value.integer() }
        let bundle = try fields.single(2) { value throws(PurchaseVerificationError) in (try value.utf8String(), try value.bytes()) }
        applicationVersion = try fields.single(3) { value throws(PurchaseVerificationError) in try value.utf8String() }
        let opaque = try fields.single(4) { value throws(PurchaseVerificationError) in try value.bytes() }
        let hash = try fields.single(5) { value throws(PurchaseVerificationError) in try value.bytes() }
        let created = try fields.single(12) { value throws(PurchaseVerificationError) in try value.date() }
        inAppPurchases = try fields.all(17) { value throws(PurchaseVerificationError) in try AppStoreReceiptInAppPurchase(value) }
        originalApplicationVersion = try fields.single(19) { value throws(PurchaseVerificationError) in try value.utf8String() }
        expirationDate = try fields.single(21) { value throws(PurchaseVerificationError) in try value.date() } ?? nil
        otherAttributes = try fields.remaining()

        guard let bundle else { throw ReceiptAttributeSet.malformed("the receipt has no bundle ID (field 2)") }
        (bundleID, bundleIDValue) = bundle
        guard let opaque else { throw ReceiptAttributeSet.malformed("the receipt has no opaque value (field 4)") }
        opaqueValue = opaque
        guard let hash else { throw ReceiptAttributeSet.malformed("the receipt has no SHA-1 hash (field 5)") }
        guard hash.count == 20 else { throw ReceiptAttributeSet.malformed("the receipt's SHA-1 hash (field 5) is \(hash.count) bytes, not 20") }
        sha1Hash = hash
        guard let created = created ?? nil else { throw ReceiptAttributeSet.malformed("the receipt has no creation date (field 12)") }
        creationDate = created
    }

    /// Whether the receipt was issued to the device `identifier` names (on iOS,
    /// `UIDevice.identifierForVendor`): Apple's check, SHA-1 of the identifier's 16 bytes, then
    /// ``opaqueValue``, then ``bundleIDValue``, equal to ``sha1Hash``.
    public func isForDevice(identifier: UUID) -> Bool {
        let uuid = identifier.uuid
        let bytes: [UInt8] = [
            uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5, uuid.6, uuid.7, uuid.8, uuid.9, uuid.10, uuid.11, uuid.12, uuid.13, uuid.14, uuid.15,
        ]
        return ReceiptDigest.sha1.hash(bytes + opaqueValue + bundleIDValue) == sha1Hash
    }

    /// Throws unless ``isForDevice(identifier:)``.
    ///
    /// - Throws: ``PurchaseVerificationError/Code/deviceHashMismatch``: a receipt copied from
    ///   another device, or another identifier.
    public func checkDevice(identifier: UUID) throws(PurchaseVerificationError) {
        guard isForDevice(identifier: identifier) else {
            throw PurchaseVerificationError(
                .deviceHashMismatch, "The receipt's SHA-1 hash is not that of device \(identifier.uuidString), its opaque value and bundle ID.")
        }
    }
}

/// One in-app purchase of a receipt (field 17): a SET of attributes of the receipt's form.
///
/// | type | field | value |
/// |---|---|---|
/// | 1701 | ``quantity`` | INTEGER |
/// | 1702 | ``productID`` | UTF8String |
/// | 1703 | ``transactionID`` | UTF8String |
/// | 1704 | ``purchaseDate`` | IA5String, RFC 3339 |
/// | 1705 | ``originalTransactionID`` | UTF8String |
/// | 1706 | ``originalPurchaseDate`` | IA5String, RFC 3339 |
/// | 1708 | ``subscriptionExpirationDate`` | IA5String, RFC 3339 |
/// | 1711 | ``webOrderLineItemID`` | INTEGER |
/// | 1712 | ``cancellationDate`` | IA5String, RFC 3339 |
/// | 1713 | ``isInTrialPeriod`` | INTEGER 0 or 1 |
/// | 1719 | ``isInIntroOfferPeriod`` | INTEGER 0 or 1 |
/// | 1721 | ``promotionalOfferIdentifier`` | UTF8String |
///
/// 1713 is the JSON receipt's `is_trial_period`, which Apple's table gives no ASN.1 type for but
/// receipts carry as 1713; 1707, 1709, 1710, 1714 to 1718 and 1720 are undocumented and kept in
/// ``otherAttributes``. The product and transaction IDs are required.
public struct AppStoreReceiptInAppPurchase: Sendable {
    /// 1701: how many were bought.
    public let quantity: Int64?
    /// 1702: the product's identifier.
    public let productID: String
    /// 1703: the transaction's identifier.
    public let transactionID: String
    /// 1704: when the App Store charged the customer (for a renewal, when it renewed).
    public let purchaseDate: Date?
    /// 1705: the first transaction's identifier, for a restore or a renewal.
    public let originalTransactionID: String?
    /// 1706: the first transaction's date.
    public let originalPurchaseDate: Date?
    /// 1708: when an auto-renewable subscription expires.
    public let subscriptionExpirationDate: Date?
    /// 1711: the subscription purchase's identifier across devices.
    public let webOrderLineItemID: Int64?
    /// 1712: when Apple refunded the purchase, or the customer upgraded away from it.
    public let cancellationDate: Date?
    /// 1713: whether the subscription period is a free trial.
    public let isInTrialPeriod: Bool?
    /// 1719: whether the subscription period is an introductory price period.
    public let isInIntroOfferPeriod: Bool?
    /// 1721: the promotional offer's identifier.
    public let promotionalOfferIdentifier: String?
    /// The attributes of types Apple does not document, as received.
    public let otherAttributes: [AppStoreReceiptAttribute]

    init(_ value: ReceiptAttributeValue) throws(PurchaseVerificationError) {
        var fields = try ReceiptAttributeSet(value, what: "the in-app purchase at offset \(value.offset)")
        quantity = try fields.single(1701) { value throws(PurchaseVerificationError) in try value.integer() }
        let product = try fields.single(1702) { value throws(PurchaseVerificationError) in try value.utf8String() }
        let transaction = try fields.single(1703) { value throws(PurchaseVerificationError) in try value.utf8String() }
        purchaseDate = try fields.single(1704) { value throws(PurchaseVerificationError) in try value.date() } ?? nil
        originalTransactionID = try fields.single(1705) { value throws(PurchaseVerificationError) in try value.utf8String() }
        originalPurchaseDate = try fields.single(1706) { value throws(PurchaseVerificationError) in try value.date() } ?? nil
        subscriptionExpirationDate = try fields.single(1708) { value throws(PurchaseVerificationError) in try value.date() } ?? nil
        webOrderLineItemID = try fields.single(1711) { value throws(PurchaseVerificationError) in try value.integer() }
        cancellationDate = try fields.single(1712) { value throws(PurchaseVerificationError) in try value.date() } ?? nil
        isInTrialPeriod = try fields.single(1713) { value throws(PurchaseVerificationError) in try value.flag() }
        isInIntroOfferPeriod = try fields.single(1719) { value throws(PurchaseVerificationError) in try value.flag() }
        promotionalOfferIdentifier = try fields.single(1721) { value throws(PurchaseVerificationError) in try value.utf8String() }
        otherAttributes = try fields.remaining()
        guard let product else { throw ReceiptAttributeSet.malformed("the in-app purchase at offset \(value.offset) has no product ID (1702)") }
        guard let transaction else {
            throw ReceiptAttributeSet.malformed("the in-app purchase at offset \(value.offset) has no transaction ID (1703)")
        }
        productID = product
        transactionID = transaction
    }
}

/// A receipt attribute as received: its type, version and the value's bytes (the contents of
/// its OCTET STRING).
public struct AppStoreReceiptAttribute: Hashable, Sendable {
    /// The attribute's type.
    public let type: Int64
    /// The attribute's version (Apple's receipts write 1, or 2 for some).
    public let version: Int64
    /// The value's bytes.
    public let value: [UInt8]

    package init(type: Int64, version: Int64, value: [UInt8]) {
        self.type = type
        self.version = version
        self.value = value
    }
}

/// A receipt's or an in-app purchase's attribute SET, read once and then taken apart field by
/// field: each typed field taken out exactly once, the rest kept. Read over the payload's bytes
/// where they are (``BERReader/value(in:at:bound:depth:deep:)``): each attribute's SEQUENCE,
/// type, version and value checked once, nothing copied but the fields themselves.
struct ReceiptAttributeSet {
    /// One attribute: its type and version, its value's OCTET STRING, the attribute's offset.
    private struct Entry {
        let type: Int64
        let version: Int64
        let value: BERValue
        let offset: Int
        var taken = false
    }

    private let input: [UInt8]
    private var entries: [Entry] = []

    /// The SET `bytes` hold (the receipt payload).
    init(_ bytes: [UInt8], what: @autoclosure () -> String) throws(PurchaseVerificationError) {
        let set = try BERReader.parse(bytes, what: what(), deep: false)
        try self.init(set: set.value, depth: 0, in: bytes, what: what())
    }

    /// The SET an attribute's value holds (an in-app purchase).
    init(_ value: ReceiptAttributeValue, what: @autoclosure () -> String) throws(PurchaseVerificationError) {
        let set = try value.element(deep: false)
        try self.init(set: set.value, depth: set.depth, in: set.input, what: what())
    }

    private init(set: BERValue, depth: Int, in input: [UInt8], what: @autoclosure () -> String) throws(PurchaseVerificationError) {
        guard set.tag == .set else {
            throw BERReader.malformed("\(what()) at offset \(set.offset) is tagged \(set.tag.isConstructed ? "constructed " : "")\(set.tag), not SET")
        }
        self.input = input
        entries = try input.withUnsafeBufferPointer { bytes throws(PurchaseVerificationError) in
            var entries: [Entry] = []
            entries.reserveCapacity(16)
            var cursor = set.contentRange.lowerBound
            while cursor < set.contentRange.upperBound {
                let attribute = try BERReader.value(in: bytes, at: cursor, bound: set.contentRange.upperBound, depth: depth + 1, deep: false)
                guard attribute.tag == .sequence else {
                    throw BERReader.malformed("an attribute of \(what()) at offset \(attribute.offset) is tagged \(attribute.tag), not SEQUENCE")
                }
                let (start, end) = (attribute.contentRange.lowerBound, attribute.contentRange.upperBound)
                let type = try BERReader.value(in: bytes, at: start, bound: end, depth: depth + 2, deep: false)
                let version = try BERReader.value(in: bytes, at: type.endOffset, bound: end, depth: depth + 2, deep: false)
                let value = try BERReader.value(in: bytes, at: version.endOffset, bound: end, depth: depth + 2, deep: false)
                guard value.endOffset == end else {
                    throw BERReader.malformed("an attribute of \(what()) at offset \(attribute.offset) is not a SEQUENCE of exactly type, version and value")
                }
                guard type.tag == .integer, version.tag == .integer else {
                    throw BERReader.malformed("an attribute's type or version at offset \(attribute.offset) is not an INTEGER")
                }
                guard value.tag.tagClass == .universal, value.tag.number == BERTag.octetString.number else {
                    throw BERReader.malformed("an attribute's value at offset \(value.offset) is tagged \(value.tag), not OCTET STRING")
                }
                entries.append(
                    Entry(
                        type: try BERReader.integer(bytes[type.contentRange], at: type.offset, "an attribute's type"),
                        version: try BERReader.integer(bytes[version.contentRange], at: version.offset, "an attribute's version"), value: value,
                        offset: attribute.offset))
                cursor = attribute.endOffset
            }
            return entries
        }
        self.depth = depth
    }

    /// The depth of the SET's attributes' values.
    private let depth: Int

    /// The attributes no field took, in their order.
    func remaining() throws(PurchaseVerificationError) -> [AppStoreReceiptAttribute] {
        var attributes: [AppStoreReceiptAttribute] = []
        for entry in entries where !entry.taken {
            attributes.append(AppStoreReceiptAttribute(type: entry.type, version: entry.version, value: try value(entry).bytes()))
        }
        return attributes
    }

    private func value(_ entry: Entry) -> ReceiptAttributeValue {
        ReceiptAttributeValue(type: entry.type, value: BERElement(entry.value, depth: depth + 2, input: input), offset: entry.offset)
    }

    /// The one attribute of `type`, read by `read`, or nil; twice is refused.
    mutating func single<Value>(
        _ type: Int64, _ read: (ReceiptAttributeValue) throws(PurchaseVerificationError) -> Value
    ) throws(PurchaseVerificationError) -> Value? {
        var found: Int?
        for index in entries.indices where entries[index].type == type && !entries[index].taken {
            if found != nil {
                let count = entries.indices.filter { entries[$0].type == type && !entries[$0].taken }.count
                throw Self.malformed("the receipt attribute \(type) appears \(count) times, the second at offset \(entries[index].offset)")
            }
            found = index
        }
        guard let found else { return nil }
        entries[found].taken = true
        return try read(value(entries[found]))
    }

    /// Every attribute of `type`, each read by `read`, in order.
    mutating func all<Value>(
        _ type: Int64, _ read: (ReceiptAttributeValue) throws(PurchaseVerificationError) -> Value
    ) throws(PurchaseVerificationError) -> [Value] {
        var values: [Value] = []
        for index in entries.indices where entries[index].type == type && !entries[index].taken {
            entries[index].taken = true
            values.append(try read(value(entries[index])))
        }
        return values
    }

    static func malformed(_ reason: String) -> PurchaseVerificationError {
        PurchaseVerificationError(.malformedReceipt, "Malformed receipt payload: \(reason).")
    }
}

/// One attribute's value, read as the type its field documents, over the payload's bytes.
struct ReceiptAttributeValue {
    let type: Int64
    /// The value's OCTET STRING, in the payload's bytes.
    let value: BERElement
    /// Offset of the attribute in its SET, for the reasons.
    let offset: Int

    private var what: String { "the value of receipt attribute \(type) (at offset \(offset))" }

    /// The value's octets as received (the bundle ID's, the opaque value and the hash feed the
    /// device hash byte for byte).
    func bytes() throws(PurchaseVerificationError) -> [UInt8] {
        try value.octetString(what)
    }

    /// The one DER value the octets hold, validated all the way down unless `deep` is false.
    func element(deep: Bool = true) throws(PurchaseVerificationError) -> BERElement {
        try BERReader.parse(octetsOf: value, what: what, deep: deep)
    }

    /// `body` with the content of the one primitive value of `tag` the octets hold, where it
    /// is: what ``element(deep:)`` and ``BERElement/expect(_:_:)`` check, without building an
    /// element and a reader for each field.
    private func content<Result>(
        of tag: BERTag, _ body: (UnsafeBufferPointer<UInt8>) throws(PurchaseVerificationError) -> Result
    ) throws(PurchaseVerificationError) -> Result {
        guard !value.tag.isConstructed else {
            let octets = try bytes()
            let element = try BERReader.parse(octets, what: what).expect(tag, what)
            return try octets.withUnsafeBufferPointer { bytes throws(PurchaseVerificationError) in
                try body(UnsafeBufferPointer(rebasing: bytes[element.contentRange]))
            }
        }
        let range = value.contentRange
        return try value.input.withUnsafeBufferPointer { bytes throws(PurchaseVerificationError) in
            guard !range.isEmpty else { throw BERReader.malformed("\(what) is empty") }
            let inner = try BERReader.value(in: bytes, at: range.lowerBound, bound: range.upperBound, depth: 0, deep: true)
            guard inner.endOffset == range.upperBound else {
                throw BERReader.malformed(
                    "\(what) has \(range.upperBound - inner.endOffset) trailing bytes after its value, at offset \(inner.endOffset)")
            }
            guard inner.tag == tag else {
                throw BERReader.malformed(
                    "\(what) at offset \(inner.offset) is tagged \(inner.tag.isConstructed ? "constructed " : "")\(inner.tag), not \(tag)")
            }
            return try body(UnsafeBufferPointer(rebasing: bytes[inner.contentRange]))
        }
    }

    func utf8String() throws(PurchaseVerificationError) -> String {
        let text = try content(of: .utf8String) { bytes -> String? in
            // Decoding repairs what is not UTF-8 (with U+FFFD), so valid text is the text whose
            // bytes come back unchanged; String(validating:) runs unspecialised, 3 times slower.
            var text = String(decoding: bytes, as: UTF8.self)
            let unchanged = text.withUTF8 { utf8 in
                utf8.count == bytes.count && (bytes.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
            }
            return unchanged ? text : nil
        }
        guard let text else { throw ReceiptAttributeSet.malformed("\(what) is not valid UTF-8") }
        return text
    }

    func integer() throws(PurchaseVerificationError) -> Int64 {
        try content(of: .integer) { bytes throws(PurchaseVerificationError) in try BERReader.integer(bytes, at: offset, what) }
    }

    /// An INTEGER 0 or 1.
    func flag() throws(PurchaseVerificationError) -> Bool {
        switch try integer() {
        case 0: return false
        case 1: return true
        case let other: throw ReceiptAttributeSet.malformed("\(what) is \(other), not 0 or 1")
        }
    }

    /// An IA5String date; nil for the empty string Apple writes for a date that does not apply.
    func date() throws(PurchaseVerificationError) -> Date? {
        let date: Date?? = try content(of: .ia5String) { bytes in bytes.isEmpty ? .some(nil) : ReceiptDate.parse(bytes).map { .some($0) } }
        guard let date else {
            throw ReceiptAttributeSet.malformed("\(what) is not an RFC 3339 UTC date (yyyy-MM-ddTHH:mm:ss[.fraction]Z)")
        }
        return date
    }
}

/// RFC 3339 dates as receipts write them: `yyyy-MM-ddTHH:mm:ssZ`, with optional fractional
/// seconds, in UTC only; every component range-checked (the day against its month, leap years
/// included), nothing else accepted.
enum ReceiptDate {

    /// The date `text` (an IA5String's content, where it is) writes, or nil.
    static func parse(_ text: UnsafeBufferPointer<UInt8>) -> Date? {
        // At most nine fractional digits, which keeps every number below in range.
        guard text.count >= 20, text.count <= 30 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let digit = Int(text[index]) - 0x30
                guard digit >= 0, digit <= 9 else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), text[10] == UInt8(ascii: "T"), text[13] == UInt8(ascii: ":"),
            text[16] == UInt8(ascii: ":"), text[text.count - 1] == UInt8(ascii: "Z"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var fraction = 0.0
        if text.count > 20 {
            // `.` and at least one digit between the seconds and the `Z`.
            guard text[19] == UInt8(ascii: "."), text.count > 21, let digits = number(20..<(text.count - 1)) else { return nil }
            fraction = Double(digits) / pow(10, Double(text.count - 21))
        }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = month == 2 ? (leap ? 29 : 28) : month == 4 || month == 6 || month == 9 || month == 11 ? 30 : 31
        guard month >= 1, month <= 12, day >= 1, day <= monthDays, hour <= 23, minute <= 59, second <= 59 else { return nil }
        // Days from 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let daysSinceEpoch = era * 146_097 + dayOfEra - 719_468
        let seconds = daysSinceEpoch * 86_400 + hour * 3600 + minute * 60 + second
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }
}
