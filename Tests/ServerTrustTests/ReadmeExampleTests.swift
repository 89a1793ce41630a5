import Testing
@testable import ServerTrust

/// The configuration snippets of the *Evaluators, host patterns and host policies* article
/// (Sources/ServerTrust/ServerTrust.docc/EvaluatorsAndHostPolicies.md, once README.md), compiled
/// and run, so the documentation cannot drift from the API.
@Suite struct ReadmeExampleTests {
    @Test func thePinningExampleBuildsAManagerWithTheStatedPatterns() throws {
        let manager = try ServerTrustManager(evaluators: [
            try HostPattern("api.example.com"): try .pinnedKeyHashes([
                "sha256/ADXzqTPD6C9iaV5wl10vCfkWwoht2ypA8Jj8agGz/lY=",  // current key
                "sha256/u79R2NQZKXJcJ3dfd5eUttT1RMz3vPTgQ7S5ftapgOs=",  // backup key, kept offline
            ]),
            try HostPattern("**.cdn.example.com"): DefaultTrustEvaluator(),
        ])
        #expect(try manager.resolve(host: "api.example.com").evaluator is PinnedKeyHashesTrustEvaluator)
        #expect(try manager.resolve(host: "img.cdn.example.com").evaluator is DefaultTrustEvaluator)
    }

    @Test func theRevocationExampleComposesPinsAndHardFailRevocation() throws {
        let manager = try ServerTrustManager(evaluators: [
            try HostPattern("api.example.com"): try .composite([
                try .pinnedKeyHashes(["sha256/ADXzqTPD6C9iaV5wl10vCfkWwoht2ypA8Jj8agGz/lY=",
                                      "sha256/u79R2NQZKXJcJ3dfd5eUttT1RMz3vPTgQ7S5ftapgOs="]),
                .revocationChecking(.hardFail),  // or .softFail, .stapleRequired, RevocationOptions(…)
            ]),
        ])
        let composite = try #require(try manager.resolve(host: "api.example.com").evaluator as? CompositeTrustEvaluator)
        let revocation = try #require(composite.evaluators.last as? RevocationTrustEvaluator)
        #expect(revocation.options.requirePositiveResponse)  // @testable: options are internal
    }
}
