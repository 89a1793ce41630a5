import Foundation
import Tracing

/// Writes a tracer's propagation fields into a request's header list.
struct HeaderFieldInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout [(name: String, value: String)]) {
        headers.removeAll { $0.name.caseInsensitiveCompare(key) == .orderedSame }
        headers.append((key, value))
    }
}

/// URL attributes as OpenTelemetry's HTTP conventions name them.
enum SpanURL {
    /// The URL without user, password, query or fragment: a span must not carry credentials,
    /// and a query often carries tokens.
    static func redacted(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return "" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? ""
    }

    /// The port the request goes to, explicit or the scheme's default.
    static func port(of url: URL) -> Int {
        url.port ?? (url.scheme?.lowercased() == "http" ? 80 : 443)
    }
}
