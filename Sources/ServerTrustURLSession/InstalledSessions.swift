#if URLSessionAdapter
#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif
public import ServerTrustHTTP
import Synchronization

/// Which `Session` each installed protocol class serves, with the configuration settings the
/// protocol applies itself.
///
/// URLSession makes protocol instances itself (`init(task:cachedResponse:client:)`), and
/// FoundationNetworking gives a protocol no public way from its task to the session or its
/// configuration; a request made from a URL (`URLSession.data(from:)`) carries nothing of
/// ours either. The one thing a configuration hands its protocols is their class, so each
/// installation gets a class of its own — one per `Session` and settings, reused when both
/// are the same — a distinct instantiation of ``InstalledURLProtocol``, found here by its identity.
enum InstalledSessions {
    private struct Entry {
        let protocolClass: ServerTrustURLProtocol.Type
        weak var session: Session?
        let settings: InstalledSettings

        var isLive: Bool { session != nil && settings.isLive }
    }

    private struct Registry {
        var entries: [ObjectIdentifier: Entry] = [:]
        var classesMade: UInt64 = 0
    }

    private static let registry = Mutex(Registry())

    /// The class bound to `session` and `settings`: the one made for them before, else a new
    /// one. A class whose session was released is never bound to another: configurations still
    /// holding it fail.
    static func protocolClass(for session: Session, settings: InstalledSettings) -> ServerTrustURLProtocol.Type {
        registry.withLock { registry in
            // A class whose session or cookie storage is gone serves no URLSession any more
            // (a URLSession holds its storage): forgetting it fails its requests just the same.
            registry.entries = registry.entries.filter { $0.value.isLive }
            if let entry = registry.entries.values.first(where: { $0.session === session && $0.settings == settings }) {
                return entry.protocolClass
            }
            registry.classesMade += 1
            let protocolClass = distinctClass(registry.classesMade)
            registry.entries[ObjectIdentifier(protocolClass)] = Entry(protocolClass: protocolClass, session: session, settings: settings)
            return protocolClass
        }
    }

    /// The live `Session` bound to `protocolClass`, and its settings; nil for a class never
    /// installed (the base class registered by hand) or one whose session was released.
    static func installation(of protocolClass: ServerTrustURLProtocol.Type) -> (session: Session, settings: InstalledSettings)? {
        registry.withLock { registry in
            guard let entry = registry.entries[ObjectIdentifier(protocolClass)], let session = entry.session else { return nil }
            return (session, entry.settings)
        }
    }

    /// The `n`th distinct class (n ≥ 1): `InstalledURLProtocol` over `n`'s binary digits as
    /// nested tag types, most significant outermost, so no two `n` share a type and the
    /// nesting is at most 64 deep.
    private static func distinctClass(_ n: UInt64) -> ServerTrustURLProtocol.Type {
        func wrap<Tag>(_: Tag.Type, _ remaining: UInt64) -> ServerTrustURLProtocol.Type {
            if remaining == 0 { return InstalledURLProtocol<Tag>.self }
            return remaining & 1 == 0 ? wrap(BitZero<Tag>.self, remaining >> 1) : wrap(BitOne<Tag>.self, remaining >> 1)
        }
        return wrap(NoBits.self, n)
    }

    enum NoBits {}
    enum BitZero<Rest> {}
    enum BitOne<Rest> {}
}

/// The settings of a `URLSessionConfiguration` that FoundationNetworking leaves to its HTTP
/// protocol, read when the protocol is installed.
struct InstalledSettings: Equatable, @unchecked Sendable {
    // @unchecked Sendable: `HTTPCookieStorage` is thread-safe (it serialises access itself),
    // and the reference is only read after init.
    /// `httpAdditionalHeaders`, string keys and values only; the request's own fields win.
    let additionalHeaders: [String: String]
    /// `httpCookieStorage` when `httpShouldSetCookies`: where response cookies are stored. Weak:
    /// the configuration and the URLSessions made from it hold it (an ephemeral configuration's
    /// storage is its own), and a registry entry must not keep it after them.
    private(set) weak var cookieStorage: HTTPCookieStorage?
    private let storesCookies: Bool

    init(_ configuration: URLSessionConfiguration) {
        var headers: [String: String] = [:]
        for case let (name as String, value as String) in configuration.httpAdditionalHeaders ?? [:] { headers[name] = value }
        additionalHeaders = headers
        cookieStorage = configuration.httpShouldSetCookies ? configuration.httpCookieStorage : nil
        storesCookies = cookieStorage != nil
    }

    /// False once the cookie storage these settings store into is gone.
    var isLive: Bool { !storesCookies || cookieStorage != nil }

    static func == (lhs: InstalledSettings, rhs: InstalledSettings) -> Bool {
        lhs.additionalHeaders == rhs.additionalHeaders && lhs.storesCookies == rhs.storesCookies && lhs.cookieStorage === rhs.cookieStorage
    }
}

/// A ``ServerTrustURLProtocol`` bound to one installed `Session` by its type identity
/// (``InstalledSessions``); it adds nothing else.
final class InstalledURLProtocol<Tag>: ServerTrustURLProtocol {}

extension URLSessionConfiguration {
    /// An ephemeral configuration (no disk cache, cookies or credentials persisted) whose
    /// requests are served through `session` (``ServerTrustURLProtocol/install(in:session:)``).
    public static func serverTrust(session: Session) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        ServerTrustURLProtocol.install(in: configuration, session: session)
        return configuration
    }
}
#endif
