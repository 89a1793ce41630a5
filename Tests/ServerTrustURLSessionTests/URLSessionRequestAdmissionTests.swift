#if URLSessionAdapter
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import ServerTrustHTTP
import ServerTrustTestSupport
@testable import ServerTrustURLSession
import Testing

/// The inputs ServerTrustHTTP's request admission decides (`RequestAdmissionTests`), sent as a
/// `URLRequest`: each gets the rule's verdict, a refusal being `invalidRequest` with the rule's
/// reason. The OpenAPI and Vapor adapters' tests send the same inputs.
@Suite struct URLSessionRequestAdmissionTests {
    static let url = "https://api.servertrust.test/echo?x=1"

    enum Input: String, CaseIterable {
        case crLFInAValue, nulInAValue, crLFInAName, crLFInTheTarget, hostInAnotherCase, hostWithTheDefaultPort, hostWithAnotherPort
        case hostOfAnotherServer, contentLengthThatDisagrees, transferEncoding
    }

    /// The request for `input`, and the field it adds (`allHTTPHeaderFields`: `setValue` drops a
    /// value with CR, LF or NUL silently, the dictionary keeps it as given).
    static func request(_ input: Input) -> (URLRequest, (name: String, value: String)?) {
        let field: (name: String, value: String)? = switch input {
        case .crLFInAValue: ("X-Note", "a\r\nX-Injected: 1")
        case .nulInAValue: ("X-Note", "a\0b")
        case .crLFInAName: ("X-Note\r\nX-Injected", "1")
        case .crLFInTheTarget: nil
        case .hostInAnotherCase: ("Host", "API.ServerTrust.test")
        case .hostWithTheDefaultPort: ("Host", "api.servertrust.test:443")
        case .hostWithAnotherPort: ("Host", "api.servertrust.test:8443")
        case .hostOfAnotherServer: ("Host", "internal.servertrust.test")
        case .contentLengthThatDisagrees: ("Content-Length", "3")
        case .transferEncoding: ("Transfer-Encoding", "chunked")
        }
        var request = URLRequest(url: URL(string: input == .crLFInTheTarget ? url + "\r\nX-Injected: 1" : url)!)
        request.httpMethod = "POST"
        request.httpBody = Data("hello".utf8)
        if let field { request.allHTTPHeaderFields = [field.name: field.value] }
        return (request, field)
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
        let (urlRequest, field) = Self.request(input)
        if let field { #expect(urlRequest.allHTTPHeaderFields?[field.name] == field.value, "\(input): the field is in the URLRequest") }
        let result = Result { () throws(SessionError) in try RequestMapping.request(for: urlRequest, additionalHeaders: [:]) }
        switch (result, Self.expected(input)) {
        case (.failure(let error), let kind?):
            #expect(error.code == .invalidRequest, "\(input): \(error)")
            // The rule's own refusal of the same field, by kind, and its reason in the error.
            let rule = Result { () throws(RequestAdmission.Refusal) in
                try RequestAdmission.admit(target: Self.url, url: URL(string: Self.url)!, fields: field.map { [$0] } ?? [], bodyLength: 5)
            }
            guard case .failure(let refusal) = rule else {
                Issue.record("\(input): the rule admitted it")
                return
            }
            #expect(refusal.kind == kind, "\(input)")
            #expect(error.reason == refusal.reason, "\(input)")
        case (.success(let request), nil):
            #expect(request.headers[HTTPField.Name("Host")!] == nil, "\(input)")
            #expect(!request.url.absoluteString.utf8.contains { $0 == 0x0D || $0 == 0x0A }, "\(input)")
            if input == .crLFInTheTarget { #expect(request.url.absoluteString.contains("%0D%0A"), "\(request.url)") }
        case (.failure(let error), nil):
            Issue.record("\(input): refused, expected admitted: \(error)")
        case (.success, let kind?):
            Issue.record("\(input): admitted, expected \(kind)")
        }
    }

    /// The configuration's `httpAdditionalHeaders` are admitted by the same rule.
    @Test func anAdditionalHostOfAnotherServerIsRefused() throws {
        let urlRequest = URLRequest(url: URL(string: Self.url)!)
        let refused = #expect(throws: SessionError.self) {
            try RequestMapping.request(for: urlRequest, additionalHeaders: ["Host": "internal.servertrust.test"])
        }
        #expect(refused?.code == .invalidRequest)
        #expect(refused?.reason.contains("names another server") == true, "\(String(describing: refused))")
        let admitted = try RequestMapping.request(for: urlRequest, additionalHeaders: ["Host": "api.servertrust.test"])
        #expect(admitted.headers[HTTPField.Name("Host")!] == nil)
    }

    /// Through URLSession itself: a refused request fails as `badURL` and opens no connection.
    @Test(arguments: [Input.hostOfAnotherServer, .transferEncoding, .contentLengthThatDisagrees, .crLFInAValue])
    func aRefusedRequestIsABadURLNotSent(_ input: Input) async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        var (request, _) = Self.request(input)
        request.url = fixture.redirectorURL("/echo")
        let error = try #require(await urlError { try await fixture.urlSession().data(for: request) })
        #expect(error.code == .badURL, "\(input)")
        #expect((error.userInfo[NSUnderlyingErrorKey] as? SessionError)?.code == .invalidRequest, "\(input)")
        #expect(fixture.redirector.acceptedConnections == 0, "\(input)")
    }
}
#endif
