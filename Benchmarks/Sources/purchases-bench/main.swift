// App Store signed-transaction verification (#52 item 8): ServerTrustPurchases'
// AppStoreSignedDataVerifier.verifyTransaction beside the crypto floor, one ES256 verification
// of the signing input with the leaf's key plus one JSONSerialization decode of the payload.
// Apple's SignedDataVerifier runs on the same files from scripts/purchases.sh.
//
//   purchases-bench ours|cold|floor --jws FILE --root DER [--bundle ID] [--count N] [--warmup W] [--time]
//   purchases-bench write-fixture DIR      (DIR/transaction.jws and DIR/root.der, from AppStoreLab)
//
// ours: one verifier, W + N verifications of the same JWS (steady state: the verifier remembers
// the chain it has verified, so each costs what a new transaction from the same signer costs).
// cold: a new verifier for each verification (the chain verified every time). floor: the leaf's
// key parsed once, then per verification: the two base64url decodes (payload, signature), the
// ES256 check and the JSON decode. Every iteration checks the transaction ID it got, so nothing
// is optimised away; a wrong one stops the run with exit status 1.
import Foundation
import ServerTrust
import ServerTrustLab
import ServerTrustPurchases

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("purchases-bench: " + message + "\n").utf8))
    exit(1)
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else { fail("usage: purchases-bench ours|cold|floor|write-fixture …") }
arguments.removeFirst()

if mode == "write-fixture" {
    guard let dir = arguments.first else { fail("write-fixture needs a directory") }
    do {
        let lab = try AppStoreLab()
        // Signed a minute ago, for com.example.app in the sandbox.
        let payload = AppStoreLab.transactionJSON(signedDate: Date(timeIntervalSinceNow: -60))
        let jws = try lab.jws(payload: payload)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data(jws.utf8).write(to: URL(fileURLWithPath: dir + "/transaction.jws"))
        try Data(lab.root.certificate.derEncoded).write(to: URL(fileURLWithPath: dir + "/root.der"))
        print("wrote \(dir)/transaction.jws (\(jws.utf8.count) bytes) and \(dir)/root.der")
    } catch {
        fail("write-fixture: \(error)")
    }
    exit(0)
}

func number(_ text: String, _ name: String) -> Int {
    guard let n = Int(text), n >= 0 else { fail("\(name) needs a number") }
    return n
}
var jwsPath: String?, rootPath: String?, bundleID = "com.example.app", count = 1000, warmup = 50, timed = false
while !arguments.isEmpty {
    let name = arguments.removeFirst()
    func value() -> String {
        guard !arguments.isEmpty else { fail("\(name) needs a value") }
        return arguments.removeFirst()
    }
    switch name {
    case "--jws": jwsPath = value()
    case "--root": rootPath = value()
    case "--bundle": bundleID = value()
    case "--count": count = number(value(), name)
    case "--warmup": warmup = number(value(), name)
    case "--time": timed = true
    default: fail("unknown option \(name)")
    }
}
guard let jwsPath, let rootPath else { fail("--jws and --root are required") }
let jws: String
let root: Certificate
do {
    jws = try String(contentsOfFile: jwsPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    root = try Certificate(derEncoded: Array(try Data(contentsOf: URL(fileURLWithPath: rootPath))))
} catch {
    fail("reading the fixture: \(error)")
}

/// base64url without padding, as JWS writes it; nil for anything else.
func base64URLDecode(_ text: Substring.UTF8View) -> [UInt8]? {
    var out = [UInt8]()
    out.reserveCapacity(text.count * 3 / 4)
    var buffer: UInt32 = 0, bits = 0
    for c in text {
        let v: UInt32
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "-"): v = 62
        case UInt8(ascii: "_"): v = 63
        default: return nil
        }
        buffer = buffer << 6 | v
        bits += 6
        if bits >= 8 {
            bits -= 8
            out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
        }
    }
    return out
}

/// The x5c[0] of the JWS: the floor's key, parsed once, outside the loop.
func leafKey(of jws: String) -> SignaturePublicKey {
    let header = jws.prefix { $0 != "." }
    guard let bytes = base64URLDecode(header.utf8),
        let json = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
        let chain = json["x5c"] as? [String], let first = chain.first,
        let leaf = try? Certificate(base64Encoded: first),
        let key = try? SignaturePublicKey(subjectPublicKeyInfoDER: leaf.subjectPublicKeyInfoDER)
    else { fail("no leaf certificate in the JWS header") }
    return key
}

// The transaction ID every verification must return, read once from the payload.
let expectedID: String = {
    let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let bytes = base64URLDecode(parts[1].utf8),
        let json = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any], let id = json["transactionId"] as? String
    else { fail("the JWS has no transactionId") }
    return id
}()

let verify: () -> String?
switch mode {
case "ours", "cold":
    func makeVerifier() -> AppStoreSignedDataVerifier {
        do {
            return try AppStoreSignedDataVerifier(roots: [root], bundleID: bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
        } catch {
            fail("verifier: \(error)")
        }
    }
    if mode == "ours" {
        let verifier = makeVerifier()
        verify = {
            do { return try verifier.verifyTransaction(jws).transactionId } catch { fail("verifyTransaction: \(error)") }
        }
    } else {
        verify = {
            do { return try makeVerifier().verifyTransaction(jws).transactionId } catch { fail("verifyTransaction: \(error)") }
        }
    }
case "floor":
    let key = leafKey(of: jws)
    verify = {
        let utf8 = jws.utf8
        guard let firstDot = utf8.firstIndex(of: UInt8(ascii: ".")),
            let lastDot = utf8.lastIndex(of: UInt8(ascii: ".")), firstDot != lastDot
        else { return nil }
        let payloadText = jws[jws.index(after: firstDot)..<lastDot]
        let signatureText = jws[jws.index(after: lastDot)...]
        guard let payload = base64URLDecode(payloadText.utf8), let signature = base64URLDecode(signatureText.utf8),
            key.isValidSignature(signature, for: Array(utf8[..<lastDot]), algorithm: .ecdsaP256SHA256Raw),
            let json = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
        else { return nil }
        return json["transactionId"] as? String
    }
default:
    fail("unknown mode \(mode): ours, cold, floor or write-fixture")
}

for _ in 0..<warmup where verify() != expectedID { fail("\(mode): wrong result in warm-up") }
func now(_ clock: clockid_t) -> UInt64 {
    var t = timespec()
    clock_gettime(clock, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}
let wall0 = now(CLOCK_MONOTONIC), cpu0 = now(CLOCK_PROCESS_CPUTIME_ID)
for _ in 0..<count where verify() != expectedID { fail("\(mode): wrong result") }
let wall = now(CLOCK_MONOTONIC) - wall0, cpu = now(CLOCK_PROCESS_CPUTIME_ID) - cpu0
if timed && count > 0 {
    print("wall_ns \(wall / UInt64(count))")
    print("cpu_ns \(cpu / UInt64(count))")
    print("per_second \(Int(Double(count) / (Double(wall) / 1e9)))")
}
