/// What tests read of a session's internals, in one place rather than as properties of
/// ``Session``: counts summed over the main loop and the revocation loops still running (a
/// stopped loop's counts go with it), and the state of the session's caches.
struct SessionProbe {
    let session: Session

    /// Every loop whose thread is running: the main one and the revocation loops.
    var loops: [MultiLoop] { [session.loop] + session.revocationLoops.liveLoops }
    /// Revocation loops whose thread has not exited yet.
    var liveRevocationLoops: Int { session.revocationLoops.liveLoops.count }
    /// Waits until every revocation loop stopped so far has exited.
    func waitForStoppedRevocationLoops() { session.revocationLoops.waitForStoppedLoops() }
    /// Requests whose transfer is in a multi handle right now.
    var activeTransfers: Int { loops.reduce(0) { $0 + $1.activeTransfers } }
    /// How many times a submission woke a loop thread (the batching).
    var loopWakeUps: Int { loops.reduce(0) { $0 + $1.wakeUpCount } }
    /// Easy handles the session has made (finished handles are reused per policy).
    var easyHandlesMade: Int { loops.reduce(0) { $0 + $1.easyHandlesMade } }
    /// curl share handles alive, one per policy still in use (bounded, not one per request).
    var liveShareHandles: Int { session.handlePool.liveShares }
    /// Finished easy handles kept for reuse.
    var idleEasyHandles: Int { session.handlePool.idleHandles }
    /// The most request-body bytes any upload buffered at once (the back-pressure bound).
    var peakBufferedUploadBytes: Int { session.uploadStatistics.peakBufferedBytes }
    /// Upload producers started: a stream's iteration or a file's reading.
    var uploadProducersStarted: Int { session.uploadStatistics.producersStarted }
    /// Whether the session records metrics: false when its factory is the no-op handler.
    var metricsEnabled: Bool { session.metrics != nil }
    /// Policies in the session's cache.
    var cachedPolicies: Int { session.policies.count }
}
