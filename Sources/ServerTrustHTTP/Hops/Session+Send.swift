import Foundation

extension Session {
    // Fast path: docs/PERFORMANCE.md#fast-paths, "Fewer frames and copies per request".
    /// Inlined into ``data(for:)``, as ``data(for:)`` is into ``get(_:headers:)`` and
    /// ``post(_:body:headers:)``: each was an async frame of its own around the one below it.
    /// With both inlined, a request has as many async frames as the async floor's.
    @inline(__always) nonisolated(nonsending) func send(_ request: Request, _ observation: RequestObservation) async throws -> Response {
        let final = try await HopDriver(self, observation: observation).follow(
            request,
            // Looked up before sending only for a streamed or file body, which a host with a
            // signed-response policy needs read into memory first.
            lookUp: { request in hasUnbufferedBody(request) ? hostOfHop(request) : nil },
            // Kept buffered: a redirect that resends the body sends these bytes again.
            prepare: { request, host in try await bufferedForSigning(request, host: host) },
            send: { request, host in
                var pending: SignedResponseChecker.Pending?
                let outcome = try await perform(request, host: host, signing: &pending)
                return BufferedHop(outcome: outcome, pending: pending)
            },
            verify: { hop, request in
                try signedResponses.verify(
                    hop.pending, status: hop.head.status, headers: hop.head.headers, body: hop.outcome.body, url: request.url, metrics: metrics)
            },
            leave: { _ in })
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
