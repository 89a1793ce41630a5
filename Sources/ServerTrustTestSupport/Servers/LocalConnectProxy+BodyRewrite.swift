extension LocalConnectProxy {
    /// What an intercepting ``LocalConnectProxy`` does to each response body it relays: every
    /// occurrence of one byte sequence replaced by another, the way an attacker flips a flag
    /// or a price in a JSON body.
    ///
    /// ```swift
    /// let proxy = try LocalConnectProxy(.init(
    ///     interceptingIdentity: forged, route: { _ in "127.0.0.1:\(origin.port)" },
    ///     responseBodyRewrite: .init(replacing: #""licence":"free""#, with: #""licence":"premium""#)))
    /// ```
    public struct BodyRewrite: Sendable {
        /// The bytes looked for; never empty.
        public let target: [UInt8]
        /// What each occurrence becomes; its length may differ.
        public let replacement: [UInt8]

        /// - Precondition: `target` is not empty.
        public init(replacing target: [UInt8], with replacement: [UInt8]) {
            precondition(!target.isEmpty, "A body rewrite needs bytes to look for.")
            self.target = target
            self.replacement = replacement
        }

        /// Replaces the UTF-8 of `target` with the UTF-8 of `replacement`.
        public init(replacing target: String, with replacement: String) {
            self.init(replacing: Array(target.utf8), with: Array(replacement.utf8))
        }

        /// `body` with every non-overlapping occurrence of ``target``, left to right, replaced.
        public func apply(to body: [UInt8]) -> [UInt8] {
            var result: [UInt8] = []
            result.reserveCapacity(body.count)
            var index = 0
            while index < body.count {
                if index + target.count <= body.count, body[index..<(index + target.count)].elementsEqual(target) {
                    result += replacement
                    index += target.count
                } else {
                    result.append(body[index])
                    index += 1
                }
            }
            return result
        }
    }
}
