import Foundation
import HTTPTypes
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Request and Response as swift-http-types values: built from an `HTTPRequest`, turned back
/// into one, and a response's fields as received, repeats and order kept.
@Suite struct HTTPTypesBridgeTests {
    private static let bridge = HTTPField.Name("X-Bridge")!

    /// An `HTTPRequest` as a Hummingbird or OpenAPI caller holds one: the server receives its
    /// method, path and query, and every field in order, the repeated one twice.
    @Test func aRequestBuiltFromAnHTTPRequestReachesTheServerAsBuilt() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.httpVersion = .http1_1 }
        defer { session.shutdown() }
        let target = fixture.url("/echo")
        let authority = "\(try #require(target.host)):\(try #require(target.port))"
        let http = HTTPRequest(
            method: .put, scheme: "https", authority: authority, path: "/echo?x=1",
            headerFields: [Self.bridge: "one", .contentType: "text/plain", Self.bridge: "two"])
        let request = try Request(http, body: Array("bridged".utf8))
        #expect(request.url.absoluteString == "https://\(authority)/echo?x=1")

        let response = try await session.data(for: request)
        #expect(response.status == .ok)
        #expect(response.text == "bridged")
        let received = try #require(fixture.server.recentRequests.last)
        #expect(received.method == "PUT")
        #expect(received.target == "/echo?x=1")
        #expect(received.headers(named: "X-Bridge") == ["one", "two"])
        #expect(received.header("Content-Type") == "text/plain")
        let sent = received.headers.map(\.name).filter { ["X-Bridge", "Content-Type"].contains($0) }
        #expect(sent == ["X-Bridge", "Content-Type", "X-Bridge"])
    }

    @Test func anHTTPRequestWithoutSchemeOrAuthorityIsRefused() {
        let serverSide = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/items")
        #expect { try Request(serverSide) } throws: { error in
            let error = error as? SessionError
            return error?.code == .invalidRequest && error?.reason.contains(":scheme or :authority") == true
        }
        let noAuthority = HTTPRequest(method: .get, scheme: "https", authority: nil, path: "/")
        #expect { try Request(noAuthority, uploadBody: .bytes([1])) } throws: { error in
            let error = error as? SessionError
            return error?.code == .invalidRequest && error?.reason.contains(":authority") == true
        }
    }

    @Test func httpRequestRoundTripsMethodURLAndFields() throws {
        let http = HTTPRequest(
            method: HTTPRequest.Method("PURGE")!, scheme: "https", authority: "api.example.com:8443", path: "/a/b?c=d",
            headerFields: [.accept: "application/json", Self.bridge: "1", Self.bridge: "2"])
        let request = try Request(http, isIdempotent: true)
        #expect(request.method.rawValue == "PURGE")
        #expect(request.url == URL(string: "https://api.example.com:8443/a/b?c=d"))
        #expect(request.isIdempotent == true)
        #expect(request.httpRequest == http)
        #expect(Array(request.httpRequest.headerFields) == Array(http.headerFields))
    }

    /// Repeated fields stay separate and in order (a signed response refuses a second ETag:
    /// they must not be merged), and `httpResponse` carries status and fields unchanged.
    @Test func httpResponseKeepsTheStatusAndRepeatedFieldsInOrder() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler { request in
            request.path == "/repeated"
                ? LocalHTTPResponse(
                    status: 203, headers: [("X-Bridge", "first"), ("Set-Cookie", "a=1"), ("x-bridge", "second"), ("Set-Cookie", "b=2")],
                    body: .text("ok"))
                : nil
        }
        let session = try fixture.session { $0.httpVersion = .http1_1 }
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: fixture.url("/repeated")))
        let http = response.httpResponse
        #expect(http.status.code == 203)
        #expect(http.status == response.status)
        #expect(http.headerFields == response.headers)
        #expect(http.headerFields[values: Self.bridge] == ["first", "second"])
        #expect(http.headerFields[fields: Self.bridge].map(\.name.rawName) == ["X-Bridge", "x-bridge"])
        #expect(http.headerFields[values: .setCookie] == ["a=1", "b=2"])
        let order = http.headerFields.map(\.name.rawName).filter { ["X-Bridge", "x-bridge", "Set-Cookie"].contains($0) }
        #expect(order == ["X-Bridge", "Set-Cookie", "x-bridge", "Set-Cookie"])
        #expect(response.header("x-BRIDGE") == "first")
        #expect(response.header(Self.bridge) == "first")
    }

    /// A field whose name is not a token is dropped, never a crash and never merged into a
    /// valid one; the valid fields around it are kept.
    @Test func aWireFieldWithAnInvalidNameIsDropped() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler { request in
            request.path == "/odd"
                ? LocalHTTPResponse(headers: [("X-Before", "1"), ("Bad Name", "x"), ("ETag ", "\"spaced\""), ("X-After", "2")], body: .text("ok"))
                : nil
        }
        let session = try fixture.session { $0.httpVersion = .http1_1 }
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: fixture.url("/odd")))
        #expect(response.status == 200)
        #expect(response.header("X-Before") == "1")
        #expect(response.header("X-After") == "2")
        #expect(response.header(.eTag) == nil)
        #expect(response.header("Bad Name") == nil)
        #expect(!response.headers.contains { $0.value == "x" || $0.value.contains("spaced") })
    }

    @Test func headerLookupIsCaseInsensitiveAndAnInvalidNameFindsNothing() throws {
        let request = Request(url: try #require(URL(string: "https://a.test/")), headers: [.contentType: "text/plain", Self.bridge: "b"])
        #expect(request.header("content-TYPE") == "text/plain")
        #expect(request.header(.contentType) == "text/plain")
        #expect(request.header("x-bridge") == "b")
        #expect(request.header("Bad Name") == nil)
        #expect(request.header("") == nil)
        #expect(request.method == .get)
    }

    @Test func aStatusOutsideTheRangeOfHTTPResponseStatusIsZeroNotATrap() {
        #expect(ResponseHead(status: 1000, fields: .empty, httpVersion: "HTTP/1.1").publicStatus.code == 0)
        #expect(ResponseHead(status: -1, fields: .empty, httpVersion: "HTTP/1.1").publicStatus.code == 0)
        #expect(ResponseHead(status: 404, fields: .empty, httpVersion: "HTTP/1.1").publicStatus == .notFound)
    }
}
