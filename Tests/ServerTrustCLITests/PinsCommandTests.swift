import Foundation
import Testing

@Suite struct PinsCommandTests {
    @Test func sha256FormIsOnePinPerLineWithRoleAndSubject() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["pins", fixture.url()] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == """
            \(fixture.leaf.certificate.spkiPin)  # leaf          CN=cli.servertrust.test
            \(fixture.intermediate.certificate.spkiPin)  # intermediate  CN=CLI Test Intermediate
            \(fixture.root.certificate.spkiPin)  # root          CN=CLI Test Root

            """)
    }

    @Test func curlFormEndsWithThePinnedPublicKeyArgument() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["pins", fixture.url(), "--format", "curl"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        expectGolden(result.standardOutput, """
            sha256//<pin>  # leaf          CN=cli.servertrust.test
            sha256//<pin>  # intermediate  CN=CLI Test Intermediate
            sha256//<pin>  # root          CN=CLI Test Root
            # curl --pinnedpubkey 'sha256//<pin>;sha256//<pin>;sha256//<pin>' https://cli.servertrust.test:<port>/

            """)
        #expect(result.standardOutput.contains(fixture.intermediate.certificate.spkiPin.curlForm))
    }

    @Test func swiftSnippetNamesThePinsAndAsksForABackup() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["pins", fixture.url(), "--swift"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        expectGolden(result.standardOutput, Self.swiftGolden, literals: fixture.literals)
        #expect(result.standardOutput.contains("static let intermediate = \"\(fixture.intermediate.certificate.spkiPin)\""))
        #expect(CommandRunner.run(["pins", fixture.url(), "--format", "swift"] + fixture.trusting).standardOutput == result.standardOutput)
    }

    @Test func jsonListsRolesPinsAndTheSnippet() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["pins", fixture.url(), "--json"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(object["verified"] as? Bool == true)
        let pins = try #require(object["pins"] as? [[String: String]])
        #expect(pins.map { $0["role"] } == ["leaf", "intermediate", "root"])
        let expected = [fixture.leaf.certificate, fixture.intermediate.certificate, fixture.root.certificate].map(\.spkiPin.description)
        #expect(pins.map { $0["pin"] } == expected)
        #expect((object["swift"] as? String)?.contains("ServerTrustManager") == true)
    }

    @Test func pinsOfAnUnverifiedChainComeWithAWarningAndExitOne() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["pins", fixture.url()] + fixture.resolve())
        #expect(result.status == 1, "\(result)")
        #expect(result.standardOutput == """
            \(fixture.leaf.certificate.spkiPin)  # leaf          CN=cli.servertrust.test
            \(fixture.intermediate.certificate.spkiPin)  # intermediate  CN=CLI Test Intermediate

            """)
        #expect(result.standardError.hasPrefix("warning: these pins come from the chain as sent, which fails default validation"), "\(result)")
        #expect(result.standardError.contains("hint: for a private CA, pass its root with --ca FILE"))
    }

    @Test func conflictingFormatsAreAUsageError() {
        let result = CommandRunner.run(["pins", "https://example.com/", "--swift", "--format", "curl"])
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError.contains("--swift and --format curl ask for different outputs"))
    }

    static let swiftGolden = """
        // SPKI pins of cli.servertrust.test, read from https://cli.servertrust.test:<port>/
        // and validated against <ca>.
        // Any one matching pin admits the server: keep only the levels you mean to trust
        // (leaf: this key; intermediate: what the CA issues from it; root: anything under that CA).
        import ServerTrust

        enum CliServertrustTestPins {
            /// Leaf: CN=cli.servertrust.test
            static let leaf = "sha256/<pin>"
            /// Intermediate: CN=CLI Test Intermediate
            static let intermediate = "sha256/<pin>"
            /// Root: CN=CLI Test Root
            static let root = "sha256/<pin>"
            // A backup pin is needed: the pin of a key pair you generate now and keep offline (or of
            // your second CA), so that a key rotation or compromise does not lock deployed clients out.
            // `servertrust generate` compiles its certificate into a constant; or from the key:
            //   openssl pkey -in backup.key -pubout -outform der | openssl dgst -sha256 -binary | base64
        }

        let manager = try ServerTrustManager(evaluators: [
            try HostPattern("cli.servertrust.test"): try .pinnedKeyHashes([
                CliServertrustTestPins.leaf,
                CliServertrustTestPins.intermediate,
                CliServertrustTestPins.root,
                // the backup pin goes here
            ]),
        ])

        """
}
