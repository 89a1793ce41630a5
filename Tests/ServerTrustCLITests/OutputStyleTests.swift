import Foundation
import Testing

@Suite struct OutputStyleTests {
    @Test(arguments: ["demo", "inspect", "pins", "fetch", "verify", "generate"])
    func everyCommandsHelpHasExamples(command: String) {
        let result = CommandRunner.run([command, "--help"])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput.contains("Examples:"), "\(result)")
        #expect(result.standardOutput.contains("servertrust \(command) "), "\(result)")
    }

    @Test func theToolsHelpListsTheCommands() {
        let result = CommandRunner.run(["--help"])
        #expect(result.status == 0, "\(result)")
        for command in ["demo", "inspect", "pins", "fetch", "verify", "generate"] {
            #expect(result.standardOutput.contains("  \(command) "), "\(command) missing:\n\(result)")
        }
    }

    @Test func colourOnlyOnATerminal() {
        let piped = CommandRunner.run(["demo"])
        #expect(piped.status == 0, "\(piped)")
        #expect(!piped.standardOutput.contains("\u{1B}["), "no escape codes into a pipe")

        let terminal = CommandRunner.run(["demo"], standardOutput: .terminal)
        #expect(terminal.status == 0, "\(terminal)")
        #expect(terminal.standardOutput.contains("\u{1B}[32maccepted"), "green verdicts on a terminal:\n\(terminal)")

        let noColor = CommandRunner.run(["demo"], environment: ["NO_COLOR": "1"], standardOutput: .terminal)
        #expect(noColor.status == 0, "\(noColor)")
        #expect(!noColor.standardOutput.contains("\u{1B}["), "NO_COLOR turns colour off:\n\(noColor)")
        #expect(noColor.standardOutput.contains("accepted"))
    }
}
