#if OpenAPIAdapter
import Foundation
import HTTPTypes
import OpenAPIRuntime
@testable import ServerTrustHTTP
@testable import ServerTrustOpenAPI
import Testing

/// The inputs ServerTrustHTTP's request admission decides (`RequestAdmissionTests`), sent as a
/// generated client's `HTTPRequest`: each gets the rule's verdict, a refusal being the session's
/// `invalidRequest` with the rule's reason. The URLSession and Vapor adapters' tests send the
/// same inputs.
///
/// CR, LF and NUL in a field never reach this transport: swift-http-types' `HTTPField` turns
/// them into spaces when the generated client (or a middleware) makes the field, so the one
/// verdict here is what the rule gives the field as the transport receives it.
@Suite struct OpenAPIRequestAdmissionTests {
    static let baseURL = URL(string: "https://api.servertrust.test")!

    enum Input: String, CaseIterable {
        case crLFInAValue, nulInAValue, crLFInAName, crLFInTheTarget, hostInAnotherCase, hostWithTheDefaultPort, hostWithAnotherPort
        case hostOfAnotherServer, contentLengthThatDisagrees, transferEncoding
    }

    /// The request for `input`, and the field as the transport receives it.
    static func request(_ input: Input) -> (HTTPRequest, HTTPField?) {
        let field: HTTPField? = switch input {
        case .crLFInAValue: HTTPField(name: HTTPField.Name("X-Note")!, value: "a\r\nX-Injected: 1")
        case .nulInAValue: HTTPField(name: HTTPField.Name("X-Note")!, value: "a\0b")
        case .crLFInAName: HTTPField.Name("X-Note\r\nX-Injected").map { HTTPField(name: $0, value: "1") }
        case .crLFInTheTarget: nil
        case .hostInAnotherCase: HTTPField(name: HTTPField.Name("Host")!, value: "API.ServerTrust.test")
        case .hostWithTheDefaultPort: HTTPField(name: HTTPField.Name("Host")!, value: "api.servertrust.test:443")
        case .hostWithAnotherPort: HTTPField(name: HTTPField.Name("Host")!, value: "api.servertrust.test:8443")
        case .hostOfAnotherServer: HTTPField(name: HTTPField.Name("Host")!, value: "internal.servertrust.test")
        case .contentLengthThatDisagrees: HTTPField(name: .contentLength, value: "3")
        case .transferEncoding: HTTPField(name: .transferEncoding, value: "chunked")
        }
        let path = input == .crLFInTheTarget ? "/echo?x=1\r\nX-Injected: 1" : "/echo?x=1"
        var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: path, headerFields: HTTPFields(field.map { [$0] } ?? []))
        request.path = path
        return (request, field)
    }

    static func expected(_ input: Input) -> RequestAdmission.Refusal.Kind? {
        switch input {
        // Spaces by the time the transport sees them; a name with them is no `HTTPField.Name`.
        case .crLFInAValue, .nulInAValue, .crLFInAName: nil
        case .crLFInTheTarget, .hostInAnotherCase, .hostWithTheDefaultPort: nil
        case .hostWithAnotherPort, .hostOfAnotherServer: .conflictingHost
        case .contentLengthThatDisagrees: .conflictingContentLength
        case .transferEncoding: .transferEncoding
        }
    }

    @Test(arguments: Input.allCases)
    func eachInputGetsTheRulesVerdict(_ input: Input) throws {
        let (httpRequest, field) = Self.request(input)
        let result = Result { () throws(SessionError) in
            try SessionTransport.sessionRequest(httpRequest, body: HTTPBody(Array("hello".utf8)), baseURL: Self.baseURL)
        }
        switch (result, Self.expected(input)) {
        case (.failure(let error), let kind?):
            #expect(error.code == .invalidRequest, "\(input): \(error)")
            let rule = Result { () throws(RequestAdmission.Refusal) in
                try RequestAdmission.admit(
                    target: "https://api.servertrust.test/echo?x=1", url: URL(string: "https://api.servertrust.test/echo?x=1")!,
                    fields: field.map { [(name: $0.name.rawName, value: $0.value)] } ?? [], bodyLength: 5)
            }
            guard case .failure(let refusal) = rule else {
                Issue.record("\(input): the rule admitted it")
                return
            }
            #expect(refusal.kind == kind, "\(input)")
            #expect(error.reason == refusal.reason, "\(input)")
            #expect(error.url == "https://api.servertrust.test/echo?x=1")
        case (.success(let request), nil):
            #expect(request.headers[HTTPField.Name("Host")!] == nil, "\(input)")
            #expect(!request.url.absoluteString.utf8.contains { $0 == 0x0D || $0 == 0x0A }, "\(input)")
            if input == .crLFInAValue || input == .nulInAValue {
                // What HTTPField made of the value: no line break, so no field is injected.
                #expect(request.headers[HTTPField.Name("X-Note")!].map { $0.utf8.allSatisfy { $0 >= 0x20 } } == true, "\(input)")
            }
            if input == .crLFInAName { #expect(field == nil) }
        case (.failure(let error), nil):
            Issue.record("\(input): refused, expected admitted: \(error)")
        case (.success, let kind?):
            Issue.record("\(input): admitted, expected \(kind)")
        }
    }

    /// With a body of unknown length, a `Content-Length` declares it: the stream must have it.
    @Test func aContentLengthDeclaresTheLengthOfABodyOfUnknownLength() throws {
        var (httpRequest, _) = Self.request(.crLFInTheTarget)
        httpRequest.path = "/echo"
        httpRequest.headerFields[.contentLength] = "5"
        let request = try SessionTransport.sessionRequest(httpRequest, body: HTTPBody(Array("hello".utf8), length: .unknown), baseURL: Self.baseURL)
        #expect(request.headers[.contentLength] == nil)
        #expect(request.uploadBody?.isReplayable == false)
        guard case .stream(_, let length)? = request.uploadBody?.storage else {
            Issue.record("not a stream body")
            return
        }
        #expect(length == 5)
    }
}
#endif
