import Foundation
import ServerTrust
import ServerTrustLab

/// The demo's world, made on the spot in memory: a genuine CA, a proxy CA the client machine
/// also trusts, and one local TLS server per situation, all answering for ``host``.
///
/// Nothing is written to disk and nothing leaves `127.0.0.1`; the servers stop in ``stop()``.
final class DemoLab {
    static let host = "demo.servertrust.test"

    /// The key the genuine server uses now, pinned by the client.
    let currentKey = LabKey.ecP256()
    /// The key generated ahead of time and kept offline, pinned by the client as the backup.
    let backupKey = LabKey.ecP256()

    let genuineRoot: LabCA
    let genuineIntermediate: LabCA
    /// A CA the client machine trusts too, as with a corporate TLS-inspection proxy.
    let proxyRoot: LabCA

    /// Both roots: what the client machine trusts.
    let anchors: TrustAnchors
    /// A current CRL from every CA, handed to the revocation evaluator: no network needed.
    let revocationLists: [CertificateRevocationList]

    let genuine: LocalTLSServer
    let impostor: LocalTLSServer
    let revoked: LocalTLSServer
    let rotatedToBackup: LocalTLSServer
    let rotatedToUnpinned: LocalTLSServer

    init() throws {
        genuineRoot = try LabPKI.makeRoot(commonName: "Demo Genuine Root CA")
        genuineIntermediate = try genuineRoot.issueIntermediate(commonName: "Demo Genuine Intermediate CA")
        proxyRoot = try LabPKI.makeRoot(commonName: "Demo Inspection Proxy CA")

        let host = Self.host
        let current = try genuineIntermediate.issueLeaf(dnsNames: [host], key: currentKey)
        // An older certificate for the same key, revoked when it was superseded: the pin matches,
        // so only the revocation check can refuse it.
        let revokedLeaf = try genuineIntermediate.issueLeaf(dnsNames: [host], key: currentKey)
        let backup = try genuineIntermediate.issueLeaf(dnsNames: [host], key: backupKey)
        let unpinned = try genuineIntermediate.issueLeaf(dnsNames: [host])
        let forged = try proxyRoot.issueLeaf(dnsNames: [host])

        anchors = try TrustAnchors([genuineRoot.certificate, proxyRoot.certificate], origin: "demo anchors")
        revocationLists = [
            try genuineRoot.makeCRL(),
            try genuineIntermediate.makeCRL(revoked: [RevokedCertificate(revokedLeaf.certificate, reason: 4)]),
            try proxyRoot.makeCRL(),
        ]

        genuine = try Self.serve(current, as: "the genuine server")
        impostor = try Self.serve(forged, as: "an impostor")
        revoked = try Self.serve(revokedLeaf, as: "a server with a revoked certificate")
        rotatedToBackup = try Self.serve(backup, as: "the server after rotating to the backup key")
        rotatedToUnpinned = try Self.serve(unpinned, as: "the server after rotating to an unpinned key")
    }

    var servers: [LocalTLSServer] { [genuine, impostor, revoked, rotatedToBackup, rotatedToUnpinned] }

    /// `host:port:127.0.0.1` for every server.
    var resolveEntries: [String] { servers.map { $0.resolveEntry(host: Self.host) } }

    func stop() {
        for server in servers { server.stop() }
    }

    private static func serve(_ leaf: LabLeaf, as description: String) throws -> LocalTLSServer {
        try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey) { request in
            .text("Hello from \(description).\n")
        }
    }
}
