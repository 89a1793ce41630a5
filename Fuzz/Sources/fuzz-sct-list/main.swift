import Foundation
import FuzzSupport
import ServerTrust

/// The Google test log's key (Certificate Transparency's testdata): no fuzzed input carries a
/// signature it made over the fixture leaf.
private let store: CTLogStore = {
    let key = [UInt8](Data(base64Encoded: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEmXg8sUUzwBYaWrRb+V0IopzQ6o3UyEJ04r5ZrRXGdpYM8K+hB0pXrGRLI0eeWz+3skXrS0IO83AhA3GpRL6s6w==")!)
    let log = CTLogList.Log(name: "test", key: key, operatorName: "test", state: .usable(.distantPast))
    return try! CTLogStore(try! CTLogList(timestamp: Fixtures.validationTime, logs: [log]))
}()

/// Input: bytes as an SCT list in its TLS encoding (`SignedCertificateTimestamp.list`, the
/// TLS extension's and the X.509 extension's inner format), and the same bytes as one SCT.
///
/// Properties: each parse either succeeds or throws a `TrustError` `unreadableInput`; every
/// parsed SCT re-encodes (`encoded`) to bytes that parse to the same SCT; verified against the
/// fixture leaf (with and without an issuer, as every source), no SCT is ever `verified`, and an
/// SCT whose log ID is not the list's is always `unknownLog`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSCTList(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput.bytes(start, count)
    var parsed: [SignedCertificateTimestamp] = []
    for source in [SignedCertificateTimestamp.Source.tlsExtension, .embedded] {
        do {
            parsed += try SignedCertificateTimestamp.list(tlsEncoded: bytes, source: source)
        } catch let error as TrustError {
            require(error.code == .unreadableInput, "an SCT list was refused with \(error.code): \(error.reason)")
        } catch {
            fatalError("fuzz invariant broken: an SCT list threw a non-TrustError: \(error)")
        }
    }
    do {
        parsed.append(try SignedCertificateTimestamp(tlsEncoded: bytes, source: .ocspStaple))
    } catch let error as TrustError {
        require(error.code == .unreadableInput, "an SCT was refused with \(error.code): \(error.reason)")
    } catch {
        fatalError("fuzz invariant broken: an SCT threw a non-TrustError: \(error)")
    }
    for sct in parsed {
        let again = try? SignedCertificateTimestamp(tlsEncoded: sct.encoded, source: sct.source)
        require(again == sct, "an SCT does not survive its own encoding: \(sct)")
    }
    for issuer in [nil, Fixtures.root] {
        for observation in store.verify(parsed, leaf: Fixtures.leaf, issuer: issuer, at: Fixtures.validationTime) {
            require(observation.status != .verified, "a fuzzed SCT verified: \(observation)")
            if store.list.log(id: observation.sct.logID) == nil, observation.sct.version == 0 {
                require(observation.status == .unknownLog, "an SCT from an unlisted log was \(observation.status)")
            }
        }
    }
    return 0
}
