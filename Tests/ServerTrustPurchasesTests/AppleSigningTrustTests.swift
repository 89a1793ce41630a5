import Foundation
import ServerTrust
import ServerTrustLab
@testable import ServerTrustPurchases
import ServerTrustTestSupport
import Testing

/// ``AppleSigningTrust`` — the roots, intermediates and marker checks the verifiers trust — read
/// from a delivered document, compared with its floor, and replaced under running verifiers.
@Suite struct AppleSigningTrustTests {
    static let bundleID = "com.example.app"

    static func document(roots: [Certificate], intermediates: [Certificate] = [], extra: String = "",
                         intermediateMarkers: String = #"["1.2.840.113635.100.6.2.1"]"#, leafMarkers: String = #"["1.2.840.113635.100.6.11.1"]"#) -> [UInt8] {
        func list(_ certificates: [Certificate]) -> String {
            "[" + certificates.map { "\"" + Data($0.derEncoded).base64EncodedString() + "\"" }.joined(separator: ",") + "]"
        }
        return Array("""
            {"version": 1, "roots": \(list(roots)), "intermediates": \(list(intermediates)), \
            "intermediateMarkers": \(intermediateMarkers), "leafMarkers": \(leafMarkers)\(extra)}
            """.utf8)
    }

    static func labTrust(_ lab: AppStoreLab, leafMarkers: [String] = [AppStoreLab.leafMarkerOID]) throws -> AppleSigningTrust {
        try AppleSigningTrust(roots: [lab.root.certificate], intermediateMarkerOIDs: [AppStoreLab.intermediateMarkerOID], leafMarkerOIDs: leafMarkers)
    }

    @Test func theCompiledInSetIsApplesRootsAndMarkers() {
        let trust = AppleSigningTrust.compiledIn
        #expect(trust.roots.map(\.derEncoded) == AppleRootCertificates.all.map(\.derEncoded))
        #expect(trust.roots.count == 3)
        #expect(trust.intermediates.isEmpty)
        #expect(trust.intermediateMarkerOIDs == ["1.2.840.113635.100.6.2.1"])
        #expect(trust.leafMarkerOIDs == ["1.2.840.113635.100.6.11.1"])
    }

    @Test func aDeliveredDocumentIsReadWithEveryMember() throws {
        let lab = try AppStoreLab()
        let trust = try AppleSigningTrust(json: Self.document(roots: AppleRootCertificates.all + [lab.root.certificate], intermediates: [lab.intermediate.certificate]))
        #expect(trust.roots.count == 4)
        #expect(trust.intermediates == [lab.intermediate.certificate])
        #expect(trust.weakenings(comparedTo: .compiledIn).isEmpty)
    }

    /// Each malformed document refused, naming what is wrong; never a partial set.
    @Test(arguments: [
        (#", "extra": 1"#, "unknown member \"extra\""),
        (#", "version": 2"#, "not strict JSON"),  // a duplicate key
    ])
    func aDocumentWithAnUnknownOrDuplicateMemberIsRefused(extra: String, expected: String) throws {
        let error = refusal { try AppleSigningTrust(json: Self.document(roots: AppleRootCertificates.all, extra: extra)) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.reason.contains(expected) == true, "\(String(describing: error))")
    }

    @Test func malformedMembersAreRefusedByName() throws {
        let roots = AppleRootCertificates.all
        let cases: [([UInt8], String)] = [
            (Array(#"{"version": 2, "roots": [], "intermediateMarkers": [], "leafMarkers": []}"#.utf8), "version 2"),
            (Array(#"{"version": 1, "intermediateMarkers": [], "leafMarkers": []}"#.utf8), "no \"roots\""),
            (Array(#"{"version": 1, "roots": ["AAAA"], "intermediateMarkers": [], "leafMarkers": []}"#.utf8), "roots[0] is not a base64 DER certificate"),
            (Array(#"{"version": 1, "roots": ["not base64!"], "intermediateMarkers": [], "leafMarkers": []}"#.utf8), "roots[0]"),
            (Self.document(roots: []), "at least one root"),
            (Self.document(roots: roots + [roots[0]]), "given twice"),
            (Self.document(roots: roots, leafMarkers: #"["1.2.x"]"#), "\"1.2.x\" is not a dotted object identifier"),
            (Self.document(roots: roots, leafMarkers: #"["1.02.3"]"#), "not a dotted object identifier"),
            (Array(#"{"version": 1, "roots": [], "intermediateMarkers": []}"#.utf8), "no \"leafMarkers\""),
            (Array(#"{"version": 1, "roots": [], "intermediateMarkers": "1.2", "leafMarkers": []}"#.utf8), "\"intermediateMarkers\" is not an array"),
            (Array("[]".utf8), "not a JSON object"),
        ]
        for (json, expected) in cases {
            let error = refusal { try AppleSigningTrust(json: json, name: "trust.json") }
            #expect(error?.code == .invalidConfiguration, "\(expected)")
            #expect(error?.reason.contains(expected) == true, "\(expected): \(String(describing: error))")
        }
    }

    @Test func droppingARootOrAMarkerIsAWeakeningAndAddingIsNot() throws {
        let lab = try AppStoreLab()
        let floor = AppleSigningTrust.compiledIn
        let added = try AppleSigningTrust(
            roots: floor.roots + [lab.root.certificate], intermediates: [lab.intermediate.certificate],
            intermediateMarkerOIDs: floor.intermediateMarkerOIDs + ["1.2.3.4"], leafMarkerOIDs: floor.leafMarkerOIDs)
        #expect(added.weakenings(comparedTo: floor).isEmpty)
        let droppedRoot = try AppleSigningTrust(roots: Array(floor.roots.prefix(2)), intermediateMarkerOIDs: floor.intermediateMarkerOIDs, leafMarkerOIDs: floor.leafMarkerOIDs)
        #expect(droppedRoot.weakenings(comparedTo: floor) == ["drops the root \(floor.roots[2].subject) (\(floor.roots[2].spkiPin))"])
        let droppedMarkers = try AppleSigningTrust(roots: floor.roots, intermediateMarkerOIDs: [], leafMarkerOIDs: [])
        #expect(droppedMarkers.weakenings(comparedTo: floor) == [
            "no longer requires the intermediate marker 1.2.840.113635.100.6.2.1", "no longer requires the leaf marker 1.2.840.113635.100.6.11.1",
        ])
    }

    /// A verifier on a ``LiveAppleSigningTrust`` follows each replacement at its next
    /// verification: a chain it remembers from an earlier set is verified again.
    @Test func aReplacedSetIsInForceForTheNextVerification() throws {
        let labA = try AppStoreLab(), labB = try AppStoreLab()
        let live = LiveAppleSigningTrust(try Self.labTrust(labA))
        let verifier = try AppStoreSignedDataVerifier(trust: live, bundleID: Self.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
        let fromA = try labA.jws(payload: AppStoreLab.transactionJSON())
        let fromB = try labB.jws(payload: AppStoreLab.transactionJSON())
        #expect(try verifier.verifyTransaction(fromA).bundleId == Self.bundleID)
        #expect(refusal { try verifier.verifyTransaction(fromB) }?.code == .untrustedRoot)
        #expect(verifier.chainValidations == 2)  // A's, remembered; B's, refused

        #expect(live.replace(with: try Self.labTrust(labB)) == 2)
        #expect(refusal { try verifier.verifyTransaction(fromA) }?.code == .untrustedRoot)  // remembered, but not under this set
        #expect(verifier.chainValidations == 3)
        #expect(try verifier.verifyTransaction(fromB).bundleId == Self.bundleID)

        // A marker the set adds is required of every chain from now on.
        #expect(live.replace(with: try Self.labTrust(labB, leafMarkers: [AppStoreLab.leafMarkerOID, "1.2.3.4"])) == 3)
        #expect(refusal { try verifier.verifyTransaction(fromB) }?.code == .missingMarkerExtension)
        // The same set again is no new generation.
        #expect(live.replace(with: try Self.labTrust(labB, leafMarkers: [AppStoreLab.leafMarkerOID, "1.2.3.4"])) == 3)
    }

    /// A receipt that carries only its signer verifies when the set offers the intermediate.
    @Test func aSetsIntermediatesCompleteAReceiptsPath() throws {
        let lab = try ReceiptLab()
        var options = ReceiptLab.Options()
        options.certificates = [lab.signer]
        let receipt = try lab.receipt(payload: ReceiptLab.attributeSet(ReceiptLab.payloadAttributes(bundleID: Self.bundleID)), options: options)
        let without = try AppStoreReceiptVerifier(roots: [lab.root.certificate], bundleID: Self.bundleID, revocation: .disabled)
        #expect(refusal { try without.verify(receipt) }?.code == .untrustedRoot)  // no path from its signer to a root
        let trust = try AppleSigningTrust(
            roots: [lab.root.certificate], intermediates: [lab.intermediate.certificate],
            intermediateMarkerOIDs: [AppStoreLab.intermediateMarkerOID], leafMarkerOIDs: [AppStoreLab.leafMarkerOID])
        let with = try AppStoreReceiptVerifier(trust: LiveAppleSigningTrust(trust), bundleID: Self.bundleID, revocation: .disabled)
        #expect(try with.verify(receipt).bundleID == Self.bundleID)
    }
}
