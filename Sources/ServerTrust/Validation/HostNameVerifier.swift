import Foundation
internal import COpenSSL

/// Checks that a leaf certificate is valid for a host name or IP address.
///
/// DNS names use `X509_check_host` with partial wildcards (`f*.example.com`) refused and no
/// fallback to the subject common name: a name must be in subjectAltName (RFC 6125, CA/B
/// Baseline Requirements). IP addresses use `X509_check_ip_asc`, which matches iPAddress SAN
/// entries only; an address is never matched against a DNS SAN.
enum HostNameVerifier {
    static func verify(_ leaf: Certificate, host rawHost: String) throws {
        let host = HostName.normalize(rawHost)
        guard !host.isEmpty, !host.utf8.contains(0), !host.contains(where: \.isWhitespace) else {
            throw TrustError(.hostMismatch, "The host name \"\(rawHost)\" is empty or malformed.", host: rawHost)
        }
        let matched: Bool
        if HostName.canonicalIPAddress(host) != nil {
            matched = X509_check_ip_asc(leaf.x509, host, 0) == 1
        } else {
            let flags = UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS) | UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT)
            matched = host.withCString { X509_check_host(leaf.x509, $0, host.utf8.count, flags, nil) } == 1
        }
        _ = drainOpenSSLErrors()
        guard matched else {
            let names = leaf.dnsNames + leaf.ipAddresses
            var evidence = TrustError.Evidence()
            evidence.chain = [leaf.summary]
            throw TrustError(
                .hostMismatch,
                "The certificate is not valid for \(host); its subjectAltName holds "
                    + (names.isEmpty ? "no DNS name or IP address" : names.prefix(10).joined(separator: ", ") + (names.count > 10 ? ", … (\(names.count) in all)" : ""))
                    + ".",
                host: rawHost, evidence: evidence)
        }
    }
}
