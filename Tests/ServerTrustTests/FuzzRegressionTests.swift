import Foundation
import ServerTrust
import Testing

/// Every input the fuzzers (Fuzz/, docs/SECURITY-TESTING.md) ever failed on, and every seed,
/// fed to the same library entry points in the normal test run: a fixed bug stays fixed even
/// where nobody runs libFuzzer. Inputs live in `Fuzz/Regressions/<target>/` and
/// `Fuzz/Corpus/<target>/`; each regression with a known bug also has a test of its own below,
/// asserting the specific behaviour the fix must give.
@Suite struct FuzzRegressionTests {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz")

    /// The files of `Fuzz/<folder>/<target>/`, sorted, without notes.
    static func inputs(_ folder: String, _ target: String) -> [URL] {
        let directory = fuzz.appendingPathComponent(folder).appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasSuffix(".md") && !$0.hasPrefix(".") }.sorted().map(directory.appendingPathComponent)
    }

    static func bytes(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

    /// The fixture PKI the OCSP and CRL inputs were made with (Fuzz/make-seeds.sh).
    struct Fixtures {
        let root: Certificate
        let leaf: Certificate
        let revoked: Certificate
        let validationTime: Date

        init() throws {
            func certificate(_ name: String) throws -> Certificate {
                try Certificate(pemEncoded: String(decoding: try FuzzRegressionTests.bytes(fuzz.appendingPathComponent("Fixtures/\(name).pem")), as: UTF8.self))
            }
            root = try certificate("root")
            leaf = try certificate("leaf")
            revoked = try certificate("revoked")
            let seconds = String(decoding: try FuzzRegressionTests.bytes(fuzz.appendingPathComponent("Fixtures/validation-time.txt")), as: UTF8.self)
            validationTime = Date(timeIntervalSince1970: try #require(TimeInterval(seconds.trimmingCharacters(in: .whitespacesAndNewlines))))
        }
    }

    static let targets = ["pin", "host-pattern", "certificate", "ocsp", "crl", "signed-response", "policy-file", "message-signature"]

    @Test func theFuzzingSeedsAndFixturesArePresent() throws {
        for target in Self.targets {
            #expect(!Self.inputs("Corpus", target).isEmpty, "Fuzz/Corpus/\(target) is empty: run Fuzz/make-seeds.sh")
        }
        _ = try Fixtures()
    }

    @Test(arguments: ["Regressions", "Corpus"])
    func pinInputsParseOrFailWithATrustError(folder: String) throws {
        for url in Self.inputs(folder, "pin") {
            for line in String(decoding: try Self.bytes(url), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
                do {
                    let pin = try Pin(String(line))
                    #expect(try Pin(pin.description) == pin, "\(url.lastPathComponent)")
                } catch is TrustError {}
            }
        }
    }

    @Test(arguments: ["Regressions", "Corpus"])
    func policyFileInputsLoadOrNameTheLineThatFailed(folder: String) throws {
        for url in Self.inputs(folder, "policy-file") {
            let bytes = try Self.bytes(url)
            do {
                let policy = try TrustPolicyFile(data: bytes, fileName: "policy.json")
                #expect(!policy.hosts.isEmpty, "\(url.lastPathComponent)")
            } catch let error as TrustError {
                #expect(error.code == .invalidPolicyFile, "\(url.lastPathComponent): \(error)")
                let line = Int(error.reason.dropFirst("policy.json:".count).prefix { $0.isNumber }) ?? 0
                let lines = bytes.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
                #expect(error.reason.hasPrefix("policy.json:") && (1...lines).contains(line), "\(url.lastPathComponent): \(error.reason)")
            }
        }
    }

    @Test(arguments: ["Regressions", "Corpus"])
    func hostPatternInputsAgreeWithTheManager(folder: String) throws {
        let evaluator = DefaultTrustEvaluator()
        for url in Self.inputs(folder, "host-pattern") {
            let lines = String(decoding: try Self.bytes(url), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let host = lines.last ?? ""
            for text in lines.count > 1 ? lines.dropLast() : lines[...] {
                let pattern: HostPattern
                do {
                    pattern = try HostPattern(text)
                } catch {
                    // Refused as a pattern, and by the manager with the same code.
                    #expect((error as? TrustError)?.code == .invalidHostPattern, "\(url.lastPathComponent): \(text.debugDescription): \(error)")
                    #expect(throws: TrustError(.invalidHostPattern, ""), "\(url.lastPathComponent): \(text.debugDescription)") {
                        try ServerTrustManager(evaluators: [try HostPattern(text): evaluator], allHostsMustBeEvaluated: false)
                    }
                    continue
                }
                let manager = try ServerTrustManager(evaluators: [try HostPattern(text): evaluator], allHostsMustBeEvaluated: false)
                let found = (try? manager.resolve(host: host)) ?? nil
                #expect((found != nil) == pattern.matches(host), "\(url.lastPathComponent): \(pattern) vs \(host.debugDescription)")
            }
        }
    }

    @Test(arguments: ["Regressions", "Corpus"])
    func certificateInputsParseToCertificatesThatRoundTrip(folder: String) throws {
        for url in Self.inputs(folder, "certificate") {
            let bytes = try Self.bytes(url)
            let text = String(decoding: bytes, as: UTF8.self)
            var parsed: [Certificate] = []
            if let certificate = try? Certificate(derEncoded: bytes) { parsed.append(certificate) }
            if let bundle = try? Certificate.certificates(pemBundle: text) { parsed += bundle }
            if let certificate = try? Certificate(base64Encoded: text) { parsed.append(certificate) }
            for certificate in parsed {
                _ = (certificate.subject, certificate.issuer, certificate.serialNumber, certificate.dnsNames, certificate.ipAddresses)
                _ = (certificate.ocspURLs, certificate.crlDistributionPoints, certificate.keyType, certificate.hasMustStaple)
                #expect(try Certificate(derEncoded: certificate.derEncoded) == certificate, "\(url.lastPathComponent)")
                #expect(certificate.spkiPin == certificate.publicKey.pin, "\(url.lastPathComponent)")
            }
        }
    }

    @Test(arguments: ["Regressions", "Corpus"])
    func ocspInputsNeverSayTheLeafIsRevokedOrTheRevokedCertificateGood(folder: String) throws {
        let fixtures = try Fixtures()
        let verifier = OCSPVerifier()
        for url in Self.inputs(folder, "ocsp") {
            let bytes = try Self.bytes(url)
            let leaf = verifier.verify(derEncoded: bytes, for: fixtures.leaf, issuedBy: fixtures.root, at: fixtures.validationTime)
            if case .revoked = leaf.status { Issue.record("\(url.lastPathComponent): the leaf was reported revoked: \(leaf)") }
            let revoked = verifier.verify(derEncoded: bytes, for: fixtures.revoked, issuedBy: fixtures.root, at: fixtures.validationTime)
            #expect(revoked.status != .good, "\(url.lastPathComponent): \(revoked)")
        }
    }

    @Test(arguments: ["Regressions", "Corpus"])
    func crlInputsNeverRevokeTheLeaf(folder: String) throws {
        let fixtures = try Fixtures()
        for url in Self.inputs(folder, "crl") {
            let bytes = try Self.bytes(url)
            let crl: CertificateRevocationList
            do {
                crl = try CertificateRevocationList(bytes: bytes)
            } catch {
                #expect((error as? TrustError)?.code == .malformedCRL, "\(url.lastPathComponent): \(error)")
                continue
            }
            _ = (crl.issuer, crl.thisUpdate, crl.nextUpdate)
            let result = CRLVerifier().verify(crl, for: fixtures.leaf, issuedBy: fixtures.root, at: fixtures.validationTime)
            if case .revoked = result.status { Issue.record("\(url.lastPathComponent): the leaf was reported revoked: \(result)") }
        }
    }

    /// RFC 9421: each input, as response fields, is judged by `MessageSignatureVerifier` under
    /// the fuzz target's fixed key, nonce and clock — the genuine seed verifies and nothing
    /// verifies for another status — and every failure is a verification code with a reason;
    /// each field value as an `Accept-Signature` or `Content-Digest` fails with its own codes.
    @Test(arguments: ["Regressions", "Corpus"])
    func messageSignatureInputsVerifyOnlyAsSignedOrFailWithAReason(folder: String) throws {
        let key = try SignaturePrivateKey(pem: RFC9421Vectors.testKeyEd25519PrivatePEM)
        let policy = MessageSignaturePolicy(keys: SigningKeySet(keys: ["fuzz-key": key.publicKey]))
        let request = MessageSignatureRequest(method: "GET", scheme: "https", host: "fuzz.servertrust.test", path: "/v1/status", query: "a=1")
        let challenge = MessageSignatureChallenge(nonce: "AAAAAAAAAAAAAAAAAAAAAA", request: request, policy: policy, requestTime: 1_800_000_000)
        let body = Array(#"{"fuzzed":true}"#.utf8)
        var verified = 0
        for url in Self.inputs(folder, "message-signature") {
            let name = url.lastPathComponent
            let headers = String(decoding: try Self.bytes(url), as: UTF8.self).split(separator: "\n").map { line -> (name: String, value: String) in
                guard let colon = line.firstIndex(of: ":") else { return (String(line), "") }
                return (String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }))
            }
            func verify(status: Int) throws(ResponseSignatureError) {
                let verifier = try MessageSignatureVerifier(policy: policy, clock: { Date(timeIntervalSince1970: 1_800_000_005) })
                try verifier.verify(status: status, headers: headers, body: body, answering: challenge)
            }
            switch Result(catching: { () throws(ResponseSignatureError) in try verify(status: 200) }) {
            case .success:
                verified += 1
                #expect(throws: ResponseSignatureError.badSignature, "\(name)") { try verify(status: 404) }
            case .failure(let error):
                #expect(!error.reason.isEmpty && error.code != .openSSLFailure && error.code != .invalidConfiguration, "\(name): \(error)")
            }
        }
        if folder == "Corpus" { #expect(verified >= 1, "the genuine seed no longer verifies") }
    }

    /// Each input either parses into a value that keeps the parser's promises, or fails with
    /// the `ResponseSignatureError` code the parser documents for bad input — never another code,
    /// never a crash (third security review, finding 6: this test once wrapped every call in
    /// `try?` and so could only crash).
    @Test(arguments: ["Regressions", "Corpus"])
    func signedResponseInputsParseOrFailWithAResponseSignatureError(folder: String) throws {
        var outcomes: [String: Int] = [:]
        for url in Self.inputs(folder, "signed-response") {
            let name = url.lastPathComponent
            let text = String(decoding: try Self.bytes(url), as: UTF8.self)
            let headers = text.split(separator: "\n").map { line -> (name: String, value: String) in
                guard let colon = line.firstIndex(of: ":") else { return (String(line), "") }
                return (String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }))
            }
            switch Result(catching: { () throws(ResponseSignatureError) in
                try SignatureChallenge(receivedMethod: "GET", target: "/v1/status?a=1", headers: headers, body: [])
            }) {
            case .success(let challenge):
                outcomes["challenge", default: 0] += 1
                #expect((16...64).contains(challenge.nonce.count), "\(name): nonce of \(challenge.nonce.count) bytes")
            case .failure(let error):
                outcomes[error.code.description, default: 0] += 1
                #expect([.missingChallenge, .malformedChallenge].contains(error.code), "\(name): \(error)")
                #expect(!error.reason.isEmpty, "\(name)")
            }
            // Every field value whole, and each `name=value` parameter of it (where a
            // signature header carries its intermediate certificate).
            let values = headers.flatMap { field, value in
                [(field, value)] + value.split(separator: ";").compactMap { parameter in
                    parameter.firstIndex(of: "=").map { (field, String(parameter[parameter.index(after: $0)...])) }
                }
            }
            for (field, value) in values {
                switch Result(catching: { () throws(ResponseSignatureError) in try IntermediateKeyCertificate(base64: value) }) {
                case .success(let certificate):
                    outcomes["intermediate", default: 0] += 1
                    #expect(try IntermediateKeyCertificate(base64: certificate.base64) == certificate, "\(name): \(field)")
                case .failure(let error):
                    #expect(error.code == .malformedIntermediateCertificate, "\(name): \(field): \(error)")
                }
                switch Result(catching: { () throws(ResponseSignatureError) in try VerificationKey(base64: value) }) {
                case .success(let key):
                    outcomes["key", default: 0] += 1
                    #expect(key.base64 == value, "\(name): \(field): a key must be written in its one canonical form")
                case .failure(let error):
                    #expect(error.code == .malformedKey, "\(name): \(field): \(error)")
                }
            }
        }
        if folder == "Corpus" {
            // The seeds reach both sides of the parsers: the genuine header's challenge-less
            // response, and its intermediate certificate.
            #expect(outcomes["missingChallenge", default: 0] > 0, "\(outcomes)")
            #expect(outcomes["intermediate", default: 0] > 0, "\(outcomes)")
        }
    }

    /// The signed-response fuzzer starts from `Corpus/signed-response/genuine`, a header signed
    /// for its fixed keys and request: if a layout change leaves it stale, the fuzzer never
    /// reaches the checks after the signature. Revision 2 (the port in the request digest, audit
    /// #15 finding 5(c)) regenerated it.
    @Test func theSignedResponseSeedIsGenuineForTheCurrentLayout() throws {
        let root = try SigningKey(rawRepresentation: Array(repeating: 0x01, count: 32))
        let text = String(decoding: try Self.bytes(Self.fuzz.appendingPathComponent("Corpus/signed-response/genuine")), as: UTF8.self)
        let headers = text.split(separator: "\n").map { line -> (name: String, value: String) in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " }))
        }
        let challenge = try SignatureChallenge(
            method: "GET", host: "fuzz.servertrust.test", port: 443, path: "/v1/status", query: "a=1", requestBody: [],
            nonce: Array(repeating: 0x07, count: 32), requestTime: 1_800_000_000)
        let verifier = try ResponseSignatureVerifier(roots: [SignedResponseRoot(root.verificationKey)], clock: { Date(timeIntervalSince1970: 1_800_000_005) })
        try verifier.verify(status: 200, headers: headers, body: Array("fuzzed body".utf8), answering: challenge)
    }
}
