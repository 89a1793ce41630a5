import Foundation
import ServerTrust
import ServerTrustCodeGeneration
import Testing

/// ``SignedResponseRootSnippet``, the library half of `keys root-public --swift` (the printed
/// text is golden-tested through the command in `KeysCommandTests`).
@Suite struct SignedResponseRootSnippetTests {
    let key: VerificationKey

    init() throws { key = try SigningKey.generate().verificationKey }

    @Test func theConstantHoldsTheKeyAndSaysHowToConfigureTheRoot() throws {
        let snippet = try SignedResponseRootSnippet(key: key, constantName: "licenceRootKey", version: 2)
        #expect(snippet.swiftSource.hasSuffix("\nlet licenceRootKey = \"\(key.base64)\""))
        #expect(snippet.swiftSource.contains("/// Use: SignedResponseRoot(base64: licenceRootKey, version: 2)"))
        #expect(snippet.swiftSource.hasPrefix("/// ServerTrust signed-response root key: Ed25519, key ID \(key.keyIDHex), header version 2.\n"))
    }

    @Test(arguments: ["2fast", "", "root-key", "clé", "let key"])
    func aNameThatIsNotASwiftIdentifierIsRefused(name: String) {
        #expect(!SignedResponseRootSnippet.isIdentifier(name))
        #expect(throws: CodeGenerationError(file: name, reason: "is not a Swift identifier", scope: .setting)) {
            try SignedResponseRootSnippet(key: key, constantName: name)
        }
    }

    @Test func aVersionOutsideOneTo999IsRefused() {
        #expect(throws: CodeGenerationError(file: "1000", reason: "is not a header version (1 to 999)", scope: .setting)) {
            try SignedResponseRootSnippet(key: key, version: 1000)
        }
        #expect(throws: CodeGenerationError.self) { try SignedResponseRootSnippet(key: key, version: 0) }
    }
}
