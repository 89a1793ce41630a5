#if VaporClient
import Foundation
import HTTPTypes
import NIOCore
import ServerTrustHTTP
@testable import ServerTrustVapor
import Testing
import Vapor

/// The inputs ServerTrustHTTP's request admission decides (`RequestAdmissionTests`), sent as a
/// Vapor `ClientRequest`: each gets the rule's verdict, under this client's code for it. The
/// URLSession and OpenAPI adapters' tests send the same inputs.
@Suite struct VaporRequestAdmissionTests {
    static let url = "https://api.servertrust.test/echo?x=1"

    enum Input: String, CaseIterable {
        case crLFInAValue, nulInAValue, crLFInAName, crLFInTheTarget, hostInAnotherCase, hostWithTheDefaultPort, hostWithAnotherPort
        case hostOfAnotherServer, contentLengthThatDisagrees, transferEncoding
    }

    static func request(_ input: Input) -> ClientRequest {
        var request = ClientRequest(method: .POST, url: URI(string: url), body: ByteBuffer(string: "hello"))
        switch input {
        case .crLFInAValue: request.headers.add(name: "X-Note", value: "a\r\nX-Injected: 1")
        case .nulInAValue: request.headers.add(name: "X-Note", value: "a\0b")
        case .crLFInAName: request.headers.add(name: "X-Note\r\nX-Injected", value: "1")
        case .crLFInTheTarget: request.url = URI(string: url + "\r\nX-Injected: 1")
        case .hostInAnotherCase: request.headers.add(name: "Host", value: "API.ServerTrust.test")
        case .hostWithTheDefaultPort: request.headers.add(name: "Host", value: "api.servertrust.test:443")
        case .hostWithAnotherPort: request.headers.add(name: "Host", value: "api.servertrust.test:8443")
        case .hostOfAnotherServer: request.headers.add(name: "Host", value: "internal.servertrust.test")
        case .contentLengthThatDisagrees: request.headers.add(name: "Content-Length", value: "3")
        case .transferEncoding: request.headers.add(name: "Transfer-Encoding", value: "chunked")
        }
        return request
    }

    static func expected(_ input: Input) -> ServerTrustClientError.Code? {
        switch input {
        case .crLFInAValue, .nulInAValue: .invalidHeaderValue
        case .crLFInAName: .invalidHeaderName
        case .crLFInTheTarget, .hostInAnotherCase, .hostWithTheDefaultPort: nil
        case .hostWithAnotherPort, .hostOfAnotherServer: .conflictingHost
        case .contentLengthThatDisagrees: .conflictingContentLength
        case .transferEncoding: .transferEncoding
        }
    }

    @Test(arguments: Input.allCases)
    func eachInputGetsTheRulesVerdict(_ input: Input) throws {
        let result = Result { () throws(ServerTrustClientError) in try ServerTrustClient.sessionRequest(Self.request(input)) }
        switch (result, Self.expected(input)) {
        case (.failure(let error), let code?):
            #expect(error.code == code, "\(input): \(error)")
            #expect(!error.reason.isEmpty)
        case (.success(let request), nil):
            // Admitted: the Host (naming the URL's server) is left out, the session sends the
            // URL's authority; a line break in the target never goes out raw.
            #expect(request.headers[HTTPField.Name("Host")!] == nil, "\(input)")
            #expect(!request.url.absoluteString.utf8.contains { $0 == 0x0D || $0 == 0x0A }, "\(input)")
            if input == .crLFInTheTarget { #expect(request.url.absoluteString.contains("%0D%0A"), "\(request.url)") }
        case (.failure(let error), nil):
            Issue.record("\(input): refused, expected admitted: \(error)")
        case (.success, let code?):
            Issue.record("\(input): admitted, expected \(code)")
        }
    }

    /// Two `Content-Length` fields that disagree (a Vapor `HTTPHeaders` can hold both).
    @Test func twoContentLengthsThatDisagreeAreRefused() {
        var request = ClientRequest(method: .POST, url: URI(string: Self.url), body: ByteBuffer(string: "hello"))
        request.headers.add(name: "Content-Length", value: "5")
        request.headers.add(name: "content-length", value: "6")
        #expect(throws: ServerTrustClientError(.conflictingContentLength, "")) { try ServerTrustClient.sessionRequest(request) }
    }
}
#endif
