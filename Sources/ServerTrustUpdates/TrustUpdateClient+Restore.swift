import ServerTrustTUF

extension TrustUpdateClient {
    /// The last step of ``restore()``, for a store that cannot be restored and has not expired
    /// (a refresh interrupted between its files, a cached target that no longer matches): what
    /// only refuses, as recorded after the last verified state the client handled, is put back
    /// over the floor. A record that does not read is not used: the floor, as with no record,
    /// and the reason beside `failure`'s.
    func restoreRecordedRefusals(_ recorded: Result<Refusals?, TUFError>, after failure: TUFError) {
        switch recorded {
        case .success(let refusals?):
            handle(.storeInterrupted(InForceRefusals(refusals, failure: failure)))
            metrics.record(status)
        case .success(nil):
            handle(.failed(TrustUpdateStatus.Failure(.restore, failure)))
        case .failure(let error):
            handle(.failed(TrustUpdateStatus.Failure(.restore, TUFError(failure.code, "\(failure.reason); \(error.reason)"))))
        }
    }

    /// The last step of ``restore()`` for a store that was restored (whatever it put in force):
    /// the recorded refusals joined to it. A record that does not read adds nothing and is
    /// logged; the store's own state stands.
    func joinRecordedRefusals(_ recorded: Result<Refusals?, TUFError>) {
        switch recorded {
        case .success(let refusals?):
            handle(.recordedRefusals(refusals))
            metrics.record(status)
        case .success(nil):
            break
        case .failure(let error):
            logger.error("The record of the refusals in force was not joined to the restored state: \(error.description)")
        }
    }
}
