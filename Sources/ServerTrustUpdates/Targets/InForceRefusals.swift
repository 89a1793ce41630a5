import Foundation
import ServerTrust
import ServerTrustTUF

/// What only refuses, of one verified state: its deny-list, and the key set that bounds the
/// compiled-in response-signing keys. Read by one reader (``read(denyList:jwks:targetsVersion:configuration:)``)
/// wherever such bytes come from — a delivered state, a stored state whose metadata expired,
/// the record kept beside the store — and only ever joined (``joined(with:)``), never dropped
/// by a restart.
struct Refusals: Sendable {
    let denyList: KeyDenyList?
    let signingKeys: SigningKeySet?
    /// The version of the targets metadata they came from.
    let targetsVersion: Int64?

    /// Reads a state's deny-list and key set, each under the target name the configuration
    /// gives it (a target the configuration does not read is left out).
    ///
    /// - Throws: the parser's `TrustError`, naming the target, line and member.
    static func read(
        denyList: [UInt8]?, jwks: [UInt8]?, targetsVersion: Int64?, configuration: TrustUpdateClient.Configuration
    ) throws -> Refusals {
        let keys = try jwks.map { try SigningKeySet(jwks: $0, fileName: configuration.signingKeysTarget ?? "jwks.json") }
        let denyList = try denyList.map { try KeyDenyList(data: $0, fileName: configuration.denyListTarget ?? "denylist.json") }
        return Refusals(denyList: denyList, signingKeys: keys, targetsVersion: targetsVersion)
    }

    /// What refuses when both these and `other` are in force: the union of the deny-lists, and
    /// the keys both key sets hold (a key either withdrew stays withdrawn).
    func joined(with other: Refusals) -> Refusals {
        let denyList: KeyDenyList? =
            switch (denyList, other.denyList) {
            case (nil, nil): nil
            case (let one?, nil), (nil, let one?): one
            case (let mine?, let theirs?): PolicyFloor.denyList(mine, delivered: theirs)
            }
        let keys: SigningKeySet? =
            switch (signingKeys, other.signingKeys) {
            case (nil, nil): nil
            case (let one?, nil), (nil, let one?): one
            case (let mine?, let theirs?): mine.keepingKeys(heldBy: theirs)
            }
        return Refusals(denyList: denyList, signingKeys: keys, targetsVersion: max(targetsVersion ?? .min, other.targetsVersion ?? .min))
    }
}

/// What only refuses of the newest verified state handled — its deny-list and key set — as
/// ``TrustUpdateClient/restore()`` puts it back over the floor when the store cannot be
/// restored: a refresh interrupted between the files of the store (a new `timestamp.json`
/// beside the old snapshot, new targets metadata beside old cached targets), which the TUF
/// client rightly refuses to load.
///
/// The client records it in the metadata directory (``fileName``) after every verified state
/// it handles: the verified target bytes, not a judgement of them, so that a restore reads
/// them again with the same parsers. Like the store, it is the client's own trusted state,
/// written only from verified bytes, atomically (`MetadataStore`'s write: a temporary file,
/// `fsync`, rename). It only ever refuses — a deny-list, and a key set that bounds the
/// compiled-in keys — so the worst a damaged record can do is refuse more; one that does not
/// read is not used (the restore then says so).
struct InForceRefusals: Sendable {
    /// The record's file in the metadata directory. The `+` keeps it apart from the TUF
    /// store's files: a role's file name is percent-encoded, so it never holds one.
    static let fileName = "servertrust+in-force-refusals.json"

    let denyList: KeyDenyList?
    let signingKeys: SigningKeySet?
    /// The version of the targets metadata the record came from.
    let targetsVersion: Int64?
    /// Why the stored state could not be restored.
    let failure: TUFError

    /// The record as stored: the verified target bytes (absent: the state listed none), in
    /// base64 in the file.
    ///
    /// The bytes are kept as arrays, not `Data`: `Data` keeps its storage behind a pointer with
    /// tag bits, which LeakSanitizer cannot follow from a global (a test's `static let` of
    /// delivered targets is reported as leaked).
    struct Record: Codable, Equatable, Sendable {
        /// The record's format; another is refused.
        var format = 1
        var targetsVersion: Int64?
        var denyList: [UInt8]?
        var signingKeys: [UInt8]?

        init(targetsVersion: Int64?, denyList: [UInt8]?, signingKeys: [UInt8]?) {
            (self.targetsVersion, self.denyList, self.signingKeys) = (targetsVersion, denyList, signingKeys)
        }

        private enum CodingKeys: String, CodingKey { case format, targetsVersion, denyList, signingKeys }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            format = try container.decode(Int.self, forKey: .format)
            targetsVersion = try container.decodeIfPresent(Int64.self, forKey: .targetsVersion)
            denyList = try container.decodeIfPresent(Data.self, forKey: .denyList).map { Array($0) }
            signingKeys = try container.decodeIfPresent(Data.self, forKey: .signingKeys).map { Array($0) }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(format, forKey: .format)
            try container.encodeIfPresent(targetsVersion, forKey: .targetsVersion)
            try container.encodeIfPresent(denyList.map { Data($0) }, forKey: .denyList)
            try container.encodeIfPresent(signingKeys.map { Data($0) }, forKey: .signingKeys)
        }
    }

    /// Records `record` in the store at `directory`, unless it already holds it — under the
    /// store's lock, like every write to it (a lock holder removes the temporary files it finds).
    ///
    /// - Throws: `TUFError` (`.storeFailure`) when it cannot be written.
    static func write(_ record: Record, metadataDirectory directory: String) throws(TUFError) {
        let store = try MetadataStore(directory: directory)
        let lock = try store.lock()
        defer { withExtendedLifetime(lock) {} }
        let bytes: [UInt8]
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            bytes = Array(try encoder.encode(record))
        } catch {
            throw TUFError(.storeFailure, "cannot encode \(fileName): \(error)")
        }
        if store.read(fileName) == bytes { return }
        try store.write(fileName, bytes)
    }

    /// Reads the record of the store in `configuration`'s metadata directory, parsing its
    /// deny-list and key set with the one reader of what refuses (``Refusals``).
    ///
    /// - Returns: nil when there is no record.
    /// - Throws: `TUFError` (`.storeFailure`) naming the record when it does not read.
    static func read(configuration: TrustUpdateClient.Configuration) throws(TUFError) -> Refusals? {
        let store = try MetadataStore(directory: configuration.metadataDirectory)
        guard let bytes = store.read(fileName) else { return nil }
        do {
            let record = try JSONDecoder().decode(Record.self, from: Data(bytes))
            guard record.format == 1 else { throw TUFError(.storeFailure, "format \(record.format) is not 1") }
            return try Refusals.read(
                denyList: configuration.denyListTarget == nil ? nil : record.denyList,
                jwks: configuration.signingKeysTarget == nil ? nil : record.signingKeys, targetsVersion: record.targetsVersion,
                configuration: configuration)
        } catch {
            let reason = (error as? TUFError)?.reason ?? (error as? TrustError)?.reason ?? "\(error)"
            throw TUFError(.storeFailure, "the record of the refusals in force, \(fileName), does not read (\(reason))")
        }
    }
}

extension InForceRefusals {
    /// The record's refusals, as the restore of an unrestorable store puts them back.
    init(_ refusals: Refusals, failure: TUFError) {
        self.init(denyList: refusals.denyList, signingKeys: refusals.signingKeys, targetsVersion: refusals.targetsVersion, failure: failure)
    }
}
