/// How a client verifies RFC 9421 response signatures from one host: the keys, the components
/// every accepted signature must cover, and the time windows.
///
/// ```swift
/// let keys = try SigningKeySet(jwks: Array(Data(contentsOf: jwksURL)))
/// let policy = HostPolicy(signedResponses: .enforced(keys: keys))
/// ```
///
/// The profile (docs/SIGNED_RESPONSES.md, "RFC 9421 profile"): the client sends
/// `Accept-Signature` naming ``acceptedComponents`` with a fresh `nonce`; it accepts only a
/// signature that carries that nonce, covers ``requiredComponents`` (a covered
/// `@target-uri;req` stands for `@scheme`, `@authority`, `@path` and `@query`), covers
/// `content-digest` whenever the body is not empty, covers each field of
/// ``requiredFieldsWhenPresent`` the response has, has `created` within the window and any
/// `expires` not passed, names a `keyid` of ``keys`` (or, only when set, of
/// ``sharedSecrets``) with an `alg` — if given — that fits the key, and verifies.
public struct MessageSignaturePolicy: Sendable {
    /// The verification keys by `keyid`, read at every verification: a provider that returns
    /// a newer set (a trust update's `jwks.json`) rotates keys without a new policy.
    public var keys: @Sendable () -> SigningKeySet
    /// Components every accepted signature covers. Default: `@status`, `@method;req`,
    /// `@authority;req`, `@path;req`, `@query;req`.
    public var requiredComponents: [MessageComponent]
    /// Fields a signature must cover whenever the response has them. Default `content-type`,
    /// `content-encoding` (third security review: an unsigned coding label would let an
    /// intermediary relabel the signed bytes) and `location`.
    public var requiredFieldsWhenPresent: [String]
    /// How old `created` may be. Default 300 s.
    public var maximumAge: Duration
    /// Tolerance for clocks that disagree, on every time comparison. Default 60 s.
    public var clockSkewAllowance: Duration
    /// `hmac-sha256` keys by `keyid` — an explicit opt-in: with none (the default) an HMAC
    /// signature is refused (`unknownKey`, or `algorithmMismatch` when its `keyid` names a key
    /// of the set). A shared secret lets anyone who holds it
    /// sign, the client included; use it only where the client is not the adversary.
    public var sharedSecrets: [String: [UInt8]]
    /// The label of the client's `Accept-Signature` member. Default `sig`. The server may sign
    /// under any label: the client selects by nonce.
    public var label: String

    /// - Parameters:
    ///   - keys: the verification keys.
    ///   - requiredComponents: see ``requiredComponents``.
    ///   - requiredFieldsWhenPresent: see ``requiredFieldsWhenPresent``.
    ///   - maximumAge: default 300 s.
    ///   - clockSkewAllowance: default 60 s.
    ///   - sharedSecrets: default none.
    public init(
        keys: SigningKeySet, requiredComponents: [MessageComponent] = MessageSignaturePolicy.defaultRequiredComponents,
        requiredFieldsWhenPresent: [String] = ["content-type", "content-encoding", "location"], maximumAge: Duration = .seconds(300),
        clockSkewAllowance: Duration = .seconds(60), sharedSecrets: [String: [UInt8]] = [:]
    ) {
        self.init(
            keyProvider: { keys }, requiredComponents: requiredComponents, requiredFieldsWhenPresent: requiredFieldsWhenPresent,
            maximumAge: maximumAge, clockSkewAllowance: clockSkewAllowance, sharedSecrets: sharedSecrets)
    }

    /// A policy whose keys are read from `keyProvider` at every verification (for example
    /// `{ updates.signingKeys }` of a `TrustUpdateClient`).
    /// - Parameters:
    ///   - keyProvider: returns the key set in force.
    ///   - requiredComponents: see ``requiredComponents``.
    ///   - requiredFieldsWhenPresent: see ``requiredFieldsWhenPresent``.
    ///   - maximumAge: default 300 s.
    ///   - clockSkewAllowance: default 60 s.
    ///   - sharedSecrets: default none.
    public init(
        keyProvider: @escaping @Sendable () -> SigningKeySet,
        requiredComponents: [MessageComponent] = MessageSignaturePolicy.defaultRequiredComponents,
        requiredFieldsWhenPresent: [String] = ["content-type", "content-encoding", "location"], maximumAge: Duration = .seconds(300),
        clockSkewAllowance: Duration = .seconds(60), sharedSecrets: [String: [UInt8]] = [:]
    ) {
        keys = keyProvider
        self.requiredComponents = requiredComponents
        self.requiredFieldsWhenPresent = requiredFieldsWhenPresent.map { $0.lowercased() }
        self.maximumAge = maximumAge
        self.clockSkewAllowance = clockSkewAllowance
        self.sharedSecrets = sharedSecrets
        label = "sig"
    }

    /// The RFC 9421 algorithm a key of `kind` signs and verifies with: `ed25519`,
    /// `ecdsa-p256-sha256` or `rsa-pss-sha512`.
    public static func algorithmName(for kind: SignaturePublicKey.Kind) -> String {
        MessageSignatureVerifier.algorithm(for: kind).name
    }

    /// `@status`, `@method;req`, `@authority;req`, `@path;req`, `@query;req`.
    public static let defaultRequiredComponents: [MessageComponent] = [
        .status, .requestMethod, .requestAuthority, .requestPath, .requestQuery,
    ]

    /// What the client's `Accept-Signature` asks to be covered: the required components,
    /// `content-digest` and `content-type`. Fields a response may lack are left to the
    /// signer's profile (docs/SIGNED_RESPONSES.md): it covers `content-encoding` and
    /// `location` whenever it sends them.
    public var acceptedComponents: [MessageComponent] {
        var components = requiredComponents
        for extra in [MessageComponent.contentDigest, .contentType] where !components.contains(extra) { components.append(extra) }
        return components
    }

    /// Checks the policy can work: components named right, a non-empty label, durations not
    /// negative, `@status` required (without it a signed `200` could be replayed as any status).
    func validate() throws(ResponseSignatureError) {
        guard requiredComponents.contains(.status) else {
            throw ResponseSignatureError(.invalidConfiguration, "An RFC 9421 policy must require \"@status\".")
        }
        guard maximumAge >= .zero, clockSkewAllowance >= .zero else {
            throw ResponseSignatureError(.invalidConfiguration, "The maximum age and clock-skew allowance cannot be negative.")
        }
        guard !label.isEmpty, (try? StructuredField.dictionary(label)) != nil else {
            throw ResponseSignatureError(.invalidConfiguration, "The Accept-Signature label \"\(label)\" is not a structured-field key.")
        }
        if let bad = requiredComponents.first(where: { $0.name.isEmpty || $0.name != $0.name.lowercased() }) {
            throw ResponseSignatureError(.invalidConfiguration, "The required component \(bad) is not a lowercase name.")
        }
        if let short = sharedSecrets.first(where: { $0.value.count < 32 }) {
            throw ResponseSignatureError(.invalidConfiguration, "The hmac-sha256 secret \"\(short.key)\" is \(short.value.count) bytes; at least 32 are required.")
        }
    }
}
