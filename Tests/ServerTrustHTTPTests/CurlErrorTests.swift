import Testing
internal import CCurl
internal import CServerTrustCurlShims
@testable import ServerTrustHTTP

/// The handle wrappers in `Curl/` report curl's own failure, and the engine maps it to the
/// session's error without losing curl's code.
@Suite struct CurlErrorTests {
    @Test func aRefusedOptionNamesTheOptionAndCurlsCode() throws {
        let easy = try EasyHandle()
        let error = #expect(throws: CurlError.self) { try easy.set(CURLOPT_PROTOCOLS_STR, "gopherx") }
        #expect(error?.code == CURLE_UNSUPPORTED_PROTOCOL)
        #expect(error?.description == "curl refused option \(CURLOPT_PROTOCOLS_STR.rawValue): Unsupported protocol")
        let sessionError = error.map { SessionError($0, url: "https://api.servertrust.test/") }
        #expect(sessionError?.code == .invalidRequest)
        #expect(sessionError?.curlCode == Int(CURLE_UNSUPPORTED_PROTOCOL.rawValue))
        #expect(sessionError?.url == "https://api.servertrust.test/")
    }

    @Test func runningOutOfMemoryIsAFailedTransferWithoutACurlCode() {
        let sessionError = SessionError(CurlError(.createHandle))
        #expect(sessionError.code == .transferFailed)
        #expect(sessionError.curlCode == 0)
        #expect(sessionError.reason == "curl_easy_init failed")
    }
}
