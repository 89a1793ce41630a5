import Foundation
import ServerTrust

/// Writes prepared RFC 9421 responses for `Benchmarks/rfc9421/bench.py`: the same bytes our
/// verifier checks, so the Python library verifies the very same responses.
enum Export {
    static func write(_ responses: RFC9421Responses, warmup: Int, count: Int, to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(responses.body).write(to: URL(fileURLWithPath: directory + "/body.bin"))
        func pairs(_ fields: [(name: String, value: String)]) -> [[String]] { fields.map { [$0.name, $0.value] } }
        var items: [[String: Any]] = []
        for index in 0..<(warmup + count) {
            let request = responses.requests[index]
            let response = responses.responses[index]
            let target = request.path + (request.query.map { "?" + $0 } ?? "")
            items.append([
                "nonce": responses.challenges[index].nonce,
                "request": ["method": request.method, "url": "\(request.scheme)://\(request.authority)\(target)", "headers": pairs(request.headers)],
                "response": ["status": response.status, "headers": pairs(response.headers)],
            ])
        }
        let document: [String: Any] = [
            "alg": responses.signerAlgorithm,
            "keyid": responses.keyID,
            "public_key_pem": responses.key.publicKey.pemRepresentation,
            "required": MessageSignaturePolicy.defaultRequiredComponents.map(\.description),
            "body_file": "body.bin",
            "warmup": warmup,
            "count": count,
            "responses": items,
        ]
        let data = try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])
        try data.write(to: URL(fileURLWithPath: directory + "/responses.json"))
    }
}

extension RFC9421Responses {
    /// The RFC 9421 algorithm name, as the Python peer spells it.
    var signerAlgorithm: String { MessageSignaturePolicy.algorithmName(for: key.kind) }
}
