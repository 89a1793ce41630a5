import Foundation

/// The application's Certificate Transparency log list, replaceable while the application runs:
/// the one a ``ServerTrustManager`` verifies SCTs with for every host that requires CT.
///
/// A class with a lock, not a value held by each manager: a trust update (the target
/// `ct_log_list.json`) or the application's own refresh calls ``replace(with:)`` and every
/// evaluation after it — on every manager sharing this object, whichever client path — uses
/// the new list, while an evaluation in progress finishes with the list it started with
/// (the list in force is read once per evaluation). The list is loaded into OpenSSL
/// (`CTLogStore`) once per replacement, not per handshake.
///
/// Thread-safe: the current store is behind a lock, and a `CTLogStore` is immutable.
public final class CertificateTransparencyLogs: Sendable {
    private let store: Locked<CTLogStore>

    /// - Parameter list: the first list.
    /// - Throws: what `CTLogStore.init(_:)` throws.
    public init(_ list: CTLogList) throws {
        store = Locked(try CTLogStore(list))
    }

    /// The list and its OpenSSL store in force now.
    package var current: CTLogStore { store.withLock { $0 } }

    /// Replaces the list for every evaluation that starts after this call.
    ///
    /// - Throws: what `CTLogStore.init(_:)` throws; the list in force is kept.
    public func replace(with list: CTLogList) throws {
        let loaded = try CTLogStore(list)
        store.withLock { $0 = loaded }
    }
}
