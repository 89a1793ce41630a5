import Foundation
internal import COpenSSL

/// Checks that a leaf certificate is valid for a host name or IP address.
///
/// DNS names use `X509_check_host` with partial wildcards (`f*.example.com`) refused and no
/// fallback to the subject common name: a name must be in subjectAltName (RFC 6125, CA/B
/// Baseline Requirements). IP addresses use `X509_check_ip_asc`, which matches iPAddress SAN
/// entries only; an address is never matched against a DNS SAN.
///
/// Two rules on top of OpenSSL's matching:
///
/// - **Absolute names.** The host is first matched as given, as OpenSSL does. A host written as
///   an absolute name with one trailing dot (`example.com.`, as in an `https://example.com./`
///   URL, which curl also verifies as `example.com`) is then matched without the dot. A
///   single-label host (`a.`) is only matched as given, so `a.` is not `a`: no publicly-trusted
///   certificate can name a single label, and there a relative name and an absolute one
///   are different hosts.
/// - **Wildcards over public suffixes.** A wildcard SAN directly over a suffix of the Public
///   Suffix List's ICANN section (`*.co.uk`, `*.kawasaki.jp`) matches nothing, as in Chrome: no
///   CA may issue one, and it would cover every registrant under that suffix. (OpenSSL already
///   refuses a wildcard over a single label, `*.com` or `*.corp`.) Private-section suffixes
///   still match: Amazon S3 itself serves `*.s3.amazonaws.com`.
enum HostNameVerifier {
    static func verify(_ leaf: Certificate, host rawHost: String) throws {
        let host = referenceHost(rawHost)
        guard !host.isEmpty, !host.utf8.contains(0), !host.contains(where: \.isWhitespace) else {
            throw TrustError(.hostMismatch, "The host name \"\(rawHost)\" is empty or malformed.", host: rawHost)
        }
        var refusedWildcard: String?
        let candidates = [host] + (relativeForm(ofAbsolute: host).map { [$0] } ?? [])
        let matched = candidates.contains { name in
            isIPAddress(name)
                ? X509_check_ip_asc(leaf.x509, name, 0) == 1
                : matches(leaf, dnsName: name, refusedWildcard: &refusedWildcard)
        }
        _ = drainOpenSSLErrors()
        guard matched else {
            let names = leaf.dnsNames + leaf.ipAddresses
            var evidence = TrustError.Evidence()
            evidence.chain = [leaf.summary]
            let refusal = refusedWildcard.map { " (\($0) is not accepted: a wildcard may not cover a whole public suffix)" } ?? ""
            throw TrustError(
                .hostMismatch,
                "The certificate is not valid for \(host); its subjectAltName holds "
                    + (names.isEmpty ? "no DNS name or IP address" : names.prefix(10).joined(separator: ", ") + (names.count > 10 ? ", … (\(names.count) in all)" : ""))
                    + refusal + ".",
                host: rawHost, evidence: evidence)
        }
    }

    /// Whether a SAN dNSName of `leaf` matches `name`, a wildcard over a public suffix not
    /// counting (it is then reported through `refusedWildcard`).
    private static func matches(_ leaf: Certificate, dnsName name: String, refusedWildcard: inout String?) -> Bool {
        let flags = UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS) | UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT)
        var peerName: UnsafeMutablePointer<CChar>?
        let matched = name.withCString { X509_check_host(leaf.x509, $0, name.utf8.count, flags, &peerName) } == 1
        guard matched, let peerName else { return matched }
        let matchedName = String(cString: peerName)
        CRYPTO_free(peerName, #fileID, #line)
        guard isWildcardOverPublicSuffix(matchedName) else { return true }
        refusedWildcard = matchedName
        // Another SAN may still name the host exactly.
        let exactFlags = flags | UInt32(X509_CHECK_FLAG_NO_WILDCARDS)
        return name.withCString { X509_check_host(leaf.x509, $0, name.utf8.count, exactFlags, nil) } == 1
    }

    /// `*.S` where S is a public suffix of the list's ICANN section.
    static func isWildcardOverPublicSuffix(_ sanName: String) -> Bool {
        guard sanName.hasPrefix("*.") else { return false }
        let suffix = String(sanName.dropFirst(2)).lowercased()
        guard !suffix.isEmpty, !suffix.hasSuffix("."), !suffix.contains("..") else { return false }
        return PublicSuffixList.isPublicSuffix(suffix)
    }

    /// The host without IPv6 brackets, lowercased.
    static func referenceHost(_ host: String) -> String {
        var text = host.lowercased()
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        return text
    }

    /// `example.com` for `example.com.` (and `192.0.2.1` for `192.0.2.1.`); nil for a name
    /// without exactly one trailing dot or of a single label.
    static func relativeForm(ofAbsolute host: String) -> String? {
        guard host.hasSuffix("."), !host.hasSuffix("..") else { return nil }
        let name = String(host.dropLast())
        guard name.contains("."), !name.hasPrefix(".") else { return nil }
        return name
    }

    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
