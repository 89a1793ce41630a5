import Foundation
import HTTPTypes
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// A response's fields are kept as the bytes curl delivered and made into `HTTPFields` when
/// first read: the same fields the header callback made before, made once, and not at all for a
/// caller that never reads them.
@Suite struct ReceivedFieldsTests {
    /// The fields made directly from each line, as the header callback made them before.
    private func eager(_ lines: [[UInt8]]) -> HTTPFields {
        var fields = HTTPFields()
        for line in lines {
            line.withUnsafeBytes { bytes in
                if case .field(let name, let value) = HeaderLine.parts(of: bytes), let field = HeaderLine.field(name: name, value: value) {
                    fields.append(field)
                }
            }
        }
        return fields
    }

    /// The same lines through the buffer the transfer keeps and the fields made from it.
    private func deferred(_ lines: [[UInt8]]) -> ReceivedFields {
        var buffer = ReceivedFields.Buffer()
        buffer.startHead()
        for line in lines {
            line.withUnsafeBytes { bytes in
                if case .field = HeaderLine.parts(of: bytes) { buffer.append(line: bytes) }
            }
        }
        return ReceivedFields(buffer)
    }

    private func bytesOf(_ field: HTTPField) -> [UInt8] { field.withUnsafeBytesOfValue { Array($0) } }

    @Test func fieldsMadeOnReadAreTheFieldsMadeFromEachLine() {
        // Invalid names (dropped), empty names and values, repeats, non-UTF-8 and control
        // bytes, and values long enough to need more than one byte of length.
        let pieces: [[UInt8]] = [
            Array("X-A".utf8), Array("Bad Name".utf8), Array(":".utf8), Array(": ".utf8), Array("\t".utf8), Array("v".utf8),
            [0xFF, 0xFE], [0x01], Array("content-type".utf8), Array(String(repeating: "z", count: 300).utf8), Array("ETag ".utf8), [],
        ]
        var generator = SeededGenerator(seed: 0xF1E1D)
        for _ in 0..<2_000 {
            let lines = (0..<Int(generator.next() % 12)).map { _ in
                (0..<Int(generator.next() % 6)).flatMap { _ in pieces[Int(generator.next() % UInt64(pieces.count))] } + Array("\r\n".utf8)
            }
            let made = deferred(lines).fields
            let expected = eager(lines)
            #expect(made == expected)
            #expect(made.map(bytesOf) == expected.map(bytesOf))  // the bytes as received, not only equal values
        }
    }

    @Test func aHeadWithoutFieldsIsMadeAlreadyAndEmpty() {
        var buffer = ReceivedFields.Buffer()
        buffer.startHead()
        let fields = ReceivedFields(buffer)
        #expect(fields.isMade)
        #expect(fields.fields.isEmpty)
        #expect(ReceivedFields.empty.fields.isEmpty)
    }

    /// The default path reads no field: the response is returned with its fields still bytes,
    /// made on the first read, and the same for every later read and copy.
    @Test func aResponseMakesItsFieldsOnlyWhenTheyAreRead() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler { request in
            request.path == "/fields"
                ? LocalHTTPResponse(headers: [("Content-Type", "application/json"), ("X-Lazy", "one"), ("x-lazy", "two")], body: .text("{}"))
                : nil
        }
        let session = try fixture.session { $0.httpVersion = .http1_1 }
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: fixture.url("/fields")))
        #expect(response.status == .ok)
        #expect(!response.receivedFields.isMade)
        let copy = response
        #expect(response.headers[.contentType] == "application/json")
        #expect(response.receivedFields.isMade)
        #expect(copy.receivedFields.isMade)  // a copy shares what was made
        #expect(copy.headers[values: HTTPField.Name("X-Lazy")!] == ["one", "two"])
        #expect(copy.httpResponse.headerFields == response.headers)

        let streamed = try await session.stream(Request(url: fixture.url("/fields")))
        #expect(!streamed.receivedFields.isMade)
        #expect(streamed.header("x-lazy") == "one")
        _ = try await streamed.body.collect(upTo: 1 << 10)
    }

    /// A `Response` is `Sendable`: tasks reading its fields at once all see the same fields.
    @Test func fieldsReadFromManyTasksAtOnceAreTheSame() async throws {
        var buffer = ReceivedFields.Buffer()
        buffer.startHead()
        for line in ["Server: nginx\r\n", "Content-Length: 2\r\n", "X-Many: 1\r\n", "X-Many: 2\r\n"] {
            Array(line.utf8).withUnsafeBytes { bytes in
                if case .field = HeaderLine.parts(of: bytes) { buffer.append(line: bytes) }
            }
        }
        let fields = ReceivedFields(buffer)
        let seen = await withTaskGroup(of: HTTPFields.self) { group in
            for _ in 0..<16 { group.addTask { fields.fields } }
            return await group.reduce(into: [HTTPFields]()) { $0.append($1) }
        }
        #expect(seen.count == 16)
        #expect(Set(seen.map { $0.map(\.value) }) == [["nginx", "2", "1", "2"]])
    }
}
