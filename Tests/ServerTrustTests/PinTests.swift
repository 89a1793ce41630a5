import Testing
@testable import ServerTrust

@Suite struct PinTests {
    @Test func parsesTheHPKPForm() throws {
        let pin = try Pin("sha256/" + String(repeating: "A", count: 43) + "=")
        #expect(pin.digest == [UInt8](repeating: 0, count: 32))
        #expect(pin.description == "sha256/" + String(repeating: "A", count: 43) + "=")
    }
}
