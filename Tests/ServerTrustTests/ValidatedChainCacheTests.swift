import Foundation
@testable import ServerTrust
import ServerTrustTestSupport
import Testing

/// The per-store cache of validated chains: reused only for byte-identical certificates under
/// the same options, inside every certificate's validity and the cache lifetime; never for a
/// store with CRLs; and never in place of the host, pin or revocation checks.
@Suite struct ValidatedChainCacheTests {
    let site: SitePKI
    let anchors: TrustAnchors
    /// The moment of the first validation in each test (a miss: the table starts empty); later
    /// ones are offsets from it.
    let start: Date

    init() throws {
        site = try SitePKI()
        anchors = try TrustAnchors([site.root.certificate])
        start = Date()
    }

    private var cache: ValidatedChainCache { anchors.store.validatedChains! }

    /// A new trust over copies of `chain` parsed from DER, so nothing is shared by identity.
    private func trust(
        _ chain: [Certificate]? = nil, after seconds: TimeInterval = 0, options: PathValidationOptions = PathValidationOptions()
    ) throws -> PeerTrust {
        let copies = try (chain ?? site.leaf.chain).map { try Certificate(derEncoded: $0.derEncoded) }
        return PeerTrust(presentedChain: copies, anchors: anchors, validationTime: start.addingTimeInterval(seconds), validationOptions: options)
    }

    private func validate(_ trust: PeerTrust) throws -> [Certificate] { try trust.validatedChain() }

    @Test func anIdenticalChainIsAHitAndGivesTheSameValidatedChain() throws {
        let first = try validate(trust())
        #expect(cache.statistics == .init(hits: 0, misses: 1, stored: 1))
        let second = try validate(trust(after: 30))
        #expect(cache.statistics == .init(hits: 1, misses: 1, stored: 1))
        #expect(second == first)
        #expect(second == [site.leaf.certificate, site.intermediate.certificate, site.root.certificate])
    }

    @Test func aDifferentLeafIsAMiss() throws {
        _ = try validate(trust())
        let other = try site.intermediate.issueLeaf(dnsNames: [SitePKI.host])
        let chain = try validate(trust(other.chain))
        #expect(chain.first == other.certificate)
        #expect(cache.statistics == .init(hits: 0, misses: 2, stored: 2))
    }

    @Test func aLeafReSignedOverTheSameContentIsAMissAndValidatesOnItsOwn() throws {
        let notBefore = start.addingTimeInterval(-3600), notAfter = start.addingTimeInterval(86400)
        let leaf = try site.intermediate.issueLeaf(dnsNames: [SitePKI.host], key: site.leaf.key, notBefore: notBefore, notAfter: notAfter, serialNumber: "0102")
        let again = try site.intermediate.issueLeaf(dnsNames: [SitePKI.host], key: site.leaf.key, notBefore: notBefore, notAfter: notAfter, serialNumber: "0102")
        #expect(leaf.certificate.derEncoded != again.certificate.derEncoded)  // ECDSA signatures differ
        _ = try validate(trust(leaf.chain))
        #expect(try validate(trust(again.chain)).first == again.certificate)
        #expect(cache.statistics == .init(hits: 0, misses: 2, stored: 2))
    }

    @Test func aLeafAlteredInOneByteIsAMissAndFailsValidation() throws {
        _ = try validate(trust())
        var der = site.leaf.certificate.derEncoded
        der[der.count - 1] ^= 0x01  // the last byte of the signature
        let altered = try Certificate(derEncoded: der)
        let error = #expect(throws: TrustError.chainValidationFailed) { try validate(trust([altered, site.intermediate.certificate])) }
        #expect(error?.evidence.depth == 0)
        #expect(cache.statistics == .init(hits: 0, misses: 2, stored: 1))
    }

    @Test func anEntryAdmitsOnlyTheWholeDERItWasMadeForEvenUnderTheSameKey() throws {
        // Simulates a digest collision: the entry is found, the byte comparison must refuse.
        let chain = try validate(trust())
        let der = site.leaf.chain.map(\.derEncoded)
        let entry = ValidatedChainCache.Entry(
            presentedDER: der, options: PathValidationOptions(), path: ValidatedPath(validated: chain), firstValidation: start,
            validFrom: start.addingTimeInterval(-60), validUntil: start.addingTimeInterval(3600))
        #expect(entry.admits(presentedDER: der, options: PathValidationOptions(), time: start))
        var altered = der
        altered[0][altered[0].count / 2] ^= 0x80
        #expect(!entry.admits(presentedDER: altered, options: PathValidationOptions(), time: start))
        #expect(!entry.admits(presentedDER: Array(der.prefix(1)), options: PathValidationOptions(), time: start))
        #expect(!entry.admits(presentedDER: der + [der[1]], options: PathValidationOptions(), time: start))
        #expect(!entry.admits(presentedDER: [der[1], der[0]], options: PathValidationOptions(), time: start))
    }

    @Test func differentOptionsAreAMiss() throws {
        _ = try validate(trust())
        _ = try validate(trust(options: PathValidationOptions(strict: true)))
        _ = try validate(trust(options: PathValidationOptions(maximumDepth: 5)))
        #expect(cache.statistics == .init(hits: 0, misses: 3, stored: 3))
        _ = try validate(trust(after: 1, options: PathValidationOptions(maximumDepth: 5)))
        #expect(cache.statistics.hits == 1)
    }

    @Test func aTimeOutsideACertificatesValidityIsAMissAndFailsValidation() throws {
        let leaf = try site.intermediate.issueLeaf(
            dnsNames: [SitePKI.host], notBefore: start.addingTimeInterval(-60), notAfter: start.addingTimeInterval(120))
        _ = try validate(trust(leaf.chain))
        // Inside the lifetime, but past the leaf's notAfter.
        #expect(throws: TrustError.chainValidationFailed) { try validate(trust(leaf.chain, after: 121)) }
        // Before the first validation and before the leaf's notBefore.
        #expect(throws: TrustError.chainValidationFailed) { try validate(trust(leaf.chain, after: -61)) }
        #expect(cache.statistics == .init(hits: 0, misses: 3, stored: 1))
        #expect(try validate(trust(leaf.chain, after: 119)).first == leaf.certificate)
        #expect(cache.statistics.hits == 1)
    }

    @Test func aChainIsRevalidatedOnceTheLifetimeIsOver() throws {
        _ = try validate(trust())
        _ = try validate(trust(after: ValidatedChainCache.lifetime))
        #expect(cache.statistics == .init(hits: 1, misses: 1, stored: 1))
        _ = try validate(trust(after: ValidatedChainCache.lifetime + 1))
        #expect(cache.statistics == .init(hits: 1, misses: 2, stored: 2))
        // Revalidated: the new entry counts from its own validation.
        _ = try validate(trust(after: ValidatedChainCache.lifetime + 2))
        #expect(cache.statistics == .init(hits: 2, misses: 2, stored: 2))
    }

    @Test func aStoreWithCRLsNeverCaches() throws {
        let withCRLs = try TrustAnchors(
            [site.root.certificate], revocationLists: [try site.root.makeCRL(), try site.intermediate.makeCRL()])
        #expect(withCRLs.store.validatedChains == nil)
        for seconds in [0.0, 1, 2] {
            let trust = PeerTrust(presentedChain: site.leaf.chain, anchors: withCRLs, validationTime: start.addingTimeInterval(seconds))
            #expect(try trust.validatedChain().count == 3)
        }
        // The revoked leaf is caught on every validation, however often it was accepted before.
        let revokedCRL = try site.intermediate.makeCRL(revoked: [RevokedCertificate(serialNumber: site.leaf.certificate.serialNumber.lowercased())])
        let revoking = try TrustAnchors([site.root.certificate], revocationLists: [try site.root.makeCRL(), revokedCRL])
        let trust = PeerTrust(presentedChain: site.leaf.chain, anchors: revoking, validationTime: start)
        #expect(throws: TrustError.revoked) { try trust.validatedChain() }
    }

    @Test func aPinMismatchIsStillDetectedOnAHit() throws {
        try DefaultTrustEvaluator().evaluate(trust(), forHost: SitePKI.host)
        let stranger = try LabPKI.makeRoot(commonName: "Stranger").certificate.spkiPin
        let error = #expect(throws: TrustError.pinMismatch) {
            try PinnedKeyHashesTrustEvaluator(pins: [stranger]).evaluate(trust(after: 1), forHost: SitePKI.host)
        }
        #expect(error?.evidence.configuredPins == [stranger])
        #expect(cache.statistics.hits == 1)
        // And the right pin still passes on a hit.
        try PinnedKeyHashesTrustEvaluator(pins: [site.leaf.key.pin]).evaluate(trust(after: 2), forHost: SitePKI.host)
        #expect(cache.statistics.hits == 2)
    }

    @Test func aWrongHostIsStillDetectedOnAHit() throws {
        try DefaultTrustEvaluator().evaluate(trust(), forHost: SitePKI.host)
        #expect(throws: TrustError.hostMismatch) { try DefaultTrustEvaluator().evaluate(trust(after: 1), forHost: "other.example.com") }
        #expect(cache.statistics.hits == 1)
    }

    @Test func theTableIsBoundedAndConcurrentUseIsSafe() async throws {
        let leaves = try (0..<(ValidatedChainCache.capacity + 10)).map { _ in try site.intermediate.issueLeaf(dnsNames: [SitePKI.host]) }
        let anchors = self.anchors, start = self.start
        let accepted = await withTaskGroup(of: Bool.self) { group in
            for (index, leaf) in leaves.enumerated() {
                group.addTask {
                    let trust = PeerTrust(presentedChain: leaf.chain, anchors: anchors, validationTime: start.addingTimeInterval(Double(index % 5)))
                    return (try? trust.validatedChain().first == leaf.certificate) ?? false
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(accepted == leaves.count)
        #expect(cache.count <= ValidatedChainCache.capacity)
        #expect(cache.statistics.stored == leaves.count)
    }
}
