import Foundation
internal import ServerTrust

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
