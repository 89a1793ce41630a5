import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// The v3 log list: read strictly, every error naming the file, line and member.
@Suite struct CTLogListTests {
    static let key = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEmXg8sUUzwBYaWrRb+V0IopzQ6o3UyEJ04r5ZrRXGdpYM8K+hB0pXrGRLI0eeWz+3skXrS0IO83AhA3GpRL6s6w=="
    static let id = "3xwuwRUAlFJHqWFoMl3cXHlZ6PfG04j8AC4LvT9012Q="

    static func document(log: String = #"{"log_id": "\#(id)", "key": "\#(key)", "state": {"usable": {"timestamp": "2020-01-01T00:00:00Z"}}}"#, tiled: String = "") -> [UInt8] {
        Array(
            """
            {
              "version": "7.0",
              "log_list_timestamp": "2025-06-01T00:00:00Z",
              "operators": [
                {
                  "name": "Example",
                  "logs": [
                    \(log)
                  ],
                  "tiled_logs": [\(tiled)]
                }
              ]
            }
            """.utf8)
    }

    @Test func readsTheV3SchemaWithLogsAndTiledLogs() throws {
        let tiled = TestCTLog(.p256)
        let tiledEntry = #"""
            {"description": "Tiled", "log_id": "\#(Data(tiled.logID).base64EncodedString())", "key": "\#(Data(tiled.publicKeyDER).base64EncodedString())",
             "submission_url": "https://t.example/", "monitoring_url": "https://m.example/", "mmd": 60,
             "state": {"retired": {"timestamp": "2025-01-01T00:00:00Z"}},
             "temporal_interval": {"start_inclusive": "2025-01-01T00:00:00Z", "end_exclusive": "2025-07-01T00:00:00Z"}}
            """#
        let list = try CTLogList(json: Self.document(tiled: tiledEntry))
        #expect(list.version == "7.0")
        #expect(list.timestamp == Date(timeIntervalSince1970: 1_748_736_000))
        #expect(list.logs.count == 2)
        let log = try #require(list.log(id: CTFixtures.testLogID))
        #expect(log.operatorName == "Example")
        #expect(log.state == .usable(Date(timeIntervalSince1970: 1_577_836_800)))
        #expect(!log.isTiled)
        let tiledLog = try #require(list.log(id: tiled.logID))
        #expect(tiledLog.isTiled)
        #expect(tiledLog.name == "Tiled")
        #expect(tiledLog.state == .retired(Date(timeIntervalSince1970: 1_735_689_600)))
        #expect(tiledLog.temporalInterval == Date(timeIntervalSince1970: 1_735_689_600)..<Date(timeIntervalSince1970: 1_751_328_000))
    }

    @Test func everyStateOfTheSchemaIsRead() throws {
        for name in ["pending", "qualified", "usable", "readonly", "retired", "rejected"] {
            let log = #"{"log_id": "\#(Self.id)", "key": "\#(Self.key)", "state": {"\#(name)": {"timestamp": "2020-01-01T00:00:00Z"}}}"#
            #expect(try CTLogList(json: Self.document(log: log)).log(id: CTFixtures.testLogID)?.state?.name == name)
        }
    }

    @Test(arguments: [
        (#"{"log_id": "\#(id)"}"#, #"log_list.json:8: operators[0].logs[0]: missing member "key""#),
        (#"{"log_id": "\#(id)", "key": "AAAA"}"#, "log_list.json:8: operators[0].logs[0].key: not a DER SubjectPublicKeyInfo"),
        (#"{"log_id": "\#(id)", "key": "not base64!"}"#, "log_list.json:8: operators[0].logs[0].key: not base64"),
        (#"{"log_id": "AAAA", "key": "\#(key)"}"#, "log_list.json:8: operators[0].logs[0].log_id: is not the SHA-256 of the log's key"),
        (#"{"log_id": "\#(id)", "key": "\#(key)", "state": {}}"#, "log_list.json:8: operators[0].logs[0].state: a log has exactly one state, found 0"),
        (#"{"log_id": "\#(id)", "key": "\#(key)", "state": {"usable": {}, "retired": {}}}"#, "a log has exactly one state, found 2"),
        (#"{"log_id": "\#(id)", "key": "\#(key)", "state": {"frozen": {"timestamp": "2020-01-01T00:00:00Z"}}}"#, "unknown state"),
        (#"{"log_id": "\#(id)", "key": "\#(key)", "state": {"usable": {"timestamp": "yesterday"}}}"#, #"operators[0].logs[0].state["usable"].timestamp: not an ISO 8601"#),
        (#"{"log_id": "\#(id)", "key": "\#(key)", "temporal_interval": {"start_inclusive": "2026-01-01T00:00:00Z", "end_exclusive": "2025-01-01T00:00:00Z"}}"#, "starts at or after its end"),
        (#"{"log_id": "\#(id)", "key": "\#(key)"}, {"log_id": "\#(id)", "key": "\#(key)"}"#, #"the log ID \#(id) is listed twice (first at operators[0].logs[0])"#),
        (#"{"log_id": 7, "key": "\#(key)"}"#, "operators[0].logs[0].log_id: expected a string, found the number 7"),
    ])
    func malformedLogsAreRefusedNamingTheFileLineAndMember(log: String, expected: String) throws {
        let error = try #require(throws: TrustError.self) { try CTLogList(json: Self.document(log: log)) }
        #expect(error.code == .invalidPolicyFile)
        #expect(error.reason.contains(expected), "\(error.reason)")
    }

    @Test(arguments: [
        ("MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAE77Nr8SbEeKbJi/Y+onh6jKHEpuwP8EQw7svEg1U21r+mawCSQwYVNiTtHKzS5tnEHo4J/uW7v2lUm+UFCLAl6njdGq/CkeGEkq1u7K5kUwFTPpCMAvMHZIOyL6YV1lAP", "an ECDSA log key must be on P-256"),
        ("MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCm1jJX7lEtQoiXob5PDepYVpQ1By4JUSi3y3L/3gMc40okFrhy854evGAJyPk6T3quQ5FIH9hTErQvQy14xrAhxj/vDLysCZDgziDEiRo83QqXxOFIXq5ZU06+GE+Q+tsrUzEKpfIv4ZxUbPs093z9hiTRZFEoZMN2SrYiCLhoSQIDAQAB", "an RSA log key must have at least 2,048 bits"),
    ])
    func aLogKeyOtherThanP256OrStrongRSAIsRefused(key: String, expected: String) throws {
        let id = Data(sha256([UInt8](Data(base64Encoded: key)!))).base64EncodedString()
        let log = #"{"log_id": "\#(id)", "key": "\#(key)"}"#
        let error = try #require(throws: TrustError.self) { try CTLogList(json: Self.document(log: log)) }
        #expect(error.reason.contains("operators[0].logs[0].key: " + expected), "\(error.reason)")
    }

    @Test func theTopLevelNeedsItsTimestampAndOperators() throws {
        for (json, expected) in [
            (#"{"operators": []}"#, #"log_list.json:1: missing member "log_list_timestamp""#),
            (#"{"log_list_timestamp": "2025-06-01T00:00:00Z"}"#, #"log_list.json:1: missing member "operators""#),
            (#"{"log_list_timestamp": "2025-06-01T00:00:00Z", "operators": [{"logs": []}]}"#, #"operators[0]: missing member "name""#),
            ("[", "log_list.json:1: invalid JSON"),
        ] {
            let error = try #require(throws: TrustError.self) { try CTLogList(json: Array(json.utf8)) }
            #expect(error.reason.contains(expected), "\(error.reason)")
        }
    }

    @Test func aDetachedSignatureIsCheckedBeforeTheListIsRead() throws {
        let json = Self.document()
        let signer = try SignaturePrivateKey.generate(.rsa)
        let signature = try signer.signature(for: json, algorithm: .rsaPKCS1v15SHA256)
        #expect(try CTLogList(json: json, signature: signature, key: signer.publicKey).logs.count == 1)
        var tampered = json
        tampered[tampered.count - 3] = UInt8(ascii: " ")
        let error = try #require(throws: TrustError.self) { try CTLogList(json: tampered, signature: signature, key: signer.publicKey) }
        #expect(error.code == .invalidPolicyFile)
        #expect(error.reason.contains("detached signature does not verify"))
        let other = try SignaturePrivateKey.generate(.ecdsaP256)
        #expect(throws: TrustError.invalidPolicyFile) { try CTLogList(json: json, signature: signature, key: other.publicKey) }
    }

    @Test func theFixtureListNamesTheTestLog() throws {
        let list = try CTFixtures.logList()
        #expect(list.log(id: CTFixtures.testLogID)?.operatorName == "Certificate Transparency test")
    }

    private func sha256(_ bytes: [UInt8]) -> [UInt8] {
        CTLogList.Log(name: "", key: bytes, operatorName: "", state: nil).id
    }
}
