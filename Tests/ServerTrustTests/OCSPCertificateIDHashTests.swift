import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// `RevocationOptions.ocspCertificateIDHash`: SHA-1 CertIDs by default (RFC 5019), SHA-256
/// where asked for, with SHA-1 from a responder that answers but not about a SHA-256 CertID,
/// and that responder remembered.
@Suite struct OCSPCertificateIDHashTests {
    /// The hash a request's CertID names, read from the request's DER (POST body, or the
    /// base64 of a GET's last path segment): the AlgorithmIdentifier's OID.
    static func hash(of request: RevocationFetchRequest) -> String? {
        var der = request.body
        if der == nil, let segment = request.url.split(separator: "/").last {
            let text = segment.replacingOccurrences(of: "%2B", with: "+").replacingOccurrences(of: "%2F", with: "/")
                .replacingOccurrences(of: "%3D", with: "=")
            der = Data(base64Encoded: text).map { Array($0) }
        }
        guard let der else { return nil }
        let sha1: [UInt8] = [0x06, 0x05, 0x2B, 0x0E, 0x03, 0x02, 0x1A]
        let sha256: [UInt8] = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]
        func contains(_ needle: [UInt8]) -> Bool {
            der.count >= needle.count && (0...(der.count - needle.count)).contains { Array(der[$0..<($0 + needle.count)]) == needle }
        }
        return contains(sha256) ? "sha256" : contains(sha1) ? "sha1" : nil
    }

    /// A responder that answers `good` with the CertID it was asked about, in the hash it was
    /// asked in; `sha256Answer` replaces its answer to a SHA-256 CertID.
    static func responder(_ pki: RevocationPKI, leaf: LabLeaf? = nil, sha256Answer: (@Sendable () throws -> [UInt8])? = nil) -> FakeRevocationFetcher {
        let fetcher = FakeRevocationFetcher()
        let certificate = (leaf ?? pki.leaf).certificate
        fetcher.route(RevocationPKI.leafOCSP) { request, _ in
            do {
                switch hash(of: request) {
                case "sha256":
                    if let sha256Answer { return .success(try sha256Answer()) }
                    return .success(try OCSPResponseBuilder(signer: pki.ca).adding(.good, for: certificate, issuedBy: pki.ca, hash: .sha256).build())
                case "sha1":
                    return .success(try OCSPResponseBuilder(signer: pki.ca).adding(.good, for: certificate, issuedBy: pki.ca, hash: .sha1).build())
                default:
                    return .failure(.fetchHTTPStatus(400, "no CertID hash"))
                }
            } catch let error as TrustError {
                return .failure(error)
            } catch {
                return .failure(.fetchHTTPStatus(500, "\(error)"))
            }
        }
        return fetcher
    }

    @Test func requestsNameTheirCertificateBySHA1ByDefault() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = Self.responder(pki)
        #expect(try leafStatus(pki.evaluator(fetcher: fetcher), pki.trust()) == .good)
        #expect(fetcher.requests.map(Self.hash) == ["sha1"])
    }

    @Test func aResponderThatAnswersSHA256IsAskedOnceInSHA256() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = Self.responder(pki)
        let evaluator = pki.evaluator(.hard { $0.ocspCertificateIDHash = .sha256 }, fetcher: fetcher)
        #expect(try leafStatus(evaluator, pki.trust()) == .good)
        #expect(fetcher.requests.map(Self.hash) == ["sha256"])
    }

    /// Each way a responder says it does not know a SHA-256 CertID: SHA-1 is asked next, in
    /// the same evaluation, and the answer accepted under hard-fail.
    @Test(arguments: ["unauthorized", "malformedRequest", "unknown", "sha1Answer", "http404"])
    func aResponderThatRefusesSHA256IsAskedAgainInSHA1(refusal: String) throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let answer: @Sendable () throws -> [UInt8] = {
            switch refusal {
            case "unauthorized": return try OCSPResponseBuilder.errorResponse(.unauthorized)
            case "malformedRequest": return try OCSPResponseBuilder.errorResponse(.malformedRequest)
            case "unknown": return try OCSPResponseBuilder(signer: pki.ca).adding(.unknown, for: pki.leaf.certificate, issuedBy: pki.ca, hash: .sha256).build()
            // A response about another certificate of the same CA: not the CertID asked about.
            case "sha1Answer":
                let other = try pki.ca.issueLeaf(dnsNames: ["other.example.com"])
                return try OCSPResponseBuilder(signer: pki.ca).adding(.good, for: other.certificate, issuedBy: pki.ca, hash: .sha256).build()
            default: throw TrustError.fetchHTTPStatus(404, "no such CertID")
            }
        }
        let fetcher = Self.responder(pki, sha256Answer: answer)
        let cache = RevocationCache(failureBackoff: .zero)
        let evaluator = pki.evaluator(.hard { $0.ocspCertificateIDHash = .sha256 }, fetcher: fetcher, cache: cache)
        #expect(try leafStatus(evaluator, pki.trust()) == .good)
        let asked = fetcher.requests.map(Self.hash)
        #expect(asked.first == "sha256")
        #expect(asked.last == "sha1")
        // SHA-256 (by GET, and by POST where the GET was refused as a request), then SHA-1.
        #expect(asked.drop { $0 == "sha256" }.allSatisfy { $0 == "sha1" }, "\(asked)")
        // Remembered: another certificate from the same responder is asked in SHA-1 alone.
        let sibling = try pki.ca.issueLeaf(dnsNames: [RevocationPKI.host], ocspURL: RevocationPKI.leafOCSP)
        let siblingFetcher = Self.responder(pki, leaf: sibling, sha256Answer: answer)
        let siblingEvaluator = pki.evaluator(.hard { $0.ocspCertificateIDHash = .sha256 }, fetcher: siblingFetcher, cache: cache)
        let siblingTrust = PeerTrust(presentedChain: sibling.chain, anchors: try TrustAnchors([pki.root.certificate]))
        #expect(try leafStatus(siblingEvaluator, siblingTrust) == .good)
        #expect(siblingFetcher.requests.map(Self.hash) == ["sha1"])
    }

    /// A responder that fails as a server (HTTP 500) is not asked again in SHA-1: it did not
    /// refuse the CertID, and the status is unknown.
    @Test func aServerFailureIsNotTakenForARefusedCertificateID() throws {
        let pki = try RevocationPKI(leafCRL: nil)
        let fetcher = FakeRevocationFetcher()
        fetcher.fail(RevocationPKI.leafOCSP, .fetchHTTPStatus(500, "internal error"))
        let evaluator = pki.evaluator(.soft { $0.ocspCertificateIDHash = .sha256 }, fetcher: fetcher)
        guard case .unknown = try leafStatus(evaluator, pki.trust()) else {
            Issue.record("a responder that fails gives no decisive status")
            return
        }
        #expect(fetcher.requests.map(Self.hash) == ["sha256"])
    }
}
