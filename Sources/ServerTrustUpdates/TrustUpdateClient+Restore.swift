import ServerTrustTUF

extension TrustUpdateClient {
    /// The last step of ``restore()``, for a store that cannot be restored and has not expired
    /// (a refresh interrupted between its files, a cached target that no longer matches): what
    /// only refuses, as recorded after the last verified state the client handled, is put back
    /// over the floor. A record that does not read is not used: the floor, as with no record,
    /// and the reason beside `failure`'s.
    func restoreRecordedRefusals(after failure: TUFError) {
        do throws(TUFError) {
            guard let recorded = try InForceRefusals.read(configuration: configuration, after: failure) else {
                handle(.failed(TrustUpdateStatus.Failure(.restore, failure)))
                return
            }
            handle(.storeInterrupted(recorded))
            metrics.record(status)
        } catch {
            handle(.failed(TrustUpdateStatus.Failure(.restore, TUFError(failure.code, "\(failure.reason); \(error.reason)"))))
        }
    }
}
