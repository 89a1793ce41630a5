import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

@Suite struct PinTests {
    private static let zeros = String(repeating: "A", count: 43) + "="

    @Test func parsesTheHPKPForm() throws {
        let pin = try Pin("sha256/" + Self.zeros)
        #expect(pin.digest == [UInt8](repeating: 0, count: 32))
        #expect(pin.description == "sha256/" + Self.zeros)
    }

    @Test func parsesCurlsDoubleSlashFormToTheSamePin() throws {
        let key = LabKey.ecP256()
        let curl = try Pin("sha256//" + key.pin.base64)
        #expect(curl == key.pin)
        #expect(curl.curlForm == "sha256//" + key.pin.base64)
        #expect(curl.description == "sha256/" + key.pin.base64)
    }

    @Test func surroundingWhitespaceAndUpperCaseAlgorithmAreAccepted() throws {
        #expect(try Pin("  SHA256/\(Self.zeros)\n") == Pin("sha256/" + Self.zeros))
    }

    @Test(arguments: [UInt8(0x00), 0x5A, 0xEE])
    func aPinRoundTripsThroughBothItsForms(byte: UInt8) throws {
        let pin = try Pin("sha256/" + Data(repeating: byte, count: 32).base64EncodedString())
        #expect(try Pin(pin.description) == pin)
        #expect(try Pin(pin.curlForm) == pin)
    }

    /// One SPKI digest in 64 starts with six 1 bits, whose base64 starts with "/": its HPKP form
    /// is `sha256//…`, which must not be mistaken for curl's `sha256//` prefix.
    @Test func anHPKPPinWhoseBase64StartsWithASlashIsParsed() throws {
        let digest = [UInt8](repeating: 0xFF, count: 32)
        let base64 = Data(digest).base64EncodedString()
        #expect(base64.hasPrefix("/"))
        let pin = try Pin("sha256/" + base64)
        #expect(pin.digest == digest)
        #expect(try Pin(pin.description) == pin)
        #expect(try Pin(pin.curlForm) == pin)
    }

    @Test func aPinWithoutAnAlgorithmPrefixIsMalformed() {
        let error = #expect(throws: TrustError.malformedPin) { try Pin(Self.zeros) }
        #expect(error?.reason.contains("has no algorithm prefix") == true)
    }

    @Test func sha1PinsAreRefusedAsTooWeak() {
        let error = #expect(throws: TrustError.unsupportedPinAlgorithm) { try Pin("sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA=") }
        #expect(error?.reason.contains("sha1") == true)
        #expect(error?.reason.contains("too weak") == true)
    }

    @Test func sha384PinsAreRefusedAsAnUnknownAlgorithm() {
        let error = #expect(throws: TrustError.unsupportedPinAlgorithm) { try Pin("sha384/" + Self.zeros) }
        #expect(error?.reason.contains("unknown algorithm \"sha384\"") == true)
    }

    @Test func badBase64IsMalformed() {
        let error = #expect(throws: TrustError.malformedPin) { try Pin("sha256/not*base64!") }
        #expect(error?.reason.contains("not valid base64") == true)
    }

    @Test(arguments: [31, 33])
    func aDigestThatIsNot32BytesIsMalformed(length: Int) {
        let encoded = Data(repeating: 7, count: length).base64EncodedString()
        let error = #expect(throws: TrustError.malformedPin) { try Pin("sha256/" + encoded) }
        #expect(error?.reason.contains("decodes to \(length) bytes") == true)
    }

    @Test(arguments: ["sha256/", "sha256//", "sha256/   "])
    func anEmptyDigestIsMalformed(text: String) {
        let error = #expect(throws: TrustError.malformedPin) { try Pin(text) }
        #expect(error?.reason.contains("has no digest") == true)
    }

    @Test func pinsOrderAndHashByDigest() throws {
        let low = try Pin("sha256/" + Self.zeros)
        let high = try Pin("sha256/" + Data(repeating: 0xEE, count: 32).base64EncodedString())
        #expect(low < high)
        #expect(Set([low, try Pin("sha256//" + Self.zeros)]).count == 1)
    }
}
