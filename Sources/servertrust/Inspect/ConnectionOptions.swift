import ArgumentParser
import Foundation
import ServerTrust
import ServerTrustHTTP

/// The flags `inspect` and `pins` share: how to reach the server and which anchors to judge it by.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Resolve HOST:PORT to ADDR, as curl's --resolve. Repeatable.", valueName: "HOST:PORT:ADDR"))
    var resolve: [String] = []

    @Option(name: .long, help: ArgumentHelp("Trust anchors (PEM bundle or DER) instead of the system bundle.", valueName: "FILE"))
    var ca: String?

    @Option(name: .long, help: ArgumentHelp("HTTP CONNECT proxy, e.g. http://127.0.0.1:3128: see what a proxy presents.", valueName: "URL"))
    var proxy: String?

    /// The target URL, checked: `https:` with a host.
    func target(_ text: String) throws(CommandFailure) -> URL {
        guard let url = URL(string: text), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \"\(text)\" is not an https:// URL with a host.")
        }
        return url
    }

    /// A session configuration from the flags: anchors, resolve, proxy; no redirects.
    func sessionConfiguration() throws(CommandFailure) -> (Session.Configuration, anchorsOrigin: String) {
        var configuration = Session.Configuration()
        configuration.resolve = resolve
        configuration.redirectPolicy = .disallow
        configuration.connectTimeout = .seconds(10)
        configuration.requestTimeout = .seconds(20)
        configuration.maximumResponseBodySize = 1 << 20
        var origin = "the system CA bundle"
        do {
            if let ca {
                configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: ca))
                origin = ca
            }
        } catch let error as TrustError {
            throw CommandFailure(status: CommandFailure.usage, message: "error: --ca: \(error.reason)")
        } catch {
            throw CommandFailure(status: CommandFailure.usage, message: "error: --ca: \(error)")
        }
        if let proxy {
            guard let proxyURL = URL(string: proxy), proxyURL.scheme?.lowercased() == "http" else {
                throw CommandFailure(status: CommandFailure.usage, message: "error: --proxy must be an http:// URL (HTTPS goes through a CONNECT tunnel).")
            }
            configuration.proxy = .http(proxyURL)
        }
        return (configuration, origin)
    }
}
