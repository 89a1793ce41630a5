public import ServerTrust
public import ServerTrustLab

/// The attack every pinning test stages: a host's genuine chain (root → intermediate → leaf;
/// the client pins the intermediate's key), and an impostor's leaf for the same name from a
/// second CA the client *also* trusts — a corporate proxy's CA, say — so that default
/// validation accepts both and only the pin tells them apart.
///
/// One fixture for every test target: the adapters' tests serve the two leaves from
/// ``LocalTLSServer``s (``servers(handler:)``) or their own stack's server, the nginx interop
/// tests take the impostor alone (``Impostor``) against nginx's genuine chain.
public struct GenuineAndImpostor: Sendable {
    /// The host name both leaves are issued for.
    public let host: String
    public let root: LabCA
    public let intermediate: LabCA
    /// The genuine leaf, issued by ``intermediate``.
    public let genuine: LabLeaf
    public let impostor: Impostor

    /// A leaf for a host from a CA of its own; a test trusts it by adding ``root`` to the
    /// client's anchors (a trusted proxy) or leaves it out (an untrusted one).
    public struct Impostor: Sendable {
        /// The impostor's root.
        public let root: LabCA
        /// The CA that issued ``leaf``: ``root`` itself, or an intermediate under it.
        public let issuer: LabCA
        public let leaf: LabLeaf

        /// An impostor leaf for `host`, issued by `Trusted Proxy Root` or, with
        /// `throughIntermediate`, by `Trusted Proxy CA` under it (a chain of the genuine one's shape).
        public init(host: String, throughIntermediate: Bool = false) throws {
            root = try LabPKI.makeRoot(commonName: "Trusted Proxy Root")
            issuer = throughIntermediate ? try root.issueIntermediate(commonName: "Trusted Proxy CA") : root
            leaf = try issuer.issueLeaf(dnsNames: [host])
        }
    }

    /// The two PKIs for `host`; `name` starts the genuine CAs' common names (`"\(name) Root"`,
    /// `"\(name) Intermediate"`), so a failure's evidence says whose chain it saw. The impostor's
    /// chain has the genuine one's shape (root → intermediate → leaf).
    public init(host: String, name: String = "Genuine") throws {
        self.host = host
        root = try LabPKI.makeRoot(commonName: "\(name) Root")
        intermediate = try root.issueIntermediate(commonName: "\(name) Intermediate")
        genuine = try intermediate.issueLeaf(dnsNames: [host])
        impostor = try Impostor(host: host, throughIntermediate: true)
    }

    /// The genuine intermediate's key, which the client pins.
    public var pin: Pin { intermediate.certificate.spkiPin }

    /// Both roots: what a client that trusts the proxy's CA holds.
    public var anchors: TrustAnchors {
        get throws { try TrustAnchors([root.certificate, impostor.root.certificate]) }
    }

    /// A lab server for each leaf, both answering with `handler` (then the lab's routes).
    public func servers(handler: LocalHTTPHandler? = nil) throws -> (genuine: LocalTLSServer, impostor: LocalTLSServer) {
        let genuineServer = try LocalTLSServer(chain: genuine.chain, privateKeyPEM: genuine.key.pemPrivateKey, handler: handler)
        do {
            return (genuineServer, try LocalTLSServer(chain: impostor.leaf.chain, privateKeyPEM: impostor.leaf.key.pemPrivateKey, handler: handler))
        } catch {
            genuineServer.stop()
            throw error
        }
    }
}
