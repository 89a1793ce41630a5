import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// `servertrust purchases verify --claim-for … --ledger …` and `purchases lookup`: the ledger
/// across processes — many processes on one SQLite file grant a transaction once, and processes
/// killed (SIGKILL) at staggered points of a claim neither grant twice nor lose the grant.
@Suite struct LedgerCommandTests {
    let lab: AppStoreLab
    let folder: URL
    let rootPath: String
    let ledgerPath: String
    let jwsPath: String

    init() throws {
        lab = try AppStoreLab()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        rootPath = folder.appendingPathComponent("root.pem").path
        try lab.root.certificate.pemEncoded.write(toFile: rootPath, atomically: true, encoding: .utf8)
        ledgerPath = folder.appendingPathComponent("ledger.sqlite").path
        jwsPath = folder.appendingPathComponent("transaction.jws").path
        try lab.jws(payload: AppStoreLab.transactionJSON(transactionID: "2000000000000777", extra: ["\"webOrderLineItemId\":\"80000001\""]))
            .write(toFile: jwsPath, atomically: true, encoding: .utf8)
    }

    func claim(_ account: String, timeout: TimeInterval = 60) -> CommandResult {
        CommandRunner.run(
            ["purchases", "verify", "--bundle-id", "com.example.app", "--root", rootPath, "--no-revocation", "--claim-for", account, "--ledger", ledgerPath, "--json", jwsPath],
            timeout: timeout)
    }

    func object(_ result: CommandResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any], "\(result)")
    }

    /// `body(index)` on `count` threads at once (each blocks in its child's wait).
    func inParallel(_ count: Int, _ body: @escaping @Sendable (Int) -> CommandResult) -> [CommandResult] {
        let results = Locked([CommandResult?](repeating: nil, count: count))
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread {
                let result = body(index)
                results.withLock { $0[index] = result }
                group.leave()
            }.start()
        }
        group.wait()
        return results.withLock { $0.compactMap { $0 } }
    }

    @Test func aClaimGrantsOnceTheBuyerGetsItBackAndTheSupportLookupNamesTheHolder() throws {
        let first = claim("alice")
        #expect(first.status == 0, "\(first)")
        #expect(try object(first)["status"] as? String == "granted")
        let again = claim("alice")
        #expect(again.status == 0, "\(again)")
        #expect(try object(again)["status"] as? String == "alreadyGranted")
        let replay = claim("mallory")
        #expect(replay.status == 1, "\(replay)")
        let refused = try object(replay)
        #expect(refused["reason"] as? String == "replay" && refused["account"] as? String == "alice")

        let lookup = CommandRunner.run(["purchases", "lookup", "--ledger", ledgerPath, "--order", "80000001"])
        #expect(lookup.status == 0 && lookup.standardOutput.hasPrefix("granted  transaction 2000000000000777 to alice at "), "\(lookup)")
        let entitlements = CommandRunner.run(["purchases", "lookup", "--ledger", ledgerPath, "--account", "alice"])
        #expect(entitlements.status == 1, "a consumable is no entitlement: \(entitlements)")
        let none = CommandRunner.run(["purchases", "lookup", "--ledger", ledgerPath, "--transaction", "1"])
        #expect(none.status == 1 && none.standardError.contains("no grant of transaction 1"), "\(none)")
        #expect(CommandRunner.run(["purchases", "lookup", "--ledger", ledgerPath]).status == 2)
        #expect(CommandRunner.run(["purchases", "verify", "--claim-for", "alice", jwsPath]).status == 2)
    }

    @Test func processesRacingOnOneFileGrantOnce() throws {
        let results = inParallel(16) { index in self.claim("account-\(index)") }
        let granted = results.filter { $0.status == 0 }
        #expect(granted.count == 1, "\(results.map(\.status))")
        let winner = try #require(try granted.first.map { try object($0)["account"] as? String } ?? nil)
        let refusals = try results.filter { $0.status != 0 }.map { try object($0) }
        #expect(refusals.count == 15 && refusals.allSatisfy { $0["reason"] as? String == "replay" && $0["account"] as? String == winner }, "\(refusals)")
    }

    @Test func processesKilledMidClaimNeitherGrantTwiceNorLoseTheGrant() throws {
        // Killed with SIGKILL at staggered points between start-up and commit; each must leave
        // the file with no grant or one, never a damaged one.
        let killed = inParallel(12) { index in self.claim("alice", timeout: 0.05 + 0.025 * Double(index)) }
        #expect(killed.contains { $0.standardError.contains("[killed after") }, "no run was killed: \(killed.map(\.status))")
        let lookup = CommandRunner.run(["purchases", "lookup", "--ledger", ledgerPath, "--transaction", "2000000000000777", "--json"])
        let grants = lookup.status == 0 ? (try JSONSerialization.jsonObject(with: Data(lookup.standardOutput.utf8)) as? [[String: Any]]) ?? [] : []
        #expect(grants.count <= 1, "\(lookup)")
        // The client retries: granted now if no killed run committed, the same grant if one did.
        let retry = claim("alice")
        #expect(retry.status == 0, "\(retry) after \(killed.map(\.status))")
        let status = try object(retry)["status"] as? String
        #expect(status == (grants.isEmpty ? "granted" : "alreadyGranted"), "\(retry)")
        if let committed = grants.first { #expect(try object(retry)["grantedAt"] as? String == committed["grantedAt"] as? String) }
        // Another account is still refused.
        #expect(claim("mallory").status == 1)
    }
}
