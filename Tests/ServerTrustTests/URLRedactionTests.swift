import Foundation
import Testing
import ServerTrust

/// `URLRedaction`, the one redaction of a URL shown as text (third review, finding 4): no
/// user-info, query or fragment; scheme, host, port and path kept.
@Suite struct URLRedactionTests {
    @Test func finding4UserInfoQueryAndFragmentAreRemovedAndTheRestKept() {
        let url = URL(string: "https://user:pw@api.example.com:8443/v1/pay?access_token=SECRET&x=1#frag")!
        #expect(URLRedaction.redacted(url) == "https://api.example.com:8443/v1/pay")
        #expect(URLRedaction.redacted(url.absoluteString) == "https://api.example.com:8443/v1/pay")
        #expect(URLRedaction.redacted(URL(string: "https://[::1]:1/p?t=SECRET")!) == "https://[::1]:1/p")
        #expect(URLRedaction.redacted(URL(string: "https://api.example.com/")!) == "https://api.example.com/")
    }

    @Test func finding4TextThatIsNoURLWithAHostIsCutAtTheQueryAndTheUserInfo() {
        #expect(URLRedaction.redacted("user:pw@api.example.com") == "api.example.com")
        #expect(URLRedaction.redacted("/p?access_token=SECRET") == "/p")
        #expect(URLRedaction.redacted("https://user:pw@exa mple.com/p q?access_token=SECRET") == "https://exa mple.com/p q")
        #expect(URLRedaction.redacted("api.example.com") == "api.example.com")
    }
}
