import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// What a `SessionError` says in words (third review, finding 4): the failure and where it
/// happened, never the credentials or tokens of the URL; the `url` property keeps it whole.
@Suite struct SessionErrorTextTests {
    static let secretURL = "https://user:pw@127.0.0.1:1/p?access_token=SECRET"

    /// Port 1 on loopback: nothing listens, so the connection is refused at once.
    @Test func finding4TheDescriptionNamesHostPortPathAndTheFailureButNoUserInfoOrQuery() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let error = try #require(await outcome { try await session.get(Self.secretURL) }.sessionError)
        #expect(error.code == .transferFailed)
        #expect(error.curlCode == 7)
        let text = error.description
        #expect(text.contains("[https://127.0.0.1:1/p]"), "\(text)")
        #expect(text.contains("(curl 7"), "\(text)")
        #expect(!text.contains("pw"), "\(text)")
        #expect(!text.contains("SECRET"), "\(text)")
        #expect(!text.contains("access_token"), "\(text)")
        #expect(error.url == Self.secretURL)
    }
}
