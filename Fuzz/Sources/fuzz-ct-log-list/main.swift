import Foundation
import FuzzSupport
import ServerTrust

/// Input: the bytes of a Certificate Transparency log list (v3 JSON) to `CTLogList(json:)`.
///
/// Properties: a list either loads or throws a `TrustError` `invalidPolicyFile` whose reason
/// starts `log_list.json:LINE:` with LINE inside the file; a list that loads names every log by
/// the SHA-256 of its key, and OpenSSL loads every one of its keys into a store
/// (`CTLogStore`), in which each log is found by its ID.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCTLogList(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput.bytes(start, count)
    let list: CTLogList
    do {
        list = try CTLogList(json: bytes)
    } catch let error as TrustError {
        require(error.code == .invalidPolicyFile, "a log list was refused with \(error.code), not invalidPolicyFile: \(error.reason)")
        require(error.reason.hasPrefix("log_list.json:"), "the error does not name the file: \(error.reason)")
        let digits = error.reason.dropFirst("log_list.json:".count).prefix { $0.isNumber }
        let lines = bytes.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        require(Int(digits).map { (1...lines).contains($0) } ?? false, "the error's line is not in the file (\(lines) lines): \(error.reason)")
        return 0
    } catch {
        fatalError("fuzz invariant broken: a log list threw a non-TrustError: \(error)")
    }
    for (id, log) in list.logs {
        require(id == log.id, "a log is filed under another ID: \(log)")
        require(CTLogList.Log(name: "", key: log.key, operatorName: "", state: nil).id == id, "a log's ID is not the SHA-256 of its key: \(log)")
    }
    guard let store = try? CTLogStore(list) else { fatalError("fuzz invariant broken: OpenSSL refused a loaded list's keys") }
    require(store.list.logs.count == list.logs.count, "the store lost logs")
    return 0
}
