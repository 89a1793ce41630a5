#if X509Interop
import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing
import X509

/// ServerTrust's `Certificate` beside swift-certificates' in one file that imports both modules.
/// Both name a type `Certificate`, so each is written qualified by its module — which compiles
/// only because no type in ServerTrust is itself named `ServerTrust` (the evaluators' trust
/// object is `PeerTrust`; while it was `ServerTrust`, `ServerTrust.Certificate` was looked up in
/// the class and did not compile).
@Suite struct CertificateSideBySideTests {
    @Test func oneDERParsesToTheSameSubjectSerialAndPublicKeyInBothLibraries() throws {
        let root = try LabPKI.makeRoot(commonName: "Interop Root")
        let issued = try root.issueLeaf(dnsNames: ["interop.servertrust.test"])
        let der = issued.certificate.derEncoded

        let ours: ServerTrust.Certificate = try ServerTrust.Certificate(derEncoded: der)
        let theirs: X509.Certificate = try X509.Certificate(derEncoded: der)

        // Both print the subject in RFC 4514 order, most specific name first.
        #expect(ours.subject == String(describing: theirs.subject))
        #expect(ours.subject.hasPrefix("CN="))
        // ServerTrust gives the serial as upper-case hex without leading zero bytes; X509 keeps
        // the DER INTEGER's content bytes, which carry a 0x00 when the top bit is set.
        let serialHex = theirs.serialNumber.bytes.drop { $0 == 0 }.map { String(format: "%02X", $0) }.joined()
        #expect(ours.serialNumber == serialHex)
        // The SubjectPublicKeyInfo DER is what every SPKI pin hashes: byte for byte the same.
        #expect(ours.subjectPublicKeyInfoDER == Array(try theirs.publicKey.serializeAsPEM().derBytes))
        #expect(ours.notValidAfter == theirs.notValidAfter)
        #expect(ours.derEncoded == der)
    }
}
#endif
