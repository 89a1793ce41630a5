public import Foundation
public import Logging

/// The per-host trust configuration of a ``ServerTrustManager``, read from a JSON file.
///
/// Code stays the primary way to configure pinning; a policy file suits configuration that is
/// shipped, reviewed and audited separately (`servertrust audit --policy FILE`):
///
/// ```json
/// {
///   "version": 1,
///   "reportURIs": ["https://reports.example.net/pins"],
///   "hosts": {
///     "api.example.com": {
///       "pins": [
///         { "pin": "sha256/…", "label": "2026 key" },
///         { "pin": "sha256/…", "label": "backup, offline", "notAfter": "2028-01-01T00:00:00Z" }
///       ],
///       "expiration": "2027-12-31T00:00:00Z",
///       "expiryBehaviour": "failClosed",
///       "canary": { "pins": [{ "pin": "sha256/…", "label": "2027 key" }], "minimumPinCount": 1 },
///       "revocation": { "methods": "preferOCSP", "requirePositiveResponse": false }
///     },
///     "**.cdn.example.com": { "mode": "informational", "pins": [ … ] }
///   }
/// }
/// ```
///
/// Per host (a ``HostPattern``): `pins` (objects with `pin`, optional `label` and `notAfter`),
/// `expiration`, `expiryBehaviour` (`failClosed` or `fallBackToDefaultValidation`),
/// `warningDays`, `minimumPinCount` (as ``PinSet``); `mode` (`enforced`, the default, or
/// `informational`); `canary` (a pin set trialled beside the policy); `revocation` (`methods`:
/// `preferOCSP`, `preferCRL`, `ocsp`, `crl`; `requirePositiveResponse`, `networkAccessDisabled`,
/// `scope`: `leafOnly` or `wholeChain`; `timeBudgetSeconds`); `reportURIs`;
/// `minimumTLSVersion` (`"1.2"`, the default, or `"1.3"`); `keyExchange` (`"any"`, the default,
/// or `"postQuantum"`, refused on an OpenSSL older than 3.5); `signedResponses` (`mode`:
/// `enforced`, `informational` or `disabled`; `scheme`: `v1`, the default, `rfc9421` or
/// `either`; for v1, `roots`: base64 root keys as `servertrust keys` prints them; for RFC 9421,
/// `keys`: a JWKS object (as `jwks.json`), or none to use the key set a trust update delivers
/// beside the policy; optional `freshnessSeconds` (v1's window, RFC 9421's maximum age) and
/// `clockSkewSeconds`). A client identity is not
/// policy (it holds a private key) and is set in code (``HostPolicy/clientIdentity``). At the top level:
/// `version` (1), `hosts`, and optionally `reportURIs`, `allHostsMustBeEvaluated`
/// (default `true`) and `expires` (a date-time, read by trust updates: ``expires``).
/// docs/POLICY_FILE.md in the repository is the reference: every field with its type, default,
/// range and errors, and a complete example that the tests parse.
///
/// Each host becomes one ``HostPolicy`` (``Host/policy``), one to one, whose evaluator the
/// manager compiles (``HostPolicy/makeEvaluator(logger:)``): pins → ``PinSetTrustEvaluator``,
/// none → default validation; with `revocation`, a ``RevocationTrustEvaluator`` after it;
/// `informational` trials all of that beside enforced default validation; `canary` wraps the
/// result in a ``CanaryTrustEvaluator``.
///
/// Loading fails closed: any problem — invalid JSON, a duplicate or unknown key, a wrong type,
/// a malformed pin, date or pattern, a pin set the ``PinSet`` rules refuse — throws
/// `TrustError.Code.invalidPolicyFile` whose reason names the file, line and field:
/// `policy.json:14: hosts["api.example.com"].pins[1].pin: not a sha256/ pin: …`.
public struct TrustPolicyFile: Sendable {
    /// One host's entry, as read: its pattern and the ``ServerTrust/HostPolicy`` it maps onto.
    public struct Host: Sendable {
        public let pattern: HostPattern
        /// The host's policy, as the manager holds it for ``pattern``, and what a trust update's
        /// floor check compares.
        public let policy: ServerTrust.HostPolicy
        /// The line of the host's key in the file.
        public let line: Int
    }

    /// The hosts, in file order.
    public let hosts: [Host]
    /// Report URIs of every host without its own.
    public let reportURIs: [URL]
    public let allHostsMustBeEvaluated: Bool
    /// When the policy as a whole stops being valid, or nil; read by trust updates
    /// (ServerTrustUpdates), which stop applying a delivered policy after it.
    public let expires: Date?
    /// The format version this library reads (`version`): a file with a higher one is refused.
    public static let formatVersion = 1
    /// A manager holding every host's evaluator.
    public let manager: ServerTrustManager

    /// Reads and validates `url`; errors name its last path component.
    ///
    /// - Parameters:
    ///   - url: the policy file.
    ///   - logger: where the pin-set evaluators log expiry warnings.
    ///   - certificateTransparencyLogs: the CT log list hosts with `"certificateTransparency"` are
    ///     checked against; default none (such a host is an error).
    public init(
        contentsOf url: URL, logger: Logger = TrustLogging.defaultLogger, certificateTransparencyLogs: CertificateTransparencyLogs? = nil
    ) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw TrustError(.unreadableInput, "Cannot read the policy file \(url.path): \(error.localizedDescription)")
        }
        try self.init(data: Array(data), fileName: url.lastPathComponent, logger: logger, certificateTransparencyLogs: certificateTransparencyLogs)
    }

    /// Reads and validates a policy.
    /// - Parameters:
    ///   - data: the JSON text, UTF-8.
    ///   - fileName: how errors name the file. Default `policy.json`.
    ///   - logger: where the pin-set evaluators log expiry warnings.
    ///   - signingKeys: the response-signing key set an RFC 9421 host without inline `keys` reads
    ///     at each verification (a trust update's delivered `jwks.json`); nil: such a host is an
    ///     error.
    ///   - certificateTransparencyLogs: the CT log list hosts with `"certificateTransparency"` are
    ///     checked against (the manager's); default none, and such a host is then an error.
    public init(
        data: [UInt8], fileName: String = "policy.json", logger: Logger = TrustLogging.defaultLogger,
        signingKeys: (@Sendable () -> SigningKeySet)? = nil, certificateTransparencyLogs: CertificateTransparencyLogs? = nil
    ) throws {
        let reader = PolicyFileReader(fileName: fileName)
        let document: LocatedJSON
        do {
            document = try LocatedJSON.parse(data)
        } catch {
            throw reader.error(error.line, "", error.message)
        }
        let root = PolicyFileReader.Field(node: document, path: "", line: document.line)
        let fields = try reader.object(root, allowed: ["version", "hosts", "reportURIs", "allHostsMustBeEvaluated", "expires"])
        guard let version = fields["version"] else { throw reader.error(root, "missing field \"version\" (1)") }
        guard try reader.integer(version, in: 0...Int.max) == 1 else {
            throw reader.error(version, "unsupported version; this library reads version 1")
        }
        reportURIs = try fields["reportURIs"].map { try reader.array($0).map(reader.reportURI) } ?? []
        allHostsMustBeEvaluated = try fields["allHostsMustBeEvaluated"].map(reader.bool) ?? true
        expires = try fields["expires"].map(reader.date)
        guard let hostsField = fields["hosts"] else { throw reader.error(root, "missing field \"hosts\"") }

        // The patterns are checked by the registry's own rule, in file order, so the first
        // problem is reported at its own key.
        let entries = try reader.entries(hostsField)
        let fieldsByKey = Dictionary(entries.map { ($0.key, $0.field) }) { first, _ in first }
        do {
            try HostPatternTable.validate(entries.map(\.key))
        } catch {
            let problem = error.problems[0]
            let field = fieldsByKey[problem.text]!
            switch problem.kind {
            case .invalid(let error): throw reader.error(field, error.reason)
            case .duplicate(let first, _): throw reader.error(field, "the same pattern as \(first.debugDescription) after normalisation; keep one")
            }
        }
        let hosts = try entries.map { key, field in try Self.host(try HostPattern(key), field, reader, logger: logger, signingKeys: signingKeys) }
        if hosts.isEmpty, allHostsMustBeEvaluated {
            throw reader.error(hostsField, "no hosts, and allHostsMustBeEvaluated is true: every host would be refused")
        }
        self.hosts = hosts
        do {
            manager = try ServerTrustManager(
                policies: Dictionary(uniqueKeysWithValues: hosts.map { ($0.pattern, $0.policy) }),
                allHostsMustBeEvaluated: allHostsMustBeEvaluated, certificateTransparencyLogs: certificateTransparencyLogs, logger: logger)
        } catch {
            throw reader.error(hostsField, error.reason)
        }
    }

    private static let hostFields = [
        "mode", "pins", "expiration", "expiryBehaviour", "warningDays", "minimumPinCount", "canary", "revocation", "reportURIs",
        "minimumTLSVersion", "keyExchange", "signedResponses", "certificateTransparency",
    ]
    private static let pinSetFields = ["pins", "expiration", "expiryBehaviour", "warningDays", "minimumPinCount"]

    private static func host(
        _ pattern: HostPattern, _ field: PolicyFileReader.Field, _ reader: PolicyFileReader, logger: Logger,
        signingKeys: (@Sendable () -> SigningKeySet)?
    ) throws -> Host {
        let fields = try reader.object(field, allowed: hostFields)
        let mode = try fields["mode"].map { EnforcementMode(rawValue: try reader.choice($0, ["enforced", "informational"]))! } ?? .enforced
        let pinSet = try fields["pins"] != nil ? pinSet(fields, in: field, reader) : nil
        if pinSet == nil, let stray = pinSetFields.compactMap({ fields[$0] }).first {
            throw reader.error(stray, "applies to a pin set, and this host has no \"pins\"")
        }
        let canary = try fields["canary"].map { canaryField in
            let canaryFields = try reader.object(canaryField, allowed: pinSetFields)
            guard canaryFields["pins"] != nil else { throw reader.error(canaryField, "missing field \"pins\"") }
            return try Self.pinSet(canaryFields, in: canaryField, reader)
        }
        let revocation = try fields["revocation"].map { try revocationOptions($0, reader) }
        let reportURIs = try fields["reportURIs"].map { try reader.array($0).map(reader.reportURI) } ?? []
        if mode == .informational, pinSet == nil, revocation == nil {
            throw reader.error(fields["mode"]!, "informational mode trials pins or revocation, and this host has neither")
        }

        let minimumTLSVersion = try fields["minimumTLSVersion"].map {
            try reader.choice($0, ["1.2", "1.3"]) == "1.3" ? TLSProtocolVersion.tls13 : .tls12
        } ?? .tls12
        let keyExchange = try fields["keyExchange"].map { KeyExchangeRequirement(rawValue: try reader.choice($0, ["any", "postQuantum"]))! } ?? .any
        if let field = fields["keyExchange"], let problem = keyExchange.unavailability { throw reader.error(field, problem) }
        let signedResponses = try fields["signedResponses"].map { try signedResponsePolicy($0, reader, signingKeys: signingKeys) }
        let certificateTransparency = try fields["certificateTransparency"].map { try certificateTransparencyRequirement($0, reader) }
        let policy = ServerTrust.HostPolicy(
            pins: pinSet, revocation: revocation, mode: ServerTrust.HostPolicy.Enforcement(mode), canary: canary,
            minimumTLSVersion: minimumTLSVersion, signedResponses: signedResponses, reportURIs: reportURIs, keyExchange: keyExchange,
            certificateTransparency: certificateTransparency)
        do {
            _ = try policy.makeEvaluator(logger: logger)
        } catch {
            throw reader.error(field, error.reason)
        }
        return Host(pattern: pattern, policy: policy, line: field.line)
    }

    /// `certificateTransparency`: `{"mode": "enforced" | "reportOnly", "staleLogList": "failOpen" | "failClosed",
    /// "maximumLogListAgeDays": 70}`; `mode` is required, the others default as shown.
    private static func certificateTransparencyRequirement(
        _ field: PolicyFileReader.Field, _ reader: PolicyFileReader
    ) throws -> CertificateTransparencyRequirement {
        let fields = try reader.object(field, allowed: ["mode", "staleLogList", "maximumLogListAgeDays"])
        guard let modeField = fields["mode"] else { throw reader.error(field, "missing field \"mode\" (\"enforced\" or \"reportOnly\")") }
        let mode = CertificateTransparencyRequirement.Mode(rawValue: try reader.choice(modeField, ["enforced", "reportOnly"]))!
        let stale = try fields["staleLogList"].map {
            CertificateTransparencyRequirement.StaleLogListBehaviour(rawValue: try reader.choice($0, ["failOpen", "failClosed"]))!
        } ?? .failOpen
        let days = try fields["maximumLogListAgeDays"].map { try reader.integer($0, in: 1...3_650) } ?? 70
        return CertificateTransparencyRequirement(mode: mode, staleLogList: stale, maximumLogListAge: TimeInterval(days) * 86_400)
    }

    /// `signedResponses`: `{"mode": "enforced" | "informational" | "disabled", "scheme": "v1" | "rfc9421" | "either",
    /// "roots": ["<base64 root key>", …], "keys": {JWKS}, "freshnessSeconds": 300, "clockSkewSeconds": 60}`;
    /// roots as `servertrust keys` prints them.
    private static func signedResponsePolicy(
        _ field: PolicyFileReader.Field, _ reader: PolicyFileReader, signingKeys: (@Sendable () -> SigningKeySet)?
    ) throws -> SignedResponsePolicy {
        let fields = try reader.object(field, allowed: ["mode", "scheme", "roots", "keys", "freshnessSeconds", "clockSkewSeconds"])
        guard let modeField = fields["mode"] else { throw reader.error(field, "missing field \"mode\"") }
        let modes: [String: SignedResponsePolicy.Mode] = ["enforced": .enforced, "informational": .informational, "disabled": .disabled]
        let mode = modes[try reader.choice(modeField, ["enforced", "informational", "disabled"])]!
        let scheme = try fields["scheme"].map { try reader.choice($0, ["v1", "rfc9421", "either"]) } ?? "v1"
        var roots: [SignedResponseRoot] = []
        for element in try fields["roots"].map(reader.array) ?? [] {
            do {
                roots.append(try SignedResponseRoot(base64: try reader.string(element)))
            } catch let error as ResponseSignatureError {
                throw reader.error(element, "not a signed-response root key: \(error.reason)")
            }
        }
        if scheme == "rfc9421", let stray = fields["roots"] { throw reader.error(stray, "v1 root keys, and the scheme is rfc9421 (its keys are \"keys\")") }
        if scheme == "v1", let stray = fields["keys"] { throw reader.error(stray, "an RFC 9421 key set, and the scheme is v1 (set \"scheme\": \"rfc9421\" or \"either\")") }
        if mode != .disabled, scheme != "rfc9421", roots.isEmpty {
            throw reader.error(field, "\"roots\" must name at least one key unless the mode is disabled")
        }
        let window: Duration = .seconds(try fields["freshnessSeconds"].map { try reader.integer($0, in: 1...86_400) } ?? 300)
        let skew: Duration = .seconds(try fields["clockSkewSeconds"].map { try reader.integer($0, in: 0...3_600) } ?? 60)
        guard scheme != "v1" else { return SignedResponsePolicy(mode: mode, roots: roots, freshnessWindow: window, clockSkewAllowance: skew) }
        let keyProvider: @Sendable () -> SigningKeySet
        if let keysField = fields["keys"] {
            let keys = try SigningKeySet(field: keysField, reader: reader)
            keyProvider = { keys }
        } else if let signingKeys {
            keyProvider = signingKeys
        } else {
            throw reader.error(
                field, "an RFC 9421 policy needs \"keys\" (a JWKS), or a key set delivered with it by a trust update (jwks.json)")
        }
        let messageSignatures = MessageSignaturePolicy(keyProvider: keyProvider, maximumAge: window, clockSkewAllowance: skew)
        return scheme == "rfc9421"
            ? SignedResponsePolicy(mode: mode, messageSignatures: messageSignatures)
            : SignedResponsePolicy(migrating: mode, roots: roots, messageSignatures: messageSignatures, freshnessWindow: window, clockSkewAllowance: skew)
    }

    /// A ``PinSet`` from `pins` and its sibling fields; the set's own rules (two pins, no
    /// duplicates) are reported at the `pins` field.
    private static func pinSet(
        _ fields: [String: PolicyFileReader.Field], in parent: PolicyFileReader.Field, _ reader: PolicyFileReader
    ) throws -> PinSet {
        let pinsField = fields["pins"]!
        var entries: [PinSet.Entry] = []
        for element in try reader.array(pinsField) {
            let entry = try reader.object(element, allowed: ["pin", "label", "notAfter"])
            guard let pinField = entry["pin"] else { throw reader.error(element, "missing field \"pin\"") }
            let pin: Pin
            do {
                pin = try Pin(try reader.string(pinField))
            } catch let error as TrustError where error.code != .invalidPolicyFile {
                throw reader.error(pinField, "not a sha256/ pin: \(error.reason)")
            }
            entries.append(PinSet.Entry(
                pin, label: try entry["label"].map(reader.string) ?? "", notAfter: try entry["notAfter"].map(reader.date)))
        }
        let behaviour = try fields["expiryBehaviour"].map {
            PinSet.ExpiryBehaviour(rawValue: try reader.choice($0, ["failClosed", "fallBackToDefaultValidation"]))!
        }
        do {
            return try PinSet(
                entries, expiration: try fields["expiration"].map(reader.date), expiryBehaviour: behaviour ?? .failClosed,
                warningDays: try fields["warningDays"].map { try reader.integer($0, in: 0...3650) } ?? 30,
                minimumPinCount: try fields["minimumPinCount"].map { try reader.integer($0, in: 1...100) } ?? 2)
        } catch let error as TrustError where error.code != .invalidPolicyFile {
            throw reader.error(pinsField, error.reason)
        }
    }

    private static func revocationOptions(_ field: PolicyFileReader.Field, _ reader: PolicyFileReader) throws -> RevocationOptions {
        let fields = try reader.object(
            field,
            allowed: ["methods", "requirePositiveResponse", "networkAccessDisabled", "scope", "timeBudgetSeconds", "shortLivedCertificateValidityDays"])
        var options = RevocationOptions()
        if let methods = fields["methods"] {
            let methodsByName: [String: RevocationOptions.Methods] = ["preferOCSP": .preferOCSP, "preferCRL": .preferCRL, "ocsp": .ocsp, "crl": .crl]
            options.methods = methodsByName[try reader.choice(methods, ["preferOCSP", "preferCRL", "ocsp", "crl"])]!
        }
        options.requirePositiveResponse = try fields["requirePositiveResponse"].map(reader.bool) ?? false
        options.networkAccessDisabled = try fields["networkAccessDisabled"].map(reader.bool) ?? false
        if let scope = fields["scope"] {
            options.scope = try reader.choice(scope, ["leafOnly", "wholeChain"]) == "leafOnly" ? .leafOnly : .wholeChain
        }
        if let budget = fields["timeBudgetSeconds"] {
            options.timeBudget = .seconds(try reader.integer(budget, in: 1...60))
        }
        if let days = fields["shortLivedCertificateValidityDays"] {
            // 0 checks every leaf; at most 10 days, the Baseline Requirements' limit before March 2026.
            let value = try reader.integer(days, in: 0...10)
            options.shortLivedCertificateValidity = value == 0 ? nil : TimeInterval(value) * 86_400
        }
        return options
    }
}
