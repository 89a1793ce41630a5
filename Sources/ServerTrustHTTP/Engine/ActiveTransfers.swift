import Foundation
internal import CCurl

// Fast path: docs/PERFORMANCE.md#fast-paths, "Active transfers by slot".
/// The transfers added to the multi handle, which keeps them alive while curl may call
/// back. Each transfer knows its slot (``Transfer/activeSlot``), and a finished `CURL*` names
/// its handle (`CURLINFO_PRIVATE`, ``EasyHandle/owner(of:)``), which names its transfer: an
/// insertion and a removal are an append and a swap with the last slot, not a dictionary keyed
/// by the `CURL*`. Loop thread only (`~Copyable`: one table, never a copy of it).
struct ActiveTransfers: ~Copyable {
    private var transfers: [Transfer] = []

    var count: Int { transfers.count }

    mutating func insert(_ transfer: Transfer) {
        precondition(transfer.activeSlot < 0, "a transfer added twice")
        transfer.activeSlot = transfers.count
        transfers.append(transfer)
    }

    func contains(_ transfer: Transfer) -> Bool {
        transfers.indices.contains(transfer.activeSlot) && transfers[transfer.activeSlot] === transfer
    }

    /// Removes `transfer`; false when the table does not hold it.
    mutating func remove(_ transfer: Transfer) -> Bool {
        guard contains(transfer) else { return false }
        let slot = transfer.activeSlot
        let last = transfers.removeLast()
        if last !== transfer {
            transfers[slot] = last
            last.activeSlot = slot
        }
        transfer.activeSlot = -1
        return true
    }

    /// Removes and returns the transfer running on `handle`, a `CURL*` of the multi handle;
    /// nil when the table holds none (a handle that is not ours, or one already removed).
    mutating func remove(runningOn handle: UnsafeMutableRawPointer) -> Transfer? {
        // The handle is alive: a `CURL*` in the multi handle belongs to a transfer this
        // table holds, which holds its handle. Both reads are unretained until the
        // transfer is known to be in the table.
        guard let owner = EasyHandle.owner(of: handle),
            let transfer = owner._withUnsafeGuaranteedRef({ $0.unretainedTransfer })?.takeUnretainedValue(),
            remove(transfer)
        else { return nil }
        return transfer
    }

    /// Empties the table and returns what it held.
    mutating func removeAll() -> [Transfer] {
        let all = transfers
        transfers = []
        for transfer in all { transfer.activeSlot = -1 }
        return all
    }
}
