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
        let bundle = try fields.single(2) { value throws(PurchaseVerificationError) in (try value.utf8String(), value.bytes) }
        applicationVersion = try fields.single(3) { value throws(PurchaseVerificationError) in try value.utf8String() }
        let opaque = try fields.single(4) { value throws(PurchaseVerificationError) in value.bytes }
        let hash = try fields.single(5) { value throws(PurchaseVerificationError) in value.bytes }
        let created = try fields.single(12) { value throws(PurchaseVerificationError) in try value.date() }
        inAppPurchases = try fields.all(17) { value throws(PurchaseVerificationError) in try AppStoreReceiptInAppPurchase(value) }
        originalApplicationVersion = try fields.single(19) { value throws(PurchaseVerificationError) in try value.utf8String() }
        expirationDate = try fields.single(21) { value throws(PurchaseVerificationError) in try value.date() } ?? nil
        otherAttributes = fields.remaining

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
        var fields = try ReceiptAttributeSet(value.bytes, what: "the in-app purchase at offset \(value.offset)")
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
        otherAttributes = fields.remaining
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
/// field: each typed field taken out exactly once, the rest kept.
struct ReceiptAttributeSet {
    private let attributes: [(attribute: AppStoreReceiptAttribute, offset: Int)]
    /// Indices into ``attributes`` by type, in order; a type is removed once taken.
    private var byType: [Int64: [Int]] = [:]

    init(_ bytes: [UInt8], what: @autoclosure () -> String) throws(PurchaseVerificationError) {
        let set = try BERReader.parse(bytes, what: what())
        var reader = try set.expect(.set, what()).children()
        var attributes: [(attribute: AppStoreReceiptAttribute, offset: Int)] = []
        while let element = try reader.next() {
            let parts = try element.expect(.sequence, "an attribute of \(what())").children(exactly: 3, what: "an attribute of \(what())")
            let attribute = AppStoreReceiptAttribute(
                type: try parts[0].integer("an attribute's type"), version: try parts[1].integer("an attribute's version"),
                value: try parts[2].octetString("an attribute's value"))
            byType[attribute.type, default: []].append(attributes.count)
            attributes.append((attribute, element.offset))
        }
        self.attributes = attributes
    }

    /// The attributes no field took, in their order.
    var remaining: [AppStoreReceiptAttribute] {
        byType.values.flatMap { $0 }.sorted().map { attributes[$0].attribute }
    }

    /// The one attribute of `type`, read by `read`, or nil; twice is refused.
    mutating func single<Value>(
        _ type: Int64, _ read: (ReceiptAttributeValue) throws(PurchaseVerificationError) -> Value
    ) throws(PurchaseVerificationError) -> Value? {
        let found = take(type)
        guard found.count <= 1 else {
            throw Self.malformed("the receipt attribute \(type) appears \(found.count) times, the second at offset \(attributes[found[1]].offset)")
        }
        guard let first = found.first else { return nil }
        return try read(ReceiptAttributeValue(type: type, bytes: attributes[first].attribute.value, offset: attributes[first].offset))
    }

    /// Every attribute of `type`, each read by `read`, in order.
    mutating func all<Value>(
        _ type: Int64, _ read: (ReceiptAttributeValue) throws(PurchaseVerificationError) -> Value
    ) throws(PurchaseVerificationError) -> [Value] {
        var values: [Value] = []
        for index in take(type) {
            values.append(try read(ReceiptAttributeValue(type: type, bytes: attributes[index].attribute.value, offset: attributes[index].offset)))
        }
        return values
    }

    private mutating func take(_ type: Int64) -> [Int] {
        byType.removeValue(forKey: type) ?? []
    }

    static func malformed(_ reason: String) -> PurchaseVerificationError {
        PurchaseVerificationError(.malformedReceipt, "Malformed receipt payload: \(reason).")
    }
}

/// One attribute's value bytes, read as the type its field documents.
struct ReceiptAttributeValue {
    let type: Int64
    let bytes: [UInt8]
    /// Offset of the attribute in its SET, for the reasons.
    let offset: Int

    private var what: String { "the value of receipt attribute \(type) (at offset \(offset))" }

    private func element() throws(PurchaseVerificationError) -> BERElement {
        try BERReader.parse(bytes, what: what)
    }

    func utf8String() throws(PurchaseVerificationError) -> String {
        let content = try element().expect(.utf8String, what).contentBytes
        guard let text = String(validating: content, as: UTF8.self) else {
            throw ReceiptAttributeSet.malformed("\(what) is not valid UTF-8")
        }
        return text
    }

    func integer() throws(PurchaseVerificationError) -> Int64 {
        try element().integer(what)
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
        let content = try element().expect(.ia5String, what).contentBytes
        guard !content.isEmpty else { return nil }
        guard let date = ReceiptDate.parse(Array(content)) else {
            throw ReceiptAttributeSet.malformed("\(what) is not an RFC 3339 UTC date (yyyy-MM-ddTHH:mm:ss[.fraction]Z)")
        }
        return date
    }
}

/// RFC 3339 dates as receipts write them: `yyyy-MM-ddTHH:mm:ssZ`, with optional fractional
/// seconds, in UTC only; every component range-checked (the day against its month, leap years
/// included), nothing else accepted.
enum ReceiptDate {
    static func parse(_ text: [UInt8]) -> Date? {
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
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard month >= 1, month <= 12, day >= 1, day <= days[month - 1], hour <= 23, minute <= 59, second <= 59 else { return nil }
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
