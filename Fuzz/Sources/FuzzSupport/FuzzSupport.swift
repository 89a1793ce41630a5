import Foundation
import ServerTrust

/// What every fuzz target shares: turning libFuzzer's buffer into bytes, text and lines, and
/// stopping with a message when an invariant breaks (libFuzzer records the input as a crash).
public enum FuzzInput {
    /// The input as bytes. libFuzzer may pass a null pointer with a zero count.
    public static func bytes(_ start: UnsafeRawPointer?, _ count: Int) -> [UInt8] {
        guard let start, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: start, count: count))
    }

    /// The input as text, invalid UTF-8 repaired the way `String(decoding:as:)` does it — the
    /// same repair a caller reading a file or a header would get.
    public static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// Lines split on `\n` only, so `\r`, NUL and other separators stay inside a line.
    public static func lines(_ bytes: [UInt8]) -> [String] {
        bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { text(Array($0)) }
    }

    /// Each line as an HTTP field, `Name: value` (no colon: the whole line is the name, the
    /// value empty), as a client receives response fields.
    public static func headerFields(_ bytes: [UInt8]) -> [(name: String, value: String)] {
        lines(bytes).map { line in
            guard let colon = line.firstIndex(of: ":") else { return (line, "") }
            return (String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }))
        }
    }
}

/// `SERVERTRUST_FUZZ_WRITE_SEED=path`: writes a target's genuine input there (from a target's
/// `LLVMFuzzerInitialize`; scripts/fuzz.sh and Fuzz/make-seeds.sh set it).
public func writeSeedIfAsked(_ seed: String) {
    if let path = ProcessInfo.processInfo.environment["SERVERTRUST_FUZZ_WRITE_SEED"] {
        _ = FileManager.default.createFile(atPath: path, contents: Data(seed.utf8))
    }
}

/// Crashes with `message` when `condition` is false: an accepted input that breaks a property
/// the library promises is a finding, just like a memory error.
public func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() { fatalError("fuzz invariant broken: \(message())", file: file, line: line) }
}

/// The trust error code of `body`'s failure, nil when it succeeds.
public func trustErrorCode(_ body: () throws -> Void) -> TrustError.Code? {
    do {
        try body()
        return nil
    } catch let error as TrustError {
        return error.code
    } catch {
        fatalError("fuzz invariant broken: a ServerTrust API threw \(type(of: error)), not TrustError: \(error)")
    }
}

extension Fixtures {
    /// Parsed once: every target that needs a certificate uses these.
    public static let root = try! Certificate(pemEncoded: rootPEM)
    public static let leaf = try! Certificate(pemEncoded: leafPEM)
    public static let revoked = try! Certificate(pemEncoded: revokedPEM)
    public static let responder = try! Certificate(pemEncoded: responderPEM)
    public static let anchors = try! TrustAnchors([root])
    public static let ocspNonce: [UInt8] = stride(from: 0, to: ocspNonceHex.count, by: 2).map { offset in
        let start = ocspNonceHex.index(ocspNonceHex.startIndex, offsetBy: offset)
        return UInt8(ocspNonceHex[start..<ocspNonceHex.index(start, offsetBy: 2)], radix: 16)!
    }
}
