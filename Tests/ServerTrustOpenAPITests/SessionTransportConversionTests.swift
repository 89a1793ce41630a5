#if OpenAPIAdapter
import Foundation
import HTTPTypes
import OpenAPIRuntime
import ServerTrustHTTP
@testable import ServerTrustOpenAPI
import Testing

/// How the transport turns a generated client's request into a session request, and a
/// response's fields into an `HTTPBody.Length`.
@Suite struct SessionTransportConversionTests {
    static func request(_ path: String?, headers: HTTPFields = [:]) -> HTTPRequest {
        var request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: path, headerFields: headers)
        request.path = path
        return request
    }

    @Test(arguments: [
        ("https://api.example.com", "/greeting?name=Ada", "https://api.example.com/greeting?name=Ada"),
        ("https://api.example.com/v2", "/greeting", "https://api.example.com/v2/greeting"),
        ("https://api.example.com/v2/", "/greeting", "https://api.example.com/v2/greeting"),
        ("https://api.example.com:8443/", "/a%20b", "https://api.example.com:8443/a%20b"),
        ("https://user:secret@api.example.com/", "/greeting", "https://api.example.com/greeting"),
        ("https://[::1]:8443", "/greeting", "https://[::1]:8443/greeting"),
    ])
    func theServerURLAndTheOperationPathMakeTheRequestURL(base: String, path: String, expected: String) throws {
        let request = try SessionTransport.sessionRequest(Self.request(path), body: nil, baseURL: URL(string: base)!)
        #expect(request.url.absoluteString == expected)
    }

    @Test(arguments: ["file:///tmp/x", "api.example.com", "/relative"])
    func aServerURLWithoutAHostIsAnInvalidRequest(base: String) throws {
        #expect(throws: SessionError.invalidRequest) {
            try SessionTransport.sessionRequest(Self.request("/greeting"), body: nil, baseURL: URL(string: base)!)
        }
    }

    @Test(arguments: [nil, "", "evil.example/steal", "?x=1", "*"])
    func anOperationPathThatIsMissingOrDoesNotStartWithASlashIsAnInvalidRequest(path: String?) throws {
        #expect(throws: SessionError.invalidRequest) {
            try SessionTransport.sessionRequest(Self.request(path), body: nil, baseURL: URL(string: "https://api.example.com")!)
        }
    }

    /// A `Content-Length` that agrees with the body is left out (the session frames the body);
    /// one that disagrees, and `Transfer-Encoding`, are refused (`OpenAPIRequestAdmissionTests`).
    @Test func anAgreeingContentLengthIsLeftOutAndOtherFieldsKept() throws {
        let headers: HTTPFields = [.contentLength: "3", .contentType: "application/octet-stream", .accept: "*/*"]
        let request = try SessionTransport.sessionRequest(
            Self.request("/echo", headers: headers), body: HTTPBody([1, 2, 3]), baseURL: URL(string: "https://api.example.com")!)
        #expect(request.headers[.contentLength] == nil)
        #expect(request.headers[.contentType] == "application/octet-stream")
        #expect(request.headers[.accept] == "*/*")
        #expect(request.uploadBody?.isReplayable == false)
    }

    @Test(arguments: [
        ([HTTPField(name: .contentLength, value: "42")], HTTPBody.Length.known(42)),
        ([HTTPField(name: .contentLength, value: "42"), HTTPField(name: .contentEncoding, value: "identity")], .known(42)),
        ([HTTPField(name: .contentLength, value: "42"), HTTPField(name: .contentEncoding, value: "gzip")], .unknown),
        ([HTTPField(name: .contentLength, value: "-1")], .unknown),
        ([HTTPField(name: .contentLength, value: "42"), HTTPField(name: .contentLength, value: "43")], .unknown),
        ([], .unknown),
    ])
    func aStreamedBodyHasAKnownLengthOnlyWhenItArrivesAsSent(fields: [HTTPField], expected: HTTPBody.Length) {
        #expect(SessionTransport.streamedLength(HTTPFields(fields)) == expected)
    }
}
#endif
