import ArgumentParser
import Foundation
import ServerTrust
import ServerTrustHTTP

struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch a URL through a ServerTrust Session and print the body.",
        discussion: """
            --pin adds SPKI pinning on top of default validation for the URL's host; other hosts \
            reached by redirects get default validation. Exit status: 0 success, 1 trust \
            evaluation rejected the server, 2 usage error, 3 other transfer error.

            Examples:
              servertrust fetch https://api.example.com/v1/status --pin sha256/AAAA…= --pin sha256/BBBB…=
              servertrust fetch https://localhost:8443/ --ca Certificates/sample-root.pem --resolve localhost:8443:127.0.0.1
              servertrust fetch https://api.example.com/ --proxy http://127.0.0.1:3128 --json
              servertrust fetch https://api.example.com/v1/me -H "Authorization: Bearer $TOKEN" -H "Accept: application/json"
              servertrust fetch https://api.example.com/ --policy pins.json --report-uri https://reports.example.net/pins
              servertrust fetch https://api.example.com/ --ct-log-list log_list.json --require-ct
              servertrust fetch https://mtls.example.com/ --client-cert client.pem --client-key client.key
              servertrust fetch https://api.example.com/v1/licence --signature-keys jwks.json --mode informational
              servertrust fetch https://api.example.com/ --updates-root root.json --updates-url https://tuf.example.com \
                  --updates-dir ~/.servertrust/updates --pin sha256/TUFHOST…=

            --updates-root/--updates-url/--updates-dir take the policy from a TUF repository             (BASE/metadata/, BASE/targets/; the target policy.json unless --updates-target names             another): restored from DIR, refreshed, verified and applied over the floor (--policy,             or nothing) as an application's TrustUpdateClient does. --pin and --ca then apply to the             update host; the fetched host is governed by the delivered policy. DIR keeps the             trusted metadata between runs, so a rollback across runs is refused; a failed refresh             leaves the last trusted policy in force and says so on standard error; with no             trusted policy at all, nothing is fetched (exit 1).

            --verify-signature checks the v1 signature (X-ServerTrust-Signature) against a root key; \
            --signature-keys the RFC 9421 signature (Signature, Content-Digest) against a JWKS key \
            set; with both, either is accepted, as during a migration. The result goes to standard \
            error; an enforced failure exits 1 without printing the body.

            --compressed asks for every content coding this libcurl decodes (deflate, gzip, and br \
            and zstd when built in) and prints the decoded body; for a host checked with \
            --verify-signature nothing is asked for and nothing is decoded: the v1 signature does \
            not cover Content-Encoding, so the body is printed as signed and received. RFC 9421 \
            signatures (--signature-keys alone) cover it: the body is decoded after it is verified.

            --ct-log-list checks the URL's host's Certificate Transparency against a v3 log list \
            (SCTs embedded in the leaf, sent in the TLS extension and stapled): reported, on \
            standard error and in --json's trust.certificateTransparency, and enforced with \
            --require-ct (a failure exits 1 like any trust failure). With --policy, the list is \
            the one the file's "certificateTransparency" hosts are checked against.

            --client-cert/--client-key (or --client-pkcs12) present a client certificate to the \
            URL's host only, when it asks for one; redirect targets on other hosts get none.
            """
    )

    @Argument(help: "An https: URL.")
    var url: String

    @Option(name: .long, help: ArgumentHelp("SPKI pin sha256/<base64> for the URL's host. Repeatable.", valueName: "PIN"))
    var pin: [String] = []

    @Option(name: .long, help: ArgumentHelp("Trust anchors (PEM bundle or DER) instead of the system bundle.", valueName: "FILE"))
    var ca: String?

    @Option(name: .long, help: ArgumentHelp("Resolve HOST:PORT to ADDR, as curl's --resolve. Repeatable.", valueName: "HOST:PORT:ADDR"))
    var resolve: [String] = []

    @Option(name: .long, help: ArgumentHelp("HTTP CONNECT proxy, e.g. http://127.0.0.1:3128.", valueName: "URL"))
    var proxy: String?

    @Option(name: .long, help: ArgumentHelp("Revocation checking for the URL's host: off, soft (revoked rejects), hard (only a verified good passes). Stapled OCSP, then live OCSP, then CRL.", valueName: "off|soft|hard"))
    var revocation: FetchRevocationMode = .off

    @Option(name: .long, help: "Redirects to follow (0 to turn off).")
    var maxRedirects = 5

    @Flag(name: .long, help: "Print the response headers before the body.")
    var include = false

    @Flag(name: .long, help: "Ask for a compressed response (Accept-Encoding) and print it decoded, as curl's --compressed.")
    var compressed = false

    @Flag(name: .long, help: "Print the result as JSON.")
    var json = false

    @Flag(name: .long, help: ArgumentHelp(
        "UNSAFE: let libcurl write this connection's TLS secrets to the file SSLKEYLOGFILE names, so a capture can be decrypted. Without it nothing is written.",
        visibility: .hidden))
    var unsafeWriteTLSSecretsToSSLKEYLOGFILE = false

    @OptionGroup var ct: CTLogListOptions

    @Flag(name: .customLong("require-ct"), help: "Refuse the URL's host unless its certificate meets the Certificate Transparency policy against --ct-log-list.")
    var requireCT = false

    @OptionGroup var headers: FetchHeaderOptions

    @OptionGroup var signature: FetchSignatureOptions

    @OptionGroup var clientIdentity: FetchClientIdentityOptions

    @OptionGroup var reporting: FetchReportingOptions

    @OptionGroup var updates: FetchUpdatesOptions

    func run() async throws {
        guard let target = URL(string: url), let host = target.host, !host.isEmpty else {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \"\(URLRedaction.redacted(url))\" is not an absolute URL with a host.")
        }
        let requestHeaders = try headers.fields()
        if let problem = ct.problem(requireCT: requireCT) { throw CommandFailure(status: CommandFailure.usage, message: "error: \(problem)") }
        let ctLogs: CertificateTransparencyLogs?
        do {
            ctLogs = try ct.loadForCommand().map(CertificateTransparencyLogs.init)
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure(status: CommandFailure.usage, message: "error: --ct-log-list: \((error as? TrustError)?.reason ?? "\(error)")")
        }
        var reporting = reporting
        try reporting.loadPolicy(certificateTransparencyLogs: ctLogs)
        var configuration = Session.Configuration()
        configuration.resolve = resolve
        configuration.redirectPolicy = .follow(maximumHops: maxRedirects)
        if compressed {
            configuration.contentDecoding = ContentCoding.supportedByLibcurl
            if signature.verifySignature != nil {
                StandardError.warn("--compressed has no effect with --verify-signature: the signature does not cover Content-Encoding, so nothing is asked for or decoded.")
            }
        }
        if unsafeWriteTLSSecretsToSSLKEYLOGFILE {
            FileHandle.standardError.write(Data("warning: --unsafe-write-tls-secrets-to-sslkeylogfile: TLS secrets go to \(ProcessInfo.processInfo.environment["SSLKEYLOGFILE"] ?? "(SSLKEYLOGFILE is not set)"); anyone with that file and a capture reads and alters this traffic\n".utf8))
            configuration.unsafeWriteTLSSecretsToSSLKEYLOGFILE = true
        }
        let signedResponses = try signature.policy()
        let identity = try clientIdentity.identity()
        var manager: ServerTrustManager
        do {
            if let ca { configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: ca)) }
            if let proxy {
                guard let proxyURL = URL(string: proxy), proxyURL.scheme?.lowercased() == "http" else {
                    throw CommandFailure(status: CommandFailure.usage, message: "error: --proxy must be an http:// URL (HTTPS goes through a CONNECT tunnel).")
                }
                configuration.proxy = .http(proxyURL)
            }
            if updates.isEnabled {
                guard revocation == .off, !requireCT else {
                    throw CommandFailure(status: CommandFailure.usage, message: "error: with --updates-url the policy comes from the repository; drop --revocation and --require-ct.")
                }
                manager = try reporting.policyFile?.manager
                    ?? ServerTrustManager(policies: [:], allHostsMustBeEvaluated: false, certificateTransparencyLogs: ctLogs)
            } else if let policyFile = reporting.policyFile {
                guard pin.isEmpty, revocation == .off, !requireCT else {
                    throw CommandFailure(
                        status: CommandFailure.usage,
                        message: "error: --policy configures pins, revocation and Certificate Transparency; drop --pin, --revocation and --require-ct.")
                }
                manager = policyFile.manager
            } else {
                // The declaration a policy file makes for a host, so `--pin`/`--revocation`/`--mode`
                // evaluate a host exactly as the same settings in a policy file would. A list given
                // makes the host's CT checked: enforced with --require-ct, else reported.
                var seen: Set<String> = []
                let given = pin.filter { seen.insert($0).inserted }
                let pins = given.isEmpty ? nil : try PinSet(given.map { try PinSet.Entry($0, label: "--pin") }, minimumPinCount: 1)
                let policy = HostPolicy(
                    pins: pins, revocation: revocation.options,
                    // Informational with nothing to trial is default validation, enforced.
                    mode: signature.mode == .informational && (pins != nil || revocation.options != nil) ? .informational : .enforced,
                    certificateTransparency: ctLogs == nil ? nil : requireCT ? .enforced() : .reportOnly())
                manager = try ServerTrustManager(
                    policies: [try HostPattern(host): policy], allHostsMustBeEvaluated: false, certificateTransparencyLogs: ctLogs)
            }
            manager = try Self.manager(manager, for: host, signedResponses: signedResponses, clientIdentity: identity)
        } catch let error as TrustError {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \(error.reason)")
        }

        let events = FetchTrustEvents()
        try reporting.apply(to: &configuration, events: events)
        var live: LiveTrustManager?
        if updates.isEnabled {
            let anchors = try ca.map { try TrustAnchors(contentsOfFile: $0) }
            live = try await updates.client(floor: manager, anchors: anchors, resolve: resolve, pins: pin).liveTrustManager
            // The delivered policy in force, with the URL's host given the options' signature
            // check and client identity as for a local policy. The command sends one request
            // and refreshes no more, so a manager of its own holds what is in force now.
            if let delivered = live, signedResponses != nil || identity != nil {
                do {
                    live = LiveTrustManager(
                        try Self.manager(delivered.current, for: host, signedResponses: signedResponses, clientIdentity: identity))
                } catch let error as TrustError {
                    throw CommandFailure(status: CommandFailure.usage, message: "error: \(error.reason)")
                }
            }
        }
        let session: Session
        do {
            session = try live.map { try Session(configuration: configuration, liveTrustManager: $0) }
                ?? Session(configuration: configuration, trustManager: manager)
        } catch let error as TrustError where error.code == .invalidConfiguration {
            // A client identity OpenSSL will not use: bad input, like the other identity errors.
            throw CommandFailure(status: CommandFailure.usage, message: "error: \(error)")
        } catch {
            throw CommandFailure(status: CommandFailure.transfer, message: "error: \(error)")
        }
        defer { session.shutdown() }
        do {
            let response = try await session.data(for: Request(url: target, headers: requestHeaders))
            await reporting.flush(configuration)
            if json {
                print(FetchJSON.success(response, scheme: signature.scheme, events: events, counters: session.counters))
            } else {
                var output: [UInt8] = []
                if include {
                    var head = "\(response.httpVersion) \(response.status.code)\r\n"
                    for field in response.headers { head += "\(field.name.rawName): \(field.value)\r\n" }
                    output += Array((head + "\r\n").utf8)
                }
                FileHandle.standardOutput.write(Data(output + response.body))
                Self.reportCertificateTransparency(response.trust.evaluation)
                signature.report(response.verification)
                FetchReportingOptions.warn(events: events)
            }
        } catch let error as SessionError {
            await reporting.flush(configuration)
            if json {
                print(FetchJSON.failure(error, scheme: signature.scheme, events: events, counters: session.counters))
            } else {
                Self.reportCertificateTransparency(error.rejectedTrust?.evaluation)
            }
            let status = error.code == .trustEvaluationFailed || error.code == .responseSignatureInvalid ? CommandFailure.rejected
                : error.code == .invalidRequest ? CommandFailure.usage : CommandFailure.transfer
            throw CommandFailure(status: status, message: json ? "" : "error: \(error)", hints: json ? [] : Self.hints(for: error, url: target, scheme: signature.scheme))
        }
    }

    /// `manager` with `host`'s policy carrying `signedResponses` and `clientIdentity` (for the
    /// URL's host only: hosts reached by redirects get neither), as an exact pattern holding the
    /// policy the host resolves to, so every other setting of the host is kept. A host the
    /// manager refuses stays refused: the request fails as it would have, with the reason.
    ///
    /// - Throws: `TrustError` `.invalidConfiguration` when the host's policy already sets what
    ///   an option gives (a policy file's `signedResponses`): the two would disagree.
    static func manager(
        _ manager: ServerTrustManager, for host: String, signedResponses: SignedResponsePolicy?, clientIdentity: ClientIdentity?
    ) throws -> ServerTrustManager {
        guard signedResponses != nil || clientIdentity != nil, let resolved = try? manager.resolve(host: host) else { return manager }
        var policy = resolved.policy
        if let signedResponses {
            guard policy.signedResponses == nil else {
                throw TrustError(
                    .invalidConfiguration,
                    "the policy for \(host) already checks signed responses; drop --verify-signature and --signature-keys, or the file's signedResponses.",
                    host: host)
            }
            policy.signedResponses = signedResponses
        }
        if let clientIdentity {
            guard policy.clientIdentity == nil else {
                throw TrustError(.invalidConfiguration, "the policy for \(host) already has a client identity; drop --client-cert.", host: host)
            }
            policy.clientIdentity = clientIdentity
        }
        var policies = Dictionary(uniqueKeysWithValues: manager.policies.map { ($0.pattern, $0.policy) })
        policies[try HostPattern(resolved.host.name)] = policy
        return try ServerTrustManager(policies: policies, allHostsMustBeEvaluated: manager.allHostsMustBeEvaluated, denyList: manager.denyList,
            certificateTransparencyLogs: manager.certificateTransparencyLogs)
    }

    /// Text mode: the Certificate Transparency outcome and its SCTs on standard error, when the
    /// host's was checked.
    private static func reportCertificateTransparency(_ evaluation: TrustEvaluation?) {
        guard let report = evaluation?.certificateTransparencyReport else { return }
        FileHandle.standardError.write(Data(CTText.lines(report).map { $0 + "\n" }.joined().utf8))
    }
}
