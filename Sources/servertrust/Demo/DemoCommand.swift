import ArgumentParser
import Foundation
import ServerTrust
import ServerTrustHTTP

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Pin a client against local servers: genuine, impostor, revoked, rotated. No network.",
        discussion: """
            Makes a PKI in memory and starts local HTTPS servers on 127.0.0.1, all for \
            demo.servertrust.test: the genuine server; an impostor whose certificate comes from \
            another CA the machine also trusts (a TLS-inspection proxy); a server with a revoked \
            certificate; the server after rotating to the backup key; and after rotating to a key \
            nobody pinned. A pinned Session (SPKI pins of the current and the backup key, CRLs \
            checked) meets each, and a client with default validation only meets the impostor. \
            Last, the sample chain compiled in from Certificates/ is verified with its compiled pins.

            Exit status: 0 every verdict as expected, 1 a verdict differs (the demo doubles as a \
            smoke test), 3 the local servers could not start.

            Examples:
              servertrust demo
              servertrust demo --json | jq '.rows[] | [.server, .verdict]'
            """
    )

    @Flag(name: .long, help: "Print the rows as JSON.")
    var json = false

    func run() async throws {
        let lab: DemoLab
        do {
            lab = try DemoLab()
        } catch {
            throw CommandFailure(status: CommandFailure.transfer, message: "error: the demo could not start its local servers: \(error)")
        }
        defer { lab.stop() }
        let host = DemoLab.host
        let pins = [lab.currentKey.pin, lab.backupKey.pin]

        var configuration = Session.Configuration()
        configuration.anchors = .bundle(lab.anchors)
        configuration.resolve = lab.resolveEntries
        configuration.requestTimeout = .seconds(10)
        let pinnedSession: Session
        let defaultSession: Session
        do {
            // Pins first (they include default validation), then revocation of the whole chain
            // from the CAs' CRLs, hard-fail and offline: what an app that ships CRLs would do.
            let revocation = RevocationTrustEvaluator(
                options: RevocationOptions(methods: .crl, requirePositiveResponse: true, networkAccessDisabled: true, scope: .wholeChain),
                cache: RevocationCache(), revocationLists: lab.revocationLists)
            let pinned = try CompositeTrustEvaluator([PinnedKeyHashesTrustEvaluator(pins: pins), revocation])
            pinnedSession = try Session(configuration: configuration, trustManager: ServerTrustManager(evaluators: [try HostPattern(host): pinned]))
            defaultSession = try Session(configuration: configuration)
        } catch {
            throw CommandFailure(status: CommandFailure.transfer, message: "error: the demo could not create its sessions: \(error)")
        }
        defer {
            pinnedSession.shutdown()
            defaultSession.shutdown()
        }

        let explainPin: (TrustReport) -> String = { report in
            guard let match = report.validatedChain.first(where: { pins.contains($0.pin) }) else { return "accepted" }
            let which = match.pin == lab.currentKey.pin ? "current key" : "backup key"
            return "pin matched: \(which) (\(match.subject))"
        }
        let explainDefault: (TrustReport) -> String = { report in
            "chain validates to \(report.validatedChain.last?.subject ?? "a trusted CA"): without a pin, the impostor gets in"
        }
        let pinnedLabel = "pinned + CRL"
        let scenarios = [
            DemoScenario(
                server: "genuine", evaluator: pinnedLabel, expected: .accepted,
                run: DemoScenario.request(lab.genuine.url(host: host), through: pinnedSession, explainAcceptance: explainPin)),
            DemoScenario(
                server: "impostor (proxy CA)", evaluator: "default only", expected: .accepted,
                run: DemoScenario.request(lab.impostor.url(host: host), through: defaultSession, explainAcceptance: explainDefault)),
            DemoScenario(
                server: "impostor (proxy CA)", evaluator: pinnedLabel, expected: .rejected(.pinMismatch),
                run: DemoScenario.request(lab.impostor.url(host: host), through: pinnedSession, explainAcceptance: explainPin)),
            DemoScenario(
                server: "revoked certificate", evaluator: pinnedLabel, expected: .rejected(.revoked),
                run: DemoScenario.request(lab.revoked.url(host: host), through: pinnedSession, explainAcceptance: explainPin)),
            DemoScenario(
                server: "rotated to backup key", evaluator: pinnedLabel, expected: .accepted,
                run: DemoScenario.request(lab.rotatedToBackup.url(host: host), through: pinnedSession, explainAcceptance: explainPin)),
            DemoScenario(
                server: "rotated to unpinned key", evaluator: pinnedLabel, expected: .rejected(.pinMismatch),
                run: DemoScenario.request(lab.rotatedToUnpinned.url(host: host), through: pinnedSession, explainAcceptance: explainPin)),
            DemoScenario(
                server: "sample chain (compiled in)", evaluator: "compiled pins", expected: .accepted,
                run: { CompiledSamples.verify() }),
        ]
        var results: [(scenario: DemoScenario, outcome: DemoOutcome)] = []
        for scenario in scenarios {
            results.append((scenario, await scenario.run()))
        }
        let purchases: DemoPurchases
        let ledgerPath = FileManager.default.temporaryDirectory.appendingPathComponent("servertrust-demo-ledger-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: ledgerPath + suffix) }
        }
        do {
            purchases = try await DemoPurchases(ledgerPath: ledgerPath)
        } catch {
            throw CommandFailure(status: CommandFailure.transfer, message: "error: the demo could not make its lab purchases: \(error)")
        }
        let unexpected = results.filter { $0.outcome.verdict != $0.scenario.expected }
            .map { "  \($0.scenario.server) / \($0.scenario.evaluator): expected \($0.scenario.expected.text), got \($0.outcome.verdict.text)" }
            + purchases.scenes.filter { !$0.asExpected }
            .map { "  \($0.purchase): expected \($0.expected.map { "refused (\($0))" } ?? "no refusal"), got \($0.code.map { "refused (\($0))" } ?? $0.verdict)" }
        let total = results.count + purchases.scenes.count

        if json {
            print(JSONText.render(DemoOutput(lab: lab, results: results, purchases: purchases)))
        } else {
            print(text(lab: lab, results: results, purchases: purchases, style: .standardOutput))
        }
        if !unexpected.isEmpty {
            throw CommandFailure(
                status: CommandFailure.rejected,
                message: "error: \(unexpected.count) of \(total) verdicts differ from the expected ones:\n" + unexpected.joined(separator: "\n"))
        }
    }

    private func text(
        lab: DemoLab, results: [(scenario: DemoScenario, outcome: DemoOutcome)], purchases: DemoPurchases, style: TextStyle
    ) -> String {
        var lines = [
            style.bold("ServerTrust demo") + ": \(lab.servers.count) local HTTPS servers for \(DemoLab.host), made on the spot; no network.",
            "",
            "The client machine trusts two CAs, like a laptop behind a TLS-inspection proxy:",
            "  \(lab.genuineRoot.certificate.subject) and \(lab.proxyRoot.certificate.subject)",
            "The pinned client pins the server's key and a backup key kept offline, and checks CRLs:",
            "  current key  \(lab.currentKey.pin)",
            "  backup key   \(lab.backupKey.pin)",
            "",
        ]
        let table = DemoTable(
            header: ["SERVER", "EVALUATOR", "VERDICT", "REASON"],
            rows: results.map { [$0.scenario.server, $0.scenario.evaluator, $0.outcome.verdict == .accepted ? "accepted" : "rejected", $0.outcome.reason] })
        lines += table.render(style: style) { row, column, text in
            guard column == 2 else { return text }
            let (scenario, outcome) = results[row]
            guard outcome.verdict == scenario.expected else { return style.red(text) + style.red(" ✗") }
            return outcome.verdict == .accepted ? style.green(text) : style.yellow(text)
        }
        lines.append("")
        lines.append(
            "Compiled in from Certificates/ by ServerTrustPinsPlugin: "
                + CompiledSamples.all.map(\.fileName).joined(separator: ", "))
        lines.append("")
        lines.append(
            "App Store purchases from an Apple-like lab PKI, verified offline by ServerTrustPurchases, then claimed in a ServerTrustLedger on a temporary SQLite file:")
        let purchaseTable = DemoTable(
            header: ["PURCHASE", "VERDICT", "REASON"], rows: purchases.scenes.map { [$0.purchase, $0.verdict, $0.reason] })
        lines += purchaseTable.render(style: style) { row, column, text in
            guard column == 1 else { return text }
            let scene = purchases.scenes[row]
            guard scene.asExpected else { return style.red(text) + style.red(" ✗") }
            return scene.code == nil ? style.green(text) : style.yellow(text)
        }
        let unexpected = results.filter { $0.outcome.verdict != $0.scenario.expected }.count + purchases.scenes.filter { !$0.asExpected }.count
        let total = results.count + purchases.scenes.count
        lines.append("")
        lines.append(
            unexpected == 0
                ? style.green("All \(total) verdicts as expected.")
                : style.red("\(unexpected) of \(total) verdicts differ from the expected ones."))
        return lines.joined(separator: "\n")
    }
}
