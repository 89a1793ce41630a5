/// The four top-level role types.
package enum RoleType: String, Sendable {
    case root, timestamp, snapshot, targets
}

/// One metadata document: the `signed` part parsed, its canonical bytes, and the signatures.
package struct Metadata<Signed: SignedMetadata>: Sendable {
    package let signed: Signed
    /// The canonical JSON of `signed`, the bytes the signatures are over.
    package let signedBytes: [UInt8]
    /// Signature hex by key ID.
    package let signatures: [String: String]

    /// Parses `bytes` as metadata of `Signed`'s role type.
    package init(bytes: [UInt8], parser: JSONParser = JSONParser()) throws(TUFError) {
        let document = try parser.parse(bytes)
        let fields = try Fields(document, "metadata")
        let signedValue = try fields.required("signed")
        guard case .array(let list) = try fields.required("signatures") else {
            throw TUFError(.malformedMetadata, "metadata.signatures is not an array")
        }
        var signatures: [String: String] = [:]
        for (index, element) in list.enumerated() {
            let entry = try Fields(element, "metadata.signatures[\(index)]")
            let keyID = try entry.string("keyid")
            guard signatures[keyID] == nil else { throw TUFError(.malformedMetadata, "multiple signatures for key \(keyID)") }
            signatures[keyID] = try entry.string("sig")
        }
        let signedFields = try Fields(signedValue, "signed")
        let type = try signedFields.string("_type")
        guard type == Signed.type.rawValue else {
            throw TUFError(.malformedMetadata, "expected \(Signed.type.rawValue) metadata, got \"\(type)\"")
        }
        self.signed = try Signed(common: try CommonFields(signedFields), fields: signedFields)
        self.signedBytes = CanonicalJSON.encode(signedValue)
        self.signatures = signatures
    }
}

/// `_type`, `spec_version`, `version` and `expires`, common to every role.
package struct CommonFields: Sendable {
    package let specVersion: String
    package let version: Int64
    /// `expires` as seconds since the Unix epoch.
    package let expires: Int64
    package let expiresText: String

    init(_ fields: Fields) throws(TUFError) {
        specVersion = try fields.string("spec_version")
        let parts = specVersion.split(separator: ".", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else {
            throw TUFError(.malformedMetadata, "spec_version \"\(specVersion)\" cannot be parsed")
        }
        guard parts[0] == "1" else { throw TUFError(.malformedMetadata, "unsupported spec_version \(specVersion)") }
        version = try fields.integer("version")
        guard version > 0 else { throw TUFError(.malformedMetadata, "version must be above 0, got \(version)") }
        expiresText = try fields.string("expires")
        guard let expires = Expiry.parse(expiresText) else { throw TUFError(.malformedMetadata, "expires \"\(expiresText)\" is not YYYY-MM-DDTHH:MM:SSZ") }
        self.expires = expires
    }

    /// python-tuf's `is_expired`: expired from the `expires` second on.
    func isExpired(at now: Int64) -> Bool { now >= expires }
}

/// A role's `signed` part.
package protocol SignedMetadata: Sendable {
    static var type: RoleType { get }
    var common: CommonFields { get }
    init(common: CommonFields, fields: Fields) throws(TUFError)
}

extension SignedMetadata {
    package var version: Int64 { common.version }
}

/// Root: the keys and thresholds of the top-level roles.
package struct Root: SignedMetadata {
    package static let type = RoleType.root
    package let common: CommonFields
    package let consistentSnapshot: Bool
    package let keys: [String: TUFKey]
    package let roles: [RoleType: TUFRole]

    package init(common: CommonFields, fields: Fields) throws(TUFError) {
        self.common = common
        if let value = fields.optional("consistent_snapshot") {
            guard case .bool(let flag) = value else { throw TUFError(.malformedMetadata, "signed.consistent_snapshot is not a boolean") }
            consistentSnapshot = flag
        } else {
            consistentSnapshot = false
        }
        var keys: [String: TUFKey] = [:]
        for member in try fields.object("keys").members { keys[member.key] = try TUFKey(member.value, "signed.keys.\(member.key)") }
        self.keys = keys
        let rolesFields = try fields.object("roles")
        var roles: [RoleType: TUFRole] = [:]
        for member in rolesFields.members {
            guard let type = RoleType(rawValue: member.key) else { throw TUFError(.malformedMetadata, "signed.roles names unknown role \(member.key)") }
            roles[type] = try TUFRole(try Fields(member.value, "signed.roles.\(member.key)"))
        }
        guard roles.count == 4 else { throw TUFError(.malformedMetadata, "signed.roles must name root, timestamp, snapshot and targets") }
        self.roles = roles
    }

    /// The version the next root must have. A root at the largest version there is has none:
    /// its keys could never be rotated, so it is refused here rather than overflowing.
    func nextVersion() throws(TUFError) -> Int64 {
        guard common.version < Int64.max else {
            throw TUFError(.malformedMetadata, "root version \(common.version) is the largest a version can be: no root can follow it, so its keys could never be rotated")
        }
        return common.version + 1
    }

    func verify(_ role: RoleType, payload: [UInt8], signatures: [String: String]) throws(TUFError) {
        try verifyThreshold(role: roles[role]!, keys: keys, roleName: role.rawValue, payload: payload, signatures: signatures)
    }
}

/// Timestamp: the version (and optionally length and hashes) of the current snapshot.
package struct Timestamp: SignedMetadata {
    package static let type = RoleType.timestamp
    package let common: CommonFields
    package let snapshotMeta: MetaFile

    package init(common: CommonFields, fields: Fields) throws(TUFError) {
        self.common = common
        snapshotMeta = try MetaFile(try fields.object("meta").required("snapshot.json"), "signed.meta.snapshot.json")
    }
}

/// Snapshot: the version of every targets metadata file.
package struct Snapshot: SignedMetadata {
    package static let type = RoleType.snapshot
    package let common: CommonFields
    package let meta: [String: MetaFile]

    package init(common: CommonFields, fields: Fields) throws(TUFError) {
        self.common = common
        var meta: [String: MetaFile] = [:]
        for member in try fields.object("meta").members { meta[member.key] = try MetaFile(member.value, "signed.meta.\(member.key)") }
        self.meta = meta
    }
}

/// Targets (top-level or delegated): target files and further delegations.
package struct Targets: SignedMetadata {
    package static let type = RoleType.targets
    package let common: CommonFields
    package let targets: [String: TargetFile]
    package let delegations: Delegations?

    package init(common: CommonFields, fields: Fields) throws(TUFError) {
        self.common = common
        var targets: [String: TargetFile] = [:]
        for member in try fields.object("targets").members {
            targets[member.key] = try TargetFile(path: member.key, member.value, "signed.targets.\(member.key)")
        }
        self.targets = targets
        delegations = try fields.optional("delegations").map { (value) throws(TUFError) in try Delegations(value, "signed.delegations") }
    }

    func verify(delegate name: String, payload: [UInt8], signatures: [String: String]) throws(TUFError) {
        guard let delegations, let role = delegations.role(named: name) else {
            throw TUFError(.unsignedMetadata, "\(name) is not delegated by this targets role")
        }
        try verifyThreshold(role: role, keys: delegations.keys, roleName: name, payload: payload, signatures: signatures)
    }
}
