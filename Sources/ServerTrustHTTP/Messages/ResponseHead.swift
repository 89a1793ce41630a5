import HTTPTypes

/// The head of a response: status line and header fields.
struct ResponseHead: Sendable {
    var status: Int
    /// The fields as received, made when first read (``ReceivedFields``).
    let fields: ReceivedFields
    var httpVersion: String

    /// The fields as received, in order, repeated names kept; a line whose name is not an
    /// RFC 9110 token is dropped (``HeaderLine/field(name:value:)``). Made on the first read.
    var headers: HTTPFields { fields.fields }

    /// ``status`` as the public type: a code outside 0…999 (which `HTTPResponse.Status` traps
    /// on) is 0, never a success, as a status line that is not a number already is.
    var publicStatus: HTTPResponse.Status {
        HTTPResponse.Status(code: (0...999).contains(status) ? status : 0)
    }
}
