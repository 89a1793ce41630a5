import Foundation
import ServerTrust
import ServerTrustTUF

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
    /// deny-list and key set with the same parsers as a delivered state's (a target the
    /// configuration no longer reads is left out).
    ///
    /// - Parameter failure: why the stored state could not be restored.
    /// - Returns: nil when there is no record.
    /// - Throws: `TUFError` (`.storeFailure`) naming the record when it does not read.
    static func read(configuration: TrustUpdateClient.Configuration, after failure: TUFError) throws(TUFError) -> InForceRefusals? {
        let store = try MetadataStore(directory: configuration.metadataDirectory)
        guard let bytes = store.read(fileName) else { return nil }
        do {
            let record = try JSONDecoder().decode(Record.self, from: Data(bytes))
            guard record.format == 1 else { throw TUFError(.storeFailure, "format \(record.format) is not 1") }
            var denyList: KeyDenyList?
            if let name = configuration.denyListTarget, let bytes = record.denyList {
                denyList = try KeyDenyList(data: bytes, fileName: name)
            }
            var keys: SigningKeySet?
            if let name = configuration.signingKeysTarget, let bytes = record.signingKeys {
                keys = try SigningKeySet(jwks: bytes, fileName: name)
            }
            return InForceRefusals(denyList: denyList, signingKeys: keys, targetsVersion: record.targetsVersion, failure: failure)
        } catch {
            let reason = (error as? TUFError)?.reason ?? (error as? TrustError)?.reason ?? "\(error)"
            throw TUFError(.storeFailure, "the record of the refusals in force, \(fileName), does not read (\(reason))")
        }
    }
}
