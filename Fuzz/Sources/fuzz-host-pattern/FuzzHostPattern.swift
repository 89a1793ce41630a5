import FuzzSupport
import ServerTrust

let evaluator = DefaultTrustEvaluator(anchors: Fixtures.anchors)

/// Input: host patterns, one per line; the last line is the host looked up.
///
/// Properties: a pattern that parses re-parses from its description to itself; a manager of
/// exactly that pattern (the manager takes only parsed patterns) can be created and matches a host exactly when `HostPattern.matches`
/// does (the indexed lookup and the direct rule agree); a manager of all the patterns, when it
/// can be created, returns a pattern that matches the host, and an exact pattern before any
/// wildcard.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHostPattern(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let lines = FuzzInput.lines(FuzzInput.bytes(start, count))
    let host = lines.last!
    let texts = lines.count > 1 ? Array(lines.dropLast()) : lines
    var valid: [HostPattern: any ServerTrustEvaluating] = [:]
    for text in texts {
        guard let pattern = try? HostPattern(text) else { continue }
        require((try? HostPattern(pattern.description)) == pattern, "\(text.debugDescription) → \(pattern) does not re-parse to itself")
        let single: ServerTrustManager
        do {
            single = try ServerTrustManager(evaluators: [pattern: evaluator], allHostsMustBeEvaluated: false)
        } catch {
            fatalError("fuzz invariant broken: HostPattern accepts \(text.debugDescription) but a manager refuses it: \(error)")
        }
        let looked = (try? single.resolve(host: host))?.pattern
        require(
            (looked != nil) == pattern.matches(host),
            "pattern \(pattern) and host \(host.debugDescription): matches() says \(pattern.matches(host)), the manager says \(looked != nil)")
        valid[pattern] = evaluator
    }
    guard !valid.isEmpty, let manager = try? ServerTrustManager(evaluators: valid) else { return 0 }
    guard let chosen = (try? manager.resolve(host: host))?.pattern else {
        let matching = manager.patterns.filter { $0.matches(host) }
        require(matching.isEmpty, "the manager found nothing for \(host.debugDescription) but \(matching) match it")
        return 0
    }
    require(chosen.matches(host), "the manager chose \(chosen) for \(host.debugDescription), which it does not match")
    if chosen.kind != .exact, chosen.kind != .ipAddress {
        let exact = manager.patterns.filter { ($0.kind == .exact || $0.kind == .ipAddress) && $0.matches(host) }
        require(exact.isEmpty, "the manager chose \(chosen) for \(host.debugDescription) over the exact \(exact)")
    }
    return 0
}
