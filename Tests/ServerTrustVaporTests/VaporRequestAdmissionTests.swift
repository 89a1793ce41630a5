#if VaporClient
import Foundation
import HTTPTypes
import NIOCore
import ServerTrustHTTP
@testable import ServerTrustVapor
import Testing
import Vapor

/// The inputs ServerTrustHTTP's request admission decides (`RequestAdmissionTests`), sent as a
/// Vapor `ClientRequest`: each gets the rule's verdict, as `SessionError` `invalidRequest` with the
/// rule's reason. The
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

    static func expected(_ input: Input) -> RequestAdmission.Refusal.Kind? {
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
        let result = Result { () throws(SessionError) in try ServerTrustClient.sessionRequest(Self.request(input)) }
        switch (result, Self.expected(input)) {
        case (.failure(let error), let kind?):
            #expect(error.code == .invalidRequest, "\(input): \(error)")
            let rule = Result { () throws(RequestAdmission.Refusal) in
                try RequestAdmission.admit(target: Self.url, url: URL(string: Self.url)!, fields: Self.request(input).headers, bodyLength: 5)
            }
            guard case .failure(let refusal) = rule else {
                Issue.record("\(input): the rule admitted it")
                return
            }
            #expect(refusal.kind == kind, "\(input)")
            #expect(error.reason == refusal.reason, "\(input)")
            #expect(error.url == Self.url, "\(input)")
        case (.success(let request), nil):
            // Admitted: the Host (naming the URL's server) is left out, the session sends the
            // URL's authority; a line break in the target never goes out raw.
            #expect(request.headers[HTTPField.Name("Host")!] == nil, "\(input)")
            #expect(!request.url.absoluteString.utf8.contains { $0 == 0x0D || $0 == 0x0A }, "\(input)")
            if input == .crLFInTheTarget { #expect(request.url.absoluteString.contains("%0D%0A"), "\(request.url)") }
        case (.failure(let error), nil):
            Issue.record("\(input): refused, expected admitted: \(error)")
        case (.success, let kind?):
            Issue.record("\(input): admitted, expected \(kind)")
        }
    }

    /// Two `Content-Length` fields that disagree (a Vapor `HTTPHeaders` can hold both).
    @Test func twoContentLengthsThatDisagreeAreRefused() {
        var request = ClientRequest(method: .POST, url: URI(string: Self.url), body: ByteBuffer(string: "hello"))
        request.headers.add(name: "Content-Length", value: "5")
        request.headers.add(name: "content-length", value: "6")
        let error = #expect(throws: SessionError.invalidRequest) { try ServerTrustClient.sessionRequest(request) }
        #expect(error?.reason == "Two Content-Length fields disagree (5 and 6 bytes).")
    }
}
#endif
