public import ServerTrust

extension TrustUpdateClient {
    /// The response-signing keys delivered and in force: `isEmpty` when no delivered set is in
    /// force, or the delivered one holds no keys.
    public var signingKeys: SigningKeySet { state.withLock { $0.signingKeys ?? SigningKeySet() } }

    /// The response-signing keys to verify with, as an RFC 9421 policy reads them:
    /// `MessageSignaturePolicy(keyProvider: { client.signingKeys(orFloor: compiledKeys) })`.
    ///
    /// - While a delivered state with a `jwks.json` is in force: that set, even empty — a
    ///   repository that withdraws every key has withdrawn the compiled-in ones too.
    /// - While the floor is in force after a verified state (a revert, a restart with expired
    ///   metadata, a refused or expired policy): the compiled-in keys that the newest verified
    ///   `jwks.json` still holds (the same public key, under any key ID). A key the repository
    ///   withdrew stays withdrawn, as a deny-listed key stays refused.
    /// - Before any verified state, or when the newest published no `jwks.json`: `floor`.
    ///
    /// - Parameter floor: the compiled-in key set.
    public func signingKeys(orFloor floor: SigningKeySet) -> SigningKeySet {
        let (inForce, lastVerified) = state.withLock { ($0.signingKeys, $0.lastVerifiedSigningKeys) }
        if let inForce { return inForce }
        guard let lastVerified else { return floor }
        return floor.keepingKeys(heldBy: lastVerified)
    }
}
