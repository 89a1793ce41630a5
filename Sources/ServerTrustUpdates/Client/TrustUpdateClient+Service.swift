#if LifecycleService
public import ServiceLifecycle

/// `TrustUpdateClient` as a swift-service-lifecycle `Service`: ``TrustUpdateClient/run()`` is
/// its `run()`, so `ServiceGroup(services: [updates, app], …)` restores, refreshes on the
/// schedule and stops on a graceful shutdown ("Running under ServiceLifecycle").
///
/// Here, on the type's own module and only with the `LifecycleService` trait: no retroactive
/// conformance and no extra module to import, while a default build neither resolves nor
/// builds swift-service-lifecycle and its swift-async-algorithms and swift-collections.
extension TrustUpdateClient: Service {}

extension TrustUpdateClient {
    /// Whether the task is in a graceful shutdown (a `ServiceGroup`'s): no new refresh starts.
    static var isShuttingDownGracefully: Bool { Task.isShuttingDownGracefully }

    /// Sleeps `seconds`; false when cancelled or shut down gracefully first (or already).
    static func sleep(seconds: Double) async -> Bool {
        (try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(seconds)) }) != nil
    }
}
#else
extension TrustUpdateClient {
    /// Without the `LifecycleService` trait there is no graceful shutdown: cancellation alone ends ``run()``.
    static var isShuttingDownGracefully: Bool { false }

    /// Sleeps `seconds`; false when cancelled first.
    static func sleep(seconds: Double) async -> Bool { (try? await Task.sleep(for: .seconds(seconds))) != nil }
}
#endif
