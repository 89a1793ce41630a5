import FuzzSupport
import ServerTrust

/// A trust over the fixture chain, validated once and reused: evaluating a pin set against it
/// then costs only the pin comparison.
let trust = PeerTrust(presentedChain: [Fixtures.leaf], anchors: Fixtures.anchors, validationTime: Fixtures.validationTime)
let chainPins: Set<Pin> = [Fixtures.leaf.spkiPin, Fixtures.root.spkiPin]

/// Input: pins, one per line, as a user would write them in configuration.
///
/// Properties: a pin that parses is 32 bytes and survives its own `description` and `curlForm`;
/// an evaluator made of parsed pins accepts the fixture chain exactly when one of them is the
/// leaf's or the root's key, and otherwise fails with `pinMismatch`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPin(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let lines = FuzzInput.lines(FuzzInput.bytes(start, count))
    var pins: [Pin] = []
    for line in lines {
        guard let pin = try? Pin(line) else { continue }
        require(pin.digest.count == 32, "\(line.debugDescription) parsed to \(pin.digest.count) bytes")
        require((try? Pin(pin.description)) == pin, "\(pin) does not round-trip through its description")
        require((try? Pin(pin.curlForm)) == pin, "\(pin) does not round-trip through curl's form")
        pins.append(pin)
    }
    let code = trustErrorCode {
        let evaluator = try PinnedKeyHashesTrustEvaluator(lines)
        try evaluator.evaluate(trust, forHost: "fuzz.servertrust.test")
    }
    if pins.count == lines.count, !pins.isEmpty {
        let matches = !chainPins.isDisjoint(with: pins)
        require(
            matches ? code == nil : code == .pinMismatch,
            "pins \(pins) against the fixture chain gave \(code.map { "\($0)" } ?? "success")")
    } else {
        require(code != nil, "an evaluator accepted a pin list with an unparsable line: \(lines)")
    }
    return 0
}
