import Foundation

extension Session {
    // Fast path: docs/PERFORMANCE.md#fast-paths, "Fewer frames and copies per request".
    /// Inlined into ``data(for:)``, as ``data(for:)`` is into ``get(_:headers:)`` and
    /// ``post(_:body:headers:)``: each was an async frame of its own around the one below it.
    /// With both inlined, a request has as many async frames as the async floor's.
    @inline(__always) nonisolated(nonsending) func send(_ request: Request, _ observation: RequestObservation) async throws -> Response {
        let final = try await HopDriver(self, observation: observation).follow(request, as: BufferedHop.self)
        // Read in place, not copied out first: a copy of the outcome is a retain and a release
        // of each of its five references.
        let head = final.result.outcome.head
        // Decoded only now, after the signature check on the bytes as received.
        let (body, decoded) = try final.result.outcome.contentDecoding.finish(
            final.result.outcome.body, headers: head.headers, limit: configuration.maximumResponseBodySize,
            url: final.request.url)
        return Response(
            body: body, url: final.request.url, trust: final.result.outcome.report,
            verification: final.hops.verification, decodedContentEncodings: decoded,
            attempts: final.attempts, hopLog: final.hops, head: head)
    }

}

extension Session {
    /// Sends `request` and returns as soon as the head has arrived; the body follows as a
    /// stream of chunks, paced by the consumer (the transfer pauses when 1 MiB waits unread).
    /// ``Configuration/maximumResponseBodySize`` does not apply; iterate, or `collect(upTo:)`.
    /// With ``Configuration/contentDecoding`` the chunks are decoded by libcurl as they arrive
    /// (the `Content-Encoding` header is kept as received).
    ///
    /// Refused (``SessionError/Code/invalidRequest``) for a hop whose host has an informational
    /// or enforced signed-response policy: a signature covers the whole body, and a stream would
    /// hand out bytes before they could be verified. Use ``data(for:)`` for such hosts.
    nonisolated(nonsending) public func stream(_ request: Request) async throws -> StreamingResponse {
        let observation = observe(request)
        do {
            let response = try await sendStreaming(request, observation)
            observation.succeeded(status: response.status.code)
            return response
        } catch {
            throw observation.failed(error)
        }
    }

    nonisolated(nonsending) private func sendStreaming(_ request: Request, _ observation: RequestObservation) async throws -> StreamingResponse {
        let final = try await HopDriver(self, observation: observation).follow(request, as: StreamedHop.self)
        let (hop, hops) = (final.result, final.hops)
        return StreamingResponse(
            url: final.request.url, trust: hop.report, body: hop.body, attempts: final.attempts, hopLog: hops, head: hop.head)
    }
}

extension Session {
    // Fast path: docs/PERFORMANCE.md#fast-paths, "Fewer frames and copies per request".
    /// Sends one hop and waits for its whole outcome. Inlined, as is ``run(_:)``, into the
    /// hop's `send`: each was an async frame of its own that only passed the call on.
    @inline(__always) nonisolated(nonsending) func perform(
        _ request: Request, host: HopHost?, signing pending: inout SignedResponseChecker.Pending?
    ) async throws -> Transfer.Outcome {
        try await run(try makeTransfer(request, host: host, stream: nil, signing: &pending))
    }

    nonisolated(nonsending) func performStreaming(_ request: Request, host: HopHost?) async throws -> (ResponseHead, TrustReport, ResponseBody) {
        let stream = BodyStream()
        var unsigned: SignedResponseChecker.Pending?
        let transfer = try makeTransfer(request, host: host, stream: stream, signing: &unsigned)
        let loop = self.loop(running: transfer)
        stream.setResumeHandler { [loop] in loop.resume(transfer) }
        let arrived = try await run(transfer)
        let (responseHead, report) = (arrived.head, arrived.report)
        let body = ResponseBody(stream: stream) { [loop] in
            loop.cancel(transfer, SessionError(.cancelled, "The body stream was abandoned.", url: transfer.url))
        }
        return (responseHead, report, body)
    }

    /// Submits `transfer` and waits for what it resumes its task with (``Transfer``: the outcome,
    /// or a streamed response's head), cancelling the transfer if the task is cancelled.
    @inline(__always) nonisolated(nonsending) func run(_ transfer: Transfer) async throws -> Transfer.Outcome {
        let loop = self.loop(running: transfer)
        defer { transfer.settle() }  // what the loop published, visible to ThreadSanitizer too
        return try await withTaskCancellationHandler {
            // Checked, not unsafe: see `OneShot` (ThreadSanitizer).
            try await withCheckedThrowingContinuation { continuation in
                transfer.attach(continuation)
                loop.submit(transfer)
            }
        } onCancel: { [loop] in
            transfer.requestCancellation()
            loop.cancel(transfer, SessionError(.cancelled, "The task was cancelled.", url: transfer.url))
        }
    }
}
