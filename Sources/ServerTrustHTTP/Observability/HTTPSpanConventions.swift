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

/// URL attributes as OpenTelemetry's HTTP conventions name them; `url.full` is
/// `URLRedaction.redacted(_:)`, the text every error and log line shows.
enum SpanURL {
    /// The port the request goes to, explicit or the scheme's default.
    static func port(of url: URL) -> Int {
        url.port ?? (url.scheme?.lowercased() == "http" ? 80 : 443)
    }
}
