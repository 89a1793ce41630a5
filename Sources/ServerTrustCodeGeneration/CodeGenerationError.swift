/// Why a folder of certificates could not be turned into Swift constants: every bad file with
/// its reason, so one build shows every problem at once.
public struct CodeGenerationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One file that cannot be compiled in (or the folder, or a setting), and why.
    public struct Problem: Hashable, Sendable, CustomStringConvertible {
        /// What a problem is about.
        public enum Scope: Hashable, Sendable {
            /// A file of the folder; ``Problem/file`` is its name.
            case file
            /// The folder as a whole; ``Problem/file`` is its path.
            case folder
            /// A generator setting; ``Problem/file`` is its value.
            case setting
        }

        /// The file name, the folder path or the setting, as ``scope`` says.
        public let file: String
        /// What is wrong and how to fix it.
        public let reason: String
        public let scope: Scope

        public init(file: String, reason: String, scope: Scope = .file) {
            self.file = file
            self.reason = reason
            self.scope = scope
        }

        public var description: String { "\(file): \(reason)" }
    }

    /// At least one problem, in file-name order.
    public let problems: [Problem]

    public init(_ problems: [Problem]) {
        precondition(!problems.isEmpty, "a CodeGenerationError needs a problem")
        self.problems = problems
    }

    public init(file: String, reason: String, scope: Problem.Scope = .file) {
        self.init([Problem(file: file, reason: reason, scope: scope)])
    }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
