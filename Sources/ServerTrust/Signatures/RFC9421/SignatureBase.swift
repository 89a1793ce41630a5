/// The signature base of RFC 9421 section 2.5 for a response (with its request), or a
/// request: each covered component's identifier and value (from `MessageComponentResolver`),
/// then `@signature-params`. What the signer signs and the verifier verifies, byte for byte.
struct SignatureBase {
    /// The response side; nil when a request itself is signed.
    struct Response {
        let status: Int
        let headers: [(name: String, value: String)]
    }

    let request: MessageSignatureRequest
    let response: Response?

    private var resolver: MessageComponentResolver { MessageComponentResolver(request: request, response: response) }

    /// The base over `covered` with `parameters`, and the serialized `@signature-params`.
    func base(covered: [StructuredField.Item], parameters: StructuredField.Parameters) throws(ResponseSignatureError) -> [UInt8] {
        var text = ""
        var seen = Set<String>()
        for component in covered {
            let identifier = StructuredField.serialize(component)
            guard seen.insert(identifier).inserted else {
                throw ResponseSignatureError(.malformedSignature, "The signature covers \(identifier) twice.")
            }
            text += identifier + ": " + (try resolver.value(of: component)) + "\n"
        }
        text += "\"@signature-params\": " + StructuredField.serialize(innerList: covered, parameters: parameters)
        return Array(text.utf8)
    }
}
