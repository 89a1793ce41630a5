import Foundation
import ServerTrust
import ServerTrustLab
@testable import ServerTrustPurchases
import ServerTrustTestSupport
import Testing

/// The App Store chain's revocation against a real peer: OpenSSL's own OCSP responder
/// (`openssl ocsp -index`), which answers each request the verifier sends — its nonce echoed,
/// its CertID in the hash it was asked in — from an index of good and revoked certificates, as
/// a CA's responder does.
@Suite struct OpenSSLResponderTests {
    static let bundleID = "com.example.app"
    static let leafOCSP = "http://ocsp.apple.test/leaf"
    static let intermediateOCSP = "http://ocsp.apple.test/wwdr"

    /// One CA's `openssl ocsp` responder: the CA's certificate and key and an `index.txt` in a
    /// temporary folder; each request answered by running the command on it.
    final class Responder: Sendable {
        let folder: URL
        let requests = Locked<[[UInt8]]>([])

        /// - Parameter entries: the certificates the CA issued, each `nil` for good or the
        ///   revocation's reason (an OpenSSL CRL reason name, as `openssl ca -crl_reason` takes).
        init(ca: LabCA, entries: [(Certificate, revokedFor: String?)]) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("servertrust-ocsp-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try ca.certificate.pemEncoded.write(to: folder.appendingPathComponent("ca.pem"), atomically: true, encoding: .utf8)
            try ca.key.pemPrivateKey.write(to: folder.appendingPathComponent("ca.key"), atomically: true, encoding: .utf8)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyMMddHHmmss'Z'"
            let index = entries.map { certificate, reason in
                let revocation = reason.map { formatter.string(from: Date(timeIntervalSinceNow: -3600)) + "," + $0 } ?? ""
                return [reason == nil ? "V" : "R", formatter.string(from: certificate.notValidAfter), revocation, certificate.serialNumber, "unknown", "/CN=lab"]
                    .joined(separator: "\t")
            }
            try (index.joined(separator: "\n") + "\n").write(to: folder.appendingPathComponent("index.txt"), atomically: true, encoding: .utf8)
        }

        deinit { try? FileManager.default.removeItem(at: folder) }

        /// `openssl ocsp` answering one request (DER), signed by the CA, valid for a day.
        func answer(_ request: [UInt8]) -> Result<[UInt8], TrustError> {
            let id = UUID().uuidString
            let requestFile = folder.appendingPathComponent("\(id).req")
            let responseFile = folder.appendingPathComponent("\(id).resp")
            do {
                try Data(request).write(to: requestFile)
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = [
                    "openssl", "ocsp", "-index", folder.appendingPathComponent("index.txt").path,
                    "-CA", folder.appendingPathComponent("ca.pem").path, "-rsigner", folder.appendingPathComponent("ca.pem").path,
                    "-rkey", folder.appendingPathComponent("ca.key").path, "-reqin", requestFile.path, "-respout", responseFile.path,
                    "-ndays", "1",
                ]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                process.waitUntilExit()
                guard process.terminationStatus == 0 else { return .failure(.fetchHTTPStatus(500, "openssl ocsp exited \(process.terminationStatus)")) }
                requests.withLock { $0.append(request) }
                return .success(Array(try Data(contentsOf: responseFile)))
            } catch {
                return .failure(.fetchFailed("openssl ocsp: \(error)"))
            }
        }
    }

    /// A lab whose leaf and intermediate name responders, each played by `openssl ocsp` for its
    /// issuer; `leafRevokedFor` revokes the leaf in the intermediate's index.
    struct Setup {
        let lab: AppStoreLab
        let leafResponder: Responder
        let intermediateResponder: Responder
        let fetcher = FakeRevocationFetcher()

        init(leafRevokedFor reason: String? = nil) throws {
            lab = try AppStoreLab(leafOCSPURL: OpenSSLResponderTests.leafOCSP, intermediateOCSPURL: OpenSSLResponderTests.intermediateOCSP)
            leafResponder = try Responder(ca: lab.intermediate, entries: [(lab.leaf, reason)])
            intermediateResponder = try Responder(ca: lab.root, entries: [(lab.intermediate.certificate, nil)])
            for (url, responder) in [(OpenSSLResponderTests.leafOCSP, leafResponder), (OpenSSLResponderTests.intermediateOCSP, intermediateResponder)] {
                fetcher.route(url) { request, _ in
                    guard let body = request.body else { return .failure(.fetchHTTPStatus(405, "POST only")) }
                    return responder.answer(body)
                }
            }
        }

        func verifier(_ policy: AppStoreRevocationPolicy) throws -> AppStoreSignedDataVerifier {
            try AppStoreSignedDataVerifier(
                roots: [lab.root.certificate], bundleID: OpenSSLResponderTests.bundleID, appAppleID: nil, environment: .sandbox,
                revocation: policy)
        }

        func transaction() throws -> String { try lab.jws(payload: AppStoreLab.transactionJSON()) }
    }

    /// SHA-256, the OID in the CertID's AlgorithmIdentifier.
    static let sha256OID: [UInt8] = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]

    static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        bytes.count >= needle.count && (0...(bytes.count - needle.count)).contains { Array(bytes[$0..<($0 + needle.count)]) == needle }
    }

    /// Hard-fail with a nonce: each certificate's status asked of its responder in a SHA-256
    /// CertID, the nonce echoed by OpenSSL and checked, the chain verified.
    @Test func aGoodChainVerifiesOnOpenSSLsAnswersToNoncedSHA256Requests() throws {
        let setup = try Setup()
        var options = RevocationOptions.hardFail
        options.ocspNonce = true
        options.ocspCertificateIDHash = .sha256
        let verifier = try setup.verifier(AppStoreRevocationPolicy(options: options, fetcher: setup.fetcher, cache: RevocationCache()))
        #expect(try verifier.verifyTransaction(setup.transaction()).bundleId == Self.bundleID)
        let asked = setup.leafResponder.requests.withLock { $0 } + setup.intermediateResponder.requests.withLock { $0 }
        #expect(asked.count == 2)
        #expect(asked.allSatisfy { Self.contains($0, Self.sha256OID) })
    }

    /// The presets ask in SHA-256 too (falling back to SHA-1 where a responder refuses it).
    @Test func theHardFailPresetAsksInSHA256() throws {
        let setup = try Setup()
        let verifier = try setup.verifier(.hardFail(fetcher: setup.fetcher, cache: RevocationCache()))
        #expect(try verifier.verifyTransaction(setup.transaction()).bundleId == Self.bundleID)
        #expect(setup.leafResponder.requests.withLock { $0 }.allSatisfy { Self.contains($0, Self.sha256OID) })
        #expect(setup.leafResponder.requests.withLock { $0.count } == 1)
    }

    /// A leaf the responder's index lists as revoked: refused, with OpenSSL's reason, in
    /// soft-fail as in hard-fail.
    @Test func aLeafOpenSSLListsAsRevokedIsRefused() throws {
        let setup = try Setup(leafRevokedFor: "keyCompromise")
        let error = refusal { try setup.verifier(.softFail(fetcher: setup.fetcher, cache: RevocationCache())).verifyTransaction(setup.transaction()) }
        #expect(error?.code == .revoked)
        #expect(error?.reason.contains("keyCompromise") == true, "\(String(describing: error))")
    }

    /// A leaf the index does not list: OpenSSL answers `unknown`, which hard-fail refuses as
    /// retryable and soft-fail accepts.
    @Test func aLeafOpenSSLDoesNotKnowIsUnknown() throws {
        let setup = try Setup()
        let stranger = try Responder(ca: setup.lab.intermediate, entries: [])
        setup.fetcher.route(Self.leafOCSP) { request, _ in request.body.map(stranger.answer) ?? .failure(.fetchHTTPStatus(405, "POST only")) }
        let error = refusal { try setup.verifier(.hardFail(fetcher: setup.fetcher, cache: RevocationCache())).verifyTransaction(setup.transaction()) }
        #expect(error?.code == .revocationUnknown)
        #expect(error?.isRetryable == true)
        #expect(try setup.verifier(.softFail(fetcher: setup.fetcher, cache: RevocationCache())).verifyTransaction(setup.transaction()).bundleId == Self.bundleID)
    }
}
