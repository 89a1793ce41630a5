import Foundation
import HTTPTypes
import Logging
internal import CCurl
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// The header callback's byte parser: RFC 9110 whitespace on bytes, and the same result as the
/// String-and-Foundation parser it replaced for every ASCII line.
@Suite struct HeaderLineTests {
    /// A parsed line with its bytes decoded (U+FFFD for what is not UTF-8), to compare.
    private enum Parsed: Equatable {
        case status(code: Int, httpVersion: String)
        case end
        case field(name: String, value: String)
        case ignored
    }

    private func parse(_ bytes: [UInt8]) -> Parsed {
        bytes.withUnsafeBytes { line in
            switch HeaderLine.parts(of: line) {
            case .status(let code, let httpVersion): .status(code: code, httpVersion: String(decoding: httpVersion, as: UTF8.self))
            case .end: .end
            case .field(let name, let value): .field(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
            case .ignored: .ignored
            }
        }
    }

    private func parse(_ text: String) -> Parsed { parse(Array(text.utf8)) }

    /// The parser before this one (Transfer.receiveHeaderLine until the byte parser), kept as
    /// the reference the byte parser must agree with.
    private func foundationParse(_ text: String) -> Parsed {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("HTTP/") {
            let parts = trimmed.split(separator: " ", maxSplits: 2)
            return .status(code: parts.count > 1 ? Int(parts[1]) ?? 0 : 0, httpVersion: String(parts[0]))
        } else if trimmed.isEmpty {
            return .end
        } else if let colon = trimmed.firstIndex(of: ":") {
            return .field(name: String(trimmed[..<colon]), value: trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return .ignored
    }

    @Test func aStatusLineGivesVersionAndCode() {
        #expect(parse("HTTP/1.1 200 OK\r\n") == .status(code: 200, httpVersion: "HTTP/1.1"))
        #expect(parse("HTTP/2 204\r\n") == .status(code: 204, httpVersion: "HTTP/2"))
        #expect(parse("HTTP/1.1 100 Continue\n") == .status(code: 100, httpVersion: "HTTP/1.1"))
        #expect(parse("HTTP/1.1  302  Found here\r\n") == .status(code: 302, httpVersion: "HTTP/1.1"))
    }

    @Test func aStatusThatIsNotANumberIsZeroNeverASuccess() {
        #expect(parse("HTTP/1.1 abc OK\r\n") == .status(code: 0, httpVersion: "HTTP/1.1"))
        #expect(parse("HTTP/1.1\r\n") == .status(code: 0, httpVersion: "HTTP/1.1"))
        #expect(parse([UInt8]("HTTP/1.1 2".utf8) + [0xFF] + [UInt8]("0 OK\r\n".utf8)) == .status(code: 0, httpVersion: "HTTP/1.1"))
    }

    @Test func crlfBareLFAndWhitespaceOnlyLinesEndTheHead() {
        #expect(parse("\r\n") == .end)
        #expect(parse("\n") == .end)
        #expect(parse("") == .end)
        #expect(parse(" \t\r\n") == .end)
    }

    @Test func fieldsAreSplitAtTheFirstColonAndTheValueTrimmedOfSpacesAndTabs() {
        #expect(parse("Content-Type: text/plain\r\n") == .field(name: "Content-Type", value: "text/plain"))
        #expect(parse("Location: https://example.com:8443/a?b=c:d\r\n") == .field(name: "Location", value: "https://example.com:8443/a?b=c:d"))
        #expect(parse("X-Tabs:\t \tvalue\twith tab\t \r\n") == .field(name: "X-Tabs", value: "value\twith tab"))
        #expect(parse("X-Bare-LF: yes\n") == .field(name: "X-Bare-LF", value: "yes"))
        #expect(parse("X-Empty:\r\n") == .field(name: "X-Empty", value: ""))
        #expect(parse("X-Spaces:    \r\n") == .field(name: "X-Spaces", value: ""))
        #expect(parse(":no-name\r\n") == .field(name: "", value: "no-name"))
        #expect(parse("Name : spaced\r\n") == .field(name: "Name ", value: "spaced"))
    }

    @Test func aLineWithoutAColonIsIgnoredAndSoIsAFoldedContinuationWithoutOne() {
        #expect(parse("garbage\r\n") == .ignored)
        #expect(parse("   continued value\r\n") == .ignored)
        // A folded line with a colon is trimmed and read as a field of its own, as before.
        #expect(parse("\tX-Folded: yes\r\n") == .field(name: "X-Folded", value: "yes"))
    }

    @Test func bytesThatAreNotUTF8AreReplacedNeverACrash() {
        let line: [UInt8] = [0x58, 0xFF, 0x3A, 0x20, 0xC3, 0x28, 0x80, 0x0D, 0x0A]  // "X\xFF: \xC3(\x80\r\n"
        #expect(parse(line) == .field(name: "X\u{FFFD}", value: "\u{FFFD}(\u{FFFD}"))
        #expect(parse([0xFE, 0xFF, 0x0D, 0x0A]) == .ignored)
        #expect(parse(line) == foundationParse(String(decoding: line, as: UTF8.self)))
    }

    @Test func onlyRFC9110WhitespaceIsTrimmedNotVerticalTabOrUnicodeSpaces() {
        #expect(parse("X-VT: a\u{0B}\r\n") == .field(name: "X-VT", value: "a\u{0B}"))
        #expect(parse("X-NBSP: \u{A0}a\u{A0}\r\n") == .field(name: "X-NBSP", value: "\u{A0}a\u{A0}"))
        #expect(parse("X-CR: a\rb\r\n") == .field(name: "X-CR", value: "a\rb"))
    }

    @Test func everyLineOfTheseCasesParsesAsTheFoundationParserDid() {
        let lines = [
            "HTTP/1.1 200 OK\r\n", "HTTP/2 200\r\n", "HTTP/1.0 404 Not Found\n", "HTTP/1.1 +200 OK\r\n", "HTTP/1.1 -1\r\n",
            " HTTP/1.1 200 OK\r\n", "HTTP/\r\n", "http/1.1 200\r\n", "\r\n", "\n", "\r\r\n", "\t\r\n",
            "Content-Length: 7\r\n", "A:b\r\n", "A: b \t\r\n", "A:\tb:c\r\n", " A : b \r\n", "A\r\n", ":\r\n",
            "A: b\rc\r\n", "Set-Cookie: a=b; Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT\r\n",
        ]
        for line in lines {
            #expect(parse(line) == foundationParse(line), "\(line.debugDescription)")
        }
    }

    @Test func aSessionReturnsFieldsWithColonsTabsAndEmptyValuesIntact() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler { request in
            guard request.path == "/odd-headers" else { return nil }
            var response = LocalHTTPResponse.text("ok\n")
            response.headers += [("X-Colon", "a:b: c"), ("X-Tabs", "\tinner\tvalue\t"), ("X-Empty", ""), ("X-Last", "end")]
            return response
        }
        let session = try fixture.session()
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/odd-headers").absoluteString)
        #expect(response.status == 200)
        #expect(response.httpVersion.hasPrefix("HTTP/"))
        #expect(response.header("X-Colon") == "a:b: c")
        #expect(response.header("X-Tabs") == "inner\tvalue")
        #expect(response.header("X-Empty") == "")
        #expect(response.header("X-Last") == "end")
        #expect(response.body == Array("ok\n".utf8))
    }

    private func field(_ line: String) -> HTTPField? { field(Array(line.utf8)) }

    /// The field the transfer makes of `line`, or nil.
    private func field(_ line: [UInt8]) -> HTTPField? {
        line.withUnsafeBytes { bytes -> HTTPField? in
            guard case .field(let name, let value) = HeaderLine.parts(of: bytes) else { return nil }
            return HeaderLine.field(name: name, value: value)
        }
    }

    @Test func aCommonNameKeepsTheSpellingTheServerSent() throws {
        for spelling in ["Content-Type", "content-type", "CONTENT-TYPE", "Content-type"] {
            let made = try #require(field("\(spelling): text/plain\r\n"))
            #expect(made.name.rawName == spelling)
            #expect(made.name.canonicalName == "content-type")
            #expect(made.value == "text/plain")
        }
    }

    @Test func everyNameMadeOnceIsTheNameTheLineWouldMake() throws {
        for spelling in CommonFieldNames.spellings.flatMap({ [$0, $0.lowercased()] }) {
            let cached = try #require(Array(spelling.utf8).withUnsafeBytes { CommonFieldNames.name(spelled: $0) }, "\(spelling)")
            let made = try #require(HTTPField.Name(spelling))
            #expect(cached.rawName == made.rawName)
            #expect(cached.canonicalName == made.canonicalName)
        }
        #expect(Array("Content-Typ".utf8).withUnsafeBytes { CommonFieldNames.name(spelled: $0) } == nil)
        #expect([UInt8]().withUnsafeBytes { CommonFieldNames.name(spelled: $0) } == nil)
    }

    @Test func aNameThatIsNotATokenMakesNoField() {
        #expect(field("Bad Name: x\r\n") == nil)
        #expect(field("ETag : \"x\"\r\n") == nil)
        #expect(field(": no name\r\n") == nil)
        #expect(field("X-\u{E9}: x\r\n") == nil)
        #expect(field("X-Fine: x\r\n")?.name.rawName == "X-Fine")
    }

    @Test func aValueKeepsItsBytesButForLineBreaksAndNUL() throws {
        var raw = Array("X-Raw: a".utf8)
        raw += [0xFF, 0x00]
        raw += Array("b\rc\r\n".utf8)
        let made = try #require(field(raw))
        let expected: [UInt8] = [0x61, 0xFF, 0x20, 0x62, 0x20, 0x63]  // a, the byte kept, NUL and CR as spaces
        #expect(made.withUnsafeBytesOfValue { Array($0) } == expected)
        #expect(made.value == "a\u{FFFD} b c")
    }

    @Test func everyValueIsKeptAsTheLenientRuleKeepsIt() throws {
        // Printable ASCII takes a shorter path; every value must come out as the lenient rule
        // alone makes it, byte for byte.
        let values: [[UInt8]] = [
            Array("text/plain; charset=utf-8".utf8), Array("a\tb".utf8), [], Array("caf\u{E9}".utf8), [0x61, 0x7F, 0x62],
            [0x61, 0x01, 0x62], [0x61, 0x80], Array("~!@#$%^&*()_+`-={}[]|\\:;'<>?,./\"".utf8),
        ]
        for value in values {
            let line = Array("X-Value: ".utf8) + value + [0x0D, 0x0A]
            let made = try #require(field(line))
            let lenient = HTTPField(name: made.name, lenientValue: value)
            #expect(made.withUnsafeBytesOfValue { Array($0) } == lenient.withUnsafeBytesOfValue { Array($0) }, "\(value)")
            #expect(made.value == lenient.value, "\(value)")
        }
    }

    @Test func randomASCIILinesParseAsTheFoundationParserDid() {
        // Pieces the parser treats specially, and filler; a fixed seed keeps the run repeatable.
        let pieces = ["HTTP/", "1.1", " ", "  ", "\t", ":", "200", "x", "Name", "\r", "\n", "\r\n", "-", "0"]
        var generator = SeededGenerator(seed: 0x5EED)
        for _ in 0..<5_000 {
            let count = Int(generator.next() % 9)
            let line = (0..<count).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
            #expect(parse(line) == foundationParse(line), "\(line.debugDescription)")
        }
    }

    /// The transfer classifies each line with `kind(of:)` and keeps every line that is not a
    /// status or a blank one; `parts(of:)` splits it when the fields are read. Both must agree.
    @Test func theTransfersClassificationAgreesWithTheParser() {
        // `H`, `HTTP` and `HTTP/1` start lines that only look like status lines up to a point.
        let pieces = ["HTTP/", "1.1", " ", "\t", ":", "200", "+", "x", "\r", "\n", "\r\n", "-", "HTTP/2 204", "H", "HTTP", "HTTP/1"]
        var generator = SeededGenerator(seed: 0xC1A55)
        for _ in 0..<5_000 {
            let line = Array((0..<Int(generator.next() % 8)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined().utf8)
            line.withUnsafeBytes { bytes in
                switch (HeaderLine.kind(of: bytes), HeaderLine.parts(of: bytes)) {
                case (.status(let code, let version), .status(let expectedCode, let expectedVersion)):
                    #expect(code == expectedCode)
                    #expect(Array(version) == Array(expectedVersion))
                    #expect(HeaderLine.version(version) == String(decoding: expectedVersion, as: UTF8.self))
                case (.end, .end), (.other, .field), (.other, .ignored):
                    break
                default:
                    Issue.record("kind(of:) and parts(of:) disagree on \(String(decoding: line, as: UTF8.self).debugDescription)")
                }
            }
        }
    }

    /// The status code is read from its bytes as `Int(String)` read it: sign, digits,
    /// overflow and stray bytes included.
    @Test func aStatusCodeIsReadAsIntOfItsStringWas() {
        var cases = ["200", "0200", "+200", "-1", "+", "-", "", "2x0", "99999999999999999999", "9223372036854775807",
                     "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "١٢٣", "2 0"]
        var generator = SeededGenerator(seed: 0x57A7)
        let alphabet = Array("0123456789+-x ")
        for _ in 0..<2_000 { cases.append(String((0..<Int(generator.next() % 22)).map { _ in alphabet[Int(generator.next() % 14)] })) }
        for text in cases {
            let bytes = Array(text.utf8)
            #expect(bytes.withUnsafeBytes { HeaderLine.statusCode($0) } == Int(text) ?? 0, "\(text.debugDescription)")
        }
    }
}

/// What `Transfer` does with the parsed lines: a status line starts a new head, a blank line
/// after a final status delivers it, and the header cap counts the bytes curl delivered.
@Suite struct TransferHeaderTests {
    private func transfer() throws -> Transfer {
        let policy = TrustPolicy(
            host: NormalizedHost("plain.servertrust.test"), pattern: nil, evaluator: DefaultTrustEvaluator(),
            anchors: try LabPKI.makeRoot().trustAnchors(), validationOptions: PathValidationOptions(), revocationFetcher: nil,
            counters: TrustCounters(), logger: Logger(label: "servertrust.test"))
        let transfer = Transfer(
            url: "http://plain.servertrust.test/", method: "GET", headers: [:], body: nil, policy: policy, isTLS: false,
            bodyLimit: nil, stream: BodyStream())
        #expect(transfer.admitConnection(disableGuard: false))  // plain HTTP: records a report
        return transfer
    }

    private func send(_ line: String, to transfer: Transfer) -> Bool {
        Array(line.utf8).withUnsafeBytes { transfer.receiveHeaderLine($0) }
    }

    /// The head a streamed transfer resumes its task with, as a task awaiting it receives it,
    /// after `lines`; then the transfer is abandoned, which fails a task still waiting (no head
    /// was delivered) and changes nothing for one already resumed.
    private func deliveredHead(after lines: [String]) async throws -> ResponseHead {
        let transfer = try transfer()
        let outcome = try await withCheckedThrowingContinuation { continuation in
            transfer.attach(continuation)
            for line in lines { #expect(send(line, to: transfer)) }
            transfer.abandon(SessionError(.cancelled, "No head was delivered."))
        }
        transfer.settle()
        #expect(outcome.body.isEmpty)
        return outcome.head
    }

    @Test func interimResponsesAreDroppedAndOnlyTheFinalHeadIsDelivered() async throws {
        let head = try await deliveredHead(after: [
            "HTTP/1.1 100 Continue\r\n", "X-Interim: yes\r\n", "\r\n",
            "HTTP/1.1 103 Early Hints\r\n", "Link: </a.css>; rel=preload\r\n", "\r\n",
            "HTTP/2 200\r\n", "content-type: text/plain\r\n", "x-empty:\r\n", "\r\n",
        ])
        #expect(head.status == 200)
        #expect(head.httpVersion == "HTTP/2")
        #expect(head.headers.map(\.name.rawName) == ["content-type", "x-empty"])
        #expect(head.headers.map(\.value) == ["text/plain", ""])
    }

    @Test func aHeadIsNotDeliveredBeforeItsBlankLine() async throws {
        await #expect(throws: SessionError.self) {
            _ = try await deliveredHead(after: ["HTTP/1.1 200 OK\r\n", "Content-Type: text/plain\r\n"])
        }
    }

    /// A streamed transfer that ends well without the blank line that ends its head still
    /// resumes its task with that head, rather than leaving it waiting. (A failure is then
    /// offered to the task: it fails the test if the transfer resumed nothing, and is ignored
    /// otherwise, as a second result always is.)
    @Test func aStreamThatEndsWithoutItsBlankLineStillDeliversItsHead() async throws {
        let transfer = try transfer()
        let outcome = try await withCheckedThrowingContinuation { continuation in
            transfer.attach(continuation)
            #expect(send("HTTP/1.1 204 No Content\r\n", to: transfer))
            #expect(send("X-Last: yes\r\n", to: transfer))
            transfer.finish(CURLE_OK)
            transfer.resume(with: .failure(SessionError(.cancelled, "The transfer resumed its task with nothing.")))
        }
        transfer.settle()
        #expect(outcome.head.status == 204)
        #expect(outcome.head.headers.map(\.name.rawName) == ["X-Last"])
    }

    @Test func aTrailerAfterTheDeliveredHeadLeavesThatHeadAsItWas() async throws {
        // The head shares the fields the transfer keeps appending to (trailers of a chunked
        // body arrive as header lines too): what was delivered must not change.
        let head = try await deliveredHead(after: [
            "HTTP/1.1 200 OK\r\n", "Content-Type: text/plain\r\n", "\r\n", "X-Checksum: abc\r\n", "\r\n",
        ])
        #expect(head.headers.map(\.name.rawName) == ["Content-Type"])
    }

    @Test func theHeaderCapCountsEveryByteCurlDelivered() throws {
        let transfer = try transfer()
        #expect(send("HTTP/1.1 200 OK\r\n", to: transfer))
        let line = "X-Padding: " + String(repeating: "x", count: 1024 - 13) + "\r\n"  // 1,024 bytes
        var accepted = 17
        while send(line, to: transfer) { accepted += 1024 }
        #expect(accepted <= Transfer.maximumHeaderBytes)
        #expect(accepted + 1024 > Transfer.maximumHeaderBytes)
        #expect(!send("\r\n", to: transfer))  // once over, every later line is refused too
    }
}
