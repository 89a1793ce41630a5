#if URLSessionAdapter
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import ServerTrustHTTP
@testable import ServerTrustURLSession
import Testing

/// A failed transfer's `URLError` code comes from its `SessionError.transportFailure`; for each
/// curl code it is the code the adapter gave when it read curl's numbers itself.
@Suite struct TransferFailureURLErrorTests {
    private func code(_ curlCode: Int, _ curlMessage: String = "") -> URLError.Code {
        URLErrorMapping.code(for: SessionError(.transferFailed, "", curlCode: curlCode, curlMessage: curlMessage), url: nil)
    }

    @Test func eachTransferFailureKeepsTheURLErrorCodeItHadByCurlCode() {
        let expected: [(Int, URLError.Code)] = [
            (5, .cannotFindHost), (6, .cannotFindHost),
            (7, .cannotConnectToHost),
            (28, .timedOut),
            (35, .secureConnectionFailed), (58, .secureConnectionFailed), (59, .secureConnectionFailed), (66, .secureConnectionFailed),
            (80, .secureConnectionFailed), (83, .secureConnectionFailed), (90, .secureConnectionFailed), (91, .secureConnectionFailed),
            (51, .serverCertificateUntrusted), (60, .serverCertificateUntrusted),
            (47, .httpTooManyRedirects),
            (52, .zeroByteResource),
            (18, .networkConnectionLost), (55, .networkConnectionLost), (56, .networkConnectionLost), (92, .networkConnectionLost),
            (16, .cannotLoadFromNetwork), (23, .cannotLoadFromNetwork), (42, .cannotLoadFromNetwork), (61, .cannotLoadFromNetwork),
            (97, .cannotLoadFromNetwork), (0, .cannotLoadFromNetwork),
        ]
        for (curlCode, urlErrorCode) in expected {
            #expect(code(curlCode) == urlErrorCode, "curl \(curlCode)")
        }
    }

    /// A TLS alert on the first read (a refused client certificate under TLS 1.3) is not
    /// retried, but URLSession's callers see the receive error it arrived as.
    @Test func aTLSAlertOnAReceiveIsStillANetworkConnectionLost() {
        #expect(code(56, "OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0") == .networkConnectionLost)
    }
}
#endif
