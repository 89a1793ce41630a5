public import Foundation
internal import COpenSSL

/// A list of Certificate Transparency logs in the v3 JSON schema (the schema of Google's
/// `log_list.json`): each log's key, ID, operator, state and temporal interval, and when the
/// list was made.
///
/// Google's list is maintained for Chrome and its terms do not support enforcement by others,
/// so an application supplies its own list (or receives one as the trust-update target
/// `ct_log_list.json`) and decides which logs to trust. Only the logs listed here count; an
/// SCT from any other log is ignored.
///
/// Parsing is strict about what it uses: every log needs a base64 ID that is the SHA-256 of its
/// key, a key OpenSSL reads (ECDSA P-256 or RSA of at least 2,048 bits, RFC 6962 §2.1.4), at
/// most one state, and no two logs may share an ID. Members this library does not use
/// (`url`, `mmd`, `email`, `final_tree_head`…) are allowed, so a newer list still reads. Every
/// error names the file, the line and the member: `log_list.json:12:
/// operators[0].logs[1].log_id: …`.
public struct CTLogList: Sendable {
    /// A log's state (v3 `state`), each with the time it entered it.
    public enum State: Hashable, Sendable, CustomStringConvertible {
        case pending(Date)
        case qualified(Date)
        case usable(Date)
        case readOnly(Date)
        /// Retired: SCTs it issued before this time still count for embedded SCTs.
        case retired(Date)
        case rejected(Date)

        /// When the log entered the state.
        public var since: Date {
            switch self {
            case .pending(let date), .qualified(let date), .usable(let date), .readOnly(let date), .retired(let date), .rejected(let date):
                date
            }
        }

        /// The state's name in the v3 schema.
        public var name: String {
            switch self {
            case .pending: "pending"
            case .qualified: "qualified"
            case .usable: "usable"
            case .readOnly: "readonly"
            case .retired: "retired"
            case .rejected: "rejected"
            }
        }

        public var description: String { "\(name) since \(since.formatted(.iso8601))" }
    }

    /// One log.
    public struct Log: Hashable, Sendable, CustomStringConvertible {
        /// The log's description, as `Google 'Argon2026h1'`.
        public let name: String
        /// The SHA-256 of ``key``, 32 bytes: what an SCT names its log by.
        public let id: [UInt8]
        /// The log's public key, SubjectPublicKeyInfo DER.
        public let key: [UInt8]
        /// The operator's name; two logs with the same operator count once for diversity.
        public let operatorName: String
        /// The log's state, or nil when the list gives none (such a log is never counted).
        public let state: State?
        /// The certificates the log accepts, by expiry (`start_inclusive` ..< `end_exclusive`), or nil.
        public let temporalInterval: Range<Date>?
        /// Whether the log is a static-ct-api (tiled) log: listed under `tiled_logs`.
        public let isTiled: Bool

        /// A log described in code; its ID is the SHA-256 of `key`.
        ///
        /// - Parameters: the members above; `temporalInterval` default none, `isTiled` default false.
        public init(
            name: String, key: [UInt8], operatorName: String, state: State?, temporalInterval: Range<Date>? = nil,
            isTiled: Bool = false
        ) {
            self.name = name
            self.id = sha256(key)
            self.key = key
            self.operatorName = operatorName
            self.state = state
            self.temporalInterval = temporalInterval
            self.isTiled = isTiled
        }

        /// The log ID in base64, as log lists spell it.
        public var idBase64: String { Data(id).base64EncodedString() }

        /// The state in force at `date`: nil before the log entered its listed state.
        public func state(at date: Date) -> State? {
            guard let state, state.since <= date else { return nil }
            return state
        }

        public var description: String { "\(name) (\(operatorName), \(idBase64))" }
    }

    /// The list's `log_list_timestamp`: its age is measured from here.
    public let timestamp: Date
    /// The list's `version`, if it has one.
    public let version: String?
    /// Every log, keyed by log ID.
    public let logs: [[UInt8]: Log]

    /// The log with this ID, or nil when the list has none.
    public func log(id: [UInt8]) -> Log? { logs[id] }

    /// A list made in code (tests, or logs an application configures itself).
    ///
    /// - Throws: `TrustError.Code.invalidConfiguration` when two logs share an ID.
    public init(timestamp: Date, version: String? = nil, logs: [Log]) throws {
        var byID: [[UInt8]: Log] = [:]
        for log in logs {
            guard byID.updateValue(log, forKey: log.id) == nil else {
                throw TrustError(.invalidConfiguration, "Two logs of the CT log list have the ID \(log.idBase64).")
            }
        }
        self.timestamp = timestamp
        self.version = version
        self.logs = byID
    }

    /// Reads a v3 log list.
    ///
    /// - Parameters:
    ///   - json: the list, UTF-8 JSON.
    ///   - fileName: how errors name the file. Default `log_list.json`.
    /// - Throws: `TrustError.Code.invalidPolicyFile` naming the file, line and member.
    public init(json: [UInt8], fileName: String = "log_list.json") throws {
        let reader = PolicyFileReader(fileName: fileName)
        let document: LocatedJSON
        do {
            document = try LocatedJSON.parse(json)
        } catch {
            throw reader.error(error.line, "", error.message)
        }
        let root = PolicyFileReader.Field(node: document, path: "", line: document.line)
        let fields = try reader.members(root)
        guard let timestampField = fields["log_list_timestamp"] else { throw reader.error(root, "missing member \"log_list_timestamp\"") }
        guard let operatorsField = fields["operators"] else { throw reader.error(root, "missing member \"operators\"") }
        var logs: [Log] = []
        var seen: [[UInt8]: String] = [:]
        for operatorField in try reader.array(operatorsField) {
            let members = try reader.members(operatorField)
            guard let nameField = members["name"] else { throw reader.error(operatorField, "missing member \"name\"") }
            let operatorName = try reader.string(nameField)
            guard !operatorName.isEmpty else { throw reader.error(nameField, "an operator needs a name") }
            for (member, isTiled) in [("logs", false), ("tiled_logs", true)] {
                guard let list = members[member] else { continue }
                for logField in try reader.array(list) {
                    let log = try Self.log(logField, operatorName: operatorName, isTiled: isTiled, reader: reader)
                    if let earlier = seen[log.id] {
                        throw reader.error(logField, "the log ID \(log.idBase64) is listed twice (first at \(earlier))")
                    }
                    seen[log.id] = logField.path
                    logs.append(log)
                }
            }
        }
        try self.init(timestamp: reader.date(timestampField), version: try fields["version"].map(reader.string), logs: logs)
    }

    /// Reads a v3 log list after checking its detached signature (Google signs
    /// `log_list.json` with RSA PKCS #1 v1.5 and SHA-256 in `log_list.sig`).
    ///
    /// - Parameters:
    ///   - json: the list, UTF-8 JSON, exactly the bytes signed.
    ///   - signature: the detached signature.
    ///   - key: the list signer's key: RSA (PKCS #1 v1.5, SHA-256), ECDSA P-256 (SHA-256, DER
    ///     signature) or Ed25519.
    ///   - fileName: how errors name the file. Default `log_list.json`.
    /// - Throws: `TrustError.Code.invalidPolicyFile` when the signature does not verify (before
    ///   anything is parsed), or as ``init(json:fileName:)``.
    public init(json: [UInt8], signature: [UInt8], key: SignaturePublicKey, fileName: String = "log_list.json") throws {
        let algorithm: SignatureAlgorithm =
            switch key.kind {
            case .rsa: .rsaPKCS1v15SHA256
            case .ecdsaP256: .ecdsaP256SHA256
            case .ed25519: .ed25519
            }
        guard key.isValidSignature(signature, for: json, algorithm: algorithm) else {
            throw TrustError(.invalidPolicyFile, "\(fileName): the detached signature does not verify under the log list's key (\(algorithm)).")
        }
        try self.init(json: json, fileName: fileName)
    }

    private static func log(_ field: PolicyFileReader.Field, operatorName: String, isTiled: Bool, reader: PolicyFileReader) throws -> Log {
        let members = try reader.members(field)
        func required(_ name: String) throws -> PolicyFileReader.Field {
            guard let member = members[name] else { throw reader.error(field, "missing member \"\(name)\"") }
            return member
        }
        let keyField = try required("key")
        guard let key = StrictBase64.decode(Array(try reader.string(keyField).utf8)), !key.isEmpty else {
            throw reader.error(keyField, "not base64")
        }
        if let problem = logKeyProblem(key) { throw reader.error(keyField, problem) }
        let idField = try required("log_id")
        guard let id = StrictBase64.decode(Array(try reader.string(idField).utf8)) else { throw reader.error(idField, "not base64") }
        guard id == sha256(key) else {
            throw reader.error(idField, "is not the SHA-256 of the log's key (\(Data(sha256(key)).base64EncodedString()))")
        }
        let name = try members["description"].map(reader.string) ?? Data(id).base64EncodedString()
        var interval: Range<Date>?
        if let intervalField = members["temporal_interval"] {
            let bounds = try reader.members(intervalField)
            guard let start = bounds["start_inclusive"], let end = bounds["end_exclusive"] else {
                throw reader.error(intervalField, "needs \"start_inclusive\" and \"end_exclusive\"")
            }
            let lower = try reader.date(start)
            let upper = try reader.date(end)
            guard lower < upper else { throw reader.error(intervalField, "starts at or after its end") }
            interval = lower..<upper
        }
        return Log(
            name: name, key: key, operatorName: operatorName, state: try members["state"].map { try state($0, reader: reader) },
            temporalInterval: interval, isTiled: isTiled)
    }

    private static func state(_ field: PolicyFileReader.Field, reader: PolicyFileReader) throws -> State {
        let members = try reader.entries(field)
        guard members.count == 1, let (name, body) = members.first else {
            throw reader.error(field, "a log has exactly one state, found \(members.count)")
        }
        let names = ["pending", "qualified", "usable", "readonly", "retired", "rejected"]
        guard names.contains(name) else { throw reader.error(body, "unknown state; expected one of \(names.joined(separator: ", "))") }
        guard let timestampField = try reader.members(body)["timestamp"] else { throw reader.error(body, "missing member \"timestamp\"") }
        let since = try reader.date(timestampField)
        switch name {
        case "pending": return .pending(since)
        case "qualified": return .qualified(since)
        case "usable": return .usable(since)
        case "readonly": return .readOnly(since)
        case "retired": return .retired(since)
        default: return .rejected(since)
        }
    }

    /// Why OpenSSL cannot use `key` as a log key (RFC 6962 §2.1.4: ECDSA P-256 or RSA of at
    /// least 2,048 bits), or nil.
    static func logKeyProblem(_ key: [UInt8]) -> String? {
        let parsed: OpaquePointer? = key.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            let pkey = d2i_PUBKEY(nil, &cursor, buffer.count)
            return cursor == buffer.baseAddress.map({ $0 + buffer.count }) ? pkey : { EVP_PKEY_free(pkey); return nil }()
        }
        guard let pkey = parsed else {
            clearOpenSSLErrors()
            return "not a DER SubjectPublicKeyInfo"
        }
        defer { EVP_PKEY_free(pkey) }
        switch EVP_PKEY_get_base_id(pkey) {
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            guard EVP_PKEY_get_group_name(pkey, &name, name.count, nil) == 1,
                String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
            else { return "an ECDSA log key must be on P-256" }
            return nil
        case EVP_PKEY_RSA:
            return EVP_PKEY_get_bits(pkey) >= 2048 ? nil : "an RSA log key must have at least 2,048 bits"
        default:
            return "a log key is ECDSA P-256 or RSA (RFC 6962 §2.1.4)"
        }
    }
}
