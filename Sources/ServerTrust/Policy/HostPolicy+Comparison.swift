import Foundation

extension HostPolicy {
    /// One way a description is less strict than another, in one field.
    public struct Softening: Sendable, Hashable, CustomStringConvertible {
        /// The field of ``HostPolicy`` that softens.
        public enum Field: String, Sendable, Hashable, CaseIterable {
            case validation, anchors, pins, revocation, minimumTLSVersion, keyExchange, mode, canary, signedResponses, certificateTransparency, custom
        }

        public let field: Field
        /// What softens, with `%FLOOR%` where the stricter side is named.
        private let template: String

        init(field: Field, reason template: String) {
            self.field = field
            self.template = template
        }

        /// What softens, phrased to follow a host pattern ("has no revocation checking, where
        /// the floor checks …"), naming the stricter side `floor`.
        /// - Parameter floor: how to name the stricter side, as "the floor's api.example.com".
        public func reason(naming floor: String) -> String { template.replacingOccurrences(of: "%FLOOR%", with: floor) }

        /// What softens, naming the stricter side "the floor".
        public var reason: String { reason(naming: "the floor") }

        public var description: String { reason }
    }

    /// Every way this policy is less strict than `floor`, field by field, with one rule: each
    /// field must be at least as strict as the floor's. Replacing pins, keys or anchors with
    /// others is not a softening (that is rotation); dropping them, or widening what is
    /// accepted, is. A custom evaluator cannot be compared: replacing one, or bringing one over
    /// a declared floor, is a softening of ``Softening/Field/custom``.
    ///
    /// - Parameter floor: the policy to be at least as strict as.
    /// - Returns: the softenings, in field order; empty when this policy is at least as strict.
    public func softenings(comparedWith floor: HostPolicy) -> [Softening] {
        var found: [Softening] = []
        // Built through the memberwise initializer, which has a parameter for each stored
        // property and no defaults: a property added to HostPolicy is compared here, or this
        // does not compile.
        _ = HostPolicy(
            validation: compare(.validation, \.validation, floor, &found) { mine, floors in
                mine < floors ? "uses \(mine), where %FLOOR% uses \(floors)" : nil
            },
            anchors: compare(.anchors, \.anchors, floor, &found) { mine, floors in
                guard let floors else { return nil }
                guard let mine else {
                    return "trusts the client's anchors, where %FLOOR% trusts only its own \(floors.certificates.count) (\(floors.origin))"
                }
                return Set(mine.certificates).isSubset(of: floors.certificates)
                    ? nil : "trusts anchors %FLOOR% does not (\(mine.origin))"
            },
            pins: compare(.pins, \.pins, floor, &found) { mine, floors in
                // Pins the floor only trials refuse nothing: dropping them is not a softening.
                guard floors != nil, floor.mode.pins == .enforced else { return nil }
                guard let mine else { return "gets default validation only, where %FLOOR% pins" }
                if mine.expiryBehaviour == .fallBackToDefaultValidation, floors?.expiryBehaviour != .fallBackToDefaultValidation {
                    return "has pins that fall back to default validation when they expire, where %FLOOR%'s fail closed"
                }
                // Entries, expiration, warningDays and minimumPinCount: rotation and the rules a
                // set is checked by when it is made, not what a connection is refused for.
                return nil
            },
            revocation: compare(.revocation, \.revocation, floor, &found) { mine, floors in
                // Likewise a revocation check the floor only trials.
                floor.mode.revocation == .enforced ? RevocationOptions.softening(mine, floors) : nil
            },
            minimumTLSVersion: compare(.minimumTLSVersion, \.minimumTLSVersion, floor, &found) { mine, floors in
                mine < floors ? "accepts \(mine), where %FLOOR% requires \(floors)" : nil
            },
            keyExchange: compare(.keyExchange, \.keyExchange, floor, &found) { mine, floors in
                mine < floors ? "accepts \(mine) key exchange, where %FLOOR% requires \(floors)" : nil
            },
            mode: compare(.mode, \.mode, floor, &found) { mine, floors in
                // Part by part: a part the floor has and enforces, which this policy has
                // and only trials (a part they drop is its own field's softening).
                var trialled: [String] = []
                if floor.pins != nil, pins != nil, floors.pins == .enforced, mine.pins != .enforced { trialled.append("pins") }
                if floor.revocation != nil, revocation != nil, floors.revocation == .enforced, mine.revocation != .enforced {
                    trialled.append("revocation checking")
                }
                guard !trialled.isEmpty else { return nil }
                return mine == .informational
                    ? "is put in report-only (informational) mode, where %FLOOR% enforces"
                    : "only trials its \(trialled.joined(separator: " and ")) (report-only), where %FLOOR% enforces them"
            },
            canary: compare(.canary, \.canary, floor, &found) { _, _ in
                nil  // a trial refuses nothing, so no canary is stricter than another
            },
            signedResponses: compare(.signedResponses, \.signedResponses, floor, &found, SignedResponsePolicy.softening),
            certificateTransparency: compare(
                .certificateTransparency, \.certificateTransparency, floor, &found, CertificateTransparencyRequirement.softening),
            // Not a softening: a delivered policy keeps the floor's client identity
            // (PolicyFloor), and the policy file cannot name one (it holds a private key).
            clientIdentity: clientIdentity,
            // Not a softening: where reports go changes no verdict.
            reportURIs: reportURIs,
            custom: compare(.custom, \.custom, floor, &found) { mine, floors in
                if let floors, (mine as AnyObject?) !== (floors as AnyObject) {
                    return "replaces %FLOOR%'s custom evaluator \(floors.name), which cannot be compared"
                }
                if let mine, floors == nil { return "uses the custom evaluator \(mine.name), which cannot be compared with %FLOOR%'s declared checks" }
                return nil
            })
        return found
    }

    /// Compares one field: `rule(mine, floor's)` returns why mine is softer, or nil.
    private func compare<Value>(
        _ field: Softening.Field, _ value: KeyPath<HostPolicy, Value>, _ floor: HostPolicy, _ found: inout [Softening],
        _ rule: (Value, Value) -> String?
    ) -> Value {
        if let reason = rule(self[keyPath: value], floor[keyPath: value]) { found.append(Softening(field: field, reason: reason)) }
        return self[keyPath: value]
    }
}

extension RevocationOptions {
    /// The fields ``softening(_:_:)`` reads: every stored property, checked by a test.
    static let comparedFields: Set<String> = [
        "methods", "requirePositiveResponse", "networkAccessDisabled", "scope", "clockSkew", "maximumResponseAge", "ocspNonce",
        "ocspCertificateIDHash", "shortLivedCertificateValidity", "timeBudget", "maximumResponseSize", "maximumCRLSize",
    ]

    /// Why `mine` checks revocation less strictly than `floor`, or nil.
    static func softening(_ mine: RevocationOptions?, _ floor: RevocationOptions?) -> String? {
        guard let floor else { return nil }
        guard let mine else { return "has no revocation checking, where %FLOOR% checks \(floor.summary)" }
        var softer: [String] = []
        let missing = Set(floor.methods.order).subtracting(mine.methods.order)
        if !missing.isEmpty { softer.append("checks by \(mine.methods) only, not \(floor.methods)") }
        // Under hard-fail, a method the floor does not use is a fallback it never accepts: an
        // attacker who blocks OCSP gets a CRL issued before the revocation instead of a refusal
        // (`ocsp` → `preferOCSP`; fifth review, item 6). Under soft-fail it only checks more.
        let added = Set(mine.methods.order).subtracting(floor.methods.order)
        if floor.requirePositiveResponse, missing.isEmpty, !added.isEmpty {
            softer.append("falls back to \(mine.methods) where a hard-fail \(floor.methods) check refuses")
        }
        if floor.requirePositiveResponse, !mine.requirePositiveResponse {
            softer.append("accepts an unknown status (soft-fail) where a positive answer was required (hard-fail)")
        }
        if floor.scope.isWholeChain, !mine.scope.isWholeChain { softer.append("checks the leaf only, not the whole chain") }
        if mine.networkAccessDisabled, !floor.networkAccessDisabled { softer.append("never fetches (staples and local CRLs only)") }
        if mine.clockSkew > floor.clockSkew { softer.append("allows \(Int(mine.clockSkew)) s of clock skew, not \(Int(floor.clockSkew)) s") }
        if mine.maximumResponseAge > floor.maximumResponseAge {
            softer.append("accepts answers up to \(Int(mine.maximumResponseAge)) s old, not \(Int(floor.maximumResponseAge)) s")
        }
        if floor.ocspNonce, !mine.ocspNonce { softer.append("sends no OCSP nonce") }
        switch (mine.shortLivedCertificateValidity, floor.shortLivedCertificateValidity) {
        case (let mine?, nil):
            softer.append("skips leaves valid for \(Int(mine / 86_400)) days or less, where every leaf was checked")
        case (let mine?, let floors?) where mine > floors:
            softer.append("skips leaves valid for \(Int(mine / 86_400)) days or less, not \(Int(floors / 86_400))")
        default:
            break
        }
        // timeBudget, maximumResponseSize and maximumCRLSize bound how long and how much is
        // fetched: under hard-fail a miss refuses, and under soft-fail an attacker who can block
        // the fetch defeats any budget, so they are operational, never a softening. Nor is
        // ocspCertificateIDHash: the answer is signed and matched to the certificate either
        // way, and the SHA-256 request falls back to SHA-1.
        guard !softer.isEmpty else { return nil }
        return "checks revocation less strictly (" + softer.joined(separator: "; ") + ") than %FLOOR% (\(floor.summary))"
    }

    /// "ocsp, wholeChain, hard-fail, network": what a reader needs to compare two options.
    var summary: String {
        [
            methods.description, scope.description, requirePositiveResponse ? "hard-fail" : "soft-fail",
            networkAccessDisabled ? "no network" : "network",
        ].joined(separator: ", ")
    }
}

extension SignedResponsePolicy {
    /// The fields ``softening(_:_:)`` reads: every stored property, checked by a test.
    static let comparedFields: Set<String> = [
        "scheme", "messageSignatures", "mode", "roots", "freshnessWindow", "clockSkewAllowance",
    ]
    /// ``MessageSignaturePolicy``'s fields the comparison reads: every stored property.
    static let comparedMessageSignatureFields: Set<String> = [
        "keys", "requiredComponents", "requiredFieldsWhenPresent", "maximumAge", "clockSkewAllowance", "sharedSecrets", "label",
    ]

    private var strength: Int {
        switch mode {
        case .enforced: 2
        case .informational: 1
        default: 0
        }
    }

    /// Why `mine` checks signed responses less strictly than `floor`, or nil. Roots and keys
    /// may be replaced (rotation); the label names the signature, it does not weaken it.
    static func softening(_ mine: SignedResponsePolicy?, _ floor: SignedResponsePolicy?) -> String? {
        guard let floor, floor.strength > 0 else { return nil }
        guard let mine, mine.strength >= floor.strength else {
            return floor.mode == .enforced
                ? "does not enforce signed responses, where %FLOOR% does" : "does not check signed responses, where %FLOOR% does"
        }
        if floor.scheme != .either, mine.scheme != floor.scheme {
            // Neither scheme is stronger in general (v1 binds the ETag and the request time,
            // RFC 9421 Content-Encoding and any server language), and `either` accepts the
            // weaker of two: a change of scheme is the application's to allow.
            return "requires \(mine.scheme) signed responses, where %FLOOR% requires \(floor.scheme)"
        }
        var softer: [String] = []
        if mine.scheme != .rfc9421 {
            if mine.freshnessWindow > floor.freshnessWindow { softer.append("a v1 freshness window of \(mine.freshnessWindow), not \(floor.freshnessWindow)") }
            if mine.clockSkewAllowance > floor.clockSkewAllowance {
                softer.append("a v1 clock skew of \(mine.clockSkewAllowance), not \(floor.clockSkewAllowance)")
            }
        }
        if let mine = mine.messageSignatures, let floor = floor.messageSignatures {
            if mine.maximumAge > floor.maximumAge { softer.append("an RFC 9421 maximum age of \(mine.maximumAge), not \(floor.maximumAge)") }
            if mine.clockSkewAllowance > floor.clockSkewAllowance {
                softer.append("an RFC 9421 clock skew of \(mine.clockSkewAllowance), not \(floor.clockSkewAllowance)")
            }
            let uncovered = Set(floor.requiredComponents).subtracting(mine.requiredComponents)
            if !uncovered.isEmpty { softer.append("no longer requires " + uncovered.map(\.description).sorted().joined(separator: ", ")) }
            let unbound = Set(floor.requiredFieldsWhenPresent).subtracting(mine.requiredFieldsWhenPresent)
            if !unbound.isEmpty { softer.append("no longer binds " + unbound.sorted().joined(separator: ", ") + " when present") }
            if !mine.sharedSecrets.isEmpty, floor.sharedSecrets.isEmpty { softer.append("accepts HMAC with shared secrets") }
        }
        guard !softer.isEmpty else { return nil }
        return "checks signed responses less strictly (" + softer.joined(separator: "; ") + ") than %FLOOR%"
    }
}
