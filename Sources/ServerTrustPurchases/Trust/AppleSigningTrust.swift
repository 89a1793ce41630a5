public import Foundation
public import ServerTrust
import ServerTrustCertificates

/// What the purchase verifiers trust: the roots App Store data must chain to, intermediates
/// offered to a receipt's path, and the marker extensions Apple puts on the intermediate and
/// the leaf that sign — every one of them required, present and not critical.
///
/// ``compiledIn`` is Apple's set: the three roots of ``AppleRootCertificates``, no extra
/// intermediate, the WWDR marker (1.2.840.113635.100.6.2.1) and the signing leaf's
/// (1.2.840.113635.100.6.11.1). A trust update delivers another as a target (ServerTrustUpdates'
/// `TrustUpdateClient.Configuration.appleSigningTrustTarget`), read by ``init(json:name:)``:
///
/// ```json
/// {"version": 1, "roots": ["MIICQzCC…"], "intermediates": [],
///  "intermediateMarkers": ["1.2.840.113635.100.6.2.1"], "leafMarkers": ["1.2.840.113635.100.6.11.1"]}
/// ```
///
/// Measured against its floor (``weakenings(comparedTo:)``), adding a root, an intermediate or a
/// marker is allowed; dropping a root of the floor or a marker check it makes is a weakening.
public struct AppleSigningTrust: Sendable, Equatable {
    /// The roots, compared by exact bytes with the root a JWS sends and ending every path.
    public let roots: [Certificate]
    /// Intermediates a receipt's path may use when the receipt does not carry them (never for
    /// a JWS, whose `x5c[1]` must be the intermediate).
    public let intermediates: [Certificate]
    /// The extensions the intermediate must carry, each present and not critical.
    public let intermediateMarkerOIDs: [String]
    /// The extensions the signing leaf must carry, each present and not critical.
    public let leafMarkerOIDs: [String]
    /// The roots as a path-validation store, built once.
    let store: SignedDataTrustStore
    /// The roots' subject names (DER), to tell a receipt from another PKI (`untrustedRoot`)
    /// from one that fails validation under these roots.
    let rootSubjects: [[UInt8]]

    /// Apple's marker on the intermediate (Apple Worldwide Developer Relations) of its signing chains.
    public static let appleIntermediateMarkerOID = "1.2.840.113635.100.6.2.1"
    /// Apple's marker on the leaf that signs App Store data and receipts.
    public static let appleLeafMarkerOID = "1.2.840.113635.100.6.11.1"

    /// Apple's set, compiled in: the floor of a delivered one.
    public static let compiledIn: AppleSigningTrust = {
        do {
            return try AppleSigningTrust(roots: AppleRootCertificates.all)
        } catch {
            // The roots are compiled in and checked by the build and a test; never reached.
            preconditionFailure("Apple's compiled-in roots do not make a trust store: \(error)")
        }
    }()

    /// - Parameters:
    ///   - roots: the roots; compared by bytes, ending every path.
    ///   - intermediates: offered to a receipt's path; default none.
    ///   - intermediateMarkerOIDs: required of the intermediate; default Apple's WWDR marker.
    ///   - leafMarkerOIDs: required of the signing leaf; default Apple's.
    /// - Throws: ``PurchaseVerificationError/Code/invalidConfiguration`` for no root, a root
    ///   given twice or that cannot make a store, or a marker that is not a dotted OID.
    public init(
        roots: [Certificate], intermediates: [Certificate] = [], intermediateMarkerOIDs: [String] = [Self.appleIntermediateMarkerOID],
        leafMarkerOIDs: [String] = [Self.appleLeafMarkerOID]
    ) throws(PurchaseVerificationError) {
        guard Set(roots.map(\.derEncoded)).count == roots.count else {
            throw PurchaseVerificationError(.invalidConfiguration, "A root is given twice.")
        }
        for oid in intermediateMarkerOIDs + leafMarkerOIDs where !Self.isDottedOID(oid) {
            throw PurchaseVerificationError(.invalidConfiguration, "The marker \"\(oid)\" is not a dotted object identifier.")
        }
        do {
            store = try SignedDataTrustStore(roots: roots)
        } catch {
            throw PurchaseVerificationError(.invalidConfiguration, error.reason)
        }
        var subjects: [[UInt8]] = []
        for root in roots {
            guard let parsed = try? ReceiptCertificate(BERReader.parse(root.derEncoded, what: "a root")) else {
                throw PurchaseVerificationError(.invalidConfiguration, "The root \(root.subject) cannot be read.")
            }
            subjects.append(parsed.subject)
        }
        rootSubjects = subjects
        self.roots = roots
        self.intermediates = intermediates
        self.intermediateMarkerOIDs = intermediateMarkerOIDs
        self.leafMarkerOIDs = leafMarkerOIDs
    }

    /// The members a delivered document has.
    static let members: Set<String> = ["version", "roots", "intermediates", "intermediateMarkers", "leafMarkers"]

    /// Reads a delivered document, strictly: UTF-8 JSON without duplicate keys, `version` 1,
    /// no member but the five above, `roots` and both marker lists present (an absent list
    /// never drops a check silently), certificates as standard base64 DER.
    ///
    /// - Parameters:
    ///   - json: the document's bytes.
    ///   - name: the document's name in errors (the target's).
    /// - Throws: ``PurchaseVerificationError/Code/invalidConfiguration`` naming the member.
    public init(json: [UInt8], name: String = "apple_signing_trust.json") throws(PurchaseVerificationError) {
        guard json.count <= 1 << 20 else {
            throw PurchaseVerificationError(.invalidConfiguration, "\(name) is \(json.count) bytes, over the 1 MiB limit.")
        }
        let fields = try SignedFields(json: json, what: name, code: .invalidConfiguration)
        if let unknown = fields.keys.subtracting(Self.members).sorted().first {
            throw PurchaseVerificationError(.invalidConfiguration, "\(name) has an unknown member \"\(unknown)\".")
        }
        let version = try fields.required("version", fields.int64)
        guard version == 1 else {
            throw PurchaseVerificationError(.invalidConfiguration, "\(name) is version \(version); this release reads version 1.")
        }
        func certificates(_ key: String) throws(PurchaseVerificationError) -> [Certificate] {
            var parsed: [Certificate] = []
            for (index, text) in (try fields.strings(key) ?? []).enumerated() {
                guard let der = StrictBase64.decode(Array(text.utf8)), let certificate = try? Certificate(derEncoded: der) else {
                    throw PurchaseVerificationError(.invalidConfiguration, "\(name): \(key)[\(index)] is not a base64 DER certificate.")
                }
                parsed.append(certificate)
            }
            return parsed
        }
        guard fields.has("roots") else { throw PurchaseVerificationError(.invalidConfiguration, "\(name) has no \"roots\".") }
        try self.init(
            roots: certificates("roots"), intermediates: certificates("intermediates"),
            intermediateMarkerOIDs: fields.required("intermediateMarkers", fields.strings),
            leafMarkerOIDs: fields.required("leafMarkers", fields.strings))
    }

    /// How this set trusts less carefully than `floor`, one reason each: a root of the floor's
    /// dropped (data from it no longer verifies — or, replaced, verifies under another
    /// authority), a marker check of the floor's dropped. Empty when it only adds.
    public func weakenings(comparedTo floor: AppleSigningTrust) -> [String] {
        let mine = Set(roots.map(\.derEncoded))
        var reasons = floor.roots.filter { !mine.contains($0.derEncoded) }.map { "drops the root \($0.subject) (\($0.spkiPin))" }
        reasons += floor.intermediateMarkerOIDs.filter { !intermediateMarkerOIDs.contains($0) }.map { "no longer requires the intermediate marker \($0)" }
        reasons += floor.leafMarkerOIDs.filter { !leafMarkerOIDs.contains($0) }.map { "no longer requires the leaf marker \($0)" }
        return reasons
    }

    public static func == (lhs: AppleSigningTrust, rhs: AppleSigningTrust) -> Bool {
        lhs.roots.map(\.derEncoded) == rhs.roots.map(\.derEncoded) && lhs.intermediates.map(\.derEncoded) == rhs.intermediates.map(\.derEncoded)
            && lhs.intermediateMarkerOIDs == rhs.intermediateMarkerOIDs && lhs.leafMarkerOIDs == rhs.leafMarkerOIDs
    }

    private static func isDottedOID(_ text: String) -> Bool {
        let arcs = text.split(separator: ".", omittingEmptySubsequences: false)
        return arcs.count >= 2 && arcs.allSatisfy { !$0.isEmpty && $0.count <= 20 && $0.allSatisfy(\.isASCIIDigit) && ($0 == "0" || $0.first != "0") }
    }
}

/// The ``AppleSigningTrust`` in force, which a trust update replaces while verifiers run: each
/// verification reads it once, and a chain verified under an earlier one is verified again.
public final class LiveAppleSigningTrust: Sendable {
    private let state: Locked<(trust: AppleSigningTrust, generation: Int)>

    /// Starts with `trust` (default Apple's, compiled in) as generation 1.
    public init(_ trust: AppleSigningTrust = .compiledIn) {
        state = Locked((trust, 1))
    }

    /// The set in force.
    public var current: AppleSigningTrust { state.withLock { $0.trust } }

    /// Counts replacements; 1 until the first.
    public var generation: Int { state.withLock { $0.generation } }

    /// The set in force and its generation, read together.
    var snapshot: (trust: AppleSigningTrust, generation: Int) { state.withLock { $0 } }

    /// Puts `trust` in force for verifications that start from now; returns its generation.
    /// The same set again changes nothing.
    @discardableResult
    public func replace(with trust: AppleSigningTrust) -> Int {
        state.withLock { state in
            if state.trust != trust { state = (trust, state.generation + 1) }
            return state.generation
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
