import Foundation
import ServerTrust
import ServerTrustHTTP

/// `handshake-leaks PORT ROOT.pem LEAF.pem [REQUESTS] [REJECTIONS]`
///
/// Sends REQUESTS (default 1000) GETs through one pinned `Session` to the TLS server on
/// 127.0.0.1:PORT, which must close every connection and refuse resumption
/// (`openssl s_server -www -no_ticket -no_cache`), so each request is a full handshake through
/// the verify callback; then REJECTIONS (default 100) through a session pinned to another key,
/// each of which must fail trust evaluation, so the error paths are exercised too; then
/// REJECTIONS streamed requests (`Session.stream`), whose bodies are read to the end. Prints the
/// counts and the resident set size along the way. Leaks are reported by LeakSanitizer when the
/// process exits; exit status 1 when a request had the wrong outcome.
@main
struct HandshakeLeaks {
    static let host = "leaks.servertrust.test"

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard (3...5).contains(arguments.count), let port = Int(arguments[0]) else {
            FileHandle.standardError.write(Data("usage: handshake-leaks PORT ROOT.pem LEAF.pem [REQUESTS] [REJECTIONS]\n".utf8))
            exit(2)
        }
        let requests = arguments.count > 3 ? Int(arguments[3]) ?? 1000 : 1000
        let rejections = arguments.count > 4 ? Int(arguments[4]) ?? 100 : 100
        do {
            let summary = try await run(port: port, root: arguments[1], leaf: arguments[2], requests: requests, rejections: rejections)
            // Unbuffered: LeakSanitizer ends the process without flushing stdio.
            FileHandle.standardOutput.write(Data((summary + "\n").utf8))
        } catch {
            FileHandle.standardError.write(Data("handshake-leaks: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Off the main actor: `withSession` is nonisolated and takes a non-Sendable closure, which
    /// Swift 6 refuses to send from the main actor that `main()` runs on.
    static func run(port: Int, root: String, leaf leafPath: String, requests: Int, rejections: Int) async throws -> String {
        let anchors = try TrustAnchors(contentsOfFile: root)
        let leaf = try Certificate.certificates(contentsOfFile: leafPath)[0]
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(anchors)
        configuration.resolve = ["\(host):\(port):127.0.0.1"]
        configuration.httpVersion = .http1_1
        configuration.requestTimeout = .seconds(20)
        let url = "https://\(host):\(port)/"
        let pinned = try ServerTrustManager(evaluators: [try HostPattern(host): PinnedKeyHashesTrustEvaluator(pins: [leaf.spkiPin])])
        let otherKey = try Pin("sha256/" + Data(repeating: 0xA5, count: 32).base64EncodedString())
        let wrong = try ServerTrustManager(evaluators: [try HostPattern(host): PinnedKeyHashesTrustEvaluator(pins: [otherKey])])

        let start = Date()
        var residentAfterWarmUp = 0
        try await withSession(configuration: configuration, trustManager: pinned) { session in
            for index in 1...max(requests, 1) {
                let response = try await session.get(url)
                guard response.status == 200, response.trust.isTrusted else {
                    throw Failure("request \(index): status \(response.status), trusted \(response.trust.isTrusted)")
                }
                if index == min(100, requests) { residentAfterWarmUp = residentKilobytes() }
            }
        }
        let accepted = Date()
        try await withSession(configuration: configuration, trustManager: wrong) { session in
            for index in 0..<rejections {
                do {
                    _ = try await session.get(url)
                    throw Failure("rejection \(index + 1): a server outside the pins was accepted")
                } catch let error as SessionError where error.code == .trustEvaluationFailed {
                    continue
                }
            }
        }
        let rejected = Date()
        try await withSession(configuration: configuration, trustManager: pinned) { session in
            for index in 0..<rejections {
                let response = try await session.stream(Request(url: URL(string: url)!))
                let body = try await response.body.collect(upTo: 1 << 20)
                guard response.status == 200, !body.isEmpty else {
                    throw Failure("stream \(index + 1): status \(response.status), \(body.count) bytes")
                }
            }
        }
        let finished = Date()
        return (
            "handshake-leaks: \(requests) pinned requests in \(seconds(accepted.timeIntervalSince(start))), "
                + "\(rejections) rejected in \(seconds(rejected.timeIntervalSince(accepted))), "
                + "\(rejections) streamed in \(seconds(finished.timeIntervalSince(rejected))); "
                + "RSS \(residentAfterWarmUp / 1024) MiB after 100 requests, \(residentKilobytes() / 1024) MiB at the end")
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func seconds(_ interval: TimeInterval) -> String { String(format: "%.1f s", interval) }

    /// VmRSS from /proc/self/status, in KiB.
    static func residentKilobytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}
