/// A distinguished name for a lab certificate: attributes in order, most significant first.
///
/// A string literal is a name with only a common name: `subject: "Test Root"`.
public struct LabName: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// One attribute, by its OpenSSL short name (`CN`, `O`, `OU`, `C`…) or dotted OID.
    public struct Attribute: Hashable, Sendable {
        /// The attribute type: an OpenSSL short name (`CN`) or a dotted OID (`2.5.4.3`).
        public let field: String
        /// The value, written as UTF-8.
        public let value: String
        /// `field=value`, e.g. `Attribute("O", "Example Ltd")`.
        public init(_ field: String, _ value: String) {
            self.field = field
            self.value = value
        }
    }

    /// The attributes, most significant first (`O` before `CN`), one RDN each.
    public var attributes: [Attribute]

    /// A name made of `attributes`, in order.
    public init(attributes: [Attribute]) { self.attributes = attributes }

    /// `O=organization, CN=commonName` (organization omitted when nil).
    public init(commonName: String, organization: String? = nil) {
        attributes = (organization.map { [Attribute("O", $0)] } ?? []) + [Attribute("CN", commonName)]
    }

    /// A name with only the common name `commonName`.
    public init(stringLiteral commonName: String) { self.init(commonName: commonName) }

    /// The common name, if the name has one.
    public var commonName: String? { attributes.last { $0.field == "CN" }?.value }

    /// `O=…, CN=…`, in order.
    public var description: String { attributes.map { "\($0.field)=\($0.value)" }.joined(separator: ", ") }
}
