internal import COpenSSL
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
/// - an issuer and serial number: one certificate is refused. The issuer's distinguished name
///   is read when the list is and compared by its attributes, RFC 5280's way (case and white
///   space folded), not as text: RFC 2253 as `servertrust inspect` prints it
///   (`CN=Example CA,O=Example,C=US`), or as `openssl x509 -issuer -noout` prints it
///   (`issuer=C = US, O = Example, CN = Example CA`, any `-nameopt` of `RFC2253`, `oneline`,
///   `multiline`, `compat`); a name that cannot be read is refused, naming the field. The serial
///   number in hexadecimal, any case, `:` separators, leading zeros and a `serial=` or `0x`
///   prefix ignored.
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
        /// The issuer's distinguished name as the entry wrote it (an `issuer=` prefix removed).
        public let issuer: String
        /// The serial number, upper-case hexadecimal without leading zeros or separators.
        public let serial: String
        /// ``issuer`` read, as a certificate's issuer is compared with it.
        let issuerName: DistinguishedName

        /// - Parameters:
        ///   - issuer: the issuer's distinguished name, RFC 2253 or OpenSSL's one-line form
        ///     (``KeyDenyList`` lists the forms).
        ///   - serial: the serial number in hexadecimal.
        /// - Throws: `TrustError` `.invalidConfiguration` for an issuer that is not a
        ///   distinguished name (the message shows the accepted forms) or a serial that is not
        ///   hexadecimal.
        public init(issuer: String, serial: String) throws {
            (self.issuer, issuerName) = try Self.readIssuer(issuer)
            self.serial = try Self.readSerial(serial)
        }

        private init(issuer: (text: String, name: DistinguishedName), serial: String) {
            (self.issuer, issuerName) = issuer
            self.serial = serial
        }

        /// The issuer as written, without an `issuer=` prefix, and read.
        fileprivate static func readIssuer(_ issuer: String) throws -> (text: String, name: DistinguishedName) {
            var text = Substring(issuer).drop { $0.isWhitespace }
            if text.lowercased().hasPrefix("issuer") {
                let rest = text.dropFirst("issuer".count).drop { $0 == " " }
                if rest.first == "=" { text = rest.dropFirst() }
            }
            do {
                return (text.trimmingCharacters(in: .whitespacesAndNewlines), try DistinguishedName(parsing: String(text)))
            } catch {
                throw TrustError(
                    .invalidConfiguration,
                    "The deny-list issuer \(issuer.debugDescription) is not a distinguished name: \(error.reason). Write it as RFC 2253 "
                        + "(\"CN=Example CA,O=Example,C=US\", as servertrust inspect prints it) or as openssl x509 -issuer -noout prints it "
                        + "(\"issuer=C = US, O = Example, CN = Example CA\").")
            }
        }

        /// The serial as upper-case hexadecimal without separators, prefix or leading zeros.
        fileprivate static func readSerial(_ serial: String) throws -> String {
            var digits = Substring(serial.trimmingCharacters(in: .whitespaces))
            if digits.lowercased().hasPrefix("serial=") { digits = digits.dropFirst("serial=".count) }
            if digits.lowercased().hasPrefix("0x") { digits = digits.dropFirst(2) }
            let hex = digits.uppercased().filter { $0 != ":" }
            guard !hex.isEmpty, hex.allSatisfy({ $0.isHexDigit }) else {
                throw TrustError(
                    .invalidConfiguration,
                    "The deny-list serial \(serial.debugDescription) is not hexadecimal (write it as openssl x509 -serial -noout prints it, \"serial=0A1B\", or as \"0A:1B\").")
            }
            let trimmed = hex.drop { $0 == "0" }
            return trimmed.isEmpty ? "0" : String(trimmed)
        }

        /// An entry of the JSON form, each problem named at its own field.
        fileprivate static func read(issuer: PolicyFileReader.Field, serial: PolicyFileReader.Field, reader: PolicyFileReader) throws -> IssuerAndSerial {
            let issuerText = try reader.string(issuer), serialText = try reader.string(serial)
            let readIssuer: (text: String, name: DistinguishedName)
            do { readIssuer = try Self.readIssuer(issuerText) } catch let error as TrustError { throw reader.error(issuer, error.reason) }
            do {
                return IssuerAndSerial(issuer: readIssuer, serial: try Self.readSerial(serialText))
            } catch let error as TrustError {
                throw reader.error(serial, error.reason)
            }
        }

        public var description: String { "\(issuer) serial \(serial)" }
    }

    /// Refused keys, by SPKI hash.
    public let keys: Set<Pin>
    /// Refused certificates, by issuer and serial number.
    public let certificates: Set<IssuerAndSerial>
    /// ``certificates`` by serial number: a handshake looks each certificate's serial up once,
    /// whatever the list's length (a scan grew with every entry), and reads a certificate's
    /// issuer only when its serial is listed.
    // Fast path: docs/PERFORMANCE.md#fast-paths, "Deny-list indexed by serial".
    private let entriesBySerial: [String: [IssuerAndSerial]]

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
        entriesBySerial = Dictionary(grouping: certificates, by: \.serial)
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
                if let entries = entriesBySerial[serial], let name = X509_get_issuer_name(certificate.x509) {
                    let issuer = DistinguishedName(x509Name: name)
                    if let entry = entries.first(where: { $0.issuerName.matches(issuer) }) { return (certificate, entry.description) }
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
            certificates.insert(try IssuerAndSerial.read(issuer: issuer, serial: serial, reader: reader))
        }
        self.init(keys: keys, certificates: certificates)
    }
}
