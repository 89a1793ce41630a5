public import Foundation

/// Signs responses on the server with RFC 9421 HTTP Message Signatures and RFC 9530
/// `Content-Digest`: the RFC 9421 counterpart of the v1 ``ResponseSigner``.
///
/// ```swift
/// let signer = try MessageSignatureSigner(key: SignaturePrivateKey(pem: pem), keyID: "2026-11")
/// let request = MessageSignatureRequest(method: "GET", scheme: "https", host: "api.example.com",
///                                       path: "/v1/receipt", query: nil, headers: requestFields)
/// let fields = try signer.signatureFields(status: 200, headers: responseFields, body: body, request: request)
/// // add `fields` (Content-Digest when missing, Signature-Input, Signature) to the response
/// ```
///
/// What it covers (docs/SIGNED_RESPONSES.md, "RFC 9421 profile"): every component the
/// request's `Accept-Signature` asks for that the response has, `@status`, `content-digest`,
/// and `content-type`, `content-encoding` and `location` whenever the response has them; with
/// the `nonce`, the label and the components of the `Accept-Signature` when there is one, and
/// the default request binding (`@method;req`, `@authority;req`, `@path;req`, `@query;req`)
/// when there is none. Sign the body as it goes on the wire (after any `Content-Encoding`).
/// Immutable, hence `Sendable`.
public struct MessageSignatureSigner: Sendable {
    /// The signing key.
    public let key: SignaturePrivateKey
    /// The `keyid` clients look the public key up by (its JWKS `kid`).
    public let keyID: String
    /// How long a signature is valid (`expires` = `created` + this), or nil for no `expires`.
    public let validity: Duration?

    /// - Parameters:
    ///   - key: the private key; its type chooses the algorithm (`ed25519`,
    ///     `ecdsa-p256-sha256`, `rsa-pss-sha512`).
    ///   - keyID: the key's `kid`; not empty.
    ///   - validity: default 300 s.
    /// - Throws: `ResponseSignatureError.Code.invalidConfiguration` for an empty key ID or a
    ///   validity that is not positive.
    public init(key: SignaturePrivateKey, keyID: String, validity: Duration? = .seconds(300)) throws(ResponseSignatureError) {
        guard !keyID.isEmpty else { throw ResponseSignatureError(.invalidConfiguration, "A signing key needs a non-empty keyid.") }
        if let validity, validity <= .zero {
            throw ResponseSignatureError(.invalidConfiguration, "The signature validity must be positive.")
        }
        self.key = key
        self.keyID = keyID
        self.validity = validity
    }

    /// The RFC 9421 algorithm name the key signs with.
    public var algorithm: String { MessageSignatureVerifier.algorithm(for: key.kind).name }

    /// The fields to add to a response: `Content-Digest` (sha-256; unless `headers` has one),
    /// `Signature-Input` and `Signature`.
    ///
    /// - Parameters:
    ///   - status: the response status, 100–999.
    ///   - headers: the response's fields as they will be sent.
    ///   - body: the body as it will be sent (after any content coding); empty for `HEAD`.
    ///   - request: the request as received; its `Accept-Signature`, if any, is read.
    ///   - now: the signing time. Default `Date()`.
    /// - Throws: `ResponseSignatureError` `.malformedChallenge` for an `Accept-Signature` that
    ///   does not parse, `.absentComponent` for a requested derived component this signer
    ///   cannot produce, `.invalidConfiguration` for a bad status, `.openSSLFailure`.
    public func signatureFields(
        status: Int, headers: [(name: String, value: String)], body: [UInt8], request: MessageSignatureRequest, now: Date = Date()
    ) throws(ResponseSignatureError) -> [(name: String, value: String)] {
        guard (100...999).contains(status) else {
            throw ResponseSignatureError(.invalidConfiguration, "An HTTP status is 100 to 999; got \(status).")
        }
        var added: [(name: String, value: String)] = []
        if MessageComponentResolver.fieldValue("content-digest", in: headers) == nil {
            added.append(("Content-Digest", ContentDigest.fieldValue(of: body)))
        }
        let fields = headers + added
        let present = Set(fields.map { $0.name.lowercased() })

        var label = "sig"
        var nonce: String?
        var requested = MessageSignaturePolicy.defaultRequiredComponents.map(\.item)
        if let accept = MessageComponentResolver.fieldValue("accept-signature", in: request.headers) {
            let members: [(key: String, member: StructuredField.Member)]
            do {
                members = try StructuredField.dictionary(accept)
            } catch {
                throw ResponseSignatureError(.malformedChallenge, "Accept-Signature is malformed at byte \(error.offset): \(error.message).")
            }
            guard let first = members.first, case .innerList(let items, let parameters) = first.member else {
                throw ResponseSignatureError(.malformedChallenge, "Accept-Signature holds no inner list of components.")
            }
            label = first.key
            requested = items
            if case .string(let value)? = parameters.first(where: { $0.key == "nonce" })?.value {
                guard value.utf8.count <= 256 else { throw ResponseSignatureError(.malformedChallenge, "The Accept-Signature nonce is over 256 bytes.") }
                nonce = value
            }
        }
        var covered: [StructuredField.Item] = []
        func add(_ item: StructuredField.Item) {
            let text = StructuredField.serialize(item)
            guard !covered.contains(where: { StructuredField.serialize($0) == text }) else { return }
            covered.append(item)
        }
        add(MessageComponent.status.item)
        for item in requested {
            // A requested field the response does not have is left out; the client's policy
            // decides whether that is acceptable.
            if case .string(let name) = item.value, !name.hasPrefix("@") {
                let requestBound = item.parameters.contains { $0.key == "req" }
                if requestBound ? MessageComponentResolver.fieldValue(name, in: request.headers) == nil : !present.contains(name) { continue }
            }
            add(item)
        }
        for name in ["content-digest", "content-type", "content-encoding", "location"] where present.contains(name) {
            add(MessageComponent(name).item)
        }
        let created = Int64(now.timeIntervalSince1970.rounded(.down))
        var parameters: StructuredField.Parameters = [("created", .integer(created))]
        if let validity { parameters.append(("expires", .integer(created.addingClamped(validity.components.seconds)))) }
        parameters.append(("keyid", .string(keyID)))
        parameters.append(("alg", .string(algorithm)))
        if let nonce { parameters.append(("nonce", .string(nonce))) }

        let base = try SignatureBase(request: request, response: .init(status: status, headers: fields))
            .base(covered: covered, parameters: parameters)
        let signature: [UInt8]
        do {
            signature = try key.signature(for: base, algorithm: MessageSignatureVerifier.algorithm(for: key.kind).scheme)
        } catch {
            throw ResponseSignatureError(.openSSLFailure, "Signing failed: \(error.reason)")
        }
        return added + [
            ("Signature-Input", label + "=" + StructuredField.serialize(innerList: covered, parameters: parameters)),
            ("Signature", label + "=" + StructuredField.serialize(.bytes(signature))),
        ]
    }
}
