/// Why a folder of certificates could not be turned into Swift constants: every bad file with
/// its reason, so one build shows every problem at once.
package struct CodeGenerationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One file that cannot be compiled in (or the folder, or a setting), and why.
    package struct Problem: Hashable, Sendable, CustomStringConvertible {
        /// What a problem is about.
        package enum Scope: Hashable, Sendable {
            /// A file of the folder; ``Problem/file`` is its name.
            case file
            /// The folder as a whole; ``Problem/file`` is its path.
            case folder
            /// A generator setting; ``Problem/file`` is its value.
            case setting
        }

        /// The file name, the folder path or the setting, as ``scope`` says.
        package let file: String
        /// What is wrong and how to fix it.
        package let reason: String
        package let scope: Scope

        package init(file: String, reason: String, scope: Scope = .file) {
            self.file = file
            self.reason = reason
            self.scope = scope
        }

        package var description: String { "\(file): \(reason)" }
    }

    /// At least one problem, in file-name order.
    package let problems: [Problem]

    package init(_ problems: [Problem]) {
        precondition(!problems.isEmpty, "a CodeGenerationError needs a problem")
        self.problems = problems
    }

    package init(file: String, reason: String, scope: Problem.Scope = .file) {
        self.init([Problem(file: file, reason: reason, scope: scope)])
    }

    package var description: String { problems.map(\.description).joined(separator: "\n") }
}
