internal import CCurl
internal import CServerTrustCurlShims

/// Owns one `CURLSH*` that shares SSL sessions between the transfers of one policy.
///
/// One share per policy is how "never share SSL sessions across policies" is enforced: curl
/// resumes a session only from the cache of the share a transfer uses. Used on the loop thread
/// only, so no lock callbacks are needed.
final class ShareHandle {
    let pointer: UnsafeMutableRawPointer
    /// The chains validated at the full handshakes whose sessions this share's cache holds: what
    /// the connection guard evaluates when one of them is resumed.
    let validatedChains = ValidatedChainStore()

    init?() {
        guard let share = curl_share_init() else { return nil }
        pointer = share
        guard CServerTrustCurlShims_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue)) == CURLSHE_OK else {
            curl_share_cleanup(share)
            return nil
        }
    }

    deinit { curl_share_cleanup(pointer) }
}
