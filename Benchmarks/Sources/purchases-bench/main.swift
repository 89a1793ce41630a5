// App Store signed-transaction verification (#52 item 8): ServerTrustPurchases'
// AppStoreSignedDataVerifier.verifyTransaction beside the crypto floor, one ES256 verification
// of the signing input with the leaf's key plus one JSONSerialization decode of the payload.
// Apple's SignedDataVerifier runs on the same files from scripts/purchases.sh.
//
//   purchases-bench ours|cold|floor|warm|receipt|receipt-floor --fixture DIR [--count N] [--warmup W] [--time]
//   purchases-bench write-fixture DIR
//
// write-fixture mints, from AppStoreLab and ReceiptLab: transaction.jws and root.der (a chain
// naming no responder); transaction-ocsp.jws, whose leaf and intermediate name OCSP responders,
// with ocsp/ holding what `openssl ocsp` answers them from (each CA's certificate, key and
// index); receipt.der, receipt-root.der, and the receipt's content, signature and signer.
//
// ours: one verifier, W + N verifications of the same JWS (steady state: the verifier remembers
// the chain it has verified, so each costs what a new transaction from the same signer costs).
// cold: a new verifier for each verification (the chain verified every time). floor: the leaf's
// key parsed once, then per verification: the two base64url decodes (payload, signature), the
// ES256 check and the JSON decode. Every iteration checks the transaction ID it got, so nothing
// is optimised away; a wrong one stops the run with exit status 1.
// warm: ours with hard-fail revocation on transaction-ocsp.jws, the answers fetched in the
// warm-up (by running `openssl ocsp` on each request) and then served by the verifier's cache:
// what a verification costs with revocation on, in steady state. receipt: one
// AppStoreReceiptVerifier, the same receipt each time; receipt-floor: its RSA PKCS#1 v1.5
// SHA-256 check (digest included) with the signer's key parsed once.
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

/// An OCSP responder for one CA, played by `openssl ocsp` on files under DIR/ocsp/NAME.
struct OpenSSLResponder: RevocationFetcher {
    let folder: String

    /// Writes the CA's certificate and key and an index listing `issued` as good.
    static func write(_ folder: String, ca: LabCA, issued: Certificate) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try ca.certificate.pemEncoded.write(toFile: folder + "/ca.pem", atomically: true, encoding: .utf8)
        try ca.key.pemPrivateKey.write(toFile: folder + "/ca.key", atomically: true, encoding: .utf8)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyMMddHHmmss'Z'"
        try "V\t\(formatter.string(from: issued.notValidAfter))\t\t\(issued.serialNumber)\tunknown\t/CN=bench\n"
            .write(toFile: folder + "/index.txt", atomically: true, encoding: .utf8)
    }

    func fetch(_ request: RevocationFetchRequest, deadline: ContinuousClock.Instant) -> Result<[UInt8], TrustError> {
        guard let body = request.body else { return .failure(.fetchHTTPStatus(405, "POST only")) }
        let id = UUID().uuidString
        let (requestFile, responseFile) = (folder + "/\(id).req", folder + "/\(id).resp")
        defer {
            try? FileManager.default.removeItem(atPath: requestFile)
            try? FileManager.default.removeItem(atPath: responseFile)
        }
        do {
            try Data(body).write(to: URL(fileURLWithPath: requestFile))
            // system(3), not Foundation's Process, which fails to spawn under valgrind (EBADF).
            func quoted(_ path: String) -> String { "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            let command = "openssl ocsp -index \(quoted(folder + "/index.txt")) -CA \(quoted(folder + "/ca.pem")) -rsigner \(quoted(folder + "/ca.pem"))"
                + " -rkey \(quoted(folder + "/ca.key")) -reqin \(quoted(requestFile)) -respout \(quoted(responseFile)) -ndays 1 >/dev/null 2>&1"
            guard system(command) == 0 else { return .failure(.fetchHTTPStatus(500, "openssl ocsp failed")) }
            return .success(Array(try Data(contentsOf: URL(fileURLWithPath: responseFile))))
        } catch {
            return .failure(.fetchFailed("openssl ocsp: \(error)"))
        }
    }
}

/// Routes each OCSP URL of the fixture to its responder.
struct FixtureResponders: RevocationFetcher {
    let fixture: String
    func fetch(_ request: RevocationFetchRequest, deadline: ContinuousClock.Instant) -> Result<[UInt8], TrustError> {
        let name = request.url.hasPrefix(leafOCSP) ? "leaf" : request.url.hasPrefix(intermediateOCSP) ? "wwdr" : nil
        guard let name else { return .failure(.fetchHTTPStatus(404, "no responder at \(request.url)")) }
        return OpenSSLResponder(folder: fixture + "/ocsp/" + name).fetch(request, deadline: deadline)
    }
}
let leafOCSP = "http://ocsp.bench.invalid/leaf", intermediateOCSP = "http://ocsp.bench.invalid/wwdr"
let receiptBundleID = "com.example.app"

if mode == "write-fixture" {
    guard let dir = arguments.first else { fail("write-fixture needs a directory") }
    do {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        func write(_ bytes: [UInt8], _ name: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: dir + "/" + name)) }
        // Signed a minute ago, for com.example.app in the sandbox.
        let payload = AppStoreLab.transactionJSON(signedDate: Date(timeIntervalSinceNow: -60))
        let lab = try AppStoreLab()
        let jws = try lab.jws(payload: payload)
        try write(Array(jws.utf8), "transaction.jws")
        try write(lab.root.certificate.derEncoded, "root.der")
        // The same payload from a chain whose leaf and intermediate name OCSP responders.
        let ocspLab = try AppStoreLab(leafOCSPURL: leafOCSP, intermediateOCSPURL: intermediateOCSP)
        try write(Array(try ocspLab.jws(payload: payload).utf8), "transaction-ocsp.jws")
        try write(ocspLab.root.certificate.derEncoded, "root-ocsp.der")
        try OpenSSLResponder.write(dir + "/ocsp/leaf", ca: ocspLab.intermediate, issued: ocspLab.leaf)
        try OpenSSLResponder.write(dir + "/ocsp/wwdr", ca: ocspLab.root, issued: ocspLab.intermediate.certificate)
        // A receipt of one in-app purchase, signed as Apple's are (SHA-256, no signed attributes).
        let receipts = try ReceiptLab()
        let content = ReceiptLab.attributeSet(ReceiptLab.payloadAttributes(bundleID: receiptBundleID))
        try write(try receipts.receipt(payload: content), "receipt.der")
        try write(receipts.root.certificate.derEncoded, "receipt-root.der")
        try write(content, "receipt-content.der")
        try write(try SignaturePrivateKey(pem: receipts.signerKey.pemPrivateKey).signature(for: content, algorithm: .rsaPKCS1v15SHA256), "receipt-signature.bin")
        try write(receipts.signer.derEncoded, "receipt-signer.der")
        print("wrote the fixture in \(dir): transaction.jws (\(jws.utf8.count) bytes), the OCSP chain, a receipt")
    } catch {
        fail("write-fixture: \(error)")
    }
    exit(0)
}

func number(_ text: String, _ name: String) -> Int {
    guard let n = Int(text), n >= 0 else { fail("\(name) needs a number") }
    return n
}
var fixture: String?, bundleID = "com.example.app", count = 1000, warmup = 50, timed = false
while !arguments.isEmpty {
    let name = arguments.removeFirst()
    func value() -> String {
        guard !arguments.isEmpty else { fail("\(name) needs a value") }
        return arguments.removeFirst()
    }
    switch name {
    case "--fixture": fixture = value()
    case "--bundle": bundleID = value()
    case "--count": count = number(value(), name)
    case "--warmup": warmup = number(value(), name)
    case "--time": timed = true
    default: fail("unknown option \(name)")
    }
}
guard let fixture else { fail("--fixture is required") }
func read(_ name: String) -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: fixture + "/" + name) else { fail("no \(name) in \(fixture)") }
    return Array(data)
}
func certificate(_ name: String) -> Certificate {
    do { return try Certificate(derEncoded: read(name)) } catch { fail("\(name): \(error)") }
}
let jws = String(decoding: read(mode == "warm" ? "transaction-ocsp.jws" : "transaction.jws"), as: UTF8.self)
    .trimmingCharacters(in: .whitespacesAndNewlines)
let root = certificate(mode == "warm" ? "root-ocsp.der" : "root.der")

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

// The transaction ID every verification must return, read once from the payload (for a
// receipt, its in-app purchase's, which ReceiptLab writes).
let expectedID: String = mode.hasPrefix("receipt") ? "2000000123456789" : {
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
case "warm":
    let policy = AppStoreRevocationPolicy(options: .hardFail, fetcher: FixtureResponders(fixture: fixture), cache: RevocationCache())
    let verifier: AppStoreSignedDataVerifier
    do {
        verifier = try AppStoreSignedDataVerifier(roots: [root], bundleID: bundleID, appAppleID: nil, environment: .sandbox, revocation: policy)
        // Both answers fetched once, here; a verification that found them missing would
        // have fetched again and counted it.
        _ = try verifier.verifyTransaction(jws)
    } catch {
        fail("warm: \(error)")
    }
    verify = {
        do { return try verifier.verifyTransaction(jws).transactionId } catch { fail("verifyTransaction: \(error)") }
    }
case "receipt":
    let receipt = read("receipt.der")
    let verifier: AppStoreReceiptVerifier
    do {
        verifier = try AppStoreReceiptVerifier(roots: [certificate("receipt-root.der")], bundleID: receiptBundleID, revocation: .disabled)
    } catch {
        fail("receipt verifier: \(error)")
    }
    verify = {
        do { return try verifier.verify(receipt).inAppPurchases.first?.transactionID } catch { fail("verify: \(error)") }
    }
case "receipt-floor":
    let (content, signature) = (read("receipt-content.der"), read("receipt-signature.bin"))
    let key: SignaturePublicKey
    do { key = try SignaturePublicKey(subjectPublicKeyInfoDER: certificate("receipt-signer.der").subjectPublicKeyInfoDER) } catch { fail("\(error)") }
    verify = { key.isValidSignature(signature, for: content, algorithm: .rsaPKCS1v15SHA256) ? expectedID : nil }
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
    fail("unknown mode \(mode): ours, cold, floor, warm, receipt, receipt-floor or write-fixture")
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
