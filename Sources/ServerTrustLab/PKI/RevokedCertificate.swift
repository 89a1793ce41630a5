public import ServerTrust
public import Foundation

/// One entry of a CRL made by ``LabCA/makeCRL(revoked:thisUpdate:nextUpdate:crlNumber:)``.
public struct RevokedCertificate: Sendable {
    /// The serial number in hexadecimal, as ServerTrust's `Certificate.serialNumber` prints it.
    public var serialNumber: String
    /// When the certificate was revoked.
    public var revocationDate: Date
    /// The CRLReason code (RFC 5280 §5.3.1: 1 keyCompromise, 4 superseded…); nil omits the extension.
    public var reason: Int?

    /// Revokes the certificate with serial number `serialNumber` (hexadecimal).
    ///
    /// - Parameters:
    ///   - serialNumber: the serial number in hexadecimal, as ServerTrust's
    ///     `Certificate.serialNumber` prints it.
    ///   - revocationDate: default an hour ago.
    ///   - reason: default none.
    public init(serialNumber: String, revocationDate: Date = Date(timeIntervalSinceNow: -3600), reason: Int? = nil) {
        self.serialNumber = serialNumber
        self.revocationDate = revocationDate
        self.reason = reason
    }

    /// Revokes `certificate` by its serial number.
    public init(_ certificate: Certificate, revocationDate: Date = Date(timeIntervalSinceNow: -3600), reason: Int? = nil) {
        self.init(serialNumber: certificate.serialNumber, revocationDate: revocationDate, reason: reason)
    }
}
