import Foundation
import ServerTrust
import ServerTrustPurchases
import ServerTrustTUF

/// The targets of one verified TUF state — the policy, the deny-list, the key set, the CT log list
/// and the App Store signing trust — read
/// through the TUF client and judged against the floor and the rules: one value, with the
/// reason its policy may not be put in force typed (``Verdict``). ``TrustUpdateState`` decides
/// what of it is put in force.
struct DeliveredTargets: Sendable {
    /// What may be put in force.
    enum Verdict: Sendable {
        /// The policy, as the manager it makes over the floor.
        case accepted(TrustPolicyFile, ServerTrustManager)
        /// Not the policy (a newer format, invalid, past its own `expires`, a weakening the
        /// rules do not permit, unusable); the deny-list and key set beside it, which only refuse.
        case refused(TrustUpdateStatus.Refusal)
        /// Nothing: the deny-list or the key set does not read.
        case unreadable(TrustUpdateStatus.Refusal)
    }

    /// The SHA-256 of the targets: the same state verified again leaves what is in force alone.
    let fingerprint: [UInt8]
    /// The SHA-256 (hex) of the policy target.
    let policySHA256: String
    /// The version of the top-level targets metadata.
    let targetsVersion: Int64?
    /// When the metadata behind the targets expires: the top-level roles, and each delegated
    /// role on the path of a target read.
    let metadataExpires: Date?
    /// The delivered deny-list; nil when none is, or when it does not read.
    let denyList: KeyDenyList?
    /// The delivered key set; nil when none is, or when it does not read.
    let signingKeys: SigningKeySet?
    /// The delivered Certificate Transparency log list, read and loaded into OpenSSL; nil when
    /// none is, or when it does not read (the verdict is then ``TrustUpdateStatus/Refusal/Code/invalidLogList``).
    /// Whether it is older than the list in force is the transition's to judge.
    let logList: CTLogList?
    /// The log list's target name, as refusals name it.
    let logListTarget: String
    /// The delivered App Store signing trust, read and measured against its floor; nil when
    /// none is delivered (the floor's is then in force with the policy), or it does not read.
    let appleSigningTrust: AppleSigningTrust?
    /// What only refuses of this state, as the client records it beside the store
    /// (``InForceRefusals``); nil when the deny-list or the key set does not read.
    let refusals: InForceRefusals.Record?
    let verdict: Verdict

    /// Judges the verified bytes of a state's targets.
    ///
    /// - Parameters:
    ///   - policy: the policy target's bytes.
    ///   - denyList: the deny-list target's bytes, nil when the repository lists none.
    ///   - jwks: the key set target's bytes, nil when the repository lists none.
    ///   - logList: the CT log list target's bytes, nil when the repository lists none.
    ///   - appleSigningTrust: the App Store signing trust target's bytes, nil when the
    ///     repository lists none (or none is configured).
    ///   - certificateTransparencyLogs: what the delivered policy's CT hosts read (the client's
    ///     list, which the transition replaces); nil when there is none.
    ///   - now: the time the policy's own `expires` is judged at.
    init(
        policy: [UInt8], denyList denyListBytes: [UInt8]?, jwks: [UInt8]?, logList logListBytes: [UInt8]? = nil,
        appleSigningTrust appleSigningTrustBytes: [UInt8]? = nil, targetsVersion: Int64?,
        metadataExpires: Date?, floor: ServerTrustManager, configuration: TrustUpdateClient.Configuration,
        certificateTransparencyLogs: CertificateTransparencyLogs? = nil, now: Date
    ) {
        fingerprint = sha256(policy) + sha256(denyListBytes ?? []) + sha256(jwks ?? []) + sha256(logListBytes ?? [])
            + sha256(appleSigningTrustBytes ?? [])
        policySHA256 = sha256(policy).map { String(format: "%02x", $0) }.joined()
        self.targetsVersion = targetsVersion
        self.metadataExpires = metadataExpires
        let logListTarget = configuration.certificateTransparencyLogListTarget ?? "ct_log_list.json"
        self.logListTarget = logListTarget
        // What only refuses is read first: it is put in force even when the policy is not.
        let keys: SigningKeySet?
        let denyList: KeyDenyList?
        do {
            let refusals = try Refusals.read(denyList: denyListBytes, jwks: jwks, targetsVersion: targetsVersion, configuration: configuration)
            (keys, denyList) = (refusals.signingKeys, refusals.denyList)
        } catch {
            let reason = (error as? TrustError).map { PolicyFloor.Refusal.invalid($0).description } ?? "\(error)"
            (self.denyList, signingKeys, logList, refusals, appleSigningTrust) = (nil, nil, nil, nil, nil)
            verdict = .unreadable(TrustUpdateStatus.Refusal(.invalidTarget, reason))
            return
        }
        (self.denyList, signingKeys) = (denyList, keys)
        refusals = InForceRefusals.Record(targetsVersion: targetsVersion, denyList: denyListBytes, signingKeys: jwks)
        // The log list is read strictly and loaded into OpenSSL once here, so that replacing
        // the list in force with it cannot fail; one that does not read refuses the policy
        // beside it (the deny-list and key withdrawals above still go in force).
        do {
            logList = try logListBytes.map { bytes in
                let list = try CTLogList(json: bytes, fileName: logListTarget)
                _ = try CTLogStore(list)
                return list
            }
        } catch {
            let reason = (error as? TrustError)?.reason ?? "\(error)"
            (logList, appleSigningTrust) = (nil, nil)
            verdict = .refused(TrustUpdateStatus.Refusal(.invalidLogList, "its CT log list is not valid: \(reason)"))
            return
        }
        // The App Store signing trust, read strictly and measured against its floor: a root or
        // a marker check dropped needs its permission, or the policy beside it is refused too.
        let appleSigningTrustTarget = configuration.appleSigningTrustTarget ?? "apple_signing_trust.json"
        do throws(PurchaseVerificationError) {
            appleSigningTrust = try appleSigningTrustBytes.map { bytes throws(PurchaseVerificationError) in
                try AppleSigningTrust(json: bytes, name: appleSigningTrustTarget)
            }
        } catch {
            appleSigningTrust = nil
            verdict = .refused(
                TrustUpdateStatus.Refusal(.invalidAppleSigningTrust, "its App Store signing trust is not valid: \(error.reason)"))
            return
        }
        if let delivered = appleSigningTrust, !configuration.rules.permissions.contains(.weakerPurchaseVerification) {
            let weakenings = delivered.weakenings(comparedTo: configuration.appleSigningTrustFloor)
            if !weakenings.isEmpty {
                verdict = .refused(
                    TrustUpdateStatus.Refusal(
                        .weakensFloor,
                        "its App Store signing trust \(appleSigningTrustTarget) " + weakenings.joined(separator: "; ")
                            + " without the permission weakerPurchaseVerification"))
                return
            }
        }
        do throws(PolicyFloor.Refusal) {
            // An RFC 9421 host without inline keys verifies with the key set delivered with the
            // policy (replaced together with it by the next update); without a delivered
            // jwks.json such a host is refused (the policy names no keys).
            let keyProvider: (@Sendable () -> SigningKeySet)? = keys.map { deliveredKeys in { @Sendable in deliveredKeys } }
            let delivered = try PolicyFloor.read(
                policy, name: configuration.policyTarget, signingKeys: keyProvider,
                certificateTransparencyLogs: certificateTransparencyLogs ?? floor.certificateTransparencyLogs)
            if let expires = delivered.expires, expires <= now {
                verdict = .refused(TrustUpdateStatus.Refusal(.expired, "it expired on \(expires)"))
                return
            }
            let manager = try PolicyFloor.manager(
                floor: floor, delivered: delivered, denyList: denyList, permissions: configuration.rules.permissions,
                certificateTransparencyLogs: certificateTransparencyLogs)
            verdict = .accepted(delivered, manager)
        } catch {
            verdict = .refused(error)
        }
    }

    /// Reads a verified state's targets through `updater` — each the cached copy when its length
    /// and hashes match the trusted metadata, else a download (when `downloading`) — and judges
    /// them at `clock`'s time.
    ///
    /// Written without a nested async function or a generic `rethrows` helper: Swift 6.3's
    /// optimiser crashed splitting this coroutine when it had them (`swift build -c release`).
    ///
    /// - Throws: `TUFError` when the policy target is not in the repository, or a target cannot
    ///   be read, downloaded or verified.
    static func read(
        from updater: Updater, configuration: TrustUpdateClient.Configuration, floor: ServerTrustManager,
        certificateTransparencyLogs: CertificateTransparencyLogs?, clock: any TUFClock, downloading: Bool
    ) async throws(TUFError) -> DeliveredTargets {
        let targetsVersion = await updater.trusted.targets["targets"]?.metadata.signed.common.version
        guard let policy = try await bytes(of: configuration.policyTarget, from: updater, configuration: configuration, downloading: downloading) else {
            throw TUFError(.targetNotFound, "\(configuration.policyTarget) is not in the repository")
        }
        var denyList: [UInt8]?
        if let name = configuration.denyListTarget {
            denyList = try await bytes(of: name, from: updater, configuration: configuration, downloading: downloading)
        }
        var jwks: [UInt8]?
        if let name = configuration.signingKeysTarget {
            jwks = try await bytes(of: name, from: updater, configuration: configuration, downloading: downloading)
        }
        var logList: [UInt8]?
        if let name = configuration.certificateTransparencyLogListTarget {
            logList = try await bytes(of: name, from: updater, configuration: configuration, downloading: downloading)
        }
        var appleSigningTrust: [UInt8]?
        if let name = configuration.appleSigningTrustTarget {
            appleSigningTrust = try await bytes(of: name, from: updater, configuration: configuration, downloading: downloading)
        }
        // After the reads: a delegated role that delivered a target expires with the metadata.
        let metadataExpires = await updater.trustedUntil(forTargets: configuration.targetNames).map { Date(timeIntervalSince1970: TimeInterval($0)) }
        return DeliveredTargets(
            policy: policy, denyList: denyList, jwks: jwks, logList: logList, appleSigningTrust: appleSigningTrust, targetsVersion: targetsVersion,
            metadataExpires: metadataExpires,
            floor: floor, configuration: configuration, certificateTransparencyLogs: certificateTransparencyLogs,
            now: Date(timeIntervalSince1970: TimeInterval(clock.now())))
    }

    /// The verified bytes of target `name`: the cached copy when its length and hashes match
    /// the trusted metadata, else a download (when `downloading`); nil when no role lists it.
    static func bytes(
        of name: String, from updater: Updater, configuration: TrustUpdateClient.Configuration, downloading: Bool
    ) async throws(TUFError) -> [UInt8]? {
        guard let info = try await updater.targetInfo(name) else { return nil }
        if let cached = updater.cachedTarget(info, in: configuration.targetDirectory) { return cached }
        guard downloading else { throw TUFError(.storeFailure, "\(name) is not in the local cache") }
        return try await updater.downloadTarget(info, to: configuration.targetDirectory)
    }
}

/// What only refuses of a stored state whose metadata has expired — its deny-list, and the key
/// set that bounds the compiled-in keys — which ``TrustUpdateClient/restore()`` puts back over
/// the floor.
struct ExpiredTargets: Sendable {
    let denyList: KeyDenyList?
    let signingKeys: SigningKeySet?
    let targetsVersion: Int64?
    /// When the stored metadata expired.
    let metadataExpires: Date
    /// Why the stored state could not be restored as it is.
    let failure: TUFError

    /// Reads the stored state again with expiry ignored — signatures, thresholds and versions
    /// as ever: the store is the client's own trusted state, written only after verification;
    /// expiry protects against a network that replays old metadata, not against what this
    /// client already trusted.
    ///
    /// - Parameter failure: why the stored state could not be restored.
    /// - Returns: nil when the stored state has not expired (`failure` is the reason).
    static func read(configuration: TrustUpdateClient.Configuration, clock: any TUFClock, after failure: TUFError) async throws(TUFError) -> ExpiredTargets? {
        let updater = try configuration.updater(fetcher: NoDownloads(), clock: ExpiryIgnored())
        try await updater.loadStoredMetadata()
        // Every target's path is walked, so its delegated roles count towards the expiry.
        for name in configuration.targetNames { _ = try await updater.targetInfo(name) }
        guard let expiry = await updater.trustedUntil(forTargets: configuration.targetNames), expiry <= clock.now() else { return nil }
        let targetsVersion = await updater.trusted.targets["targets"]?.metadata.signed.common.version
        var denyListBytes: [UInt8]?
        if let name = configuration.denyListTarget {
            denyListBytes = try await DeliveredTargets.bytes(of: name, from: updater, configuration: configuration, downloading: false)
        }
        var jwks: [UInt8]?
        if let name = configuration.signingKeysTarget {
            jwks = try await DeliveredTargets.bytes(of: name, from: updater, configuration: configuration, downloading: false)
        }
        let refusals: Refusals
        do {
            refusals = try Refusals.read(denyList: denyListBytes, jwks: jwks, targetsVersion: targetsVersion, configuration: configuration)
        } catch {
            throw TUFError(.storeFailure, "a stored target no longer reads: \((error as? TrustError)?.reason ?? "\(error)")")
        }
        return ExpiredTargets(
            denyList: refusals.denyList, signingKeys: refusals.signingKeys, targetsVersion: targetsVersion,
            metadataExpires: Date(timeIntervalSince1970: TimeInterval(expiry)), failure: failure)
    }

    /// The clock of ``read(configuration:clock:after:)``: the beginning of time, so nothing has expired.
    private struct ExpiryIgnored: TUFClock {
        func now() -> Int64 { .min }
    }
}

/// The fetcher of ``TrustUpdateClient/restore()``: it puts back what the store holds, and
/// expired metadata vouches for nothing new.
struct NoDownloads: TUFFetching {
    func fetch(_ url: String, maximumLength: Int, deadline: ContinuousClock.Instant) async throws(TUFError) -> [UInt8] {
        throw TUFError(.downloadFailed, "\(url): restore() downloads nothing")
    }
}
