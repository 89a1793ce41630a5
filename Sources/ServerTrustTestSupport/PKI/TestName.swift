/// A distinguished name for a test certificate: attributes in order, most significant first.
///
/// A string literal is a name with only a common name: `subject: "Test Root"`.
public struct TestName: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// One attribute, by its OpenSSL short name (`CN`, `O`, `OU`, `C`…) or dotted OID.
    public struct Attribute: Hashable, Sendable {
        public let field: String
        public let value: String
        public init(_ field: String, _ value: String) {
            self.field = field
            self.value = value
        }
    }

    public var attributes: [Attribute]

    public init(attributes: [Attribute]) { self.attributes = attributes }

    /// `O=organization, CN=commonName` (organization omitted when nil).
    public init(commonName: String, organization: String? = nil) {
        attributes = (organization.map { [Attribute("O", $0)] } ?? []) + [Attribute("CN", commonName)]
    }

    public init(stringLiteral commonName: String) { self.init(commonName: commonName) }

    /// The common name, if the name has one.
    public var commonName: String? { attributes.last { $0.field == "CN" }?.value }

    public var description: String { attributes.map { "\($0.field)=\($0.value)" }.joined(separator: ", ") }
}
