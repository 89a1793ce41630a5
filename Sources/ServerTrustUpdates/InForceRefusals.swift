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

    /// The record as stored: the verified target bytes (absent: the state listed none).
    struct Record: Codable, Equatable, Sendable {
        /// The record's format; another is refused.
        var format = 1
        var targetsVersion: Int64?
        var denyList: Data?
        var signingKeys: Data?
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
            if let name = configuration.denyListTarget, let data = record.denyList {
                denyList = try KeyDenyList(data: Array(data), fileName: name)
            }
            var keys: SigningKeySet?
            if let name = configuration.signingKeysTarget, let data = record.signingKeys {
                keys = try SigningKeySet(jwks: Array(data), fileName: name)
            }
            return InForceRefusals(denyList: denyList, signingKeys: keys, targetsVersion: record.targetsVersion, failure: failure)
        } catch {
            let reason = (error as? TUFError)?.reason ?? (error as? TrustError)?.reason ?? "\(error)"
            throw TUFError(.storeFailure, "the record of the refusals in force, \(fileName), does not read (\(reason))")
        }
    }
}
