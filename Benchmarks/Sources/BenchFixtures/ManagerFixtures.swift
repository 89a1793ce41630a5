import ServerTrust

/// Trust managers of a given size, shared by the micro-benchmarks and the interleaved lookup
/// workload, so both measure the same thing.
public enum ManagerFixtures {
    /// Hosts every manager of ``manager(patterns:)`` matches: an exact entry, and a name three
    /// labels under a `**.` entry (the longest walk through the suffixes).
    public static let exactHost = "host5.example.com"
    public static let deepHost = "a.b.c.zone7.example.org"

    /// `count` patterns: half exact hosts, a quarter `*.` and a quarter `**.` wildcards, plus the
    /// two the looked-up hosts match.
    public static func manager(patterns count: Int) throws -> ServerTrustManager {
        var texts: [String] = []
        let evaluator = DefaultTrustEvaluator()
        for index in 0..<count {
            switch index % 4 {
            case 0, 1: texts.append("host\(index).example.com")
            case 2: texts.append("*.svc\(index).example.net")
            default: texts.append("**.zone\(index).example.org")
            }
        }
        texts += [exactHost, "**.zone7.example.org"]
        var evaluators: [HostPattern: any ServerTrustEvaluating] = [:]
        for text in texts { evaluators[try HostPattern(text)] = evaluator }
        return try ServerTrustManager(evaluators: evaluators)
    }
}
