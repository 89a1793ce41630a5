import HTTPTypes
import Testing
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// The session's own zlib decoder (signed-response hosts), without a server.
@Suite struct ZlibInflaterTests {
    static let original = Array(String(repeating: "ServerTrust decodes after it verifies. ", count: 300).utf8)

    @Test func aBombStopsWithinOneChunkOfTheLimit() throws {
        let bomb = TestCompression.gzipBomb(decodedSize: 64 << 20)
        let limit = 1 << 20
        #expect(throws: ZlibInflater.Failure.self) { try ZlibInflater(.gzip).inflateAll(bomb, limit: limit) }
        do {
            _ = try ZlibInflater(.gzip).inflateAll(bomb, limit: limit)
        } catch {
            guard case .limitExceeded(let produced) = error else { Issue.record("unexpected \(error)"); return }
            #expect(produced > limit)
            #expect(produced <= limit + ZlibInflater.chunkSize)
        }
    }

    @Test func deflateIsReadZlibWrappedOrRawByItsHeader() throws {
        let wrapped = TestCompression.compress(Self.original, as: .zlib)
        let raw = TestCompression.compress(Self.original, as: .rawDeflate)
        #expect(ContentDecoder.looksZlibWrapped(wrapped))
        #expect(!ContentDecoder.looksZlibWrapped(raw))
        for body in [wrapped, raw] {
            let (decoded, codings) = try ContentDecoder.decode(body, headers: [.contentEncoding: "deflate"], limit: 1 << 20, url: "")
            #expect(decoded == Self.original)
            #expect(codings == [.deflate])
        }
    }

    @Test func stackedCodingsAreUndoneInReverseOrder() throws {
        let twice = TestCompression.compress(TestCompression.compress(Self.original, as: .zlib), as: .gzip)
        let (decoded, codings) = try ContentDecoder.decode(
            twice, headers: [.contentEncoding: "deflate", HTTPField.Name("content-encoding")!: " identity , GZIP"], limit: 1 << 20, url: "")
        #expect(decoded == Self.original)
        #expect(codings == [.deflate, .gzip])
    }

    @Test func truncatedAndTrailingDataAreRefused() throws {
        let gzip = TestCompression.compress(Self.original, as: .gzip)
        #expect(throws: ZlibInflater.Failure.truncated) { try ZlibInflater(.gzip).inflateAll(Array(gzip.dropLast(9)), limit: 1 << 20) }
        #expect(throws: ZlibInflater.Failure.trailingData) { try ZlibInflater(.gzip).inflateAll(gzip + [0], limit: 1 << 20) }
    }

    @Test func tooManyLayersAreRefused() throws {
        let headers: HTTPFields = [.contentEncoding: Array(repeating: "gzip", count: ContentDecoder.maximumLayers + 1).joined(separator: ",")]
        #expect(throws: SessionError.contentDecodingFailed) { try ContentDecoder.decode([1], headers: headers, limit: 1 << 20, url: "") }
    }
}
