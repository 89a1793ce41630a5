/// The error `body` threw, or nil: for tests that assert what a call failed with (the adapters'
/// test targets share it).
public func thrownError(_ body: () async throws -> some Any) async -> (any Error)? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}
