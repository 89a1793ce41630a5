import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// ``ChainInspection``: each default check recorded, never thrown, and its JSON.
@Suite struct ChainInspectionTests {
    static let host = "inspect.servertrust.test"
    let root: LabCA
    let intermediate: LabCA
    let leaf: LabLeaf

    init() throws {
        root = try LabPKI.makeRoot(commonName: "Inspection Root")
        intermediate = try root.issueIntermediate(commonName: "Inspection Intermediate")
        leaf = try intermediate.issueLeaf(dnsNames: [Self.host])
    }

    private func inspect(anchors: [Certificate], host: String = Self.host, staple: [UInt8]? = nil) throws -> ChainInspection {
        let trust = PeerTrust(
            presentedChain: [leaf.certificate, intermediate.certificate], anchors: try TrustAnchors(anchors), stapledOCSPResponse: staple)
        return ChainInspection(trust: trust, host: host)
    }

    @Test func aTrustedChainPassesEveryCheckAndNamesTheAnchorNotSent() throws {
        let inspection = try inspect(anchors: [root.certificate], staple: try intermediate.makeOCSPResponseDER(for: leaf.certificate))
        #expect(inspection.passesDefaultValidation)
        #expect(inspection.validatedChain == [leaf.certificate, intermediate.certificate, root.certificate])
        #expect(inspection.presentedIndices == [0, 1, nil])
        #expect(inspection.stapledOCSP.passed)
        #expect(inspection.stapledOCSP.detail.hasPrefix("GOOD: "))
    }

    @Test func anUnknownAnchorFailsTheChainAndTheHostIsJudgedOnTheLeafAlone() throws {
        let other = try LabPKI.makeRoot(commonName: "Other Root")
        let inspection = try inspect(anchors: [other.certificate], staple: [0x30, 0x00])
        #expect(!inspection.passesDefaultValidation)
        guard case .failed(let error) = inspection.chain else {
            Issue.record("the chain check should fail: \(inspection.chain)")
            return
        }
        #expect(error.code == .chainValidationFailed)
        #expect(inspection.validatedChain.isEmpty)
        #expect(inspection.hostName.detail == "the leaf is valid for \(Self.host) (checked on the leaf alone, as the chain failed)")
        #expect(inspection.stapledOCSP.identifier == "notChecked")
    }

    @Test func aWrongHostFailsOnlyTheHostCheck() throws {
        let inspection = try inspect(anchors: [root.certificate], host: "other.servertrust.test")
        #expect(inspection.chain.passed)
        guard case .failed(let error) = inspection.hostName else {
            Issue.record("the host check should fail: \(inspection.hostName)")
            return
        }
        #expect(error.code == .hostMismatch)
        #expect(inspection.stapledOCSP.detail == "no OCSP response was stapled")
    }

    @Test func theJSONHasTheChecksBothChainsAndANullIndexForTheAnchor() throws {
        let inspection = try inspect(anchors: [root.certificate], host: "other.servertrust.test")
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(inspection)) as? [String: Any])
        #expect(object.keys.sorted() == ["checks", "host", "negotiated", "passesDefaultValidation", "presentedChain", "validatedChain", "validationTime"])
        let checks = try #require(object["checks"] as? [String: [String: Any]])
        #expect(checks["host"]?["result"] as? String == "failed")
        #expect(checks["host"]?["code"] as? String == "hostMismatch")
        #expect(checks["chain"]?.keys.sorted() == ["detail", "result"])
        let validated = try #require(object["validatedChain"] as? [[String: Any]])
        #expect(validated.map { $0["presentedIndex"] as? Int } == [0, 1, nil])
        #expect(validated[2]["presentedIndex"] is NSNull)
        #expect(validated[0]["spkiPin"] as? String == leaf.certificate.spkiPin.description)
    }
}
