import Foundation

// Fast path: docs/PERFORMANCE.md#fast-paths, "Request on the loop's thread".
extension MultiLoop: TaskExecutor {
    /// Runs `job` on the loop thread, between curl calls. After the loop has stopped, the job
    /// runs on the global concurrent executor instead: a task must always run on, if only to
    /// see that its session was shut down.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if !enqueue(.job(job)) {
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }
}
