import Foundation

/// The routes every local server answers after its custom handler declines a request.
///
/// | Route | Response |
/// |---|---|
/// | `GET /status/{code}` | status `code` (200–599), body `"{code} {reason}\n"` |
/// | `GET\|POST\|PUT /echo` | 200, body = the request body, `Content-Type` copied; headers `X-Echo-Method`, `X-Echo-Target` and `X-Echo-Request` (see below) |
/// | `GET /redirect/{code}?to=URL` | status `code` (300–399) with `Location: URL` (percent-decoded) |
/// | `GET /large/{bytes}` | 200, `bytes` bytes of ``LocalHTTPResponse/Body/patternByte(at:)`` |
/// | `GET /slow/{milliseconds}` | waits, then 200 `"slow\n"` |
/// | `GET /drip/{bytes}/{intervalMs}[?chunk=N]` | 200, header at once, then `bytes` pattern bytes N (default 1) at a time every `intervalMs` |
/// | `GET /headers` | 200, the request's header fields as the body, one `Name: value\n` line each, as received |
/// | `GET /close` | 200 `"closing\n"` with `Connection: close`, then closes |
/// | anything else | 404 |
///
/// `X-Echo-Request` is one line of JSON (non-ASCII escaped):
/// `{"method":"POST","target":"/echo?x=1","headers":[["Host","localhost:4433"],…],"bodyLength":5}`.
/// `HEAD` works on every route (no body is sent).
public enum LocalHTTPRoutes {
    /// The built-in response for `request`.
    public static func response(to request: LocalHTTPRequest) -> LocalHTTPResponse {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        switch parts.first ?? "" {
        case "status" where parts.count == 2:
            guard let code = Int(parts[1]), (200...599).contains(code) else { return badRequest("status 200–599") }
            return .text("\(code) \(HTTPConnection.reasonPhrase(code))\n", status: code)
        case "echo" where parts.count == 1:
            return echo(request)
        case "redirect" where parts.count == 2:
            guard let code = Int(parts[1]), (300...399).contains(code) else { return badRequest("status 300–399") }
            guard let location = request.queryValue("to"), !location.isEmpty else { return badRequest("?to=URL") }
            var response = LocalHTTPResponse.text("Redirecting to \(location)\n", status: code)
            response.headers.append(("Location", location))
            return response
        case "large" where parts.count == 2:
            guard let count = Int(parts[1]), count >= 0 else { return badRequest("a byte count") }
            return LocalHTTPResponse(headers: [("Content-Type", "application/octet-stream")], body: .pattern(count: count))
        case "slow" where parts.count == 2:
            guard let milliseconds = Int(parts[1]), milliseconds >= 0 else { return badRequest("milliseconds") }
            var response = LocalHTTPResponse.text("slow\n")
            response.delay = .milliseconds(milliseconds)
            return response
        case "drip" where parts.count == 3:
            guard let count = Int(parts[1]), count >= 0, let interval = Int(parts[2]), interval >= 0 else {
                return badRequest("/drip/{bytes}/{intervalMs}")
            }
            let chunk = request.queryValue("chunk").flatMap { Int($0) } ?? 1
            return LocalHTTPResponse(
                headers: [("Content-Type", "application/octet-stream")], body: .pattern(count: count),
                pacing: (max(chunk, 1), .milliseconds(interval)))
        case "headers" where parts.count == 1:
            return .text(request.headers.map { "\($0.name): \($0.value)\n" }.joined())
        case "close" where parts.count == 1:
            var response = LocalHTTPResponse.text("closing\n")
            response.closesConnection = true
            return response
        default:
            return .text("No route for \(request.method) \(request.path)\n", status: 404)
        }
    }

    private static func echo(_ request: LocalHTTPRequest) -> LocalHTTPResponse {
        let headers = request.headers.map { "[\(json($0.name)),\(json($0.value))]" }.joined(separator: ",")
        let summary = "{\"method\":\(json(request.method)),\"target\":\(json(request.target)),"
            + "\"headers\":[\(headers)],\"bodyLength\":\(request.body.count)}"
        return LocalHTTPResponse(
            headers: [
                ("Content-Type", request.header("Content-Type") ?? "application/octet-stream"),
                ("X-Echo-Method", request.method),
                ("X-Echo-Target", request.target),
                ("X-Echo-Request", summary),
            ],
            body: .bytes(request.body))
    }

    private static func badRequest(_ expected: String) -> LocalHTTPResponse {
        .text("Expected \(expected).\n", status: 400)
    }

    /// A JSON string literal, ASCII only, so it can travel in a header field.
    private static func json(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case " "..."~": out.unicodeScalars.append(scalar)
            default:
                for unit in String(scalar).utf16 { out += String(format: "\\u%04x", unit) }
            }
        }
        return out + "\""
    }
}
