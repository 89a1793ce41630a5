import Foundation
import ServerTrustPurchases
import ServerTrustTestSupport
import Testing

/// The receipt's BER reader: the two BER forms Apple emits read, everything else malformed
/// refused with `malformedReceipt` — never a trap, never a read out of bounds.
@Suite struct BERReaderTests {
    func refused(_ bytes: [UInt8]) -> Bool {
        refusal { try BERReader.parse(bytes) }?.code == .malformedReceipt
    }

    @Test func readsDefiniteAndIndefiniteLengthsAlike() throws {
        let definite: [UInt8] = [0x30, 0x06, 0x02, 0x01, 0x05, 0x04, 0x01, 0xAA]
        let indefinite: [UInt8] = [0x30, 0x80, 0x02, 0x01, 0x05, 0x04, 0x01, 0xAA, 0x00, 0x00]
        for bytes in [definite, indefinite] {
            let element = try BERReader.parse(bytes)
            #expect(element.tag == .sequence)
            #expect(element.endOffset == bytes.count)
            let children = try element.children(exactly: 2, what: "the test SEQUENCE")
            #expect(try children[0].integer("the INTEGER") == 5)
            #expect(try children[1].octetString("the OCTET STRING") == [0xAA])
            #expect(children[1].offset == 5)
        }
        #expect(try BERReader.parse(indefinite).isIndefiniteLength)
        #expect(try BERReader.parse(indefinite).contentRange == 2..<8)
    }

    @Test func concatenatesAConstructedOctetStringsSegmentsNestedOnesToo() throws {
        // 24 80 | 04 02 'ab' | 24 04 (04 02 'cd') | 00 00
        let bytes: [UInt8] = [0x24, 0x80, 0x04, 0x02, 0x61, 0x62, 0x24, 0x04, 0x04, 0x02, 0x63, 0x64, 0x00, 0x00]
        #expect(try BERReader.parse(bytes).octetString("the content") == Array("abcd".utf8))
        // A segment that is not an OCTET STRING (a UTF8String here).
        #expect(refused([0x24, 0x80, 0x04, 0x01, 0x61, 0x0C, 0x01, 0x62, 0x00, 0x00]))
        #expect(refused([0x24, 0x03, 0x02, 0x01, 0x00]))
    }

    @Test func readsTheHighTagNumberFormAndRefusesItsAbuses() throws {
        #expect(try BERReader.parse([0x9F, 0x1F, 0x01, 0x00]).tag == .contextSpecific(31, constructed: false))
        #expect(try BERReader.parse([0xBF, 0x81, 0x48, 0x00]).tag == .contextSpecific(200, constructed: true))
        #expect(try BERReader.parse([0x5F, 0xFF, 0xFF, 0xFF, 0x7F, 0x00]).tag.number == 0x0FFF_FFFF)
        #expect(refused([0x9F, 0x05, 0x00]))  // high form for a number under 31
        #expect(refused([0x9F, 0x80, 0x1F, 0x00]))  // leading zero octet
        #expect(refused([0x9F, 0x81, 0x81, 0x81, 0x81, 0x01, 0x00]))  // five octets
        #expect(refused([0x9F, 0x81]))  // truncated
    }

    @Test func refusesLengthsTheInputCannotHold() {
        #expect(refused([0x04, 0x85, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00]))  // five length octets
        #expect(refused([0x04, 0x84, 0x7F, 0xFF, 0xFF, 0xFF]))  // 2 GiB claimed, nothing there
        #expect(refused([0x04, 0x82, 0x01]))  // long form truncated
        #expect(refused([0x04, 0x81, 0x05, 0, 0, 0, 0, 0]))  // long form for a length under 128
        #expect(refused([0x04, 0x82, 0x00, 0x80] + [UInt8](repeating: 0, count: 128)))  // leading zero
        #expect(refused([0x04, 0xFF]))  // reserved
        #expect(refused([0x30, 0x03, 0x04, 0x05, 0x00]))  // a child longer than its parent
        #expect(refused([0x04]))  // no length
    }

    @Test func allowsTheIndefiniteLengthOnConstructedValuesOnlyAndEndOfContentsOnlyInsideOne() {
        #expect(refused([0x02, 0x80, 0x00, 0x00]))  // indefinite primitive INTEGER
        #expect(refused([0x04, 0x80, 0x04, 0x01, 0x61, 0x00, 0x00]))  // indefinite primitive OCTET STRING
        #expect(refused([0x00, 0x00]))  // end-of-contents at the top
        #expect(refused([0x30, 0x02, 0x00, 0x00]))  // inside a definite-length value
        #expect(refused([0x30, 0x80, 0x02, 0x01, 0x00]))  // never closed
        #expect(refused([0x30, 0x80, 0x00, 0x01, 0x00, 0x00, 0x00]))  // tag 0 with a length
        #expect(refused([0x30, 0x80, 0x00, 0x00, 0x00, 0x00]))  // one marker too many: trailing
        #expect(refused([0x20, 0x00]))  // constructed tag 0
    }

    @Test func refusesTrailingBytesEmptyInputAndOversizedInput() {
        #expect(refused([0x05, 0x00, 0x00]))
        #expect(refused([]))
        #expect(refusal { try BERReader.parse([0x04, 0x03, 1, 2, 3], maximumLength: 4) }?.code == .malformedReceipt)
    }

    @Test func refusesTheWrongFormOfAUniversalType() {
        #expect(refused([0x10, 0x00]))  // primitive SEQUENCE
        #expect(refused([0x11, 0x00]))  // primitive SET
        #expect(refused([0x22, 0x03, 0x02, 0x01, 0x00]))  // constructed INTEGER
        #expect(refused([0x2C, 0x03, 0x0C, 0x01, 0x61]))  // constructed UTF8String
    }

    /// `depth` SEQUENCEs nested, indefinite or definite, around a NULL.
    func nested(_ depth: Int, indefinite: Bool) -> [UInt8] {
        var bytes: [UInt8] = [0x05, 0x00]
        for _ in 0..<depth { bytes = indefinite ? [0x30, 0x80] + bytes + [0, 0] : LabDER.tlv(0x30, bytes) }
        return bytes
    }

    @Test func limitsTheNestingDepth() throws {
        for indefinite in [false, true] {
            // The NULL at depth `maximumDepth` is the deepest value allowed.
            _ = try BERReader.parse(nested(BERReader.maximumDepth, indefinite: indefinite))
            #expect(refused(nested(BERReader.maximumDepth + 1, indefinite: indefinite)))
            #expect(refused(nested(10_000, indefinite: indefinite)))
        }
    }

    @Test func everyPrefixOfAValueIsRefused() throws {
        // 30 80 | [31] 07 | 24 80 (04 02 'ab') 00 00 | 31 81 80 (64 NULLs) | 00 00
        let bytes: [UInt8] =
            [0x30, 0x80, 0x9F, 0x1F, 0x01, 0x07, 0x24, 0x80, 0x04, 0x02, 0x61, 0x62, 0x00, 0x00, 0x31, 0x81, 0x80]
            + Array(repeating: [UInt8]([0x05, 0x00]), count: 64).flatMap { $0 } + [0x00, 0x00]
        _ = try BERReader.parse(bytes)
        for length in 0..<bytes.count { #expect(refused(Array(bytes.prefix(length))), "prefix of \(length) bytes") }
    }

    @Test func decodesIntegersAndRefusesEmptyNonMinimalAndOverflowingOnes() throws {
        func integer(_ content: [UInt8]) throws -> Int64 { try BERReader.parse(LabDER.tlv(0x02, content)).integer("an INTEGER") }
        #expect(try integer([0x00]) == 0)
        #expect(try integer([0x7F]) == 127)
        #expect(try integer([0x00, 0x80]) == 128)
        #expect(try integer([0xFF]) == -1)
        #expect(try integer([0x80]) == -128)
        #expect(try integer([0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .max)
        #expect(try integer([0x80, 0, 0, 0, 0, 0, 0, 0]) == .min)
        for value: Int64 in [0, 1, -1, 1701, 2_000_000_044_556_677, .max, .min] { #expect(try integer(Array(LabDER.integer(value).dropFirst(2))) == value) }
        #expect(refusal { try integer([]) }?.code == .malformedReceipt)
        #expect(refusal { try integer([0x00, 0x7F]) }?.code == .malformedReceipt)
        #expect(refusal { try integer([0xFF, 0x80]) }?.code == .malformedReceipt)
        #expect(refusal { try integer([0x00, 0x80, 0, 0, 0, 0, 0, 0, 0]) }?.code == .malformedReceipt)
    }

    @Test func decodesObjectIdentifiers() throws {
        for oid in ["1.2.840.113549.1.7.2", "2.16.840.1.101.3.4.2.1", "1.3.14.3.2.26", "2.999.3", "1.2.840.113635.100.6.11.1"] {
            #expect(try BERReader.parse(LabDER.oid(oid)).objectIdentifier("an OID") == oid)
        }
        #expect(refusal { try BERReader.parse([0x06, 0x00]).objectIdentifier("an OID") }?.code == .malformedReceipt)
        #expect(refusal { try BERReader.parse([0x06, 0x02, 0x2A, 0x86]).objectIdentifier("an OID") }?.code == .malformedReceipt)
        #expect(refusal { try BERReader.parse([0x06, 0x03, 0x2A, 0x80, 0x01]).objectIdentifier("an OID") }?.code == .malformedReceipt)
    }

    @Test func randomBytesNeverTrap() {
        var generator = SeededGenerator(seed: 0x5EED_BE12)
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...48, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Bias towards structure: a constructed tag first, lengths small.
            if !bytes.isEmpty { bytes[0] = [0x30, 0x31, 0x24, 0xA0, 0x04, 0x02][Int(bytes[0]) % 6] }
            _ = refusal { try BERReader.parse(bytes) }
        }
    }
}
