#if URLSessionAdapter
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
public import ServerTrustHTTP
import Synchronization

/// Which `Session` each installed protocol class serves.
///
/// URLSession makes protocol instances itself (`init(task:cachedResponse:client:)`), and
/// FoundationNetworking gives a protocol no public way from its task to the session or its
/// configuration; a request made from a URL (`URLSession.data(from:)`) carries nothing of
/// ours either. The one thing a configuration hands its protocols is their class, so each
/// `Session` gets a class of its own: a distinct instantiation of ``InstalledURLProtocol``,
/// found here by its identity.
enum InstalledSessions {
    private struct Entry {
        let protocolClass: ServerTrustURLProtocol.Type
        weak var session: Session?
    }

    private struct Registry {
        var entries: [ObjectIdentifier: Entry] = [:]
        var classesMade: UInt64 = 0
    }

    private static let registry = Mutex(Registry())

    /// The class bound to `session`: the one made for it before, else a new one. A class whose
    /// session was released is never bound to another: configurations still holding it fail.
    static func protocolClass(for session: Session) -> ServerTrustURLProtocol.Type {
        registry.withLock { registry in
            if let entry = registry.entries.values.first(where: { $0.session === session }) { return entry.protocolClass }
            registry.classesMade += 1
            let protocolClass = distinctClass(registry.classesMade)
            registry.entries[ObjectIdentifier(protocolClass)] = Entry(protocolClass: protocolClass, session: session)
            return protocolClass
        }
    }

    /// The live `Session` bound to `protocolClass`; nil for a class never installed (the base
    /// class registered by hand) or one whose session was released.
    static func session(for protocolClass: ServerTrustURLProtocol.Type) -> Session? {
        registry.withLock { $0.entries[ObjectIdentifier(protocolClass)]?.session }
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
