import COpenSSL
import Foundation
@testable import ServerTrust
import ServerTrustTestSupport
import Testing

/// The checks ServerTrust makes on top of OpenSSL's `X509_verify_cert` (`WebPKIChecks.swift`,
/// `PathValidator`, `HostNameVerifier`). Each test shows OpenSSL alone would accept (or reject)
/// the chain, then what ServerTrust decides and which rule it names.
@Suite struct WebPKIChecksTests {
    static let host = "www.example.com"

    /// Validates `chain` against `anchors` and returns the error, or nil when it is accepted.
    private func validationError(
        _ chain: [Certificate], anchors: [Certificate], at time: Date = Date(), options: PathValidationOptions = .init()
    ) throws -> TrustError? {
        let trust = PeerTrust(
            presentedChain: chain, anchors: try TrustAnchors(anchors), validationTime: time, validationOptions: options)
        do {
            _ = try trust.validatedChain()
            return nil
        } catch let error as TrustError {
            return error
        }
    }

    /// Asserts that validation fails by `check` at `depth`, and that the rule alone finds it.
    private func expectRule(
        _ check: WebPKICheck, depth: Int, chain: [Certificate], anchors: [Certificate],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let error = try validationError(chain, anchors: anchors)
        #expect(error == TrustError.chainValidationFailed, sourceLocation: sourceLocation)
        #expect(error?.reason.contains("Web PKI rule \(check.rawValue)") == true, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.evidence.depth == depth, sourceLocation: sourceLocation)
        #expect(error?.evidence.verifyResult == nil, "OpenSSL itself accepted the chain", sourceLocation: sourceLocation)
        let validated = chain + anchors.filter { !chain.contains($0) }
        #expect(check.violation(in: validated)?.depth == depth, sourceLocation: sourceLocation)
    }

    // MARK: - dsa-key

    @Test func aDSARootIsRefusedAlthoughOpenSSLAcceptsIt() throws {
        let root = try RawCertificate.make(commonName: "DSA Root", key: .dsa2048, extensions: RawCertificate.rootExtensions)
        let leaf = try RawCertificate.make(
            commonName: Self.host, key: .ecP256(), issuer: ("DSA Root", .dsa2048), extensions: RawCertificate.leafExtensions)
        try expectRule(.dsaKey, depth: 1, chain: [leaf], anchors: [root])
    }

    // MARK: - issuer-not-ca

    @Test func anAnchorWithoutBasicConstraintsCannotIssue() throws {
        let key = RawKey.ecP256()
        let root = try RawCertificate.make(
            commonName: "No BC Root", key: key, extensions: [(NID_key_usage, "critical,keyCertSign,cRLSign")])
        let leaf = try RawCertificate.make(
            commonName: Self.host, key: .ecP256(), issuer: ("No BC Root", key), extensions: RawCertificate.leafExtensions)
        try expectRule(.issuerNotCA, depth: 1, chain: [leaf], anchors: [root])
    }

    @Test func aVersion1RootMayStillIssue() throws {
        let key = RawKey.ecP256()
        let root = try RawCertificate.make(commonName: "V1 Root", key: key, version1: true)
        let leaf = try RawCertificate.make(
            commonName: Self.host, key: .ecP256(), issuer: ("V1 Root", key), extensions: RawCertificate.leafExtensions)
        #expect(try validationError([leaf], anchors: [root]) == nil)
    }

    // MARK: - leaf-ca-bits

    @Test func aLeafMarkedAsCAWithoutKeyCertSignIsRefused() throws {
        let root = try LabPKI.makeRoot()
        let leaf = try root.issueLeaf(dnsNames: [Self.host], isCA: true, keyUsage: [.digitalSignature])
        try expectRule(.inconsistentLeafCABits, depth: 0, chain: leaf.chain, anchors: [root.certificate])
    }

    @Test func aLeafAllowedToSignCertificatesButNotACAIsRefused() throws {
        let root = try LabPKI.makeRoot()
        let leaf = try root.issueLeaf(dnsNames: [Self.host], keyUsage: [.digitalSignature, .keyCertSign])
        try expectRule(.inconsistentLeafCABits, depth: 0, chain: leaf.chain, anchors: [root.certificate])
    }

    @Test func consistentCALeavesAndDirectlyTrustedSelfSignedCertificatesAreAccepted() throws {
        let root = try LabPKI.makeRoot()
        let caLeaf = try root.issueLeaf(dnsNames: [Self.host], isCA: true, keyUsage: [.digitalSignature, .keyCertSign])
        #expect(try validationError(caLeaf.chain, anchors: [root.certificate]) == nil)
        // `openssl req -x509` style: CA:TRUE without keyCertSign, trusted as itself.
        let selfSigned = try LabPKI.makeRoot(
            CertificateSpec(
                subject: LabName(commonName: Self.host), subjectKey: .ecP256(), isCA: true,
                keyUsage: [.digitalSignature], dnsNames: [Self.host]))
        #expect(try validationError([selfSigned.certificate], anchors: [selfSigned.certificate]) == nil)
    }

    // MARK: - name-constraints-in-end-entity, empty-name-constraints

    @Test func nameConstraintsInALeafAreRefused() throws {
        let root = try LabPKI.makeRoot()
        let leaf = try root.issue(
            CertificateSpec(
                subject: LabName(commonName: Self.host), subjectKey: .ecP256(), dnsNames: [Self.host],
                permittedDNSNames: ["example.com"]))
        try expectRule(.nameConstraintsInEndEntity, depth: 0, chain: [leaf], anchors: [root.certificate])
    }

    @Test func nameConstraintsWithoutSubtreesAreRefused() throws {
        let rootKey = RawKey.ecP256()
        let intermediateKey = RawKey.ecP256()
        let root = try RawCertificate.make(commonName: "Root", key: rootKey, extensions: RawCertificate.rootExtensions)
        // NameConstraints ::= SEQUENCE {} — neither permittedSubtrees nor excludedSubtrees.
        let intermediate = try RawCertificate.make(
            commonName: "Intermediate", key: intermediateKey, issuer: ("Root", rootKey),
            extensions: RawCertificate.rootExtensions, rawExtensions: [(NID_name_constraints, [0x30, 0x00])])
        let leaf = try RawCertificate.make(
            commonName: Self.host, key: .ecP256(), issuer: ("Intermediate", intermediateKey),
            extensions: RawCertificate.leafExtensions)
        try expectRule(.emptyNameConstraints, depth: 1, chain: [leaf, intermediate], anchors: [root])
    }

    // MARK: - malformed-extension

    @Test func anUndecodableAuthorityInformationAccessIsRefused() throws {
        let rootKey = RawKey.ecP256()
        let root = try RawCertificate.make(commonName: "Root", key: rootKey, extensions: RawCertificate.rootExtensions)
        let leaf = try RawCertificate.make(
            commonName: Self.host, key: .ecP256(), issuer: ("Root", rootKey), extensions: RawCertificate.leafExtensions,
            rawExtensions: [(NID_info_access, Array("malformed".utf8))])
        try expectRule(.malformedExtension, depth: 0, chain: [leaf], anchors: [root])
        let wellFormed = try RawCertificate.make(
            commonName: Self.host, key: .ecP256(), issuer: ("Root", rootKey),
            extensions: RawCertificate.leafExtensions + [(NID_info_access, "OCSP;URI:http://ocsp.example.com")])
        #expect(try validationError([wellFormed], anchors: [root]) == nil)
    }

    // MARK: - wildcard-into-excluded-subtree, malformed-name-under-constraints

    private func constrainedIntermediate(under root: LabCA, permitted: [String] = [], excluded: [String] = []) throws -> LabCA {
        try root.issueSigner(
            CertificateSpec(
                subject: LabName(commonName: "Constrained CA"), subjectKey: .ecP256(), isCA: true, extendedKeyUsage: [],
                permittedDNSNames: permitted, excludedDNSNames: excluded))
    }

    @Test func aWildcardThatCouldMatchAnExcludedNameIsRefused() throws {
        let root = try LabPKI.makeRoot()
        let intermediate = try constrainedIntermediate(under: root, permitted: ["example.com"], excluded: ["bar.example.com"])
        let leaf = try intermediate.issueLeaf(dnsNames: ["*.example.com"])
        try expectRule(.wildcardIntoExcludedSubtree, depth: 1, chain: leaf.chain, anchors: [root.certificate])
    }

    @Test func aWildcardBesideADeeperExcludedNameIsAccepted() throws {
        let root = try LabPKI.makeRoot()
        // *.example.com matches one label only: nothing under a.bar.example.com.
        let intermediate = try constrainedIntermediate(under: root, excluded: ["a.bar.example.com", ".bar.example.com"])
        let leaf = try intermediate.issueLeaf(dnsNames: ["*.example.com"])
        #expect(try validationError(leaf.chain, anchors: [root.certificate]) == nil)
    }

    @Test func aMalformedNameIsRefusedOnlyUnderDNSConstraints() throws {
        let root = try LabPKI.makeRoot()
        let intermediate = try constrainedIntermediate(under: root, permitted: ["example.com"])
        let leaf = try intermediate.issueLeaf(dnsNames: [".example.com", Self.host])
        try expectRule(.malformedNameUnderConstraints, depth: 0, chain: leaf.chain, anchors: [root.certificate])
        let unconstrained = try root.issueIntermediate().issueLeaf(dnsNames: [".example.com", Self.host])
        #expect(try validationError(unconstrained.chain, anchors: [root.certificate]) == nil)
    }

    @Test(arguments: ["www.example.com", "*.example.com", "under_score.example.com", "EXAMPLE.com"])
    func wellFormedNames(_ name: String) { #expect(WebPKICheck.isWellFormedDNSName(name)) }

    @Test(arguments: [".example.com", "example.com.", "a..example.com", "*", "f*.example.com", "*.*.example.com", "ex ample.com", ""])
    func malformedNames(_ name: String) { #expect(!WebPKICheck.isWellFormedDNSName(name)) }

    @Test func theSubjectCommonNameIsNotHeldToNameConstraints() throws {
        let root = try LabPKI.makeRoot()
        let intermediate = try constrainedIntermediate(under: root, permitted: ["example.com"])
        // OpenSSL alone checks a host-like CN against DNS constraints: "permitted subtree violation".
        let leaf = try intermediate.issueLeaf(dnsNames: [Self.host], commonName: "outside.test")
        #expect(try validationError(leaf.chain, anchors: [root.certificate]) == nil)
    }

    // MARK: - PathValidator: inclusive notAfter, alternative paths

    @Test func aCertificateIsValidThroughItsNotAfterSecond() throws {
        let root = try LabPKI.makeRoot()
        let notAfter = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 86400).rounded(.down))
        let leaf = try root.issueLeaf(dnsNames: [Self.host], notAfter: notAfter)
        #expect(try validationError(leaf.chain, anchors: [root.certificate], at: notAfter) == nil)
        let error = try validationError(leaf.chain, anchors: [root.certificate], at: notAfter.addingTimeInterval(1))
        #expect(error?.evidence.verifyResult == X509_V_ERR_CERT_HAS_EXPIRED)
    }

    @Test func anotherPresentedPathIsTriedWhenTheFirstIsRejected() throws {
        let root = try LabPKI.makeRoot()
        // One issuing key, certified twice by the root: for client authentication only, and plainly.
        let clientOnly = try root.issueSigner(
            CertificateSpec(
                subject: LabName(commonName: "Issuing CA"), subjectKey: .ecP256(), isCA: true,
                extendedKeyUsage: [.clientAuth]))
        let plain = try root.crossSign(clientOnly)
        let leaf = try clientOnly.issueLeaf(dnsNames: [Self.host])
        let alone = try validationError([leaf.certificate, clientOnly.certificate], anchors: [root.certificate])
        #expect(alone?.evidence.verifyResult == X509_V_ERR_INVALID_PURPOSE)
        #expect(alone?.evidence.depth == 1)
        #expect(try validationError([leaf.certificate, clientOnly.certificate, plain.certificate], anchors: [root.certificate]) == nil)
    }

    // MARK: - HostNameVerifier

    private func hostError(_ leaf: LabLeaf, _ host: String) throws -> TrustError? {
        do {
            try DefaultTrustEvaluator().evaluate(leaf.serverTrust(), forHost: host)
            return nil
        } catch let error as TrustError {
            return error
        }
    }

    @Test func aWildcardOverAnICANNPublicSuffixMatchesNothing() throws {
        let root = try LabPKI.makeRoot()
        let wildcard = try root.issueLeaf(dnsNames: ["*.co.uk"])
        let error = try hostError(wildcard, "example.co.uk")
        #expect(error == TrustError.hostMismatch)
        #expect(error?.reason.contains("*.co.uk is not accepted") == true)
        let withExactName = try root.issueLeaf(dnsNames: ["*.co.uk", "example.co.uk"])
        #expect(try hostError(withExactName, "example.co.uk") == nil)
    }

    @Test(arguments: [("*.s3.amazonaws.com", "bucket.s3.amazonaws.com"), ("*.example.com", "www.example.com"), ("*.intranet.corp", "host.intranet.corp")])
    func wildcardsOverPrivateSuffixesAndPrivateNamesStillMatch(_ san: String, _ host: String) throws {
        let leaf = try LabPKI.makeRoot().issueLeaf(dnsNames: [san])
        #expect(try hostError(leaf, host) == nil)
    }

    @Test func anAbsoluteHostNameMatchesWithoutItsDotButASingleLabelIsLiteral() throws {
        let root = try LabPKI.makeRoot()
        #expect(try hostError(root.issueLeaf(dnsNames: [Self.host]), Self.host + ".") == nil)
        let intranet = try root.issueLeaf(dnsNames: ["intranet"])
        #expect(try hostError(intranet, "intranet") == nil)
        #expect(try hostError(intranet, "intranet.") == TrustError.hostMismatch)
    }
}

// MARK: - Certificates LabPKI does not make

/// A private key for ``RawCertificate``.
private final class RawKey: @unchecked Sendable {  // immutable after init
    let pkey: OpaquePointer

    private init(_ pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }

    static func ecP256() -> RawKey {
        let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil)!
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer?
        precondition(
            EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_CTX_set_group_name(ctx, "P-256") == 1
                && EVP_PKEY_generate(ctx, &key) == 1)
        return RawKey(key!)
    }

    /// DSA-2048 (112-bit security, so OpenSSL's authentication level 2 accepts it), made once.
    static let dsa2048: RawKey = {
        let paramContext = EVP_PKEY_CTX_new_from_name(nil, "DSA", nil)!
        defer { EVP_PKEY_CTX_free(paramContext) }
        var parameters: OpaquePointer?
        precondition(
            EVP_PKEY_paramgen_init(paramContext) == 1 && EVP_PKEY_CTX_set_dsa_paramgen_bits(paramContext, 2048) == 1
                && EVP_PKEY_paramgen(paramContext, &parameters) == 1)
        defer { EVP_PKEY_free(parameters) }
        let keyContext = EVP_PKEY_CTX_new_from_pkey(nil, parameters, nil)!
        defer { EVP_PKEY_CTX_free(keyContext) }
        var key: OpaquePointer?
        precondition(EVP_PKEY_keygen_init(keyContext) == 1 && EVP_PKEY_generate(keyContext, &key) == 1)
        return RawKey(key!)
    }()
}

/// Builds the few certificates LabPKI cannot express — a DSA key, an anchor without
/// basicConstraints, a version 1 root, hand-written extension bytes — with OpenSSL directly.
private enum RawCertificate {
    static let rootExtensions: [(Int32, String)] = [
        (NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
    ]
    static let leafExtensions: [(Int32, String)] = [
        (NID_basic_constraints, "CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
        (NID_ext_key_usage, "serverAuth"), (NID_subject_alt_name, "DNS:\(WebPKIChecksTests.host)"),
    ]

    /// A certificate valid from an hour ago for a day, self-signed unless `issuer` is given.
    static func make(
        commonName: String, key: RawKey, issuer: (name: String, key: RawKey)? = nil, version1: Bool = false,
        extensions: [(Int32, String)] = [], rawExtensions: [(Int32, [UInt8])] = []
    ) throws -> Certificate {
        let x509 = X509_new()!
        defer { X509_free(x509) }
        X509_set_version(x509, version1 ? 0 : 2)
        ASN1_INTEGER_set(X509_get_serialNumber(x509), Int.random(in: 1...Int(Int32.max)))
        setName(commonName) { X509_set_subject_name(x509, $0) }
        setName(issuer?.name ?? commonName) { X509_set_issuer_name(x509, $0) }
        X509_gmtime_adj(X509_getm_notBefore(x509), -3600)
        X509_gmtime_adj(X509_getm_notAfter(x509), 86400)
        X509_set_pubkey(x509, key.pkey)
        var ctx = X509V3_CTX()
        X509V3_set_ctx(&ctx, nil, x509, nil, nil, 0)
        for (nid, value) in extensions {
            let ext = X509V3_EXT_conf_nid(nil, &ctx, nid, value)!
            X509_add_ext(x509, ext, -1)
            X509_EXTENSION_free(ext)
        }
        for (nid, bytes) in rawExtensions {
            let octets = ASN1_OCTET_STRING_new()!
            defer { ASN1_OCTET_STRING_free(octets) }
            ASN1_OCTET_STRING_set(octets, bytes, Int32(bytes.count))
            let ext = X509_EXTENSION_create_by_NID(nil, nid, 0, octets)!
            X509_add_ext(x509, ext, -1)
            X509_EXTENSION_free(ext)
        }
        precondition(X509_sign(x509, (issuer?.key ?? key).pkey, EVP_sha256()) > 0)
        let length = i2d_X509(x509, nil)
        var der = [UInt8](repeating: 0, count: Int(length))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_X509(x509, &cursor)
        }
        return try Certificate(derEncoded: der)
    }

    private static func setName(_ commonName: String, _ apply: (OpaquePointer) -> Int32) {
        let name = X509_NAME_new()!
        defer { X509_NAME_free(name) }
        let bytes = Array(commonName.utf8)
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0)
        _ = apply(name)
    }
}
