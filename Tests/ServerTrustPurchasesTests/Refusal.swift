import ServerTrustPurchases

/// The ``PurchaseVerificationError`` `body` throws, or nil when it returns (or throws another
/// error): what each attack test asserts the code of.
func refusal<T>(_ body: () throws -> T) -> PurchaseVerificationError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? PurchaseVerificationError
    }
}
