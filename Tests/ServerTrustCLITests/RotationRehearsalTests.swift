import Foundation
import Testing
import ServerTrust
import ServerTrustTestSupport

/// The worked example of the "Rotating keys without bricking your clients" article, rehearsed
/// with the `servertrust` binary alone against a loopback server and a loopback report
/// collector: audit warns, a canary reports, the rotation goes through, and no enforced client
/// fails. Dates come from `--at` and from pins dated relative to it, never from the wall clock.
@Suite struct RotationRehearsalTests {
    @Test func aKeyRotationIsRehearsedEndToEndWithTheCLIAlone() throws {
        let lab = try RotationLab()
        let a = lab.keyA.pin.description, b = lab.keyB.pin.description, c = lab.keyC.pin.description
        let retires = lab.date(days: 10)
        // v1: what every deployed client enforces — the current key A, retiring in 10 days, and
        // the backup B, generated ahead and kept offline.
        let v1Pins = """
            "pins": [{ "pin": "\(a)", "label": "current", "notAfter": "\(JSONTextDate.format(retires))" },
                     { "pin": "\(b)", "label": "backup, offline" }]
            """
        let v1 = try lab.policy("v1.json", #"{ "version": 1, "hosts": { "\#(RotationLab.host)": { \#(v1Pins) } } }"#)
        // v2: v1 still enforced, and the set after the rotation ({B, C}) trialled as a canary.
        let v2 = try lab.policy("v2.json", """
            { "version": 1, "reportURIs": ["\(lab.reportURI)"], "hosts": { "\(RotationLab.host)": { \(v1Pins),
                "canary": { "pins": [{ "pin": "\(b)", "label": "backup, offline" }, { "pin": "\(c)", "label": "next backup" }] } } } }
            """)
        // A client that shipped without a backup: the negative control.
        let onlyA = try lab.policy("only-a.json", """
            { "version": 1, "reportURIs": ["\(lab.reportURI)"], "hosts": { "\(RotationLab.host)": {
                "pins": [{ "pin": "\(a)", "label": "current" }], "minimumPinCount": 1 } } }
            """)

        // 0. The daily audit warns: today A matches, but 20 days on A is past its date and the
        //    server still presents it.
        let warned = lab.audit(v1, warnDays: 20)
        #expect(warned.status == 1, "\(warned)")
        #expect(warned.standardOutput.hasPrefix(
            "\(RotationLab.host): failsWithinWarnDays\n  rejected at the warning horizon: pinMismatch: "), "\(warned)")
        #expect(warned.standardOutput.contains("\n  matching pins: \(a) (current)\n  backup pin: yes\n"), "\(warned)")
        #expect(warned.standardOutput.contains("\n  pin \(a) (current) expires in 10 days (\(JSONTextDate.format(retires)))\n"), "\(warned)")
        #expect(lab.audit(v1, warnDays: 9).status == 0)

        // 1–2. The canary reports: the enforced set admits A, the canary {B, C} would not.
        let canary = try lab.fetchJSON(v2)
        #expect(canary.result.status == 0, "\(canary.result)")
        #expect(canary.trustResult == "verified")
        let disagreements = try #require(canary.object["trustFailures"] as? [[String: Any]])
        #expect(disagreements.map { $0["mode"] as? String } == ["canary"])
        #expect(disagreements.map { $0["reason"] as? String } == ["canaryDisagreement"])
        #expect(canary.object["reportQueued"] as? Bool == true)
        let reports = lab.reports()
        try #require(reports.count == 1)
        #expect(reports[0]["hostname"] as? String == RotationLab.host)
        #expect(reports[0]["mode"] as? String == "canary")
        #expect(reports[0]["reason"] as? String == "canaryDisagreement")
        #expect(reports[0]["evaluator"] as? String == "PinSetTrustEvaluator")
        #expect(reports[0]["known-pins"] as? [String] == [lab.keyB.pin, lab.keyC.pin].sorted().map { "pin-sha256=\"\($0.base64)\"" })
        #expect((reports[0]["message"] as? String)?.contains("pinMismatch") == true)
        // Before the rotation even the client without a backup works.
        #expect(try lab.fetchJSON(onlyA).result.status == 0)

        // 3. The rotation: the server presents key B from now on.
        try lab.rotateToKeyB()

        // No enforced client fails: v1 admits B through its backup pin.
        let enforced = try lab.fetchJSON(v1)
        #expect(enforced.result.status == 0, "\(enforced.result)")
        #expect(enforced.trustResult == "verified")
        #expect(enforced.validatedLeafPin == b)
        // The canary now agrees: nothing to report.
        let agreed = try lab.fetchJSON(v2)
        #expect(agreed.result.status == 0, "\(agreed.result)")
        #expect(agreed.validatedLeafPin == b)
        #expect((agreed.object["trustFailures"] as? [[String: Any]])?.isEmpty == true)
        #expect(agreed.object["reportQueued"] as? Bool == false)
        #expect(lab.reports().count == 1)
        // And the audit passes, A's date no longer matters.
        let audited = lab.audit(v2, warnDays: 20)
        #expect(audited.status == 0, "\(audited)")
        #expect(
            audited.standardOutput.hasPrefix("\(RotationLab.host): ok\n  matching pins: \(b) (backup, offline)\n  backup pin: yes\n"),
            "\(audited)")

        // Negative control: the client without the backup pin is locked out, and its enforced
        // report is the one that must not arrive after a rotation.
        let locked = try lab.fetchJSON(onlyA)
        #expect(locked.result.status == 1, "\(locked.result)")
        #expect((locked.object["error"] as? [String: Any])?["code"] as? String == "trustEvaluationFailed")
        #expect((locked.object["trustResult"] as? [String: Any])?["code"] as? String == "pinMismatch")
        #expect(lab.reports().count == 2)
        #expect(lab.reports().last?["mode"] as? String == "enforced")
        #expect(lab.reports().last?["reason"] as? String == "pinMismatch")
    }
}

/// A PKI with three leaf keys — A (current), B (backup), C (the next backup, never served) —,
/// a server for ``host`` presenting a leaf on key A, a report collector for
/// `reports.servertrust.test`, and the policy files written for a rehearsal.
private final class RotationLab {
    static let host = "rotation.servertrust.test"
    static let reportHost = "reports.servertrust.test"

    let keyA = LabKey.ecP256()
    let keyB = LabKey.ecP256()
    let keyC = LabKey.ecP256()
    /// The audit date (`--at`): now, to the second, so the test PKI's certificates are valid.
    let base = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
    let intermediate: LabCA
    let server: LocalTLSServer
    let collector: LocalTLSServer
    let caFile: String
    private var files: [String] = []

    init() throws {
        let root = try LabPKI.makeRoot(commonName: "Rotation Test Root")
        intermediate = try root.issueIntermediate(commonName: "Rotation Test Intermediate")
        let leafA = try intermediate.issueLeaf(dnsNames: [Self.host], key: keyA, notAfter: base.addingTimeInterval(90 * 86_400))
        server = try LocalTLSServer(chain: leafA.chain, privateKeyPEM: leafA.key.pemPrivateKey) { request in
            request.path == "/" ? .text("hello from the rotating server\n") : nil
        }
        let collectorLeaf = try intermediate.issueLeaf(dnsNames: [Self.reportHost])
        collector = try LocalTLSServer(chain: collectorLeaf.chain, privateKeyPEM: collectorLeaf.key.pemPrivateKey) { request in
            request.path == "/report" ? LocalHTTPResponse(status: 204) : nil
        }
        caFile = try LabPKI.writeTemporaryFile(root.certificate.pemEncoded, name: "rotation-root.pem")
    }

    deinit {
        server.stop()
        collector.stop()
        ([caFile] + files).forEach(LabPKI.removeTemporaryFile)
    }

    var reportURI: String { collector.url("/report", host: Self.reportHost) }

    func date(days: Double) -> Date { base.addingTimeInterval(days * 86_400) }

    func policy(_ name: String, _ text: String) throws -> String {
        let file = try LabPKI.writeTemporaryFile(text, name: name)
        files.append(file)
        return file
    }

    /// The server presents a leaf on key B to handshakes from now on, on the same address.
    func rotateToKeyB() throws {
        let leafB = try intermediate.issueLeaf(dnsNames: [Self.host], key: keyB, notAfter: base.addingTimeInterval(90 * 86_400))
        try server.replaceIdentity(LocalTLSServer.Identity(chain: leafB.chain, privateKeyPEM: leafB.key.pemPrivateKey))
    }

    /// `--ca <root> --resolve` for the server and the collector.
    private var trusting: [String] {
        ["--ca", caFile, "--resolve", server.resolveEntry(host: Self.host), "--resolve", collector.resolveEntry(host: Self.reportHost)]
    }

    func audit(_ policy: String, warnDays: Int) -> CommandResult {
        CommandRunner.run(
            ["audit", "--policy", policy, "--port", String(server.port), "--at", JSONTextDate.format(base), "--warn-days", String(warnDays)]
                + trusting)
    }

    struct Fetch {
        let result: CommandResult
        let object: [String: Any]
        var trustResult: String? { (object["trustResult"] as? [String: Any])?["result"] as? String }
        var validatedLeafPin: String? {
            ((object["trust"] as? [String: Any])?["validatedChain"] as? [[String: Any]])?.first?["pin"] as? String
        }
    }

    func fetchJSON(_ policy: String) throws -> Fetch {
        let result = CommandRunner.run(["fetch", server.url("/", host: Self.host), "--policy", policy, "--json"] + trusting)
        // Parsed without throwing, so a run that printed no JSON fails with its exit status and stderr.
        let parsed = (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))) as? [String: Any]
        let object = try #require(parsed, "\(result)")
        return Fetch(result: result, object: object)
    }

    /// The JSON bodies POSTed to the collector, oldest first.
    func reports() -> [[String: Any]] {
        collector.recentRequests.filter { $0.path == "/report" && $0.method == "POST" }.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.body))) as? [String: Any]
        }
    }
}
