/// What a store holds that verifies: each top-level role's version and expiry, for
/// `servertrust updates show`.
///
/// The stored files go through the ``TrustedMetadataSet`` checks in workflow order, offline;
/// expiry is reported (``Role/expired``) rather than enforced, so an operator can see what has
/// gone stale. A file that does not verify against the ones before it is reported with the
/// reason, never as trusted.
package struct TrustedStateReport: Codable, Sendable {
    package struct Role: Codable, Sendable {
        package let name: String
        package let version: Int64?
        package let expires: String?
        package let expired: Bool?
        /// Why the stored file is not trusted, when it is present but refused.
        package let problem: String?
    }

    package let roles: [Role]

    package init(store: MetadataStore, now: Int64) throws(TUFError) {
        guard let rootBytes = store.read("root.json") else { throw TUFError(.storeFailure, "\(store.directory)/root.json is missing") }
        var set = try TrustedMetadataSet(rootBytes: rootBytes, referenceTime: Int64.min)
        func role(_ name: String, _ common: CommonFields) -> Role {
            Role(name: name, version: common.version, expires: common.expiresText, expired: common.isExpired(at: now), problem: nil)
        }
        var roles = [role("root", set.root.signed.common)]
        func load(_ name: String, _ step: (inout TrustedMetadataSet, [UInt8]) throws(TUFError) -> CommonFields) -> Bool {
            guard let bytes = store.read("\(name).json") else {
                roles.append(Role(name: name, version: nil, expires: nil, expired: nil, problem: nil))
                return false
            }
            do throws(TUFError) {
                roles.append(role(name, try step(&set, bytes)))
                return true
            } catch {
                roles.append(Role(name: name, version: nil, expires: nil, expired: nil, problem: error.description))
                return false
            }
        }
        if load("timestamp", { (set, bytes) throws(TUFError) in
            guard case .updated(let t) = try set.updateTimestamp(bytes) else { throw TUFError(.invalidState, "unchanged") }
            return t.signed.common
        }), load("snapshot", { (set, bytes) throws(TUFError) in try set.updateSnapshot(bytes, trusted: true).signed.common }) {
            _ = load("targets", { (set, bytes) throws(TUFError) in try set.updateTargets(bytes).signed.common })
        }
        self.roles = roles
    }
}
