package import Foundation

extension OCSPVerifier {
    /// How strictly response times are judged. Defaults: 5 minutes of clock skew, 7 days of
    /// maximum age.
    package struct Configuration: Hashable, Sendable {
        /// How far the responder's clock and ours may disagree: thisUpdate may lie this far
        /// after the validation time, nextUpdate this far before it, and the maximum age is
        /// stretched by it. Default 300 seconds.
        /// - Warning: a larger tolerance accepts responses that are further out of date.
        package var clockSkewTolerance: TimeInterval

        /// The oldest a response may be: one whose thisUpdate lies further than this before the
        /// validation time is `RevocationStatus.UnknownReason.tooOld`.
        ///
        /// It applies to every response, not only to those without nextUpdate (which would
        /// otherwise never expire): a stapled "good" response that a server keeps serving after
        /// the certificate was revoked is then refused after at most this long, even when the
        /// responder set a distant nextUpdate. Default 7 days (604,800 s), as Chromium uses for
        /// stapled responses; the CA/Browser Forum requires CAs to refresh responses within 4
        /// days, so a well-run server's staple is never older.
        /// - Warning: a larger maximum age lets a server keep showing an old "good" response
        ///   for longer after its certificate was revoked.
        package var maximumAge: TimeInterval

        /// - Parameters:
        ///   - clockSkewTolerance: default 300 seconds.
        ///   - maximumAge: default 604,800 seconds (7 days).
        package init(clockSkewTolerance: TimeInterval = 300, maximumAge: TimeInterval = 7 * 24 * 60 * 60) {
            self.clockSkewTolerance = clockSkewTolerance
            self.maximumAge = maximumAge
        }
    }
}
