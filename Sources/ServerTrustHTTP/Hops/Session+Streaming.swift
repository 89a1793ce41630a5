import Foundation

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
        let final = try await HopDriver(self, observation: observation).follow(
            request,
            // Every hop's host is looked up before it is sent, once: a checked host is refused.
            lookUp: { hostOfHop($0) },
            prepare: { request, host in
                if host.checksSignedResponses { try SignedResponseChecker.refuseStreaming(request) }
                return request
            },
            send: { request, host in
                let (head, report, body) = try await performStreaming(request, host: host)
                return StreamedHop(head: head, report: report, body: body)
            },
            // Every hop of a stream is unchecked: a checked host was refused in `prepare`.
            verify: { _, _ in .notRequested },
            leave: { $0.body.onTermination() })
        let (hop, hops) = (final.result, final.hops)
        return StreamingResponse(
            url: final.request.url, trust: hop.report, body: hop.body, attempts: final.attempts, hopLog: hops, head: hop.head)
    }
}
