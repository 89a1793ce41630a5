#if VaporClient
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustTestSupport
import ServerTrustVapor
import Testing
import Vapor
import VaporTesting

/// A Vapor application on loopback whose route handlers call `req.client`, installed as
/// `.serverTrust(session)`, against a pinned upstream and an impostor whose chain a CA the
/// session also trusts vouches for.
@Suite struct VaporClientTrustTests {
    /// The payments route of the DocC article (`ServerTrustVapor.md`), as written there, plus
    /// one line that hands the caught error to the test.
    static func paymentsRoute(_ app: Application, upstream: String, refusals: Recorded<SessionError>) {
        app.get("balance") { req async throws -> String in
            do {
                let response = try await req.client.get(URI(string: upstream))
                guard response.status == .ok, let body = response.body else { throw Abort(.badGateway) }
                return String(buffer: body)
            } catch let error as SessionError where error.code == .trustEvaluationFailed {
                refusals.set(error)  // the test's line
                let trust = error.trustError  // which check refused the server, with its evidence
                req.logger.warning("payments upstream refused", metadata: ["check": "\(trust?.code.description ?? "")"])
                throw Abort(.badGateway, reason: "payments upstream refused: \(trust?.code.description ?? "") by \(trust?.evaluator ?? "")")
            }
        }
    }

    // MARK: (a) genuine accepted

    @Test func theGenuineUpstreamAnswersReqClient() async throws {
        let fixture = try VaporFixture()
        defer { fixture.stop() }
        let session = try fixture.session()
        defer { session.shutdown() }
        let refusals = Recorded<SessionError>()

        try await withVaporApp(session: session, routes: { Self.paymentsRoute($0, upstream: fixture.url("/balance", on: fixture.genuine), refusals: refusals) }) {
            try await $0.test(.GET, "balance") { response in
                #expect(response.status == .ok)
                #expect(response.body.string == #"{"balance":"100.00"}"#)
            }
        }
        #expect(refusals.current == nil)
        #expect(fixture.genuine.recentRequests.last?.target == "/balance")
    }

    // MARK: (b) impostor refused

    /// The impostor's chain is valid to the session's anchors (a session without the pin
    /// accepts it: the control), so the refusal is the pin's; the handler catches the
    /// `SessionError` and reads its `TrustError`.
    @Test func anImpostorFromATrustedCAIsRefusedAndTheHandlerCatchesTheSessionError() async throws {
        let fixture = try VaporFixture()
        defer { fixture.stop() }
        let control = try fixture.session(policy: HostPolicy())
        defer { control.shutdown() }
        let controlRefusals = Recorded<SessionError>()
        try await withVaporApp(session: control, routes: { Self.paymentsRoute($0, upstream: fixture.url("/balance", on: fixture.impostor), refusals: controlRefusals) }) {
            try await $0.test(.GET, "balance") { #expect($0.status == .ok) }
        }
        #expect(controlRefusals.current == nil)
        let servedBefore = fixture.impostor.requestsServed

        let session = try fixture.session()
        defer { session.shutdown() }
        let refusals = Recorded<SessionError>()
        try await withVaporApp(session: session, routes: { Self.paymentsRoute($0, upstream: fixture.url("/balance", on: fixture.impostor), refusals: refusals) }) {
            try await $0.test(.GET, "balance") { response in
                #expect(response.status == .badGateway)
                #expect(response.body.string.contains("payments upstream refused: pinMismatch by PinnedKeyHashesTrustEvaluator"))
            }
        }

        let error = try #require(refusals.current)
        #expect(error.code == .trustEvaluationFailed)
        let trustError = try #require(error.trustError)
        #expect(trustError.code == .pinMismatch)
        #expect(trustError.evaluator == "PinnedKeyHashesTrustEvaluator")
        #expect(trustError.evidence.configuredPins == [fixture.pin])
        let shown = trustError.evidence.chain.map(\.pin)
        #expect(shown.contains(fixture.pki.impostor.root.certificate.spkiPin))
        #expect(!shown.contains(fixture.pin))
        #expect(error.rejectedTrust?.matchedPattern?.description == VaporFixture.host)
        #expect(fixture.impostor.requestsServed == servedBefore)
    }

    // MARK: (c) redirect to the impostor refused

    /// The genuine server redirects to the impostor (same name, other port): the session follows
    /// the redirect under the host's policy, and the pin refuses the second hop.
    @Test func aRedirectFromTheGenuineUpstreamToTheImpostorIsRefused() async throws {
        let fixture = try VaporFixture()
        defer { fixture.stop() }
        let session = try fixture.session()
        defer { session.shutdown() }
        let target = fixture.url("/balance", on: fixture.impostor)
        let redirect = fixture.url("/redirect/302?to=" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, on: fixture.genuine)
        let refusals = Recorded<SessionError>()

        try await withVaporApp(session: session, routes: { Self.paymentsRoute($0, upstream: redirect, refusals: refusals) }) {
            try await $0.test(.GET, "balance") { #expect($0.status == .badGateway) }
        }

        let error = try #require(refusals.current)
        #expect(error.code == .trustEvaluationFailed)
        #expect(error.trustError?.code == .pinMismatch)
        #expect(error.trustError?.evaluator == "PinnedKeyHashesTrustEvaluator")
        #expect(error.url == target)
        #expect(fixture.genuine.recentRequests.last?.path == "/redirect/302")
        #expect(fixture.impostor.requestsServed == 0)
        #expect(fixture.impostor.acceptedConnections >= 1)
    }

    // MARK: (d) signed responses

    /// A host whose responses must be signed (RFC 9421, enforced): a correctly signed response
    /// reaches the handler; one whose body was changed after signing, and one not signed at
    /// all, fail with the session's `responseSignatureInvalid` and the signature error.
    @Test func aHostRequiringSignedResponsesIsVerifiedThroughReqClient() async throws {
        let fixture = try VaporFixture()
        defer { fixture.stop() }
        let key = try SignaturePrivateKey.generate(.ecdsaP256)
        let signer = try MessageSignatureSigner(key: key, keyID: "payments-1")
        enum Reply { case signed, tampered, unsigned }
        let reply = Recorded<Reply>()
        fixture.genuine.setHandler { request in
            switch reply.current ?? .signed {
            case .signed: messageSignedReply(to: request, signer: signer, body: #"{"balance":"100.00"}"#)
            case .tampered: messageSignedReply(to: request, signer: signer, body: #"{"balance":"999999.00"}"#, signedBody: #"{"balance":"100.00"}"#)
            case .unsigned: LocalHTTPResponse(headers: [("Content-Type", "application/json")], body: .text(#"{"balance":"999999.00"}"#))
            }
        }
        let session = try fixture.session(policy: HostPolicy.custom(
            PinnedKeyHashesTrustEvaluator(pins: [fixture.pin]),
            signedResponses: .enforced(keys: SigningKeySet(keys: ["payments-1": key.publicKey]))))
        defer { session.shutdown() }
        let failures = Recorded<SessionError>()
        let upstream = fixture.url("/balance", on: fixture.genuine)

        try await withVaporApp(session: session, routes: { app in
            app.get("balance") { req async throws -> String in
                do {
                    return try await req.client.get(URI(string: upstream)).body.map { String(buffer: $0) } ?? ""
                } catch let error as SessionError {
                    failures.set(error)
                    throw Abort(.badGateway)
                }
            }
        }) { app in
            try await app.test(.GET, "balance") { response in
                #expect(response.status == .ok)
                #expect(response.body.string == #"{"balance":"100.00"}"#)
            }
            #expect(fixture.genuine.recentRequests.last?.header("Accept-Signature")?.contains("nonce=") == true)
            #expect(failures.current == nil)

            reply.set(.tampered)
            try await app.test(.GET, "balance") { #expect($0.status == .badGateway) }
            #expect(failures.current?.code == .responseSignatureInvalid)
            #expect(failures.current?.signatureError?.code == .bodyMismatch)

            reply.set(.unsigned)
            try await app.test(.GET, "balance") { #expect($0.status == .badGateway) }
            #expect(failures.current?.code == .responseSignatureInvalid)
            #expect(failures.current?.signatureError?.code == .missingSignature)
        }
    }

    // MARK: Trust updates

    /// A session over a `LiveTrustManager`: the client follows a trust update without being
    /// installed again — refused under a pin the genuine server does not match, accepted once
    /// an update pins its intermediate.
    @Test func aTrustUpdateReachesReqClientThroughALiveTrustManager() async throws {
        let fixture = try VaporFixture()
        defer { fixture.stop() }
        let live = LiveTrustManager(try ServerTrustManager(evaluators: [
            try HostPattern(VaporFixture.host): PinnedKeyHashesTrustEvaluator(pins: [fixture.pki.impostor.root.certificate.spkiPin])
        ]))
        let session = try ServerTrustHTTP.Session(configuration: fixture.configuration(), liveTrustManager: live)
        defer { session.shutdown() }
        let refusals = Recorded<SessionError>()

        try await withVaporApp(session: session, routes: { Self.paymentsRoute($0, upstream: fixture.url("/balance", on: fixture.genuine), refusals: refusals) }) { app in
            try await app.test(.GET, "balance") { #expect($0.status == .badGateway) }
            #expect(refusals.current?.trustError?.code == .pinMismatch)

            live.replace(with: try ServerTrustManager(evaluators: [try HostPattern(VaporFixture.host): PinnedKeyHashesTrustEvaluator(pins: [fixture.pin])]))
            try await app.test(.GET, "balance") { response in
                #expect(response.status == .ok)
                #expect(response.body.string == #"{"balance":"100.00"}"#)
            }
        }
    }
}
#endif
