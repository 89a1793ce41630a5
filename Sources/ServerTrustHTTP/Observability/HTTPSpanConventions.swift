import Foundation
import HTTPTypes
import Tracing

/// Writes a tracer's propagation fields into a request's header fields.
struct HeaderFieldInjector: Injector {
    /// Replaces every field named `key` with one at the end. A key that is not a field name
    /// (no propagation format uses one) is not sent rather than sent malformed.
    func inject(_ value: String, forKey key: String, into headers: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        headers.removeAll { $0.name == name }
        headers.append(HTTPField(name: name, value: value))
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
