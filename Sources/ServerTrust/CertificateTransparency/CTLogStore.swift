public import Foundation
internal import COpenSSL

/// A ``CTLogList`` loaded into OpenSSL (`CTLOG_STORE`), which verifies SCTs with OpenSSL's own
/// code (`SCT_validate`): the signed data rebuilt for each source — the precertificate entry
/// from the leaf without its SCT-list extension and the issuer's key hash for an embedded SCT
/// (RFC 6962 §3.2), the certificate itself for the TLS extension and the OCSP staple — with the
/// SCT's extensions, under the log's ECDSA or RSA key.
///
/// OpenSSL has no call that adds a log to a store from memory: its stores load a configuration
/// file only (`CTLOG_STORE_load_file`). So the list's keys are written, once per list, to a
/// private temporary file (mode 0600, removed as soon as it is read) in OpenSSL's
/// `ct_log_list.cnf` format. The keys are public; the file holds nothing else.
///
/// A server sends the same certificate and SCTs on every handshake, and `SCT_validate` is the
/// costly part (OpenSSL copies the certificate and re-encodes the log's key for each SCT). So the
/// store remembers the SCTs it verified: a later SCT with the same bytes, from the same source,
/// for the same leaf and issuer (whole DER, compared, not hashed) is verified without OpenSSL —
/// the signed data is a function of exactly these bytes and this store's log keys. The checks
/// before the signature (version, known log, timestamp not after the evaluation time, issuer
/// known) run every time; failures are never remembered; a new list is a new store, with none.
///
/// Owns exactly one `CTLOG_STORE*`, freed in `deinit`. Immutable after `init` but for the
/// lock-held set of verified SCTs, and OpenSSL only reads a store while validating
/// (`CTLOG_STORE_get0_log_by_id`), hence `@unchecked Sendable`: one store serves every
/// concurrent handshake.
package final class CTLogStore: @unchecked Sendable {
    /// The list the store was made from.
    package let list: CTLogList
    private let store: OpaquePointer
    /// SCTs verified by OpenSSL with this store; emptied when it holds ``verifiedCapacity``.
    // Fast path: docs/PERFORMANCE.md#fast-paths, "Verified-SCT cache".
    private let verified = Locked<Set<VerifiedSCT>>([])
    private let verifiedHits = Locked(0)
    static let verifiedCapacity = 256

    /// Everything the signed data of an SCT depends on, besides the log's key.
    private struct VerifiedSCT: Hashable {
        let sct: [UInt8]
        let source: SignedCertificateTimestamp.Source
        let leaf: [UInt8]
        let issuer: [UInt8]?
    }

    /// How many SCTs were answered from the verified set, for tests.
    package var verifiedSCTHits: Int { verifiedHits.withLock { $0 } }

    deinit { CTLOG_STORE_free(store) }

    /// Loads `list`'s logs into OpenSSL.
    ///
    /// - Throws: `TrustError.Code.openSSLFailure` when the temporary file cannot be written or
    ///   OpenSSL refuses it, naming OpenSSL's error.
    package init(_ list: CTLogList) throws {
        guard let store = CTLOG_STORE_new() else { throw TrustError(.openSSLFailure, "CTLOG_STORE_new failed.") }
        self.list = list
        self.store = store
        let logs = list.logs.values.sorted { $0.idBase64 < $1.idBase64 }
        guard !logs.isEmpty else { return }
        var config = "enabled_logs = " + logs.indices.map { "log\($0)" }.joined(separator: ",") + "\n"
        for (index, log) in logs.enumerated() {
            config += "[log\(index)]\ndescription = log\(index)\nkey = \(Data(log.key).base64EncodedString())\n"
        }
        let directory = FileManager.default.temporaryDirectory
        let path = directory.appendingPathComponent("servertrust-ct-\(UUID().uuidString).cnf").path
        guard FileManager.default.createFile(atPath: path, contents: Data(config.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw TrustError(.openSSLFailure, "Cannot write the CT log store's temporary file in \(directory.path).")
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        clearOpenSSLErrors()
        guard CTLOG_STORE_load_file(store, path) == 1 else {
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = drainOpenSSLErrors()
            throw TrustError(.openSSLFailure, "OpenSSL could not load the CT log list's \(logs.count) keys.", evidence: evidence)
        }
    }

    /// Verifies each SCT against its log's key, as OpenSSL's `SCT_validate` does, at `time`.
    ///
    /// - Parameters:
    ///   - scts: the SCTs, from any source.
    ///   - leaf: the certificate they are for (the validated chain's leaf).
    ///   - issuer: the leaf's issuer, needed for embedded SCTs (its key hash is signed); nil
    ///     leaves embedded SCTs ``SCTObservation/Status/issuerUnknown``.
    ///   - time: the evaluation time: an SCT issued after it is refused
    ///     (``SCTObservation/Status/timestampInFuture``), as OpenSSL refuses it.
    /// - Returns: one observation per SCT, in order.
    package func verify(_ scts: [SignedCertificateTimestamp], leaf: Certificate, issuer: Certificate?, at time: Date) -> [SCTObservation] {
        guard let context = CT_POLICY_EVAL_CTX_new() else {
            return scts.map { SCTObservation(sct: $0, log: list.log(id: $0.logID), status: .verificationFailed) }
        }
        defer { CT_POLICY_EVAL_CTX_free(context) }
        let milliseconds = UInt64(max(0, (time.timeIntervalSince1970 * 1000).rounded(.down)))
        let ready = leaf.withX509 { CT_POLICY_EVAL_CTX_set1_cert(context, $0) } == 1
            && (issuer.map { issuer in issuer.withX509 { CT_POLICY_EVAL_CTX_set1_issuer(context, $0) } == 1 } ?? true)
        CT_POLICY_EVAL_CTX_set_shared_CTLOG_STORE(context, store)
        CT_POLICY_EVAL_CTX_set_time(context, milliseconds)
        return scts.map { sct in
            let log = list.log(id: sct.logID)
            guard ready else { return SCTObservation(sct: sct, log: log, status: .verificationFailed) }
            let status = status(of: sct, log: log, leaf: leaf, issuer: issuer, context: context, now: milliseconds)
            return SCTObservation(sct: sct, log: log, status: status)
        }
    }

    private func status(
        of sct: SignedCertificateTimestamp, log: CTLogList.Log?, leaf: Certificate, issuer: Certificate?, context: OpaquePointer, now: UInt64
    ) -> SCTObservation.Status {
        guard sct.version == 0 else { return .unsupportedVersion }
        guard let log else { return .unknownLog }
        guard sct.timestampMilliseconds <= now else { return .timestampInFuture }
        if sct.source == .embedded, issuer == nil { return .issuerUnknown }
        let key = VerifiedSCT(sct: sct.encoded, source: sct.source, leaf: leaf.derEncoded, issuer: issuer?.derEncoded)
        if verified.withLock({ $0.contains(key) }) {
            verifiedHits.withLock { $0 += 1 }
            return .verified
        }
        let status = validate(sct, log: log, context: context)
        if status == .verified {
            verified.withLock {
                if $0.count >= Self.verifiedCapacity { $0.removeAll() }
                $0.insert(key)
            }
        }
        return status
    }

    /// `SCT_validate` on `sct`, its algorithm first checked against `log`'s key.
    private func validate(_ sct: SignedCertificateTimestamp, log: CTLogList.Log, context: OpaquePointer) -> SCTObservation.Status {
        guard Self.algorithm(sct.signatureAlgorithm, fits: log.key) else { return .badSignature }
        let parsed: OpaquePointer? = sct.encoded.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return o2i_SCT(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            clearOpenSSLErrors()
            return .verificationFailed
        }
        defer { SCT_free(parsed) }
        let source: sct_source_t =
            switch sct.source {
            case .embedded: SCT_SOURCE_X509V3_EXTENSION
            case .tlsExtension: SCT_SOURCE_TLS_EXTENSION
            case .ocspStaple: SCT_SOURCE_OCSP_STAPLED_RESPONSE
            }
        guard SCT_set_source(parsed, source) == 1 else { return .verificationFailed }
        // 1 is valid; 0 is a verdict (invalid, unknown log…); negative is an error.
        let result = SCT_validate(parsed, context)
        clearOpenSSLErrors()
        switch SCT_get_validation_status(parsed) {
        case SCT_VALIDATION_STATUS_VALID where result == 1: return .verified
        case SCT_VALIDATION_STATUS_INVALID: return .badSignature
        case SCT_VALIDATION_STATUS_UNKNOWN_LOG: return .unknownLog
        case SCT_VALIDATION_STATUS_UNKNOWN_VERSION: return .unsupportedVersion
        default: return .verificationFailed
        }
    }

    /// Whether the SCT's signature algorithm is the one its log's key makes (RFC 6962 §2.1.4):
    /// OpenSSL verifies with the key whatever the SCT says, so a mislabelled SCT is refused here.
    private static func algorithm(_ name: String?, fits key: [UInt8]) -> Bool {
        let pkey: OpaquePointer? = key.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let pkey else { return false }
        defer { EVP_PKEY_free(pkey) }
        switch EVP_PKEY_get_base_id(pkey) {
        case EVP_PKEY_EC: return name == String(cString: OBJ_nid2ln(NID_ecdsa_with_SHA256))
        case EVP_PKEY_RSA: return name == String(cString: OBJ_nid2ln(NID_sha256WithRSAEncryption))
        default: return false
        }
    }
}

/// One SCT as verified: the SCT, the log the list names for it, and the verdict.
public struct SCTObservation: Hashable, Sendable, CustomStringConvertible {
    /// What verification found.
    public enum Status: String, Hashable, Sendable {
        /// The log's key verifies the SCT over this certificate.
        case verified
        /// The log list has no log with the SCT's ID: never counted.
        case unknownLog
        /// The signature does not verify over this certificate (or names an algorithm the
        /// log's key does not use): an SCT for another certificate, a changed TBS, a forgery.
        case badSignature
        /// The SCT was issued after the evaluation time.
        case timestampInFuture
        /// Not a v1 SCT.
        case unsupportedVersion
        /// An embedded SCT, and the leaf's issuer is not known (its key hash is signed).
        case issuerUnknown
        /// OpenSSL could not run the check (allocation or encoding failure).
        case verificationFailed
    }

    public let sct: SignedCertificateTimestamp
    /// The log the list names for the SCT's ID, or nil.
    public let log: CTLogList.Log?
    public let status: Status

    public init(sct: SignedCertificateTimestamp, log: CTLogList.Log?, status: Status) {
        self.sct = sct
        self.log = log
        self.status = status
    }

    public var description: String {
        "\(sct.source) SCT from \(log.map(\.description) ?? "unknown log \(sct.logIDBase64)") at "
            + "\(sct.timestamp.formatted(.iso8601)): \(status.rawValue)"
    }
}
