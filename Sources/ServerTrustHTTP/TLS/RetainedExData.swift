internal import COpenSSL
internal import CServerTrustShims

/// An OpenSSL ex_data slot holding one retained Swift object per `SSL_CTX` or `SSL`.
///
/// The one place where Swift objects handed to OpenSSL are retained and released:
/// ``store(_:in:)`` retains the new object and releases the one it replaces (or, when OpenSSL
/// refuses it, the new one); the free callback installed with the slot's index releases whatever
/// an `SSL_CTX` or `SSL` still holds when OpenSSL frees it. Callbacks read the object unretained
/// (``object(in:)``): the OpenSSL object that holds it outlives every callback made on it.
struct RetainedExData<Object: AnyObject>: Sendable {
    enum Holder: Sendable {
        case sslContext
        case ssl
    }

    let holder: Holder
    let index: Int32

    init(_ holder: Holder) {
        self.holder = holder
        switch holder {
        case .sslContext: index = CServerTrustShims_SSL_CTX_get_ex_new_index_releasing(releaseRetainedExData)
        case .ssl: index = CServerTrustShims_SSL_get_ex_new_index_releasing(releaseRetainedExData)
        }
    }

    /// The object `target` holds, unretained; nil when it holds none.
    func object(in target: OpaquePointer) -> Object? {
        pointer(in: target).map { Unmanaged<Object>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Stores `object` in `target`, retained for as long as `target` holds it, and releases the
    /// object it replaces. Returns the stored pointer — valid while `target` holds the object,
    /// for use as a callback argument — or nil when OpenSSL refused (nothing changed then).
    @discardableResult
    func store(_ object: Object, in target: OpaquePointer) -> UnsafeMutableRawPointer? {
        let previous = pointer(in: target)
        let retained = Unmanaged.passRetained(object).toOpaque()
        let stored =
            switch holder {
            case .sslContext: SSL_CTX_set_ex_data(target, index, retained) == 1
            case .ssl: SSL_set_ex_data(target, index, retained) == 1
            }
        guard stored else {
            Unmanaged<Object>.fromOpaque(retained).release()
            return nil
        }
        if let previous { Unmanaged<AnyObject>.fromOpaque(previous).release() }
        return retained
    }

    private func pointer(in target: OpaquePointer) -> UnsafeMutableRawPointer? {
        switch holder {
        case .sslContext: SSL_CTX_get_ex_data(target, index)
        case .ssl: SSL_get_ex_data(target, index)
        }
    }
}

/// The free callback of every ``RetainedExData`` index: releases the object a freed `SSL_CTX` or
/// `SSL` still holds (a release needs no static type).
private func releaseRetainedExData(_ pointer: UnsafeMutableRawPointer?) {
    if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
}
