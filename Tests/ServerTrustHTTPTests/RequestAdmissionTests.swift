import Foundation
import HTTPTypes
@testable import ServerTrustHTTP
import Testing

/// ServerTrustHTTP's one request-admission rule, which the URLSession, OpenAPI and Vapor
/// adapters apply (each adapter's own tests send the same inputs through it).
@Suite struct RequestAdmissionTests {
    typealias Kind = RequestAdmission.Refusal.Kind

    static let url = URL(string: "https://api.servertrust.test/echo?x=1")!

    static func verdict(
        _ fields: [(name: String, value: String)], url: URL = url, target: String? = nil, bodyLength: Int? = 0
    ) -> Result<RequestAdmission.Admitted, RequestAdmission.Refusal> {
        Result { () throws(RequestAdmission.Refusal) in
            try RequestAdmission.admit(target: target ?? url.absoluteString, url: url, fields: fields, bodyLength: bodyLength)
        }
    }

    static func refusal(_ result: Result<RequestAdmission.Admitted, RequestAdmission.Refusal>) -> Kind? {
        if case .failure(let refusal) = result { return refusal.kind }
        return nil
    }

    /// Same server: the URL's host, ASCII case ignored, with its port or (for the scheme's
    /// default port) none; left out of the fields, since the session sends the URL's authority.
    @Test(arguments: [
        ("https://api.servertrust.test/echo", "api.servertrust.test"),
        ("https://api.servertrust.test/echo", "API.ServerTrust.TEST"),
        ("https://api.servertrust.test/echo", "api.servertrust.test:443"),
        ("https://api.servertrust.test/echo", " api.servertrust.test:443\t"),
        ("https://api.servertrust.test:443/echo", "api.servertrust.test"),
        ("https://api.servertrust.test:8443/echo", "Api.servertrust.test:8443"),
        ("http://api.servertrust.test/echo", "api.servertrust.test:80"),
        ("https://[::1]:8443/echo", "[::1]:8443"),
    ])
    func aHostNamingTheURLsServerIsAdmittedAndLeftOut(url: String, host: String) throws {
        let admitted = try Self.verdict([("Host", host), ("Accept", "*/*")], url: URL(string: url)!).get()
        #expect(admitted.headers == [.accept: "*/*"])
    }

    /// Another host, another port (the default one included when the URL names another), a
    /// port that is no number, an empty value, or the default port of another scheme.
    @Test(arguments: [
        ("https://api.servertrust.test/echo", "internal.servertrust.test"),
        ("https://api.servertrust.test/echo", "api.servertrust.test:8443"),
        ("https://api.servertrust.test/echo", "api.servertrust.test:80"),
        ("https://api.servertrust.test:8443/echo", "api.servertrust.test"),
        ("https://api.servertrust.test:8443/echo", "api.servertrust.test:443"),
        ("https://api.servertrust.test/echo", "api.servertrust.test:"),
        ("https://api.servertrust.test/echo", "api.servertrust.test:https"),
        ("https://api.servertrust.test/echo", "api.servertrust.test."),
        ("https://api.servertrust.test/echo", "user@api.servertrust.test"),
        ("https://api.servertrust.test/echo", ""),
        ("https://[::1]:8443/echo", "::1:8443"),
        ("https://[::1]:8443/echo", "[::2]:8443"),
    ])
    func aHostNamingAnotherServerIsRefused(url: String, host: String) {
        let result = Self.verdict([("Host", host)], url: URL(string: url)!)
        #expect(Self.refusal(result) == .conflictingHost, "\(host) for \(url)")
    }

    @Test(arguments: ["X-Note: a\r\nX-Injected: 1", "X-Note: a\nb", "X-Note: a\0b", "X-Note: a\rb"])
    func crLFOrNULInAValueIsRefused(_ field: String) {
        let (name, value) = (String(field.prefix { $0 != ":" }), String(field.drop { $0 != ":" }.dropFirst(2)))
        #expect(Self.refusal(Self.verdict([(name, value)])) == .invalidHeaderValue, "\(field.debugDescription)")
    }

    @Test(arguments: ["X-Note\r\nX-Injected", "X-Note\0", "X Note", ""])
    func aNameThatIsNoTokenIsRefused(_ name: String) {
        #expect(Self.refusal(Self.verdict([(name, "1")])) == .invalidHeaderName, "\(name.debugDescription)")
    }

    @Test(arguments: ["https://api.servertrust.test/echo\r\nX-Injected: 1", "https://api.servertrust.test/e\0cho"])
    func crLFOrNULInTheTargetIsRefused(_ target: String) {
        #expect(Self.refusal(Self.verdict([], target: target)) == .invalidTarget)
    }

    /// A Content-Length that agrees with a known body is left out; one declaring the length of
    /// a body of unknown length is handed back.
    @Test func anAgreeingContentLengthIsLeftOutAndDeclaresAStreamsLength() throws {
        let known = try Self.verdict([("Content-Length", "5"), ("content-length", " 5 ")], bodyLength: 5).get()
        #expect(known.headers.isEmpty)
        #expect(known.contentLength == 5)
        let streamed = try Self.verdict([("Content-Length", "42")], bodyLength: nil).get()
        #expect(streamed.headers.isEmpty)
        #expect(streamed.contentLength == 42)
        #expect(try Self.verdict([("Content-Length", "0")], bodyLength: 0).get().contentLength == 0)
        #expect(try Self.verdict([], bodyLength: nil).get().contentLength == nil)
    }

    @Test(arguments: [
        ([("Content-Length", "3")], 5 as Int?),
        ([("Content-Length", "5")], 0),
        ([("Content-Length", "5"), ("Content-Length", "6")], nil),
        ([("Content-Length", "5"), ("Content-Length", "5, 5")], 5),
        ([("Content-Length", "+5")], 5),
        ([("Content-Length", "-1")], nil),
        ([("Content-Length", "0x5")], 5),
        ([("Content-Length", "")], 0),
        ([("Content-Length", "99999999999999999999999")], nil),
    ])
    func aContentLengthThatIsNoByteCountOrDisagreesIsRefused(_ fields: [(String, String)], _ bodyLength: Int?) {
        let result = Self.verdict(fields.map { (name: $0.0, value: $0.1) }, bodyLength: bodyLength)
        #expect(Self.refusal(result) == .conflictingContentLength, "\(fields) for \(String(describing: bodyLength))")
    }

    @Test(arguments: ["chunked", "identity", "gzip, chunked"])
    func transferEncodingIsRefused(_ value: String) {
        #expect(Self.refusal(Self.verdict([("Transfer-Encoding", value)])) == .transferEncoding)
        #expect(Self.refusal(Self.verdict([("transfer-encoding", value)], bodyLength: nil)) == .transferEncoding)
    }

    /// Other fields are kept in order, repeated names and the caller's spelling included.
    @Test func otherFieldsAreKeptInOrderAsWritten() throws {
        let admitted = try Self.verdict([("X-Multi", "first"), ("Content-Type", "text/plain"), ("x-multi", "second")]).get()
        #expect(admitted.headers.map(\.name.rawName) == ["X-Multi", "Content-Type", "x-multi"])
        #expect(admitted.headers.map(\.value) == ["first", "text/plain", "second"])
        #expect(admitted.contentLength == nil)
    }

    /// The session's error for an adapter whose errors are the session's (OpenAPI).
    @Test func aRefusalAsTheSessionsErrorIsInvalidRequestWithItsReason() throws {
        guard case .failure(let refusal) = Self.verdict([("Host", "internal.servertrust.test")]) else {
            Issue.record("admitted")
            return
        }
        let error = refusal.sessionError(url: Self.url.absoluteString)
        #expect(error.code == .invalidRequest)
        #expect(error.reason == refusal.reason)
        #expect(error.url == Self.url.absoluteString)
        #expect(refusal.reason.contains("names another server"))
    }
}
