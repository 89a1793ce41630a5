import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// A deny-list's issuer-and-serial entry matches the certificate whatever spelling of its
/// issuer it was copied from — `servertrust inspect`'s RFC 2253, or any of the forms
/// `openssl x509 -issuer` prints — and an issuer or serial that cannot be read is refused,
/// naming its field, never accepted to match nothing.
@Suite struct DenyListIssuerTests {
    /// An issuing CA with a multi-attribute name whose organization needs escaping, and a leaf
    /// it issued with a serial that has a leading zero byte.
    /// Made once, on first use; a failure fails each test that uses them, with its error.
    static let issuerMade = Result { try LabPKI.makeRoot(
        CertificateSpec(
            subject: LabName(attributes: [.init("C", "US"), .init("O", "Example, Inc."), .init("OU", "Trust  Services"), .init("CN", "Example CA")]),
            subjectKey: .ecP256(), isCA: true, extendedKeyUsage: [])) }
    static let leafMade = Result { try issuerMade.get().issueLeaf(dnsNames: ["api.example.com"], serialNumber: "00A1B2C3").certificate }
    /// Another CA whose name differs from the first in the common name only.
    static let otherIssuerMade = Result { try LabPKI.makeRoot(
        CertificateSpec(
            subject: LabName(attributes: [.init("C", "US"), .init("O", "Example, Inc."), .init("OU", "Trust Services"), .init("CN", "Example CA 2")]),
            subjectKey: .ecP256(), isCA: true, extendedKeyUsage: [])) }
    static let otherLeafMade = Result {
        try otherIssuerMade.get().issueLeaf(dnsNames: ["api.example.com"], serialNumber: "00A1B2C3").certificate
    }

    static var issuer: LabCA { get throws { try issuerMade.get() } }
    static var leaf: Certificate { get throws { try leafMade.get() } }
    static var otherIssuer: LabCA { get throws { try otherIssuerMade.get() } }
    static var otherLeaf: Certificate { get throws { try otherLeafMade.get() } }

    static func denies(issuer: String, serial: String, _ certificate: Certificate) throws -> Bool {
        let list = KeyDenyList(keys: [], certificates: [try KeyDenyList.IssuerAndSerial(issuer: issuer, serial: serial)])
        return list.deniedEntry(in: [certificate])?.certificate == certificate
    }

    /// What `openssl x509 -issuer -noout` prints for the leaf, under each `-nameopt` (none: the
    /// tool's default, `oneline` in OpenSSL 3): an entry made from any of them matches the leaf,
    /// and not the leaf of the CA one attribute away.
    @Test(arguments: ["", "RFC2253", "oneline", "multiline", "compat", "oneline,-space_eq", "sep_semi_plus_space", "RFC2253,-esc_msb"])
    func anIssuerCopiedFromOpenSSLMatchesInEveryNameFormat(nameopt: String) throws {
        let path = try LabPKI.writeTemporaryFile(Self.leaf.pemEncoded)
        defer { LabPKI.removeTemporaryFile(path) }
        let option = nameopt.isEmpty ? "" : " -nameopt '\(nameopt)'"
        let issuer = try shell("openssl x509 -in '\(path)' -noout -issuer\(option)")
        let serial = try shell("openssl x509 -in '\(path)' -noout -serial")
        #expect(issuer.hasPrefix("issuer="), "\(issuer)")
        #expect(try Self.denies(issuer: issuer, serial: serial, Self.leaf), "\(issuer) \(serial)")
        #expect(try !Self.denies(issuer: issuer, serial: serial, Self.otherLeaf), "\(issuer) \(serial)")
        // The same through the JSON form a repository publishes (multiline's line ends escaped).
        let document = try JSONSerialization.data(withJSONObject: ["version": 1, "issuerAndSerial": [["issuer": issuer, "serial": serial]]])
        let list = try KeyDenyList(data: Array(document))
        #expect(try list.deniedEntry(in: [Self.otherLeaf, Self.leaf])?.certificate == Self.leaf)
    }

    /// Spellings written by hand or by other tools: RFC 2253 with spaces after the separators
    /// (Java), another case, long names and OIDs, quoted values, hexadecimal escapes.
    @Test(arguments: [
        "CN=Example CA,OU=Trust  Services,O=Example\\, Inc.,C=US",
        "CN=Example CA, OU=Trust Services, O=Example\\, Inc., C=US",
        "cn=example ca,ou=trust services,o=example\\, inc.,c=us",
        "commonName=Example CA,organizationalUnitName=Trust Services,organizationName=Example\\2C Inc.,countryName=US",
        "2.5.4.3=Example CA,OID.2.5.4.11=Trust Services,2.5.4.10=\"Example, Inc.\",2.5.4.6=US",
        "C=US; O=\"Example, Inc.\"; OU=Trust Services; CN=Example CA",
    ])
    func anIssuerWrittenByHandMatchesInAnySpelling(issuer: String) throws {
        #expect(try Self.denies(issuer: issuer, serial: "A1B2C3", Self.leaf))
        #expect(try !Self.denies(issuer: issuer, serial: "A1B2C3", Self.otherLeaf))
    }

    /// Serial numbers in hexadecimal whatever the case, separators, leading zeros or prefix;
    /// another serial does not match.
    @Test func serialsMatchInEveryHexadecimalSpelling() throws {
        let issuer = try Self.leaf.issuer
        for serial in ["A1B2C3", "a1b2c3", "00:A1:B2:C3", "a1:b2:c3", "serial=00A1B2C3", "0xA1B2C3", " 00a1b2c3 "] {
            #expect(try Self.denies(issuer: issuer, serial: serial, Self.leaf), "\(serial)")
        }
        #expect(try !Self.denies(issuer: issuer, serial: "A1B2C4", Self.leaf))
    }

    /// An issuer that is not a distinguished name, or a serial that is not hexadecimal, is
    /// refused naming the file, line and field, and the forms that are read.
    @Test(arguments: [
        (#"{"issuer": "Example CA", "serial": "01"}"#, "issuerAndSerial[0].issuer: ", "\"Example CA\" is not TYPE=value"),
        (#"{"issuer": "XYZ=Example CA", "serial": "01"}"#, "issuerAndSerial[0].issuer: ", "unknown attribute type \"XYZ\""),
        (#"{"issuer": "CN=\"Example CA", "serial": "01"}"#, "issuerAndSerial[0].issuer: ", "an unterminated quote"),
        (#"{"issuer": "CN=#0C03616263", "serial": "01"}"#, "issuerAndSerial[0].issuer: ", "a hex-encoded (#…) value"),
        (#"{"issuer": "issuer=", "serial": "01"}"#, "issuerAndSerial[0].issuer: ", "no TYPE=value pair"),
        (#"{"issuer": "CN=Example CA", "serial": "0A:1G"}"#, "issuerAndSerial[0].serial: ", "is not hexadecimal"),
        (#"{"issuer": "CN=Example CA", "serial": "serial="}"#, "issuerAndSerial[0].serial: ", "is not hexadecimal"),
    ])
    func aMalformedIssuerOrSerialIsRefusedNamingTheField(entry: String, field: String, reason: String) {
        #expect {
            try KeyDenyList(data: Array("{\"version\": 1,\n \"issuerAndSerial\": [\(entry)]}".utf8))
        } throws: { error in
            guard let error = error as? TrustError, error.code == .invalidPolicyFile else { return false }
            let expectedForm = field.hasSuffix("issuer: ") ? "CN=Example CA,O=Example,C=US" : "serial=0A1B"
            return error.reason.hasPrefix("denylist.json:2: " + field) && error.reason.contains(reason) && error.reason.contains(expectedForm)
        }
    }
}
