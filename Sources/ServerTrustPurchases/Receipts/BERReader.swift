/// A bounds-checked reader of BER, written for the App Store's legacy receipts (PKCS#7
/// SignedData) and nothing else.
///
/// Hand-written on purpose: swift-certificates' CMS parser is DER-only and refuses real Apple
/// receipts, whose outer structure is BER — indefinite lengths (`0x80` … `00 00`) and the
/// content as a constructed OCTET STRING. This reader tolerates exactly those two BER forms and
/// is strict about everything else:
///
/// - at most ``maximumDepth`` levels of nesting and ``maximumLength`` bytes in all;
/// - the high-tag-number form read correctly (base 128, minimal, at most 4 octets, for tag
///   numbers of 31 and up only);
/// - lengths in the short form, or the long form of at most 4 octets, minimal (no leading zero
///   octet, not for a length under 128), never longer than the bytes that remain; `0xFF` refused;
/// - an indefinite length on constructed values only;
/// - the end-of-contents marker (`00 00`) only where an indefinite-length value is open, and
///   universal tag 0 nowhere else;
/// - SEQUENCE and SET constructed, OCTET STRING either (a constructed one's segments are OCTET
///   STRINGs themselves), every other universal type primitive;
/// - no byte after the top-level value.
///
/// ``parse(_:what:maximumLength:deep:)`` validates everything inside the value, so an element
/// held is well formed all the way down; a shallow parse (`deep: false`, the receipt's own) checks
/// each value as it is read, once, over the input's bytes without copying them. Every malformed
/// input throws ``PurchaseVerificationError/Code/malformedReceipt``
/// naming the problem and its offset, and nothing traps: every index is checked against the
/// bounds first.
package struct BERReader: Sendable {
    /// The deepest nesting accepted; Apple's receipts nest about a dozen levels (certificates
    /// included).
    package static let maximumDepth = 32
    /// The most bytes a receipt may have: Apple's are tens of kilobytes, a few hundred with a
    /// long purchase history.
    package static let maximumLength = 4 * 1024 * 1024

    private let input: [UInt8]
    private var position: Int
    private let end: Int
    private let depth: Int
    /// Whether the bytes were validated already (the content of an element read before), or
    /// are read shallowly, so a definite-length value is not walked.
    private let validated: Bool

    private init(input: [UInt8], range: Range<Int>, depth: Int, validated: Bool) {
        self.input = input
        position = range.lowerBound
        end = range.upperBound
        self.depth = depth
        self.validated = validated
    }

    /// The one value `bytes` hold, validated all the way down — or, with `deep` false, as it is
    /// read: its identifier and length now, each child when a reader of its parent reaches it.
    /// A reader that does not read all of a value leaves the rest unchecked, so the shallow
    /// form is for a caller that reads everything it keeps to its end or hands it whole to a
    /// stricter parser (a receipt's certificates go to OpenSSL): it reads each value once
    /// instead of twice.
    ///
    /// - Parameters:
    ///   - bytes: BER, a single value with nothing after it.
    ///   - what: what the bytes are, for the error's reason ("the receipt").
    ///   - maximumLength: the size limit. Default ``maximumLength``.
    ///   - deep: whether to validate everything first. Default true.
    /// - Throws: ``PurchaseVerificationError/Code/malformedReceipt`` for empty, oversized,
    ///   malformed or trailing input.
    package static func parse(
        _ bytes: [UInt8], what: @autoclosure () -> String = "the receipt", maximumLength: Int = Self.maximumLength, deep: Bool = true
    ) throws(PurchaseVerificationError) -> BERElement {
        guard !bytes.isEmpty else { throw malformed("\(what()) is empty") }
        guard bytes.count <= maximumLength else {
            throw malformed("\(what()) is \(bytes.count) bytes, over the \(maximumLength)-byte limit")
        }
        var reader = BERReader(input: bytes, range: 0..<bytes.count, depth: 0, validated: !deep)
        guard let element = try reader.next() else { throw malformed("\(what()) holds no value") }
        guard reader.isAtEnd else {
            throw malformed("\(what()) has \(bytes.count - element.endOffset) trailing bytes after its value, at offset \(element.endOffset)")
        }
        return element
    }

    /// The one value a primitive OCTET STRING's octets hold, read where they are (no copy),
    /// validated all the way down: a receipt attribute's value is DER inside an OCTET STRING.
    /// A constructed OCTET STRING's octets are joined first.
    ///
    /// - Throws: ``PurchaseVerificationError/Code/malformedReceipt`` as ``parse(_:what:maximumLength:)``.
    package static func parse(
        octetsOf element: BERElement, what: @autoclosure () -> String, deep: Bool = true
    ) throws(PurchaseVerificationError) -> BERElement {
        guard element.tag.tagClass == .universal, element.tag.number == BERTag.octetString.number else {
            throw malformed("\(what()) at offset \(element.offset) is tagged \(element.tag), not OCTET STRING")
        }
        guard !element.tag.isConstructed else { return try parse(element.octetString(what()), what: what(), deep: deep) }
        let range = element.contentRange
        guard !range.isEmpty else { throw malformed("\(what()) is empty") }
        var reader = BERReader(input: element.input, range: range, depth: 0, validated: !deep)
        guard let value = try reader.next() else { throw malformed("\(what()) holds no value") }
        guard reader.isAtEnd else {
            throw malformed("\(what()) has \(range.upperBound - value.endOffset) trailing bytes after its value, at offset \(value.endOffset)")
        }
        return value
    }

    /// A reader of `element`'s children.
    init(children element: BERElement) {
        self.init(input: element.input, range: element.contentRange, depth: element.depth + 1, validated: true)
    }

    /// Whether every value has been read.
    package var isAtEnd: Bool { position >= end }

    /// The next value, or nil at the end.
    package mutating func next() throws(PurchaseVerificationError) -> BERElement? {
        guard position < end else { return nil }
        let element = try Self.readElement(in: input, at: position, bound: end, depth: depth, validated: validated)
        position = element.endOffset
        return element
    }

    /// Every remaining value, at most `limit` of them.
    package mutating func all(limit: Int = .max, what: @autoclosure () -> String = "values") throws(PurchaseVerificationError) -> [BERElement] {
        var elements: [BERElement] = []
        elements.reserveCapacity(Swift.min(limit, 8))
        while let element = try next() {
            guard elements.count < limit else {
                throw Self.malformed("more than \(limit) \(what()) at offset \(element.offset)")
            }
            elements.append(element)
        }
        return elements
    }

    static func malformed(_ reason: String) -> PurchaseVerificationError {
        PurchaseVerificationError(.malformedReceipt, "Malformed BER: \(reason).")
    }

    /// The value whose identifier is at `start`, ending at or before `bound`; its content is
    /// walked (so validated) unless `validated` and its length is definite.
    private static func readElement(
        in input: [UInt8], at start: Int, bound: Int, depth: Int, validated: Bool
    ) throws(PurchaseVerificationError) -> BERElement {
        guard start >= 0, start < bound, bound <= input.count else { throw malformed("truncated at offset \(start)") }
        let value = try input.withUnsafeBufferPointer { bytes throws(PurchaseVerificationError) in
            try walk(bytes, at: start, bound: bound, depth: depth, deep: !validated)
        }
        return BERElement(value, depth: depth, input: input)
    }

    /// The borrowing form of ``next()``: the value at `start`, ending at or before `bound`, read
    /// over `bytes` (a reader's input) without copying or retaining them; its children walked
    /// when `deep`. For loops over many small values (a receipt's attributes), where building a
    /// ``BERElement`` and a reader for each is most of the cost.
    package static func value(
        in bytes: UnsafeBufferPointer<UInt8>, at start: Int, bound: Int, depth: Int, deep: Bool
    ) throws(PurchaseVerificationError) -> BERValue {
        try walk(bytes, at: start, bound: bound, depth: depth, deep: deep)
    }

    /// An INTEGER's content as a 64-bit value: not empty, minimal (X.690 8.3.2), at most 8
    /// octets. `offset` is the INTEGER's, for the reason.
    package static func integer<Content: Collection<UInt8>>(
        _ content: Content, at offset: Int, _ what: @autoclosure () -> String
    ) throws(PurchaseVerificationError) -> Int64 {
        try checkMinimalInteger(content, at: offset, what())
        guard content.count <= 8 else {
            throw malformed("\(what()) at offset \(offset) is an INTEGER of \(content.count) octets, over 64 bits")
        }
        var value: Int64 = content.first.map { $0 & 0x80 != 0 ? -1 : 0 } ?? 0
        for octet in content { value = value << 8 | Int64(octet) }
        return value
    }

    static func checkMinimalInteger<Content: Collection<UInt8>>(
        _ content: Content, at offset: Int, _ what: @autoclosure () -> String
    ) throws(PurchaseVerificationError) {
        var octets = content.makeIterator()
        guard let first = octets.next() else { throw malformed("\(what()) at offset \(offset) is an empty INTEGER") }
        if let second = octets.next() {
            guard !(first == 0x00 && second & 0x80 == 0), !(first == 0xFF && second & 0x80 != 0) else {
                throw malformed("\(what()) at offset \(offset) is an INTEGER with a redundant leading octet")
            }
        }
    }

    /// Walks `element` all the way down, where it is.
    static func walk(_ element: BERElement) throws(PurchaseVerificationError) {
        _ = try element.input.withUnsafeBufferPointer { bytes throws(PurchaseVerificationError) in
            try walk(bytes, at: element.offset, bound: element.endOffset, depth: element.depth, deep: true)
        }
    }

    /// Reads the value at `start` over the input's bytes, without copying or retaining them:
    /// its identifier and length checked, then its children walked the same way — all the way
    /// down when `deep`, otherwise only where an indefinite length makes a walk the only way to
    /// find the end (the children of a value read before, which was walked then).
    private static func walk(
        _ bytes: UnsafeBufferPointer<UInt8>, at start: Int, bound: Int, depth: Int, deep: Bool
    ) throws(PurchaseVerificationError) -> BERValue {
        guard depth <= maximumDepth else {
            throw malformed("the value at offset \(start) is nested \(depth) levels deep, over the limit of \(maximumDepth)")
        }
        guard start >= 0, start < bound, bound <= bytes.count else { throw malformed("truncated at offset \(start)") }
        let first = bytes[start]
        var cursor = start + 1
        let tagClass = BERTag.TagClass(rawValue: first >> 6) ?? .universal
        let constructed = first & 0x20 != 0
        var number = UInt32(first & 0x1F)
        if number == 0x1F {
            number = 0
            var octets = 0
            while true {
                guard cursor < bound else { throw malformed("the tag at offset \(start) is truncated") }
                let octet = bytes[cursor]
                cursor += 1
                guard octets > 0 || octet != 0x80 else {
                    throw malformed("the high-tag-number form at offset \(start) has a leading zero octet")
                }
                octets += 1
                guard octets <= 4 else { throw malformed("the tag number at offset \(start) is longer than 4 octets") }
                number = number << 7 | UInt32(octet & 0x7F)
                if octet & 0x80 == 0 { break }
            }
            guard number >= 31 else {
                throw malformed("the tag number \(number) at offset \(start) uses the high-tag-number form, which is for 31 and up")
            }
        }
        let tag = BERTag(tagClass: tagClass, isConstructed: constructed, number: number)
        if tagClass == .universal, number == 0 {
            guard !constructed, cursor < bound, bytes[cursor] == 0 else {
                throw malformed("universal tag 0 at offset \(start) is reserved for the end-of-contents marker")
            }
            throw malformed("an end-of-contents marker at offset \(start), where no indefinite-length value is open")
        }
        try checkForm(of: tag, at: start)

        guard cursor < bound else { throw malformed("the length at offset \(cursor) is missing") }
        let lengthOctet = bytes[cursor]
        cursor += 1
        var length: Int?
        switch lengthOctet {
        case 0x00..<0x80:
            length = Int(lengthOctet)
        case 0x80:
            guard constructed else {
                throw malformed("the primitive \(tag) at offset \(start) has an indefinite length")
            }
            length = nil
        case 0xFF:
            throw malformed("the length octet 0xFF at offset \(cursor - 1) is reserved")
        default:
            let count = Int(lengthOctet & 0x7F)
            guard count <= 4 else {
                throw malformed("the length at offset \(cursor - 1) has \(count) octets, over the limit of 4")
            }
            guard count <= bound - cursor else { throw malformed("the length at offset \(cursor - 1) is truncated") }
            guard bytes[cursor] != 0 else {
                throw malformed("the length at offset \(cursor - 1) has a leading zero octet")
            }
            var value = 0
            for index in cursor..<(cursor + count) { value = value << 8 | Int(bytes[index]) }
            guard value >= 0x80 else {
                throw malformed("the length \(value) at offset \(cursor - 1) is in the long form, which is for 128 and up")
            }
            cursor += count
            length = value
        }

        // A constructed OCTET STRING's segments are OCTET STRINGs themselves (X.690 8.7.3.2).
        let segmented = constructed && tagClass == .universal && number == BERTag.octetString.number
        if let length {
            guard length <= bound - cursor else {
                throw malformed(
                    "the \(tag) at offset \(start) has a length of \(length) bytes, but only \(bound - cursor) remain")
            }
            let end = cursor + length
            if constructed, deep {
                var child = cursor
                while child < end {
                    let segment = try walk(bytes, at: child, bound: end, depth: depth + 1, deep: true)
                    if segmented { try checkSegment(segment.tag, at: child, of: start) }
                    child = segment.endOffset
                }
            }
            return BERValue(tag: tag, offset: start, contentRange: cursor..<end, endOffset: end, isIndefiniteLength: false)
        }
        // Indefinite: the children run until the end-of-contents marker, which only a walk finds.
        var child = cursor
        while true {
            guard child < bound else {
                throw malformed("the indefinite-length \(tag) at offset \(start) has no end-of-contents marker")
            }
            if bytes[child] == 0, child + 1 < bound, bytes[child + 1] == 0 {
                return BERValue(tag: tag, offset: start, contentRange: cursor..<child, endOffset: child + 2, isIndefiniteLength: true)
            }
            let segment = try walk(bytes, at: child, bound: bound, depth: depth + 1, deep: deep)
            if segmented { try checkSegment(segment.tag, at: child, of: start) }
            child = segment.endOffset
        }
    }

    private static func checkSegment(_ tag: BERTag, at offset: Int, of parent: Int) throws(PurchaseVerificationError) {
        guard tag.tagClass == .universal, tag.number == BERTag.octetString.number else {
            throw malformed("a segment of the constructed OCTET STRING at offset \(parent) is tagged \(tag), at offset \(offset)")
        }
    }

    /// The form X.690 requires of a universal type: SEQUENCE and SET constructed, OCTET STRING
    /// either, the others (as a receipt uses them) primitive.
    private static func checkForm(of tag: BERTag, at offset: Int) throws(PurchaseVerificationError) {
        guard tag.tagClass == .universal else { return }
        switch tag.number {
        case BERTag.sequence.number, BERTag.set.number:
            guard tag.isConstructed else { throw malformed("the \(tag) at offset \(offset) is primitive") }
        case BERTag.octetString.number:
            return
        default:
            guard !tag.isConstructed else {
                throw malformed("the \(tag) at offset \(offset) is constructed; only OCTET STRING may be")
            }
        }
    }
}

/// A BER identifier: class, form and tag number.
package struct BERTag: Hashable, Sendable, CustomStringConvertible {
    /// The two class bits.
    package enum TagClass: UInt8, Hashable, Sendable {
        case universal = 0, application = 1, contextSpecific = 2, `private` = 3
    }

    package let tagClass: TagClass
    package let isConstructed: Bool
    package let number: UInt32

    package init(tagClass: TagClass, isConstructed: Bool, number: UInt32) {
        self.tagClass = tagClass
        self.isConstructed = isConstructed
        self.number = number
    }

    package static let integer = BERTag(tagClass: .universal, isConstructed: false, number: 2)
    package static let bitString = BERTag(tagClass: .universal, isConstructed: false, number: 3)
    package static let octetString = BERTag(tagClass: .universal, isConstructed: false, number: 4)
    package static let null = BERTag(tagClass: .universal, isConstructed: false, number: 5)
    package static let objectIdentifier = BERTag(tagClass: .universal, isConstructed: false, number: 6)
    package static let utf8String = BERTag(tagClass: .universal, isConstructed: false, number: 12)
    package static let sequence = BERTag(tagClass: .universal, isConstructed: true, number: 16)
    package static let set = BERTag(tagClass: .universal, isConstructed: true, number: 17)
    package static let ia5String = BERTag(tagClass: .universal, isConstructed: false, number: 22)

    /// `[number]`, context-specific.
    package static func contextSpecific(_ number: UInt32, constructed: Bool) -> BERTag {
        BERTag(tagClass: .contextSpecific, isConstructed: constructed, number: number)
    }

    package var description: String {
        let names: [UInt32: String] = [
            1: "BOOLEAN", 2: "INTEGER", 3: "BIT STRING", 4: "OCTET STRING", 5: "NULL", 6: "OBJECT IDENTIFIER", 12: "UTF8String",
            16: "SEQUENCE", 17: "SET", 19: "PrintableString", 22: "IA5String", 23: "UTCTime", 24: "GeneralizedTime",
        ]
        switch tagClass {
        case .universal: return names[number] ?? "universal tag \(number)"
        case .application: return "[APPLICATION \(number)]"
        case .contextSpecific: return "[\(number)]"
        case .private: return "[PRIVATE \(number)]"
        }
    }
}

/// An OBJECT IDENTIFIER known in advance: its dotted form and its DER content octets, so a value
/// is recognised by comparing bytes (``BERElement/isObjectIdentifier(_:)``) and decoded to text
/// only for an error's message.
package struct BERObjectIdentifier: Sendable, Equatable, CustomStringConvertible {
    package let dotted: String
    package let content: [UInt8]

    /// `dotted` is a well-formed OID of at least two arcs, written by this module.
    package init(_ dotted: String) {
        let arcs = dotted.split(separator: ".").map { UInt64($0)! }
        precondition(arcs.count >= 2 && arcs[0] <= 2, "not an OID: \(dotted)")
        var content: [UInt8] = []
        for arc in [arcs[0] * 40 + arcs[1]] + arcs.dropFirst(2) {
            var septets = [UInt8(arc & 0x7F)]
            var rest = arc >> 7
            while rest > 0 {
                septets.append(UInt8(rest & 0x7F) | 0x80)
                rest >>= 7
            }
            content += septets.reversed()
        }
        self.dotted = dotted
        self.content = content
    }

    package var description: String { dotted }
}

/// What the reader found of one value, without its bytes: the borrowing form of ``BERElement``.
package struct BERValue: Sendable {
    package let tag: BERTag
    /// Offset of the identifier in the input.
    package let offset: Int
    /// The content's offsets; for an indefinite length, without the end-of-contents marker.
    package let contentRange: Range<Int>
    /// Offset just after the value (after its end-of-contents marker, if any).
    package let endOffset: Int
    package let isIndefiniteLength: Bool
}

/// One BER value of a ``BERReader``'s input, with the offsets it was read at: well formed all the
/// way down when read from a deep parse, its identifier and length checked when from a shallow one.
package struct BERElement: Sendable {
    package let tag: BERTag
    /// Offset of the identifier in the input.
    package let offset: Int
    /// The content's offsets; for an indefinite length, without the end-of-contents marker.
    package let contentRange: Range<Int>
    /// Offset just after the value (after its end-of-contents marker, if any).
    package let endOffset: Int
    package let isIndefiniteLength: Bool
    package let depth: Int
    let input: [UInt8]

    /// `value`, read at `depth` from `input`.
    package init(_ value: BERValue, depth: Int, input: [UInt8]) {
        tag = value.tag
        offset = value.offset
        contentRange = value.contentRange
        endOffset = value.endOffset
        isIndefiniteLength = value.isIndefiniteLength
        self.depth = depth
        self.input = input
    }

    /// What the reader found, without the bytes.
    package var value: BERValue {
        BERValue(tag: tag, offset: offset, contentRange: contentRange, endOffset: endOffset, isIndefiniteLength: isIndefiniteLength)
    }

    /// The value's bytes exactly as received: identifier, length, content (and end-of-contents).
    package var encodedBytes: ArraySlice<UInt8> { input[offset..<endOffset] }

    /// The content bytes exactly as received (for a constructed value, its children's encodings).
    package var contentBytes: ArraySlice<UInt8> { input[contentRange] }

    /// Walks the value all the way down: for one a shallow reader will not read but keeps.
    package func validate() throws(PurchaseVerificationError) {
        guard tag.isConstructed else { return }
        try BERReader.walk(self)
    }

    /// A reader of a constructed value's children.
    package func children() throws(PurchaseVerificationError) -> BERReader {
        guard tag.isConstructed else { throw BERReader.malformed("the \(tag) at offset \(offset) is primitive, not constructed") }
        return BERReader(children: self)
    }

    /// The children of a constructed value, which must be exactly `count`.
    package func children(exactly count: Int, what: @autoclosure () -> String) throws(PurchaseVerificationError) -> [BERElement] {
        var reader = try children()
        let elements = try reader.all(limit: count, what: "elements in \(what())")
        guard elements.count == count else {
            throw BERReader.malformed("\(what()) at offset \(offset) has \(elements.count) elements, not \(count)")
        }
        return elements
    }

    /// Throws unless the value has `expected` tag (class, form and number).
    @discardableResult
    package func expect(_ expected: BERTag, _ what: @autoclosure () -> String) throws(PurchaseVerificationError) -> BERElement {
        guard tag == expected else {
            throw BERReader.malformed(
                "\(what()) at offset \(offset) is tagged \(tag.isConstructed ? "constructed " : "")\(tag), not \(expected)")
        }
        return self
    }

    /// The content of a primitive value.
    package func primitiveContent(_ what: @autoclosure () -> String) throws(PurchaseVerificationError) -> ArraySlice<UInt8> {
        guard !tag.isConstructed else { throw BERReader.malformed("\(what()) at offset \(offset) is constructed, not primitive") }
        return contentBytes
    }

    /// An OCTET STRING's octets: the content of a primitive one, the segments of a constructed
    /// one concatenated (each itself an OCTET STRING, possibly constructed).
    package func octetString(_ what: @autoclosure () -> String) throws(PurchaseVerificationError) -> [UInt8] {
        guard tag.tagClass == .universal, tag.number == BERTag.octetString.number else {
            throw BERReader.malformed("\(what()) at offset \(offset) is tagged \(tag), not OCTET STRING")
        }
        guard tag.isConstructed else { return Array(contentBytes) }
        var octets: [UInt8] = []
        var reader = BERReader(children: self)
        while let segment = try reader.next() { octets += try segment.octetString(what()) }
        return octets
    }

    /// An INTEGER's two's-complement content: not empty, minimal (X.690 8.3.2).
    package func integerBytes(_ what: @autoclosure () -> String) throws(PurchaseVerificationError) -> ArraySlice<UInt8> {
        let content = try expect(.integer, what()).contentBytes
        try BERReader.checkMinimalInteger(content, at: offset, what())
        return content
    }

    /// An INTEGER that fits in 64 bits.
    package func integer(_ what: @autoclosure () -> String) throws(PurchaseVerificationError) -> Int64 {
        try BERReader.integer(try expect(.integer, what()).contentBytes, at: offset, what())
    }

    /// Whether the value is the OBJECT IDENTIFIER `oid`, by its content octets: equal bytes are
    /// a well-formed OID, so a value that is not `oid` is decoded only to name it in an error.
    package func isObjectIdentifier(_ oid: BERObjectIdentifier) -> Bool {
        tag == .objectIdentifier && contentBytes.elementsEqual(oid.content)
    }

    /// An OBJECT IDENTIFIER in dotted form, each arc minimal and within 64 bits.
    package func objectIdentifier(_ what: @autoclosure () -> String) throws(PurchaseVerificationError) -> String {
        let content = try expect(.objectIdentifier, what()).contentBytes
        guard !content.isEmpty, let last = content.last, last & 0x80 == 0 else {
            throw BERReader.malformed("\(what()) at offset \(offset) is an empty or truncated OBJECT IDENTIFIER")
        }
        var arcs: [UInt64] = []
        var arc: UInt64 = 0
        var fresh = true
        for octet in content {
            guard !(fresh && octet == 0x80) else {
                throw BERReader.malformed("\(what()) at offset \(offset) is an OBJECT IDENTIFIER with a non-minimal arc")
            }
            guard arc >> 57 == 0 else { throw BERReader.malformed("\(what()) at offset \(offset) has an arc over 64 bits") }
            arc = arc << 7 | UInt64(octet & 0x7F)
            fresh = octet & 0x80 == 0
            if fresh {
                arcs.append(arc)
                arc = 0
            }
        }
        guard let head = arcs.first else { throw BERReader.malformed("\(what()) at offset \(offset) is an empty OBJECT IDENTIFIER") }
        let (top, second): (UInt64, UInt64) = head < 40 ? (0, head) : head < 80 ? (1, head - 40) : (2, head - 80)
        return ([top, second] + arcs.dropFirst()).map { String($0) }.joined(separator: ".")
    }
}
