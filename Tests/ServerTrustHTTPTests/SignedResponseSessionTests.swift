import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// `Session` with signed-response policies against a `LocalTLSServer` whose handler signs with
/// `ResponseSigner`. Dishonest handlers stand in for whatever altered the response on the way.
@Suite struct SignedResponseSessionTests {
    static let host = SessionFixture.host
    let body = #"{"balance":"100.00"}"#

    private func url(_ fixture: SessionFixture, _ path: String = "/v1/balance?account=7") -> URL { fixture.url(path) }

    // MARK: Honest server

    @Test func aSignedResponseIsVerifiedInEnforcedAndInformationalMode() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let body = self.body
        fixture.serveSigned(keys) { _ in SignedReply(body: body, headers: [("ETag", "\"b7\"")]) }
        for policy in [SignedResponsePolicy.enforced(roots: keys.roots), .informational(roots: keys.roots)] {
            let log = VerificationFailureLog()
            let session = try fixture.signingSession([Self.host: policy], log: log)
            defer { session.shutdown() }
            let response = try await session.data(for: Request(url: url(fixture)))
            #expect(response.verification == .verified)
            #expect(response.text == body)
            #expect(log.failures.isEmpty)
        }
        let sent = fixture.server.recentRequests.last!
        #expect(Data(base64Encoded: sent.header(SignedResponseHeader.nonce) ?? "")?.count == 32)
        #expect(sent.header(SignedResponseHeader.requestTime).flatMap { Int($0) } != nil)
        #expect(fixture.server.recentRequests.map { $0.header(SignedResponseHeader.nonce) }.count == 2)
        #expect(Set(fixture.server.recentRequests.map { $0.header(SignedResponseHeader.nonce) }).count == 2)
    }

    /// Second audit, finding 1, for signed-response policies: the deeper base decides, so a
    /// disabled `*.servertrust.test` does not switch off the enforced `**.api.servertrust.test`
    /// for the host `api.servertrust.test`.
    @Test func finding1TheDeepestSignedResponsePatternGovernsTheApexHost() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let session = try fixture.signingSession([
            "*.servertrust.test": .disabled,
            "**.api.servertrust.test": .enforced(roots: keys.roots),
        ])
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/status/200").absoluteString) }.sessionError
        #expect(error?.code == .responseSignatureInvalid)
        #expect(error?.signatureError?.code == .missingSignature)
    }

    @Test func withoutAPolicyOrWithADisabledOneNothingIsSentOrChecked() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { _ in SignedReply(body: "unsigned") }
        for policies in [[:], [Self.host: SignedResponsePolicy.disabled], ["**.other.test": .enforced(roots: keys.roots)]] {
            let session = try fixture.signingSession(policies)
            defer { session.shutdown() }
            let response = try await session.data(for: Request(url: url(fixture)))
            #expect(response.verification == .notRequested)
            #expect(fixture.server.recentRequests.last?.header(SignedResponseHeader.nonce) == nil)
        }
    }

    @Test func aPOSTAndAHEADAreVerified() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { request in SignedReply(body: "got \(request.body.count) bytes") }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { session.shutdown() }
        let post = try await session.post(url(fixture, "/v1/transfer").absoluteString, body: Array("amount=10".utf8))
        #expect(post.verification == .verified)
        #expect(post.text == "got 9 bytes")
        let head = try await session.data(for: Request(method: .head, url: url(fixture)))
        #expect(head.verification == .verified)
        #expect(head.body.isEmpty)
    }

    @Test func thePathAndQueryAreSignedAsLibcurlSendsThem() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { request in SignedReply(body: request.target) }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { session.shutdown() }
        // libcurl removes dot segments before sending; percent-encoding travels as written.
        let response = try await session.data(for: Request(url: url(fixture, "/a/./b/../v1/caf%C3%A9?q=%20x&y=%2F")))
        #expect(response.text == "/a/v1/caf%C3%A9?q=%20x&y=%2F")
        #expect(response.verification == .verified)
        let bare = try await session.data(for: Request(url: URL(string: fixture.server.url("", host: Self.host))!))
        #expect(bare.text == "/")
        #expect(bare.verification == .verified)
    }

    @Test func aSignedErrorStatusIsVerifiedLikeAnyOther() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { request in SignedReply(status: request.path == "/missing" ? 404 : 503, body: "no") }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { session.shutdown() }
        #expect(try await session.data(for: Request(url: url(fixture, "/missing"))).verification == .verified)
        let unavailable = try await session.data(for: Request(url: url(fixture, "/busy")))
        #expect(unavailable.status == 503)
        #expect(unavailable.verification == .verified)
    }

    // MARK: Modes

    @Test func aTamperedBodyThrowsWhenEnforcedIsMarkedFailedWhenInformationalAndPassesWhenDisabled() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let body = self.body
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: #"{"balance":"999999.00"}"#)
            reply.signedBody = Array(body.utf8)  // stand-in: the server signed `body`; something rewrote it after
            return reply
        }
        let enforcedLog = VerificationFailureLog()
        let enforced = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)], log: enforcedLog)
        defer { enforced.shutdown() }
        let error = await outcome { try await enforced.data(for: Request(url: url(fixture))) }.sessionError
        #expect(error?.code == .responseSignatureInvalid)
        #expect(error?.signatureError?.code == .bodyMismatch)
        #expect(error?.signatureError?.status == 200)
        #expect(error?.url == url(fixture).absoluteString)
        #expect(enforcedLog.failures.map(\.mode) == [.enforced])

        let informationalLog = VerificationFailureLog()
        let logs = CapturedLogs()
        let informational = try fixture.signingSession([Self.host: .informational(roots: keys.roots)], log: informationalLog) {
            $0.logger = logs.logger
        }
        defer { informational.shutdown() }
        let marked = try await informational.data(for: Request(url: url(fixture)))
        #expect(marked.verification == .failed(.bodyMismatch))
        #expect(!marked.verification.isVerified)
        #expect(marked.text == #"{"balance":"999999.00"}"#)
        #expect(informationalLog.failures.map(\.error.code) == [.bodyMismatch])
        #expect(informationalLog.failures.first?.url == url(fixture))
        #expect(informationalLog.failures.first?.mode == .informational)
        // Informational mode logs the failure once, at error, with what an operator filters on.
        let signatureErrors = logs.at(.error).filter { $0.metadata["evaluator"] == "ResponseSignatureVerifier" }
        #expect(signatureErrors.count == 1)
        #expect(signatureErrors.first?.metadata["reason"] == "bodyMismatch")
        #expect(signatureErrors.first?.metadata["mode"] == "informational")
        #expect(signatureErrors.first?.metadata["host"] == Self.host)

        let disabled = try fixture.signingSession([Self.host: .disabled])
        defer { disabled.shutdown() }
        #expect(try await disabled.data(for: Request(url: url(fixture))).verification == .notRequested)
    }

    @Test func anUnsignedServerErrorThrowsWithItsStatusWhenEnforcedAndIsReturnedFailedWhenInformational() async throws {
        let fixture = try SessionFixture()
        // A load balancer's 503, which cannot sign.
        fixture.server.setHandler { _ in LocalHTTPResponse.text("upstream unavailable\n", status: 503) }
        let keys = try SigningKeys()
        let enforced = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { enforced.shutdown() }
        let error = await outcome { try await enforced.data(for: Request(url: url(fixture))) }.sessionError
        #expect(error?.code == .responseSignatureInvalid)
        #expect(error?.signatureError?.code == .missingSignature)
        #expect(error?.signatureError?.status == 503)

        let informational = try fixture.signingSession([Self.host: .informational(roots: keys.roots)])
        defer { informational.shutdown() }
        let response = try await informational.data(for: Request(url: url(fixture)))
        #expect(response.status == 503)
        #expect(response.verification == .failed(.missingSignature))
    }

    // MARK: Nonce, replay, time

    @Test func aResponseSignedForAnotherNonceIsRejected() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "for someone else")
            reply.receivedRequest = { request in
                var other = request
                other.headers = request.headers.map {
                    $0.name.caseInsensitiveCompare(SignedResponseHeader.nonce) == .orderedSame
                        ? ($0.name, Data(repeating: 9, count: 32).base64EncodedString()) : $0
                }
                return other
            }
            return reply
        }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { session.shutdown() }
        let error = await outcome { try await session.data(for: Request(url: url(fixture))) }.sessionError
        #expect(error?.signatureError?.code == .nonceMismatch)
    }

    @Test func aRequestWhoseNonceWasStrippedOnTheWayGetsAnUnsignedResponseWhichFails() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "unsigned: no nonce arrived")
            reply.receivedRequest = { request in
                var stripped = request
                stripped.headers.removeAll { $0.name.caseInsensitiveCompare(SignedResponseHeader.nonce) == .orderedSame }
                return stripped
            }
            return reply
        }
        let session = try fixture.signingSession([Self.host: .informational(roots: keys.roots)])
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: url(fixture)))
        #expect(response.header(SignedResponseHeader.signature) == nil)
        #expect(response.verification == .failed(.missingSignature))
    }

    @Test func aReplayedResponseIsDetected() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let recorded = RecordedResponse()
        // Stand-in for an attacker who recorded the first signed response and serves it again.
        let signer = keys.signer
        fixture.server.setHandler { request in
            recorded.replayOrRecord { SignedReply(body: "balance at 09:00: 100.00").response(to: request, defaultSigner: signer) }
        }
        let log = VerificationFailureLog()
        let session = try fixture.signingSession([Self.host: .informational(roots: keys.roots)], log: log)
        defer { session.shutdown() }
        #expect(try await session.data(for: Request(url: url(fixture))).verification == .verified)
        #expect(try await session.data(for: Request(url: url(fixture))).verification == .failed(.replayedResponse))

        let enforced = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { enforced.shutdown() }
        // A session that never accepted the original sees a response for a nonce it did not send.
        let error = await outcome { try await enforced.data(for: Request(url: url(fixture))) }.sessionError
        #expect(error?.signatureError?.code == .nonceMismatch)
    }

    @Test func aResponseCompletedAfterTheFreshnessWindowIsStale() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let clock = SignedResponseClock(frozen: true)
        // The server holds the request (or an attacker holds the response) for 400 s of client time.
        fixture.serveSigned(keys) { _ in
            clock.move(by: 400)
            return SignedReply(body: "late")
        }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)], clock: clock)
        defer { session.shutdown() }
        let error = await outcome { try await session.data(for: Request(url: url(fixture))) }.sessionError
        #expect(error?.signatureError?.code == .staleRequestTime)

        var wide = SignedResponsePolicy.enforced(roots: keys.roots)
        wide.freshnessWindow = .seconds(600)
        let patient = try fixture.signingSession([Self.host: wide], clock: clock)
        defer { patient.shutdown() }
        #expect(try await patient.data(for: Request(url: url(fixture))).verification == .verified)
    }

    @Test(arguments: [(-30.0, true), (-59.0, true), (-90.0, false), (-3600.0, false)])
    func aClockSteppedBackDuringTheRequestIsToleratedWithinTheSkewAllowance(step: Double, accepted: Bool) async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let clock = SignedResponseClock(frozen: true)
        fixture.serveSigned(keys) { _ in
            clock.move(by: step)  // NTP steps the client's clock back while the request is in flight
            return SignedReply(body: "ok")
        }
        let session = try fixture.signingSession([Self.host: .informational(roots: keys.roots)], clock: clock)
        defer { session.shutdown() }
        let verification = try await session.data(for: Request(url: url(fixture))).verification
        #expect(verification == (accepted ? .verified : .failed(.staleRequestTime)))
    }

    // MARK: Keys

    @Test func anExpiredIntermediateIsRejected() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys(expires: Date().addingTimeInterval(3600))
        fixture.serveSigned(keys) { _ in SignedReply(body: "signed by a key past its date") }
        let clock = SignedResponseClock()
        clock.move(by: 2 * 3600)  // the client's now is past the intermediate's expiry; the server's is not
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)], clock: clock)
        defer { session.shutdown() }
        let error = await outcome { try await session.data(for: Request(url: url(fixture))) }.sessionError
        #expect(error?.signatureError?.code == .intermediateExpired)
    }

    @Test func anIntermediateSignedByAnotherRootIsRejected() async throws {
        let fixture = try SessionFixture()
        let genuine = try SigningKeys()
        let impostor = try SigningKeys()
        fixture.serveSigned(impostor) { _ in SignedReply(body: "signed by someone else's root") }
        let session = try fixture.signingSession([Self.host: .enforced(roots: genuine.roots)])
        defer { session.shutdown() }
        let error = await outcome { try await session.data(for: Request(url: url(fixture))) }.sessionError
        #expect(error?.signatureError?.code == .untrustedIntermediate)
    }

    @Test func aRootListedUnderSeveralVersionsVerifiesWhicheverTheServerSends() async throws {
        let fixture = try SessionFixture()
        let old = try SigningKeys()
        let new = try SigningKeys(version: 2)
        // A server mid-rotation sends both fields: old clients read v1, new ones v2.
        fixture.server.setHandler { request in
            var response = SignedReply(body: "both").response(to: request, defaultSigner: old.signer)
            let second = SignedReply(body: "both").response(to: request, defaultSigner: new.signer)
            response.headers += second.headers.filter { $0.name == SignedResponseHeader.signature }
            return response
        }
        for roots in [old.roots, new.roots] {
            let session = try fixture.signingSession([Self.host: .enforced(roots: roots)])
            defer { session.shutdown() }
            #expect(try await session.data(for: Request(url: url(fixture))).verification == .verified)
        }
    }

    // MARK: Malformed headers

    @Test(arguments: [
        ("missing", ResponseSignatureError.Code.missingSignature), ("truncated", .malformedSignature),
        ("garbled", .malformedSignature), ("unknown version", .unsupportedVersion),
    ])
    func aMissingTruncatedOrGarbledSignatureFails(kind: String, expected: ResponseSignatureError.Code) async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "ok")
            reply.signatureValue = { value in
                switch kind {
                case "missing": nil
                case "truncated": String(value.prefix(value.count / 2))
                case "garbled": value.replacingOccurrences(of: "; ", with: ";;;%%")
                default: "v9" + value.dropFirst(2)
                }
            }
            return reply
        }
        for mode in [SignedResponsePolicy.Mode.enforced, .informational] {
            let session = try fixture.signingSession([Self.host: SignedResponsePolicy(mode: mode, roots: keys.roots)])
            defer { session.shutdown() }
            let result = await outcome { try await session.data(for: Request(url: url(fixture))) }
            if mode == .enforced {
                #expect(result.sessionError?.signatureError?.code == expected)
            } else {
                #expect((try? result.get())?.verification == .failed(ResponseSignatureError(expected, "")))
            }
        }
    }

    // MARK: Requests altered on the way

    @Test func aPOSTBodyAlteredOnTheWayIsARequestMismatch() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "transferred")
            reply.receivedRequest = { request in
                var altered = request
                altered.body = Array("amount=9999".utf8)  // what the server received after tampering
                return altered
            }
            return reply
        }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { session.shutdown() }
        let error = await outcome { try await session.post(url(fixture, "/v1/transfer").absoluteString, body: Array("amount=10".utf8)) }.sessionError
        #expect(error?.signatureError?.code == .requestMismatch)
    }

    /// Audit #15, finding 5(c): a request that reached another service on the same host — which
    /// signs its own authority, here port 1 — must not verify for this one.
    @Test func aResponseSignedForAnotherPortOfTheHostDoesNotVerify() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "another service's answer")
            reply.receivedRequest = { request in
                var elsewhere = request
                elsewhere.headers = request.headers.map { $0.name.lowercased() == "host" ? ($0.name, "\(Self.host):1") : $0 }
                return elsewhere
            }
            return reply
        }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { session.shutdown() }
        let error = await outcome { try await session.data(for: Request(url: url(fixture))) }.sessionError
        #expect(error?.signatureError?.code == .requestMismatch)
        #expect(fixture.server.recentRequests.last?.header("Host") == "\(Self.host):\(fixture.server.port)")
    }

    /// Audit #15, finding 5(c): dot-segments inserted on the way were normalised away by the
    /// signer, so the server signed `/v1/x/../balance` as the `/v1/balance` the client sent.
    @Test func dotSegmentsInsertedOnTheWayAreARequestMismatch() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "routed elsewhere")
            reply.receivedRequest = { request in
                var altered = request
                altered.target = request.target.replacingOccurrences(of: "/v1/", with: "/v1/x/../")
                return altered
            }
            return reply
        }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { session.shutdown() }
        let error = await outcome { try await session.data(for: Request(url: url(fixture))) }.sessionError
        #expect(error?.signatureError?.code == .requestMismatch)
    }

    // MARK: Redirects

    @Test func everyRedirectHopIsVerifiedWithItsOwnNonce() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { request in
            request.path == "/old" ? SignedReply(status: 302, body: "moved", headers: [("Location", "/new")]) : SignedReply(body: "new")
        }
        let log = VerificationFailureLog()
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)], log: log)
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: url(fixture, "/old")))
        #expect(response.text == "new")
        #expect(response.verification == .verified)
        #expect(response.hops.count == 2)
        let nonces = fixture.server.recentRequests.suffix(2).map { $0.header(SignedResponseHeader.nonce) }
        #expect(nonces.allSatisfy { $0 != nil } && nonces[0] != nonces[1])
        #expect(log.failures.isEmpty)
    }

    @Test func anUnsignedRedirectHopThrowsWhenEnforcedAndIsReportedWhenInformational() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { request in
            guard request.path == "/old" else { return SignedReply(body: "new") }
            var reply = SignedReply(status: 302, body: "moved", headers: [("Location", "/new")])
            reply.signatureValue = { _ in nil }
            return reply
        }
        let enforced = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { enforced.shutdown() }
        let served = fixture.server.requestsServed
        let error = await outcome { try await enforced.data(for: Request(url: url(fixture, "/old"))) }.sessionError
        #expect(error?.signatureError?.code == .missingSignature)
        #expect(error?.signatureError?.status == 302)
        #expect(fixture.server.requestsServed == served + 1)  // the unverified Location was not followed

        let log = VerificationFailureLog()
        let informational = try fixture.signingSession([Self.host: .informational(roots: keys.roots)], log: log)
        defer { informational.shutdown() }
        let response = try await informational.data(for: Request(url: url(fixture, "/old")))
        #expect(response.verification == .failed(.missingSignature))
        #expect(response.hopVerifications == [.failed(.missingSignature), .verified])
        #expect(log.failures.map(\.url.path) == ["/old"])
        #expect(log.failures.first?.error.status == 302)
    }

    @Test func aRedirectWhoseLocationWasRewrittenIsNotFollowed() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { request in
            guard request.path == "/old" else { return SignedReply(body: "phishing page") }
            // Stand-in: the server signed Location /new; the response arrives with /elsewhere.
            var reply = SignedReply(status: 302, body: "moved", headers: [("Location", "/elsewhere")])
            reply.receivedRequest = nil
            let signed = SignedReply(status: 302, body: "moved", headers: [("Location", "/new")])
            reply.signatureValue = { _ in
                signed.response(to: request, defaultSigner: keys.signer).header(SignedResponseHeader.signature)
            }
            return reply
        }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { session.shutdown() }
        let error = await outcome { try await session.data(for: Request(url: url(fixture, "/old"))) }.sessionError
        #expect(error?.signatureError?.code == .badSignature)
        #expect(fixture.server.recentRequests.last?.path == "/old")
    }

    /// Audit #15, finding 5(b), through the session: the application reads `header("ETag")`,
    /// the first field, so a signed `ETag: "a, b"` split in two must not verify.
    @Test func aSplitETagFieldThrowsWhenEnforcedAndIsMarkedFailedWhenInformational() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let body = self.body
        fixture.serveSigned(keys) { request in
            var reply = SignedReply(body: body, headers: [("ETag", "\"a"), ("ETag", "b\"")])
            let signed = SignedReply(body: body, headers: [("ETag", "\"a, b\"")])
            reply.signatureValue = { _ in signed.response(to: request, defaultSigner: keys.signer).header(SignedResponseHeader.signature) }
            return reply
        }
        let enforced = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { enforced.shutdown() }
        let error = await outcome { try await enforced.data(for: Request(url: url(fixture))) }.sessionError
        #expect(error?.code == .responseSignatureInvalid)
        #expect(error?.signatureError?.code == .duplicateSignedField)

        let informational = try fixture.signingSession([Self.host: .informational(roots: keys.roots)])
        defer { informational.shutdown() }
        let response = try await informational.data(for: Request(url: url(fixture)))
        #expect(response.header("ETag") == "\"a")
        #expect(response.verification == .failed(.duplicateSignedField))
    }

    /// Audit #15, finding 5(a): in informational mode a forged redirect was followed and the
    /// response read `.verified`, because only the final hop's result was kept.
    @Test func informationalModeFailedRedirectHopMakesTheResponseFailed() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { request in
            guard request.path == "/old" else { return SignedReply(body: "the attacker's page, signed for its own request") }
            // The server signed Location /new; the response arrives sending the client to /elsewhere.
            var reply = SignedReply(status: 302, body: "moved", headers: [("Location", "/elsewhere")])
            let signed = SignedReply(status: 302, body: "moved", headers: [("Location", "/new")])
            reply.signatureValue = { _ in signed.response(to: request, defaultSigner: keys.signer).header(SignedResponseHeader.signature) }
            return reply
        }
        let log = VerificationFailureLog()
        let session = try fixture.signingSession([Self.host: .informational(roots: keys.roots)], log: log)
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: url(fixture, "/old")))
        #expect(response.url.path == "/elsewhere")
        #expect(response.verification == .failed(.badSignature))
        #expect(response.verification.isVerified == false)
        #expect(response.hopVerifications == [.failed(.badSignature), .verified])
        #expect(response.hopVerifications.count == response.hops.count)
        #expect(log.failures.map(\.url.path) == ["/old"])
        #expect(log.failures.first?.error.code == .badSignature)
    }

    @Test func everyHopsVerificationIsReportedBesideItsTrustReport() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let target = fixture.server.url("/plain", host: "127.0.0.1")
        fixture.serveSigned(keys) { request in
            switch request.path {
            case "/a": SignedReply(status: 302, body: "moved", headers: [("Location", "/b")])
            case "/b": SignedReply(status: 307, body: "moved", headers: [("Location", target)])
            default: SignedReply(body: "plain")
            }
        }
        let session = try fixture.signingSession([Self.host: .informational(roots: keys.roots)])
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: url(fixture, "/a")))
        #expect(response.hops.map(\.host) == [Self.host, Self.host, "127.0.0.1"])
        #expect(response.hopVerifications == [.verified, .verified, .notRequested])
        #expect(response.verification == .notRequested)
    }

    @Test func aRedirectToAHostWithoutAPolicyEndsNotRequested() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let target = fixture.server.url("/plain", host: "127.0.0.1")
        fixture.serveSigned(keys) { request in
            request.path == "/old" ? SignedReply(status: 302, body: "moved", headers: [("Location", target)]) : SignedReply(body: "plain")
        }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: url(fixture, "/old")))
        #expect(response.url.absoluteString == target)
        #expect(response.verification == .notRequested)
        #expect(fixture.server.recentRequests.last?.header(SignedResponseHeader.nonce) == nil)
    }

    // MARK: Streaming and configuration

    @Test func streamingFromAHostWhoseResponsesAreCheckedIsRefused() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { _ in SignedReply(body: "stream me") }
        let session = try fixture.signingSession([Self.host: .informational(roots: keys.roots)])
        defer { session.shutdown() }
        let served = fixture.server.requestsServed
        let error = await outcome { try await session.stream(Request(url: url(fixture))) }.sessionError
        #expect(error?.code == .invalidRequest)
        #expect(error?.reason.contains("data(for:)") == true)
        #expect(fixture.server.requestsServed == served)

        let unchecked = try fixture.signingSession([Self.host: .disabled])
        defer { unchecked.shutdown() }
        let streamed = try await unchecked.stream(Request(url: url(fixture)))
        #expect(String(decoding: try await streamed.body.collect(upTo: 1 << 20), as: UTF8.self) == "stream me")
    }

    @Test func aPolicyWithoutRootsIsRefusedWhenTheSessionIsCreated() throws {
        let fixture = try SessionFixture()
        #expect(throws: ResponseSignatureError.invalidConfiguration) { try fixture.signingSession([Self.host: .enforced(roots: [])]) }
    }

    @Test func theMostSpecificPatternDecides() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "tampered")
            reply.signedBody = Array("original".utf8)
            return reply
        }
        let exactEnforced = try fixture.signingSession([
            "**.servertrust.test": .informational(roots: keys.roots), Self.host: .enforced(roots: keys.roots),
        ])
        defer { exactEnforced.shutdown() }
        #expect(await outcome { try await exactEnforced.data(for: Request(url: url(fixture))) }.sessionError?.code == .responseSignatureInvalid)

        let exactInformational = try fixture.signingSession([
            "**.servertrust.test": .enforced(roots: keys.roots), "*.servertrust.test": .informational(roots: keys.roots),
        ])
        defer { exactInformational.shutdown() }
        #expect(try await exactInformational.data(for: Request(url: url(fixture))).verification == .failed(.bodyMismatch))
    }
}

/// The first response, kept and served again for every later request.
final class RecordedResponse: Sendable {
    private let stored = Locked<LocalHTTPResponse?>(nil)

    func replayOrRecord(_ make: () -> LocalHTTPResponse) -> LocalHTTPResponse {
        stored.withLock { stored in
            if let stored { return stored }
            let response = make()
            stored = response
            return response
        }
    }
}
