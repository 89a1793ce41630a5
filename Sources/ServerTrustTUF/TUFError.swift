/// The error every ServerTrustTUF API throws: which check of the client workflow failed and why.
///
/// Equality compares ``code`` only, so a test or a caller can ask what kind of failure happened
/// (`#expect(throws: TUFError.rollback)`) without matching prose; ``reason`` names the role,
/// the versions, the URL or the file.
public struct TUFError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An opaque, extensible failure kind.
    ///
    /// Encoded as its name (`"rollback"`), so a status that carries one — ServerTrustUpdates'
    /// `TrustUpdateStatus` — reads the same in JSON.
    public struct Code: Hashable, Sendable, Codable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case malformedJSON, malformedMetadata, unsignedMetadata, rollback, versionMismatch, expired
            case lengthOrHashMismatch, missingMetadataInfo, notFound, downloadTooLarge, slowRetrieval
            case downloadFailed, targetNotFound, storeFailure, invalidState, invalidURL
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Bytes that are not JSON as the client accepts it: not UTF-8, a duplicate key, a
        /// float, too deep, trailing data.
        public static let malformedJSON = Code(.malformedJSON)
        /// JSON that is not metadata of the expected role and shape (a missing field, a wrong
        /// type, an unsupported `spec_version`, a version below 1, a trusted root at the
        /// largest version, which no next root could follow).
        public static let malformedMetadata = Code(.malformedMetadata)
        /// Fewer valid signatures by the delegated keys than the role's threshold.
        public static let unsignedMetadata = Code(.unsignedMetadata)
        /// A version lower than the one already trusted (a rollback attack), or a root that is
        /// not the trusted version plus one.
        public static let rollback = Code(.rollback)
        /// A version other than the one the referring metadata names (mix-and-match).
        public static let versionMismatch = Code(.versionMismatch)
        /// Metadata past its `expires` at the client's reference time (a freeze attack).
        public static let expired = Code(.expired)
        /// Bytes whose length or hash differs from what trusted metadata says, or whose hash
        /// algorithm the client does not support.
        public static let lengthOrHashMismatch = Code(.lengthOrHashMismatch)
        /// Snapshot (or timestamp) metadata without the entry the workflow needs, or a new
        /// snapshot that drops an entry the trusted one had.
        public static let missingMetadataInfo = Code(.missingMetadataInfo)
        /// The repository answered 403 or 404.
        public static let notFound = Code(.notFound)
        /// More bytes than the limit for this file (an endless-data attack).
        public static let downloadTooLarge = Code(.downloadTooLarge)
        /// A download that did not finish within its time budget (a slow-retrieval attack).
        public static let slowRetrieval = Code(.slowRetrieval)
        /// Any other transport failure.
        public static let downloadFailed = Code(.downloadFailed)
        /// No trusted targets metadata lists the target path.
        public static let targetNotFound = Code(.targetNotFound)
        /// The local store could not be read, written, locked or created.
        public static let storeFailure = Code(.storeFailure)
        /// An API used out of order (targets before a refresh…), or a bad configuration.
        public static let invalidState = Code(.invalidState)
        /// A URL the fetcher refuses (plain http to a host that is not loopback…).
        public static let invalidURL = Code(.invalidURL)

        public var description: String { base.rawValue }

        public init(from decoder: any Decoder) throws {
            let name = try decoder.singleValueContainer().decode(String.self)
            guard let base = Base(rawValue: name) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "no TUFError code \(name)"))
            }
            self.base = base
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(base.rawValue)
        }
    }

    /// What kind of failure.
    public let code: Code
    /// What failed, for a person.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
