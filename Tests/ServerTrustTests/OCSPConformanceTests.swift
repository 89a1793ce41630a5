import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// BoringSSL's OCSP unit-test responses (`../shared/conformance/ocsp.tgz`), judged by
/// ``OCSPVerifier`` directly with the case's issuer.
///
/// `servertrust verify` cannot exercise them: the cases' anchor, "Test Intermediate CA", is a v3
/// certificate without basicConstraints, which path validation refuses as a CA before any OCSP
/// check runs (see `Tests/Conformance/ocsp.xfail`). Here each response is checked against the
/// exact unknown reason BoringSSL's verdict corresponds to. Skipped where the suite is absent.
@Suite(.enabled(if: ocspConformanceArchive != nil, "../shared/conformance/ocsp.tgz not found"))
struct OCSPConformanceTests {

    /// What each case must yield.
    static let expected: [String: RevocationStatus?] = [
        "bad_ocsp_type": .unknown(.malformed),
        "bad_signature": .unknown(.badSignature),
        "bad_status": .unknown(.malformed),
        "future_response": .unknown(.notYetValid),
        "good_response": .good,
        "good_response_next_update": .good,
        "good_response_sha256": .good,
        "has_critical_ct_extension": .good,
        "has_critical_response_extension": .unknown(.unhandledCriticalExtension),
        "has_critical_single_extension": .unknown(.unhandledCriticalExtension),
        "has_extension": .good,
        "has_single_extension": .good,
        "has_version": .good,
        "invalid_response": .unknown(.malformed),
        "invalid_response_data": .unknown(.malformed),
        "malformed_request": .unknown(.responderError(.malformedRequest)),
        "missing_response": .unknown(.certificateIDMismatch),
        "multiple_response": .unknown(.responderSaysUnknown),
        "multiple_response_good_revoked": nil,  // revoked: date and reason checked below
        "no_response": .unknown(.certificateIDMismatch),
        "ocsp_extra_certs": .good,
        "ocsp_sign_bad_indirect": .unknown(.unauthorizedSigner),
        "ocsp_sign_direct": .good,
        "ocsp_sign_indirect": .good,
        "ocsp_sign_indirect_missing": .unknown(.unauthorizedSigner),
        "old_response": .unknown(.tooOld),
        "other_response": .unknown(.certificateIDMismatch),
        "produced_early_response": .unknown(.producedOutsideCertificateValidity),
        "produced_late_response": .unknown(.producedOutsideCertificateValidity),
        "responder_id": .good,
        "responder_name": .good,
        "revoke_response": nil,
        "revoke_response_reason": nil,
        "stale_response": .unknown(.stale),
        "unknown_response": .unknown(.responderSaysUnknown),
    ]

    @Test func everyResponseYieldsTheStatusBoringSSLExpects() throws {
        let cases = try Self.unpack()
        defer { try? FileManager.default.removeItem(at: cases.deletingLastPathComponent()) }
        let names = try FileManager.default.contentsOfDirectory(atPath: cases.path).sorted()
        #expect(names.count == 36)
        for name in names {
            let folder = cases.appendingPathComponent(name)
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("case.json"))) as? [String: Any]
            let time = try #require(ISO8601DateFormatter().date(from: json?["time"] as? String ?? ""))
            let maximumAge = try #require(json?["max_age_seconds"] as? Int)
            let expectedName = try #require(json?["expected_revocation_status"] as? String)
            if name == "good_response_invalid_serial" {
                // The leaf's serial is a non-minimal INTEGER, which OpenSSL refuses to parse.
                #expect(throws: TrustError.malformedCertificate) {
                    try Certificate.certificates(contentsOfFile: folder.appendingPathComponent("leaf.pem").path)
                }
                continue
            }
            let leaf = try #require(Certificate.certificates(contentsOfFile: folder.appendingPathComponent("leaf.pem").path).first)
            let issuer = try #require(Certificate.certificates(contentsOfFile: folder.appendingPathComponent("issuer.pem").path).first)
            let der = try [UInt8](Data(contentsOf: folder.appendingPathComponent("ocsp.der")))
            let verifier = OCSPVerifier(configuration: .init(maximumAge: TimeInterval(maximumAge)))
            let result = verifier.verify(derEncoded: der, for: leaf, issuedBy: issuer, at: time)

            #expect(result.status.name == expectedName.lowercased(), "\(name): \(result)")
            switch Self.expected[name] {
            case .some(.some(let status)):
                #expect(result.status == status, "\(name): \(result)")
            case .some(.none):
                guard case .revoked(_, let date) = result.status else {
                    Issue.record("\(name): expected revoked, got \(result)")
                    continue
                }
                #expect(date <= time, "\(name): \(result)")
            case .none:
                Issue.record("\(name): a case this test does not know")
            }
        }
    }

    /// Unpacks the archive into a fresh temporary folder and returns its `ocsp-cases` folder.
    private static func unpack() throws -> URL {
        let archive = try #require(ocspConformanceArchive)
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ServerTrustTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let tar = try ChildProcess.run("/bin/tar", ["-xzf", archive.path, "-C", directory.path])
        try #require(tar.status == 0)
        return directory.appendingPathComponent("ocsp-cases")
    }
}

/// `../shared/conformance/ocsp.tgz` beside the package, when present.
private let ocspConformanceArchive: URL? = {
    let url = PackageFiles.root.deletingLastPathComponent().appendingPathComponent("shared/conformance/ocsp.tgz")
    return FileManager.default.fileExists(atPath: url.path) ? url : nil
}()
