import Foundation
import ServerTrust
import ServerTrustHTTP

/// The JSON object of `fetch --json`: a ``FetchJSON/Success`` when a response came back, a
/// ``FetchJSON/Failure`` when the session threw.
///
/// Every URL in it is redacted (`URLRedaction`: no user-info, query or fragment).
///
/// Both carry the reporting fields: `trustFailures` (each trust failure the fetch saw:
/// `{url, mode, reason, evaluator, message, report, reportQueued}`, where `report` is
/// `queued`, `suppressed`, `dropped` or `noReportURI`), `reportQueued`, `reportsSent`,
/// `reportsDropped`, and `trustResult` (`{result}` with `result` `notRequested`, `verified` or
/// `failed`, and for a failure `code`, `reason`, `evaluator`).
///
/// `scheme` is the signed-response scheme the command asked for (`v1`, `rfc9421`, or `either`
/// for a migration), written into every verification that was checked; nil leaves it out.
enum FetchJSON {
    static func success(_ response: Response, scheme: SignedResponsePolicy.Scheme?, events: FetchTrustEvents, counters: TrustCounters) -> String {
        JSONText.render(Success(response, scheme: scheme, reporting: Reporting(result: response.trustResult, events: events, counters: counters)))
    }

    static func failure(_ error: SessionError, scheme: SignedResponsePolicy.Scheme?, events: FetchTrustEvents, counters: TrustCounters) -> String {
        JSONText.render(Failure(error, scheme: scheme, reporting: Reporting(result: error.rejectedTrust?.result, events: events, counters: counters)))
    }

    /// A response: the reporting fields, and `status`, `url` (the final one), `httpVersion`,
    /// `headers` (`[[name, value]]`), `body` (as UTF-8 text), `trust` (``Trust`` of the final
    /// connection), `hops` (one ``Trust`` per redirect hop before it), `verification` (the
    /// signed-response result, ``Verification``), `hopVerifications` (one per hop) and
    /// `decodedContentEncodings` (the content codings removed from `body`, e.g. `["gzip"]` with
    /// `--compressed`; `[]` when the body is as received).
    struct Success: Encodable {
        let reporting: Reporting
        let response: Response
        let scheme: SignedResponsePolicy.Scheme?

        init(_ response: Response, scheme: SignedResponsePolicy.Scheme?, reporting: Reporting) {
            self.response = response
            self.scheme = scheme
            self.reporting = reporting
        }

        private enum CodingKeys: String, CodingKey {
            case status, url, httpVersion, headers, body, trust, hops, verification, hopVerifications, decodedContentEncodings
        }

        func encode(to encoder: any Encoder) throws {
            try reporting.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(response.status.code, forKey: .status)
            try container.encode(URLRedaction.redacted(response.url), forKey: .url)
            try container.encode(response.httpVersion, forKey: .httpVersion)
            try container.encode(response.headers.map { [$0.name.rawName, $0.value] }, forKey: .headers)
            try container.encode(response.text, forKey: .body)
            try container.encode(Trust(response.trust), forKey: .trust)
            try container.encode(response.hops.map(Trust.init), forKey: .hops)
            try container.encode(Verification(response.verification, scheme: scheme), forKey: .verification)
            try container.encode(response.hopVerifications.map { Verification($0, scheme: scheme) }, forKey: .hopVerifications)
            try container.encode(response.decodedContentEncodings.map(\.name), forKey: .decodedContentEncodings)
        }
    }

    /// The session threw: the reporting fields, and `error` (`{code, reason, curlCode,
    /// curlMessage, transportFailure}`, `transportFailure` the kind of a failed transfer or
    /// null), `trust` (for a rejection: `{trusted: false, code, reason, evaluator,
    /// host, configuredPins, chain: [{pin, subject}]}`, and `certificateTransparency` as in
    /// ``Trust`` when the host's CT was checked) and `verification` (for a signature
    /// failure: `{result: "failed", scheme, code, reason, status}`, `status` the HTTP status or
    /// null).
    struct Failure: Encodable {
        struct ErrorObject: Encodable {
            let code: String
            let reason: String
            let curlCode: Int
            let curlMessage: String
            let transportFailure: String?

            private enum CodingKeys: String, CodingKey { case code, reason, curlCode, curlMessage, transportFailure }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(code, forKey: .code)
                try container.encode(reason, forKey: .reason)
                try container.encode(curlCode, forKey: .curlCode)
                try container.encode(curlMessage, forKey: .curlMessage)
                // Explicitly null: "not a transport failure" is an answer.
                try container.encode(transportFailure, forKey: .transportFailure)
            }
        }

        struct Rejection: Encodable {
            let trusted = false
            let code: String
            let reason: String
            let evaluator: String
            let host: String
            let configuredPins: [String]
            let chain: [Certificate]
            /// Absent unless the host's CT was checked.
            let certificateTransparency: CertificateTransparencyReport?

            struct Certificate: Encodable {
                let pin: String
                let subject: String
            }

            init(_ error: TrustError, evaluation: TrustEvaluation?) {
                certificateTransparency = evaluation?.certificateTransparencyReport
                code = error.code.description
                reason = error.reason
                evaluator = error.evaluator ?? ""
                host = error.host ?? ""
                configuredPins = error.evidence.configuredPins.map(\.description)
                chain = error.evidence.chain.map { Certificate(pin: $0.pin.description, subject: $0.subject) }
            }
        }

        struct SignatureFailure: Encodable {
            let result = "failed"
            let scheme: String?
            let code: String
            let reason: String
            let status: Int?

            private enum CodingKeys: String, CodingKey {
                case result, scheme, code, reason, status
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(result, forKey: .result)
                try container.encodeIfPresent(scheme, forKey: .scheme)
                try container.encode(code, forKey: .code)
                try container.encode(reason, forKey: .reason)
                // Explicitly null: "no response status" is an answer.
                try container.encode(status, forKey: .status)
            }
        }

        let reporting: Reporting
        let error: ErrorObject
        let trust: Rejection?
        let verification: SignatureFailure?

        init(_ error: SessionError, scheme: SignedResponsePolicy.Scheme?, reporting: Reporting) {
            self.reporting = reporting
            self.error = ErrorObject(
                code: error.code.description, reason: error.reason, curlCode: error.curlCode, curlMessage: error.curlMessage,
                transportFailure: error.transportFailure?.description)
            trust = error.trustError.map { Rejection($0, evaluation: error.rejectedTrust?.evaluation) }
            verification = error.signatureError.map {
                SignatureFailure(scheme: scheme?.description, code: $0.code.description, reason: $0.reason, status: $0.status)
            }
        }

        private enum CodingKeys: String, CodingKey {
            case error, trust, verification
        }

        func encode(to encoder: any Encoder) throws {
            try reporting.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(error, forKey: .error)
            try container.encodeIfPresent(trust, forKey: .trust)
            try container.encodeIfPresent(verification, forKey: .verification)
        }
    }

    /// The reporting fields both outcomes share.
    struct Reporting: Encodable {
        struct Event: Encodable {
            let url: String
            let mode: String
            let reason: String
            let evaluator: String
            let message: String
            let report: String
            let reportQueued: Bool
        }

        let trustFailures: [Event]
        let reportQueued: Bool
        let reportsSent: Int
        let reportsDropped: Int
        let trustResult: Result?

        init(result: TrustResult?, events: FetchTrustEvents, counters: TrustCounters) {
            let all = events.all
            trustFailures = all.map { event in
                Event(
                    url: URLRedaction.redacted(event.url), mode: event.report.mode.description, reason: event.report.reason.description,
                    evaluator: event.report.evaluator, message: event.report.message, report: Self.token(event.submission),
                    reportQueued: event.submission == .queued)
            }
            reportQueued = all.contains { $0.submission == .queued }
            reportsSent = counters.snapshot.reportsSent
            reportsDropped = counters.snapshot.reportsDropped
            trustResult = result.map(Result.init)
        }

        private static func token(_ submission: TrustFailureReporter.Submission) -> String {
            switch submission {
            case .queued: "queued"
            case .suppressed: "suppressed"
            case .dropped: "dropped"
            case .noReportURI: "noReportURI"
            }
        }
    }

    /// A ``TrustResult``: `{result}`, and for a failure `code`, `reason`, `evaluator`.
    struct Result: Encodable {
        let result: String
        let code: String?
        let reason: String?
        let evaluator: String?

        init(_ result: TrustResult) {
            switch result {
            case .notRequested: (self.result, code, reason, evaluator) = ("notRequested", nil, nil, nil)
            case .verified: (self.result, code, reason, evaluator) = ("verified", nil, nil, nil)
            case .failed(let error): (self.result, code, reason, evaluator) = ("failed", error.code.description, error.reason, error.evaluator ?? "")
            }
        }
    }

    /// A connection's trust: `{host, matchedPattern (or null), evaluator, trusted,
    /// validatedChain: [{pin, subject}], matchedPins: [{pin, subject, depth, anchorExtension}],
    /// revocation: [{subject, depth, status, source}],
    /// tls: {protocol, cipherSuite, group, alpn}}` (each `tls` field null when the handshake did
    /// not tell it; `group` is null for TLS 1.2, whose server sends it after the chain), and
    /// `certificateTransparency` (`CertificateTransparencyReport`: `{compliant, mode, reason,
    /// detail, refused, scts: [{log, logID, operator, source, timestamp, status}]}`) only when
    /// the host's CT was checked (`--ct-log-list`, or a policy file's host).
    struct Trust: Encodable {
        struct Negotiated: Encodable {
            let `protocol`: String?
            let cipherSuite: String?
            let group: String?
            let alpn: String?

            private enum CodingKeys: String, CodingKey { case `protocol`, cipherSuite, group, alpn }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(`protocol`, forKey: .protocol)
                try container.encode(cipherSuite, forKey: .cipherSuite)
                try container.encode(group, forKey: .group)
                try container.encode(alpn, forKey: .alpn)
            }
        }

        struct Certificate: Encodable {
            let pin: String
            let subject: String
        }

        struct Revocation: Encodable {
            let subject: String
            let depth: Int
            let status: String
            let source: String
        }

        /// A certificate of `validatedChain` the pins matched; `anchorExtension` when it is an
        /// anchor above the validated path (PinMatch).
        struct MatchedPin: Encodable {
            let pin: String
            let subject: String
            let depth: Int
            let anchorExtension: Bool
        }

        let host: String
        let matchedPattern: String?
        let evaluator: String
        let trusted: Bool
        let validatedChain: [Certificate]
        let matchedPins: [MatchedPin]
        let revocation: [Revocation]
        let tls: Negotiated
        let certificateTransparency: CertificateTransparencyReport?

        init(_ report: TrustReport) {
            host = report.host
            matchedPattern = report.matchedPattern?.description
            evaluator = report.evaluator
            trusted = report.isTrusted
            validatedChain = report.validatedChain.map { Certificate(pin: $0.pin.description, subject: $0.subject) }
            matchedPins = report.pinMatches.map {
                MatchedPin(pin: $0.pin.description, subject: $0.subject, depth: $0.depth, anchorExtension: $0.isAnchorExtension)
            }
            revocation = report.revocation.map {
                Revocation(subject: $0.certificate.subject, depth: $0.depth, status: $0.status.description, source: $0.source.description)
            }
            let handshake = report.handshake
            tls = Negotiated(
                protocol: handshake.protocolVersion?.description, cipherSuite: handshake.cipherSuite, group: handshake.keyExchangeGroup,
                alpn: handshake.applicationProtocol)
            certificateTransparency = report.evaluation?.certificateTransparencyReport
        }

        private enum CodingKeys: String, CodingKey {
            case host, matchedPattern, evaluator, trusted, validatedChain, matchedPins, revocation, tls, certificateTransparency
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(host, forKey: .host)
            try container.encode(matchedPattern, forKey: .matchedPattern)
            try container.encode(evaluator, forKey: .evaluator)
            try container.encode(trusted, forKey: .trusted)
            try container.encode(validatedChain, forKey: .validatedChain)
            try container.encode(matchedPins, forKey: .matchedPins)
            try container.encode(revocation, forKey: .revocation)
            try container.encode(tls, forKey: .tls)
            try container.encodeIfPresent(certificateTransparency, forKey: .certificateTransparency)
        }
    }

    /// A signed-response result: `{result}`, with `scheme` when it was checked under the
    /// command's scheme, and for a failure `code` and `reason`.
    struct Verification: Encodable {
        let result: String
        let scheme: String?
        let code: String?
        let reason: String?

        init(_ verification: ResponseVerification, scheme: SignedResponsePolicy.Scheme?) {
            switch verification {
            case .notRequested: (result, self.scheme, code, reason) = ("notRequested", nil, nil, nil)
            case .verified: (result, self.scheme, code, reason) = ("verified", scheme?.description, nil, nil)
            case .failed(let error): (result, self.scheme, code, reason) = ("failed", scheme?.description, error.code.description, error.reason)
            }
        }
    }
}
