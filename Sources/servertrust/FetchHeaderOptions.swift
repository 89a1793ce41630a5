import ArgumentParser
import HTTPTypes

/// `fetch -H "Name: value"`: request header fields, as curl's `-H`, checked before anything is
/// sent.
///
/// A field name must be an RFC 9110 token (`HTTPField.Name`), so `-H "Bad Name: x"` is a usage
/// error naming the field instead of a field dropped or sent malformed. The value is trimmed of
/// spaces and tabs at both ends; a line break or NUL in it is refused too, as `HTTPField` would
/// otherwise turn it into a space without a word.
struct FetchHeaderOptions: ParsableArguments {
    @Option(
        name: [.customShort("H"), .customLong("header")],
        help: ArgumentHelp("A request header field, as curl's -H. Repeatable; repeated names are all sent.", valueName: "NAME: VALUE"))
    var header: [String] = []

    /// The fields in the order given.
    ///
    /// - Throws: ``CommandFailure`` (usage) for an argument without a colon, an invalid field
    ///   name (named in the message), or a value with a line break or NUL.
    func fields() throws(CommandFailure) -> HTTPFields {
        var fields = HTTPFields()
        for argument in header { fields.append(try Self.field(argument)) }
        return fields
    }

    static func field(_ argument: String) throws(CommandFailure) -> HTTPField {
        guard let colon = argument.firstIndex(of: ":") else {
            throw usage("-H \(argument.debugDescription) is not NAME: VALUE.")
        }
        let name = String(argument[..<colon])
        guard let fieldName = HTTPField.Name(name) else {
            throw usage(
                "-H \(argument.debugDescription): \(name.debugDescription) is not a valid header field name (RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~, no spaces).")
        }
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let value = String(argument[argument.index(after: colon)...].drop(while: isSpace).reversed().drop(while: isSpace).reversed())
        guard !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw usage("-H \(argument.debugDescription): the value of \(name) contains a line break or NUL.")
        }
        return HTTPField(name: fieldName, value: value)
    }

    private static func usage(_ message: String) -> CommandFailure {
        CommandFailure(status: CommandFailure.usage, message: "error: \(message)")
    }
}
