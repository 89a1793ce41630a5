/// The metadata the client trusts, accepted only in the order root → timestamp → snapshot →
/// targets → delegated targets, each checked against what is already trusted.
///
/// A port, check for check, of python-tuf's `TrustedMetadataSet`
/// (`tuf/ngclient/_internal/trusted_metadata_set.py`, tuf 7.0.1): every method either accepts
/// the new metadata or throws and leaves the set as it was. It does no I/O; the ``Updater``
/// decides what to load from where.
package struct TrustedMetadataSet: Sendable {
    /// The time expiry is checked against, fixed when the set is made (as python-tuf's
    /// `reference_time`), in seconds since the Unix epoch.
    package let referenceTime: Int64
    package private(set) var root: Metadata<Root>
    package private(set) var timestamp: Metadata<Timestamp>?
    package private(set) var snapshot: Metadata<Snapshot>?
    /// Trusted targets metadata by role name, with the role that delegated it.
    package private(set) var targets: [String: (metadata: Metadata<Targets>, delegator: String)] = [:]
    let parser: JSONParser

    /// Trusts `rootBytes`: root metadata signed by a threshold of its own root keys. Expiry is
    /// not checked here: an expired trusted root may still be updated.
    package init(rootBytes: [UInt8], referenceTime: Int64, parser: JSONParser = JSONParser()) throws(TUFError) {
        self.referenceTime = referenceTime
        self.parser = parser
        self.root = try Self.verifiedRoot(rootBytes, parser: parser)
    }

    /// The check of a root trusted as given — a stored root, or an application's
    /// ``InitialRoot`` — rather than reached by rotation: root metadata signed by a threshold of
    /// its own root keys.
    static func verifiedRoot(_ bytes: [UInt8], parser: JSONParser) throws(TUFError) -> Metadata<Root> {
        let root = try Metadata<Root>(bytes: bytes, parser: parser)
        try root.signed.verify(.root, payload: root.signedBytes, signatures: root.signatures)
        return root
    }

    /// Client workflow 5.3.4–5.3.7: the next root, signed by a threshold of the trusted root's
    /// keys and of its own, with exactly the next version.
    @discardableResult
    package mutating func updateRoot(_ bytes: [UInt8]) throws(TUFError) -> Metadata<Root> {
        guard timestamp == nil else { throw TUFError(.invalidState, "cannot update root after timestamp") }
        let expected = try root.signed.nextVersion()
        let new = try Metadata<Root>(bytes: bytes, parser: parser)
        try root.signed.verify(.root, payload: new.signedBytes, signatures: new.signatures)
        guard new.signed.version == expected else {
            throw TUFError(.rollback, "expected root version \(expected), got \(new.signed.version)")
        }
        try new.signed.verify(.root, payload: new.signedBytes, signatures: new.signatures)
        root = new
        return new
    }

    /// Client workflow 5.3.10 and 5.4: the final root must not be expired; the timestamp must be
    /// signed by the root's timestamp keys, must not roll back the trusted timestamp or the
    /// snapshot version it names, and must not be expired.
    ///
    /// Throws ``TUFError/Code/rollback`` for an older version; an *equal* version throws
    /// `equalVersion` through ``TimestampUpdate/unchanged`` instead — it is not an error.
    @discardableResult
    package mutating func updateTimestamp(_ bytes: [UInt8]) throws(TUFError) -> TimestampUpdate {
        guard snapshot == nil else { throw TUFError(.invalidState, "cannot update timestamp after snapshot") }
        guard !root.signed.common.isExpired(at: referenceTime) else {
            throw TUFError(.expired, "the final root (version \(root.signed.version)) expired at \(root.signed.common.expiresText)")
        }
        let new = try Metadata<Timestamp>(bytes: bytes, parser: parser)
        try root.signed.verify(.timestamp, payload: new.signedBytes, signatures: new.signatures)
        if let timestamp {
            if new.signed.version < timestamp.signed.version {
                throw TUFError(.rollback, "timestamp version \(new.signed.version) is below the trusted \(timestamp.signed.version)")
            }
            if new.signed.version == timestamp.signed.version { return .unchanged }
            if new.signed.snapshotMeta.version < timestamp.signed.snapshotMeta.version {
                throw TUFError(.rollback, "timestamp names snapshot version \(new.signed.snapshotMeta.version), below the trusted \(timestamp.signed.snapshotMeta.version)")
            }
        }
        timestamp = new
        try checkFinalTimestamp()
        return .updated(new)
    }

    /// The result of ``updateTimestamp(_:)``.
    package enum TimestampUpdate: Sendable {
        case updated(Metadata<Timestamp>)
        /// The same version as the trusted timestamp: the new bytes were discarded.
        case unchanged
    }

    private func checkFinalTimestamp() throws(TUFError) {
        guard let timestamp else { return }
        if timestamp.signed.common.isExpired(at: referenceTime) {
            throw TUFError(.expired, "timestamp.json expired at \(timestamp.signed.common.expiresText)")
        }
    }

    /// Client workflow 5.5: snapshot bytes must match the timestamp's length and hashes (unless
    /// `trusted`, for bytes from the local store, already checked once), be signed by the
    /// snapshot keys, and neither drop nor roll back any targets entry of the trusted snapshot;
    /// the final snapshot must be unexpired and have the version the timestamp names.
    @discardableResult
    package mutating func updateSnapshot(_ bytes: [UInt8], trusted: Bool = false) throws(TUFError) -> Metadata<Snapshot> {
        guard let timestamp else { throw TUFError(.invalidState, "cannot update snapshot before timestamp") }
        guard targets.isEmpty else { throw TUFError(.invalidState, "cannot update snapshot after targets") }
        try checkFinalTimestamp()
        if !trusted { try timestamp.signed.snapshotMeta.verify(bytes, name: "snapshot.json") }
        let new = try Metadata<Snapshot>(bytes: bytes, parser: parser)
        try root.signed.verify(.snapshot, payload: new.signedBytes, signatures: new.signatures)
        if let snapshot {
            for (name, info) in snapshot.signed.meta {
                guard let newInfo = new.signed.meta[name] else {
                    throw TUFError(.missingMetadataInfo, "the new snapshot has no entry for \(name)")
                }
                if newInfo.version < info.version {
                    throw TUFError(.rollback, "\(name) version \(newInfo.version) is below the trusted \(info.version)")
                }
            }
        }
        snapshot = new
        try checkFinalSnapshot()
        return new
    }

    private func checkFinalSnapshot() throws(TUFError) {
        guard let snapshot, let timestamp else { return }
        if snapshot.signed.common.isExpired(at: referenceTime) {
            throw TUFError(.expired, "snapshot.json expired at \(snapshot.signed.common.expiresText)")
        }
        if snapshot.signed.version != timestamp.signed.snapshotMeta.version {
            throw TUFError(.versionMismatch, "snapshot version \(snapshot.signed.version), the timestamp names \(timestamp.signed.snapshotMeta.version)")
        }
    }

    /// Client workflow 5.6 (and 5.6 for delegations): targets bytes for `roleName` must match
    /// the snapshot's length and hashes for it, be signed by a threshold of the keys
    /// `delegator` delegates `roleName` to, carry exactly the version the snapshot names, and
    /// be unexpired.
    @discardableResult
    package mutating func updateTargets(_ bytes: [UInt8], roleName: String = "targets", delegator: String = "root") throws(TUFError) -> Metadata<Targets> {
        guard snapshot != nil else { throw TUFError(.invalidState, "cannot load targets before snapshot") }
        try checkFinalSnapshot()
        let snapshot = snapshot!
        guard let meta = snapshot.signed.meta["\(roleName).json"] else {
            throw TUFError(.missingMetadataInfo, "snapshot has no entry for \(roleName).json")
        }
        try meta.verify(bytes, name: "\(roleName).json")
        let new = try Metadata<Targets>(bytes: bytes, parser: parser)
        if delegator == "root" {
            try root.signed.verify(.targets, payload: new.signedBytes, signatures: new.signatures)
        } else {
            guard let parent = targets[delegator] else { throw TUFError(.invalidState, "cannot load \(roleName) before its delegator \(delegator)") }
            try parent.metadata.signed.verify(delegate: roleName, payload: new.signedBytes, signatures: new.signatures)
        }
        guard new.signed.version == meta.version else {
            throw TUFError(.versionMismatch, "\(roleName) version \(new.signed.version), the snapshot names \(meta.version)")
        }
        if new.signed.common.isExpired(at: referenceTime) {
            throw TUFError(.expired, "\(roleName) expired at \(new.signed.common.expiresText)")
        }
        targets[roleName] = (new, delegator)
        return new
    }

    /// Whether `roleName` is trusted as delegated by `delegator` (python-tuf 7's `contains`):
    /// a role reached through another delegator is verified again against that one.
    package func contains(_ roleName: String, delegator: String) -> Bool {
        targets[roleName]?.delegator == delegator
    }
}
