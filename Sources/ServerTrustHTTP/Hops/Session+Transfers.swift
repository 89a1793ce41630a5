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
        let startsWithHTTPS = RequestURL.startsWithHTTPS(absolute)
        let scheme = RequestURL.lowercasedScheme(of: url, startsWithHTTPS: startsWithHTTPS)
        guard scheme == "https" || (scheme == "http" && configuration.allowsPlainHTTP) else {
            throw SessionError(
                .invalidRequest,
                scheme == "http"
                    ? "Plain http: URLs carry no TLS and cannot be evaluated; use https:, or set allowsPlainHTTP."
                    : "Unsupported URL scheme \"\(scheme)\"; only https: is allowed.",
                url: absolute)
        }
        let readHost: String?
        if let host { readHost = host.rawHost } else { readHost = RequestURL.rawHost(of: url, absolute, startsWithHTTPS: startsWithHTTPS) }
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
        let release = try revocationLoops.book(for: policy, cacheable: override == nil || PolicyRegistry.cacheIdentity(of: override).cacheable)
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
        guard let rawHost = RequestURL.rawHost(of: url, absolute, startsWithHTTPS: RequestURL.startsWithHTTPS(absolute)) else {
            return HopHost(rawHost: nil, policy: nil)
        }
        do throws(SessionError) {
            return HopHost(rawHost: rawHost, policy: .success(try policy(forRawHost: rawHost, override: request.trustEvaluator)))
        } catch {
            return HopHost(rawHost: rawHost, policy: .failure(error))
        }
    }
}

/// Request bodies: the producer of a streamed or file body, and the buffer that reads such a
/// body into memory for a host whose responses are signed over the request's digest.
extension Session {
    /// The producer side of a streamed or file body, nil for bytes or none. A file is opened
    /// here, before anything is sent.
    func upload(of request: Request, url: String) throws(SessionError) -> UploadStream? {
        guard let (source, length, name) = try uploadSource(of: request, url: url) else { return nil }
        return UploadStream(source: source, length: length, name: name, url: url, statistics: uploadStatistics)
    }

    func uploadSource(of request: Request, url: String) throws(SessionError) -> (UploadSource, Int?, String)? {
        switch request.uploadBody?.storage {
        case nil, .bytes?:
            return nil
        case .stream(let source, let length)?:
            if let length, length < 0 {
                throw SessionError(.invalidRequest, "The body stream's declared length is negative (\(length)).", url: url)
            }
            if source.isSpent {
                throw SessionError(
                    .bodyNotReplayable, "The request body stream was already read by an earlier request; a stream body can be sent once.", url: url)
            }
            return (source, length, "the request body stream")
        case .file(let fileURL)?:
            let file = try UploadFile(fileURL, requestURL: url)
            return (file.source, file.size, "the body file \(file.path)")
        }
    }

    /// Whether `request` has a streamed or file body: the one kind a host with a signed-response
    /// policy needs read into memory first (``bufferedForSigning(_:host:)``), checked before
    /// anything of the host is looked up, which most requests do not need.
    func hasUnbufferedBody(_ request: Request) -> Bool {
        guard let body = request.uploadBody else { return false }
        return body.bytes == nil
    }

    /// `request` with its streamed or file body read into memory when its host (`host`, read
    /// once for the hop) has a signed-response policy: the request signature covers the body's
    /// digest, which must be known before the request is sent. Over
    /// ``Configuration/maximumSignedRequestBodySize`` the request is refused
    /// (``SessionError/Code/requestBodyTooLarge``) and nothing is sent.
    nonisolated(nonsending) func bufferedForSigning(_ request: Request, host: HopHost) async throws -> Request {
        guard host.checksSignedResponses, hasUnbufferedBody(request) else { return request }
        let url = request.url.absoluteString
        guard let (source, length, name) = try uploadSource(of: request, url: url) else { return request }
        let limit = configuration.maximumSignedRequestBodySize
        let host = request.url.host ?? "this host"
        if let length, length > limit {
            throw SessionError(
                .requestBodyTooLarge,
                "Responses from \(host) are signed over the request body's digest, so \(name) is read into memory first; its \(length) bytes exceed maximumSignedRequestBodySize (\(limit)).",
                url: url)
        }
        let collected = Locked([UInt8]())
        do {
            try await source.produce(UploadSink { chunk in
                try collected.withLock { bytes throws(SessionError) in
                    guard bytes.count + chunk.count <= limit else {
                        throw SessionError(
                            .requestBodyTooLarge,
                            "Responses from \(host) are signed over the request body's digest, so \(name) is read into memory first; it exceeds maximumSignedRequestBodySize (\(limit) bytes).",
                            url: url)
                    }
                    bytes += chunk
                }
            })
        } catch let error as SessionError where error.code == .requestBodyTooLarge || error.code == .bodyNotReplayable {
            throw SessionError(error.code, error.reason, url: url)
        } catch is CancellationError {
            throw SessionError(.cancelled, "The task was cancelled while \(name) was being read.", url: url)
        } catch {
            throw SessionError(.uploadFailed, "Reading \(name) failed: \((error as? SessionError)?.reason ?? "\(error)")", url: url)
        }
        var buffered = request
        buffered.body = collected.withLock { $0 }
        if let length, buffered.body?.count != length {
            throw SessionError(
                .uploadFailed, "Reading \(name) failed: it produced \(buffered.body?.count ?? 0) bytes, not its declared \(length).", url: url)
        }
        return buffered
    }
}
