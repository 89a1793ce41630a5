import Foundation

/// Keys and certificates no evaluation may accept: a kill switch for a compromised key or a
/// mis-issued certificate, checked on every handshake of every client path whatever the host's
/// policy — pinned, default validation, report-only or a request's own evaluator.
///
/// A ``ServerTrustManager`` holds one (``ServerTrustManager/denyList``); every host it resolves
/// carries it (``ResolvedHostPolicy/denyList``) into the one evaluation entry point
/// (``ResolvedHostPolicy/evaluate(_:handshake:in:)``), which refuses a chain any of whose
/// certificates — as presented, and as validated — is listed, with `TrustError.Code.deniedKey`.
/// Trust updates deliver it as a TUF target (`denylist.json`), so an entry reaches every client
/// within one refresh.
///
/// Two kinds of entry:
/// - an SPKI hash (`sha256/<base64>`, the form of every pin): the key is refused in any
///   certificate, leaf, intermediate or root;
/// - an issuer and serial number: one certificate is refused (the issuer's distinguished name
///   as `servertrust inspect` prints it, RFC 2253; the serial number in hexadecimal, any case,
///   `:` separators and leading zeros ignored).
///
/// The JSON form (``init(data:fileName:)``):
///
/// ```json
/// {
///   "version": 1,
///   "spki": ["sha256/…"],
///   "issuerAndSerial": [{ "issuer": "CN=Example Issuing CA,O=Example", "serial": "04:2A:…" }]
/// }
/// ```
public struct KeyDenyList: Sendable, Hashable {
    /// One certificate, by its issuer and serial number.
    public struct IssuerAndSerial: Sendable, Hashable, CustomStringConvertible {
        /// The issuer's distinguished name, RFC 2253 (as `Certificate.issuer`).
        public let issuer: String
        /// The serial number, upper-case hexadecimal without leading zeros or separators.
        public let serial: String

        /// - Throws: `TrustError` `.invalidConfiguration` for an empty issuer or a serial that
        ///   is not hexadecimal.
        public init(issuer: String, serial: String) throws {
            let digits = serial.uppercased().filter { $0 != ":" }
            guard !issuer.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw TrustError(.invalidConfiguration, "A deny-list entry has an empty issuer.")
            }
            guard !digits.isEmpty, digits.allSatisfy({ $0.isHexDigit }) else {
                throw TrustError(.invalidConfiguration, "The deny-list serial \(serial.debugDescription) is not hexadecimal.")
            }
            self.issuer = issuer
            let trimmed = digits.drop { $0 == "0" }
            self.serial = trimmed.isEmpty ? "0" : String(trimmed)
        }

        public var description: String { "\(issuer) serial \(serial)" }
    }

    /// Refused keys, by SPKI hash.
    public let keys: Set<Pin>
    /// Refused certificates, by issuer and serial number.
    public let certificates: Set<IssuerAndSerial>
    /// ``certificates`` by serial number: a handshake looks each certificate's serial up once,
    /// whatever the list's length (a scan cost ≈ 1.4 k instructions per entry and handshake).
    private let issuersBySerial: [String: Set<String>]

    /// An empty list.
    public init() {
        self.init(keys: [], certificates: [])
    }

    /// - Parameters:
    ///   - keys: SPKI hashes no certificate of an accepted chain may carry.
    ///   - certificates: certificates no accepted chain may contain.
    public init(keys: Set<Pin>, certificates: Set<IssuerAndSerial> = []) {
        self.keys = keys
        self.certificates = certificates
        issuersBySerial = Dictionary(grouping: certificates, by: \.serial).mapValues { Set($0.map(\.issuer)) }
    }

    /// Whether the list has no entries (the check then costs nothing).
    public var isEmpty: Bool { keys.isEmpty && certificates.isEmpty }

    /// The first listed certificate of `chain`, with the entry that lists it, or nil.
    public func deniedEntry(in chain: [Certificate]) -> (certificate: Certificate, entry: String)? {
        guard !isEmpty else { return nil }
        for certificate in chain {
            if !keys.isEmpty {
                let pin = certificate.spkiPin
                if keys.contains(pin) { return (certificate, pin.description) }
            }
            if !certificates.isEmpty {
                let trimmed = String(certificate.serialNumber.uppercased().drop { $0 == "0" })
                let serial = trimmed.isEmpty ? "0" : trimmed
                if let issuers = issuersBySerial[serial] {
                    let issuer = certificate.issuer
                    if issuers.contains(issuer) { return (certificate, "\(issuer) serial \(serial)") }
                }
            }
        }
        return nil
    }

    /// Throws `.deniedKey` naming the certificate and the entry when `chain` holds a listed one.
    func check(_ chain: [Certificate], host: String, evaluator: String) throws {
        guard let (certificate, entry) = deniedEntry(in: chain) else { return }
        var evidence = TrustError.Evidence()
        evidence.chain = chain.map { TrustError.CertificateSummary(pin: $0.spkiPin, subject: $0.subject) }
        throw TrustError(
            .deniedKey,
            "The chain of \(host) holds \(certificate.subject) (\(certificate.spkiPin)), which the deny-list refuses (\(entry)).",
            evaluator: evaluator, host: host, evidence: evidence)
    }

    /// Reads the JSON form; problems are `TrustError` `.invalidPolicyFile` naming the file,
    /// line and field, as for a policy file.
    ///
    /// - Parameters:
    ///   - data: UTF-8 JSON.
    ///   - fileName: how errors name the input; default `denylist.json`.
    public init(data: [UInt8], fileName: String = "denylist.json") throws {
        let reader = PolicyFileReader(fileName: fileName)
        let document: LocatedJSON
        do {
            document = try LocatedJSON.parse(data)
        } catch {
            throw reader.error(error.line, "", error.message)
        }
        let root = PolicyFileReader.Field(node: document, path: "", line: document.line)
        let fields = try reader.object(root, allowed: ["version", "spki", "issuerAndSerial"])
        guard let version = fields["version"] else { throw reader.error(root, "missing field \"version\" (1)") }
        guard try reader.integer(version, in: 0...Int.max) == 1 else {
            throw reader.error(version, "unsupported version; this library reads version 1")
        }
        var keys = Set<Pin>()
        for element in try fields["spki"].map(reader.array) ?? [] {
            do {
                keys.insert(try Pin(try reader.string(element)))
            } catch let error as TrustError where error.code != .invalidPolicyFile {
                throw reader.error(element, "not a sha256/ pin: \(error.reason)")
            }
        }
        var certificates = Set<IssuerAndSerial>()
        for element in try fields["issuerAndSerial"].map(reader.array) ?? [] {
            let entry = try reader.object(element, allowed: ["issuer", "serial"])
            guard let issuer = entry["issuer"] else { throw reader.error(element, "missing field \"issuer\"") }
            guard let serial = entry["serial"] else { throw reader.error(element, "missing field \"serial\"") }
            do {
                certificates.insert(try IssuerAndSerial(issuer: try reader.string(issuer), serial: try reader.string(serial)))
            } catch let error as TrustError where error.code != .invalidPolicyFile {
                throw reader.error(element, error.reason)
            }
        }
        self.init(keys: keys, certificates: certificates)
    }
}
