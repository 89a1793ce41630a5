/// Swift identifiers derived from certificate file names: `sample-leaf.pem` → `sampleLeaf`.
///
/// The name is stable (it depends on the file name only, never on the certificate), so code
/// that uses `Certificates.sampleLeafPin` keeps compiling when the certificate is replaced.
/// Words are runs of ASCII letters and digits; the first word is lower-cased (`ISRG-root.pem` →
/// `isrgRoot`), later words keep their case with the first letter raised. A name starting with a
/// digit gets a `certificate` prefix (`2024-root.pem` → `certificate2024Root`).
package enum ConstantName {
    /// The identifier for `fileName`, or nil when the name has no letter or digit to build one from.
    package static func identifier(forFileName fileName: String) -> String? {
        var stem = Substring(fileName)
        if let dot = stem.lastIndex(of: "."), dot != stem.startIndex { stem = stem[..<dot] }
        let words = stem.split { !isASCIIAlphanumeric($0) }.map(String.init)
        guard let first = words.first else { return nil }
        let head = first.allSatisfy { !$0.isLowercase } ? first.lowercased() : lowercasingFirst(first)
        let name = head + words.dropFirst().map(uppercasingFirst).joined()
        return name.first!.isNumber ? "certificate" + uppercasingFirst(name) : name
    }

    /// `name` as it must be written in a declaration or an expression: in backquotes when it is a
    /// Swift keyword (`default`, `class`…).
    package static func spelled(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    private static func isASCIIAlphanumeric(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber)
    }

    private static func lowercasingFirst(_ word: String) -> String { word.prefix(1).lowercased() + word.dropFirst() }
    private static func uppercasingFirst(_ word: String) -> String { word.prefix(1).uppercased() + word.dropFirst() }

    /// Keywords that cannot be a member name without backquotes.
    private static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows",
        "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer",
        "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where",
        "while", "as", "any", "false", "is", "nil", "self", "super", "throws", "true", "try", "await",
    ]
}
