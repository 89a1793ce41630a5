import Testing
import ServerTrust

/// `mayFetchRevocationData` decides which policies a session runs on a loop of their own: true
/// exactly when live OCSP or CRL fetching is possible, and forwarded by every wrapper.
@Suite struct MayFetchRevocationDataTests {
    @Test func revocationCheckingMayFetchUnlessNetworkAccessIsDisabled() {
        #expect(RevocationTrustEvaluator(options: .softFail).mayFetchRevocationData)
        #expect(RevocationTrustEvaluator(options: .hardFail).mayFetchRevocationData)
        #expect(RevocationTrustEvaluator(options: RevocationOptions(methods: .crl)).mayFetchRevocationData)
        #expect(!RevocationTrustEvaluator(options: .ocspStapled).mayFetchRevocationData)
        #expect(!RevocationTrustEvaluator(options: .stapleRequired).mayFetchRevocationData)
        #expect(!DefaultTrustEvaluator().mayFetchRevocationData)
    }

    @Test func wrappersForwardIt() throws {
        let live = RevocationTrustEvaluator(options: .softFail)
        let stapled = RevocationTrustEvaluator(options: .stapleRequired)
        #expect(try CompositeTrustEvaluator([DefaultTrustEvaluator(), live]).mayFetchRevocationData)
        #expect(try !CompositeTrustEvaluator([DefaultTrustEvaluator(), stapled]).mayFetchRevocationData)
        #expect(InformationalTrustEvaluator(live).mayFetchRevocationData)
        #expect(!InformationalTrustEvaluator(stapled).mayFetchRevocationData)
        #expect(CanaryTrustEvaluator(enforced: DefaultTrustEvaluator(), trial: live).mayFetchRevocationData)
        #expect(CanaryTrustEvaluator(enforced: live, trial: DefaultTrustEvaluator()).mayFetchRevocationData)
        #expect(!CanaryTrustEvaluator(enforced: DefaultTrustEvaluator(), trial: stapled).mayFetchRevocationData)
    }
}
