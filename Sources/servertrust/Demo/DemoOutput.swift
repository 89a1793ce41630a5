import ServerTrust

/// The JSON object of `demo --json`: `host`, `anchors` (the two CAs the client machine
/// trusts), `pins` (`{current, backup}`), `rows` (one per scenario: `{server, evaluator,
/// verdict, expected, asExpected, reason}`, with `code` for a rejection and `expectedCode`
/// when a specific rejection is expected), `compiledCertificates` (`{file, pin, subject}` of
/// the constants ServerTrustPinsPlugin compiled in), `purchases` (one per purchase scene:
/// `{purchase, verdict, asExpected, reason}`, with `code` for a refusal and `expectedCode`) and
/// `allAsExpected`.
struct DemoOutput: Encodable {
    struct Pins: Encodable {
        let current: String
        let backup: String
    }

    struct Row: Encodable {
        let server: String
        let evaluator: String
        let verdict: String
        let expected: String
        let asExpected: Bool
        let reason: String
        let code: String?
        let expectedCode: String?
    }

    struct Purchase: Encodable {
        let purchase: String
        let verdict: String
        let asExpected: Bool
        let reason: String
        let code: String?
        let expectedCode: String?
    }

    struct Compiled: Encodable {
        let file: String
        let pin: String
        let subject: String
    }

    let host: String
    let anchors: [String]
    let pins: Pins
    let rows: [Row]
    let compiledCertificates: [Compiled]
    let purchases: [Purchase]
    let allAsExpected: Bool

    init(lab: DemoLab, results: [(scenario: DemoScenario, outcome: DemoOutcome)], purchases: DemoPurchases) {
        host = DemoLab.host
        anchors = [lab.genuineRoot.certificate.subject, lab.proxyRoot.certificate.subject]
        pins = Pins(current: lab.currentKey.pin.description, backup: lab.backupKey.pin.description)
        rows = results.map { scenario, outcome in
            var expectedCode: String?
            if case .rejected(let code) = scenario.expected { expectedCode = code.description }
            return Row(
                server: scenario.server, evaluator: scenario.evaluator, verdict: outcome.verdict == .accepted ? "accepted" : "rejected",
                expected: scenario.expected == .accepted ? "accepted" : "rejected", asExpected: outcome.verdict == scenario.expected,
                reason: outcome.reason, code: outcome.failure?.code.description, expectedCode: expectedCode)
        }
        compiledCertificates = CompiledSamples.all.map { Compiled(file: $0.fileName, pin: $0.pin, subject: $0.subject) }
        self.purchases = purchases.scenes.map {
            Purchase(
                purchase: $0.purchase, verdict: $0.verdict, asExpected: $0.asExpected, reason: $0.reason, code: $0.code, expectedCode: $0.expected)
        }
        allAsExpected = results.allSatisfy { $0.outcome.verdict == $0.scenario.expected } && purchases.scenes.allSatisfy(\.asExpected)
    }
}
