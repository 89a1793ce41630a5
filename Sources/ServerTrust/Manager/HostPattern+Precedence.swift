extension HostPattern {
    /// Whether, in one table holding both patterns, some host that `other` matches would be
    /// given to this pattern (by ``ServerTrustManager``'s most-specific rule): the patterns a
    /// newly added pattern takes hosts from. True for equal patterns.
    ///
    /// An exact host or address keeps its host against every wildcard. A wildcard takes hosts
    /// from a wildcard whose base is shallower (`**.api.example.com` from `**.example.com` and
    /// from `*.example.com`, whose `api.example.com` it covers), and `*.base` from `**.base`.
    public func takesHosts(from other: HostPattern) -> Bool {
        if self == other { return true }
        switch (kind, other.kind) {
        case (_, .exact), (_, .ipAddress), (.ipAddress, _):
            return false
        case (.exact, _):
            return other.matches(suffix)
        case (.anyDepthWildcard, .anyDepthWildcard):
            return suffix.hasSuffix("." + other.suffix)
        case (.anyDepthWildcard, .singleLabelWildcard):
            // Its own base is the one host of `other` it covers and outranks.
            return other.matches(suffix)
        case (.singleLabelWildcard, .anyDepthWildcard):
            return suffix == other.suffix || suffix.hasSuffix("." + other.suffix)
        case (.singleLabelWildcard, .singleLabelWildcard):
            return false  // equal bases are equal patterns; different ones share no host
        }
    }
}
