#if NIOAdapter
public import NIOCore
public import ServerTrust

/// Closes its channel once the `LiveTrustManager` it watches is replaced after the channel was
/// set up: a channel established under a replaced policy does not go on serving.
///
/// A NIO or gRPC channel is evaluated once, at its handshake; requests and streams sent over it
/// afterwards ride that evaluation. When a trust update replaces the manager — a key put on the
/// deny-list, a pin withdrawn — new handshakes are evaluated under the new manager, and this
/// handler retires the channels set up before: when the manager's `generation` moves past the
/// handler's ``generation``, it fires a ``Retirement`` user event down the pipeline and closes
/// the channel. The application (or a gRPC transport) reconnects, and the new handshake is
/// evaluated under the manager in force. A channel is closed on any replacement, whether or
/// not the new manager would still accept its server: replacements are rare, and re-evaluating
/// a live channel is what swift-nio-ssl cannot do.
///
/// ``ServerTrustNIOVerifier/addClientHandlers(to:context:host:)`` and
/// ``HostTrustVerification/addGuardHandler(to:)`` add one after the ``ServerTrustGuardHandler``;
/// ``HostTrustVerification/makeRetirementHandler()`` makes one for a pipeline you build.
///
/// It watches from the moment it is added (a replacement before then is seen at once, as
/// the generation has already moved) and closes the channel only once it is active. It stops
/// watching when the channel becomes inactive or the handler is removed: no task outlives the
/// channel.
///
/// Not `Sendable`, like every channel handler: one per channel, used on its event loop.
public final class PolicyRetirementHandler: ChannelInboundHandler, RemovableChannelHandler {
    /// Anything inbound, passed on unchanged.
    public typealias InboundIn = NIOAny

    /// The user event fired just before the channel is closed for a replaced policy.
    public struct Retirement: Sendable, Hashable, CustomStringConvertible {
        /// The generation the channel was set up under.
        public let channelGeneration: UInt64
        /// The generation in force when the channel was retired.
        public let currentGeneration: UInt64

        public var description: String {
            "The trust manager of generation \(channelGeneration), under which this channel was set up, was replaced "
                + "(generation \(currentGeneration) is in force): the channel is closed."
        }
    }

    /// The manager whose replacements retire the channel.
    public let liveTrustManager: LiveTrustManager
    /// The generation the channel was set up under: any later one retires it.
    public let generation: UInt64

    private var watcher: Task<Void, Never>?
    private var retired = false
    private var removed = false

    /// - Parameters:
    ///   - liveTrustManager: the manager to watch (the verifier's `liveTrustManager`).
    ///   - generation: the generation the channel was set up under
    ///     (``HostTrustVerification/generation`` for a verification made for this channel).
    public init(liveTrustManager: LiveTrustManager, generation: UInt64) {
        self.liveTrustManager = liveTrustManager
        self.generation = generation
    }

    /// Whether the handler still watches the manager (for tests: no task outlives the channel).
    var isWatching: Bool { watcher != nil }

    /// Starts watching; retires at once an active channel whose manager was already replaced.
    public func handlerAdded(context: ChannelHandlerContext) {
        // Subscribed before the generation is checked: a replacement after the subscription is
        // yielded to the stream, one before it is seen by the check.
        let changes = liveTrustManager.changes()
        let generation = self.generation
        let eventLoop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: eventLoop)
        watcher = Task {
            for await newest in changes where newest > generation {
                eventLoop.execute {
                    let (handler, context) = bound.value
                    handler.retireIfReplaced(context: context)
                }
                return
            }
        }
        retireIfReplaced(context: context)
    }

    /// Stops watching.
    public func handlerRemoved(context: ChannelHandlerContext) {
        removed = true
        stopWatching()
    }

    /// Retires a channel whose manager was replaced before it became active.
    public func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        retireIfReplaced(context: context)
    }

    /// Stops watching: the channel is closed.
    public func channelInactive(context: ChannelHandlerContext) {
        stopWatching()
        context.fireChannelInactive()
    }

    private func stopWatching() {
        watcher?.cancel()  // ends the stream, which unsubscribes from the manager
        watcher = nil
    }

    /// Fires ``Retirement`` and closes the channel when it is active and the manager has moved
    /// past ``generation``.
    private func retireIfReplaced(context: ChannelHandlerContext) {
        guard !retired, !removed, context.channel.isActive else { return }
        let current = liveTrustManager.generation
        guard current > generation else { return }
        retired = true
        stopWatching()
        context.fireUserInboundEventTriggered(Retirement(channelGeneration: generation, currentGeneration: current))
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension PolicyRetirementHandler: Sendable {}
#endif
