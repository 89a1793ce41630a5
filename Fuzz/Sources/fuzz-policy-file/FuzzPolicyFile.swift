import Foundation
import FuzzSupport
import Logging
import ServerTrust

/// Input: the bytes of a policy file, to `TrustPolicyFile(data:)` — and the same bytes as the
/// other two trust-update targets, a deny-list (`KeyDenyList(data:)`) and a JSON Web Key Set
/// (`SigningKeySet(jwks:)`), which share the policy file's reader.
///
/// Properties of the other two: each either loads or throws a `TrustError` `invalidPolicyFile`
/// naming its file and a line inside it; a loaded deny-list refuses the fixture chain exactly
/// when it lists one of its keys.
///
/// Properties: a file either loads or throws a `TrustError` with code `invalidPolicyFile` whose
/// reason starts `policy.json:LINE:` with LINE inside the file (so the error always says where);
/// a file that loads has a host for every pattern it lists, and the manager it built returns
/// that host's own evaluator for every exact pattern; every host's evaluator judges the fixture
/// chain without crashing, and an enforced host pinned only to keys outside the fixture chain,
/// with no expiry fallback, never accepts it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPolicyFile(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput.bytes(start, count)
    checkTrustUpdateTargets(bytes)
    let policy: TrustPolicyFile
    do {
        policy = try TrustPolicyFile(data: bytes, fileName: "policy.json", logger: quiet)
    } catch let error as TrustError {
        require(error.code == .invalidPolicyFile, "a policy file was refused with \(error.code), not invalidPolicyFile: \(error.reason)")
        require(error.reason.hasPrefix("policy.json:"), "the error does not name the file: \(error.reason)")
        let digits = error.reason.dropFirst("policy.json:".count).prefix { $0.isNumber }
        let lines = bytes.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        require(Int(digits).map { (1...lines).contains($0) } ?? false, "the error's line is not in the file (\(lines) lines): \(error.reason)")
        return 0
    } catch {
        fatalError("fuzz invariant broken: a policy file threw a non-TrustError: \(error)")
    }
    require(!policy.hosts.isEmpty || !policy.allHostsMustBeEvaluated, "a policy that refuses every host loaded")
    let chainPins = Set([Fixtures.leaf.spkiPin, Fixtures.root.spkiPin])
    for host in policy.hosts {
        if host.pattern.kind == .exact {
            let found = try? policy.manager.resolve(host: host.pattern.description)
            require(found?.pattern == host.pattern, "the manager has no evaluator for the policy's own exact host \(host.pattern)")
        }
        let trust = PeerTrust(
            presentedChain: [Fixtures.leaf], anchors: Fixtures.anchors, validationTime: Fixtures.validationTime)
        guard let evaluator = try? host.policy.makeEvaluator() else {
            fatalError("fuzz invariant broken: \(host.pattern)'s policy loaded but makes no evaluator")
        }
        let accepted = (try? evaluator.evaluate(trust, forHost: "fuzz.servertrust.test")) != nil
        if accepted, host.policy.mode == .enforced, let pins = host.policy.pins, host.policy.canary == nil,
            pins.expiryBehaviour == .failClosed, pins.entries.allSatisfy({ !chainPins.contains($0.pin) })
        {
            fatalError("fuzz invariant broken: \(host.pattern) is pinned to \(pins.entries.map(\.pin)) but accepted the fixture chain")
        }
    }
    return 0
}

/// The deny-list and JWKS readers on the same input.
private func checkTrustUpdateTargets(_ bytes: [UInt8]) {
    let lines = bytes.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
    func requireNamed(_ error: any Error, _ file: String) {
        guard let error = error as? TrustError else { fatalError("fuzz invariant broken: \(file) threw a non-TrustError: \(error)") }
        require(error.code == .invalidPolicyFile, "\(file) was refused with \(error.code): \(error.reason)")
        require(error.reason.hasPrefix(file + ":"), "the error does not name \(file): \(error.reason)")
        let digits = error.reason.dropFirst(file.count + 1).prefix { $0.isNumber }
        require(Int(digits).map { (1...lines).contains($0) } ?? false, "the error's line is not in the file (\(lines) lines): \(error.reason)")
    }
    do {
        let list = try KeyDenyList(data: bytes)
        if list.certificates.isEmpty {
            let listed = list.keys.contains(Fixtures.leaf.spkiPin) || list.keys.contains(Fixtures.root.spkiPin)
            require(listed == (list.deniedEntry(in: [Fixtures.leaf, Fixtures.root]) != nil), "the deny-list's verdict on the fixture chain disagrees with its keys")
        }
    } catch {
        requireNamed(error, "denylist.json")
    }
    do {
        let set = try SigningKeySet(jwks: bytes)
        require(set.keyIDs.allSatisfy { !$0.isEmpty }, "a JWKS loaded a key with an empty key ID")
    } catch {
        requireNamed(error, "jwks.json")
    }
}

private let quiet: Logger = {
    var logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }
    logger.logLevel = .critical
    return logger
}()
