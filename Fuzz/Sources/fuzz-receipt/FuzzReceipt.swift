import Foundation
import FuzzSupport
import ServerTrust
import ServerTrustPurchases

/// Apple's Xcode-signed app receipt from app-store-server-library-swift's tests (MIT, Copyright
/// 2023 Apple Inc.; Tests/ServerTrustPurchasesTests/Fixtures/apple/LICENSE.txt): BER with
/// indefinite lengths and a constructed OCTET STRING, which the fuzzer mutates. Read from the
/// source tree (SERVERTRUST_FUZZ_RECEIPT_SEED overrides the path).
let seed: [UInt8] = {
    let path = ProcessInfo.processInfo.environment["SERVERTRUST_FUZZ_RECEIPT_SEED"]
        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../../Tests/ServerTrustPurchasesTests/Fixtures/apple/xcode-app-receipt-with-transaction").standardizedFileURL.path
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return Array(Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? Data())
}()

/// The fuzz fixture's root: never the receipt signer's issuer, so nothing may verify.
let verifier = try! AppStoreReceiptVerifier(roots: [Fixtures.root], bundleID: "com.example.naturelab.backyardbirds.example", revocation: .disabled)

/// `SERVERTRUST_FUZZ_WRITE_SEED=path` writes the seed receipt there, base64 (make-seeds.sh).
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    writeSeedIfAsked(seed.isEmpty ? "" : Data(seed).base64EncodedString())
    return 0
}

/// Input: bytes as a receipt (DER/BER), read by every layer on its own — the BER reader, the
/// PKCS#7 parser, the payload — and then verified.
///
/// Properties: no layer traps or reads out of bounds (AddressSanitizer); every refusal is a
/// `PurchaseVerificationError` with a reason; a BER value that parses re-parses from its own
/// encoded bytes to the same extent; nothing verifies under a root that signed nothing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReceipt(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput.bytes(start, count)
    func reason(_ body: () throws -> Void) {
        do { try body() } catch let error as PurchaseVerificationError {
            require(!error.reason.isEmpty, "a refusal without a reason: \(error.code)")
        } catch { fatalError("threw something other than PurchaseVerificationError: \(error)") }
    }
    reason {
        let element = try BERReader.parse(bytes)
        require(element.endOffset == bytes.count, "a parsed value that does not cover its input")
        let again = try BERReader.parse(Array(element.encodedBytes))
        require(again.contentRange == element.contentRange, "the same bytes read twice, two ways")
    }
    reason {
        let signedData = try PKCS7SignedData(ber: bytes)
        _ = try? signedData.signerCertificate()
        _ = try AppStoreReceipt(payload: signedData.content)
    }
    reason { _ = try AppStoreReceipt(payload: bytes) }
    reason {
        _ = try verifier.verify(bytes)
        require(false, "a receipt verified under the fuzz fixture's root")
    }
    return 0
}
