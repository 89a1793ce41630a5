import Foundation
import HTTPTypes
internal import ServerTrust

extension Session {
    /// The transfer for one hop of `request`: its URL checked (scheme, host, header lines,
    /// timeout), its host's policy — read once, and with it the host's signed-response policy,
    /// which signs a buffered request (`pending` is then what the response must answer) —,
    /// its content-decoding plan, its upload, and a loop booked for it. Throws before anything
    /// is sent. `host`, when the hop's host was read before (``hostOfHop(_:)``), is used instead
    /// of reading it again, and its refusals are thrown where they would have been.
    func makeTransfer(
        _ request: Request, host: HopHost?, stream: BodyStream?, signing pending: inout SignedResponseChecker.Pending?
    ) throws(SessionError) -> Transfer {
        let url = request.url.absoluteURL
        let absolute = url.absoluteString
        let startsWithHTTPS = Self.startsWithHTTPS(absolute)
        let scheme = Self.lowercasedScheme(of: url, startsWithHTTPS: startsWithHTTPS)
        guard scheme == "https" || (scheme == "http" && configuration.allowsPlainHTTP) else {
            throw SessionError(
                .invalidRequest,
                scheme == "http"
                    ? "Plain http: URLs carry no TLS and cannot be evaluated; use https:, or set allowsPlainHTTP."
                    : "Unsupported URL scheme \"\(scheme)\"; only https: is allowed.",
                url: absolute)
        }
        let readHost: String?
        if let host { readHost = host.rawHost } else { readHost = Self.rawHost(of: url, absolute, startsWithHTTPS: startsWithHTTPS) }
        guard let rawHost = readHost else {
            throw SessionError(.invalidRequest, "The URL has no host.", url: absolute)
        }
        // An `HTTPField` cannot hold a line break (its name is a token, and CR, LF and NUL in its
        // value became spaces when it was made); checked again here, where the field becomes a
        // curl header line, so that no version of that guarantee can smuggle in another field.
        for field in request.headers where field.withUnsafeBytesOfValue({ $0.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 } }) {
            throw SessionError(.invalidRequest, "Header \"\(field.name.rawName)\" contains a line break.", url: absolute)
        }
        if let timeout = request.timeout, timeout <= .zero {
            throw SessionError(.invalidRequest, "The request timeout must be positive (it is \(timeout)).", url: absolute)
        }
        // Read once: each read copies the optional existential out of the request's storage.
        let override = request.trustEvaluator
        let policy: TrustPolicy
        do throws(SessionError) {
            if let read = host?.policy { policy = try read.get() } else { policy = try self.policy(forRawHost: rawHost, override: override) }
        } catch {
            // The registry knows only the host: the refusal names the hop's whole URL, as every
            // other refusal of a hop does (issue #51).
            throw error.at(url: absolute)
        }
        let signing = policy.signedResponses
        let verifiesSignatures = signing?.checks ?? false
        // The challenge headers of a checked host (a stream to one was refused before).
        var signedHeaders: HTTPFields?
        if verifiesSignatures, stream == nil, let signing {
            let (signed, challenge) = try signedResponses.prepare(request, signing)
            signedHeaders = signed.headers
            pending = challenge
        }
        // An RFC 9421 host's signature covers Content-Encoding: the session may decode after
        // verifying. A v1 (or migrating) host gets nothing decoded (third review, finding 3).
        let coversEncoding = verifiesSignatures && signing?.coversContentEncoding == true
        let contentDecoding: ContentDecodingPlan
        // The session's own list was checked in init; a request's override is checked here.
        if let override = request.contentDecoding {
            try ContentDecodingPlan.validate(override, url: absolute)
            contentDecoding = ContentDecodingPlan(override, verifiesSignatures: verifiesSignatures, signatureCoversContentEncoding: coversEncoding)
        } else {
            contentDecoding = !verifiesSignatures ? decodingPlans.unchecked : coversEncoding ? decodingPlans.checkedCoveringEncoding : decodingPlans.checked
        }
        let upload = try self.upload(of: request, url: absolute)
        let release = try bookLoop(for: policy, cacheable: override == nil || PolicyRegistry.cacheIdentity(of: override).cacheable)
        let transfer = Transfer(
            url: absolute, method: request.method.sentName, headers: signedHeaders ?? request.headers, body: request.body,
            policy: policy, isTLS: scheme == "https", bodyLimit: stream == nil ? configuration.maximumResponseBodySize : nil,
            timeout: request.timeout ?? configuration.requestTimeout, contentDecoding: contentDecoding, stream: stream,
            upload: upload, onCompletion: release)
        // Broken by UploadStream.close() when the transfer ends: the handler captures the transfer.
        let runner = loop(running: transfer)
        upload?.setResumeHandler { [runner] in runner.resume(transfer) }
        return transfer
    }

    /// The host of a hop's URL as ``makeTransfer(_:host:stream:signing:)`` reads it, and its
    /// policy, for a hop that must decide something by the policy before it is sent.
    func hostOfHop(_ request: Request) -> HopHost {
        let url = request.url.absoluteURL
        let absolute = url.absoluteString
        guard let rawHost = Self.rawHost(of: url, absolute, startsWithHTTPS: Self.startsWithHTTPS(absolute)) else {
            return HopHost(rawHost: nil, policy: nil)
        }
        do throws(SessionError) {
            return HopHost(rawHost: rawHost, policy: .success(try policy(forRawHost: rawHost, override: request.trustEvaluator)))
        } catch {
            return HopHost(rawHost: rawHost, policy: .failure(error))
        }
    }

    /// The host of `url` (whose absolute string is `absolute`), read from its bytes for a plain
    /// `https://` URL (``plainHTTPSHost(afterPrefixOf:)``), else asked of Foundation; nil when
    /// it has none or an empty one.
    @inline(__always) static func rawHost(of url: URL, _ absolute: String, startsWithHTTPS: Bool) -> String? {
        guard let host = (startsWithHTTPS ? plainHTTPSHost(afterPrefixOf: absolute) : nil) ?? url.host, !host.isEmpty else { return nil }
        return host
    }
}
