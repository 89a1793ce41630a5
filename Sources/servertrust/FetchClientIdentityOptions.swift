import ArgumentParser
import Foundation
import ServerTrust
import ServerTrustHTTP

/// `fetch --client-cert FILE [--client-key FILE] [--client-key-passphrase-file FILE]` or
/// `fetch --client-pkcs12 FILE`: a client certificate (mutual TLS) for the URL's host only;
/// hosts reached by redirects get none.
struct FetchClientIdentityOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Client certificate (PEM, leaf then intermediates) sent to the URL's host when it asks for one.", valueName: "FILE"))
    var clientCert: String?

    @Option(name: .long, help: ArgumentHelp("Private key of --client-cert (PEM; default: looked for in the --client-cert file).", valueName: "FILE"))
    var clientKey: String?

    @Option(name: .long, help: ArgumentHelp("Client certificate and key as PKCS#12 (.p12), instead of --client-cert.", valueName: "FILE"))
    var clientPkcs12: String?

    @Option(name: .long, help: ArgumentHelp("File whose first line is the passphrase of an encrypted --client-key or of --client-pkcs12.", valueName: "FILE"))
    var clientKeyPassphraseFile: String?

    /// The identity the options load, for the URL's host policy (`HostPolicy.clientIdentity`);
    /// nil when none is given. Exits 2 on any problem.
    func identity() throws -> ClientIdentity? {
        guard clientCert != nil || clientKey != nil || clientPkcs12 != nil || clientKeyPassphraseFile != nil else { return nil }
        let identity: ClientIdentity
        do {
            let passphrase = try clientKeyPassphraseFile.map(Self.readPassphrase)
            switch (clientCert, clientKey, clientPkcs12) {
            case (let certificate?, let key, nil):
                identity = try ClientIdentity(certificateFile: certificate, privateKeyFile: key, passphrase: passphrase)
            case (nil, nil, let pkcs12?):
                identity = try ClientIdentity(pkcs12File: pkcs12, passphrase: passphrase)
            case (nil, _, nil):
                throw usage("--client-key and --client-key-passphrase-file need --client-cert (or --client-pkcs12).")
            default:
                throw usage("--client-pkcs12 holds the certificate and the key; drop --client-cert and --client-key.")
            }
        } catch let error as TrustError {
            throw usage("client identity: \(error.reason)")
        }
        return identity
    }

    /// The first line of the file, without its line ending, as `curl --pass` would be given it.
    private static func readPassphrase(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TrustError(.unreadableInput, "Cannot read the passphrase file \(path).")
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
            .first.map { String($0.hasSuffix("\r") ? $0.dropLast() : $0) } ?? ""
    }

    private func usage(_ message: String) -> CommandFailure {
        CommandFailure(status: CommandFailure.usage, message: "error: \(message)")
    }
}
