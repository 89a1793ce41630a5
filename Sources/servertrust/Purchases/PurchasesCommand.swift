import ArgumentParser
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLedger
import ServerTrustPurchases

struct PurchasesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purchases",
        abstract: "Verify App Store purchases: signed transactions, renewals, notifications, app transactions and receipts.",
        subcommands: [Verify.self, Lookup.self]
    )

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Verify App Store signed data (JWS) or a legacy receipt against Apple's roots.",
            discussion: """
                FILE is a compact JWS (a transaction's jwsRepresentation, a renewal info, a \
                notification's signedPayload, an app transaction), or a receipt as DER or base64 \
                text; - reads standard input. --kind is inferred when left out.

                The chain must end at one of Apple's roots, compiled in (Apple Root CA, G2, G3), \
                or at a --root given instead. Its revocation is checked (OCSP, then CRLs; \
                soft-fail) unless --no-revocation. Without --at the chain is judged now, or at \
                the signing date for a chain that has expired since, on a verified answer from \
                then; with --at it is judged at that time and nothing moves it.

                --bundle-id, --app-apple-id and --environment default to what the data says, \
                which is then reported, not checked. --environment xcode needs --root with the \
                StoreKit test certificate: Xcode's data is verified against it, never against \
                Apple's roots.

                Exit status: 0 verified, 1 refused (the reason on standard error, or in the \
                --json object), 2 usage error, unreadable input, or options no verifier can be \
                made from. --json prints \
                {"status": "verified"|"refused", "kind", "reason": a stable code when refused, \
                "message", "payload": the decoded fields under Apple's names, dates in RFC 3339}.

                --claim-for ACCOUNT --ledger FILE claims a verified transaction for ACCOUNT in \
                the purchase ledger FILE (SQLite, created if missing): exit 0 when granted now or \
                granted to ACCOUNT before (the same grant back), 1 when refused (a replay names \
                the account that holds it), 3 when the ledger is unavailable (retry). --json \
                then prints {"status": "granted"|"alreadyGranted"|"refused", "reason", "message", \
                "account", "transactionId", "grantedAt"}.

                Examples:
                  servertrust purchases verify --bundle-id com.example.app --app-apple-id 1234 signed-transaction.txt
                  servertrust purchases verify --bundle-id com.example.app --claim-for user-42 --ledger ledger.sqlite signed-transaction.txt
                  servertrust purchases verify --kind receipt --bundle-id com.example.app --no-revocation receipt.b64
                  servertrust purchases verify --environment xcode --root StoreKitTestCertificate.cer --no-revocation transaction.jws
                """
        )

        @Option(name: .long, help: ArgumentHelp("transaction, renewal, notification, app-transaction or receipt; inferred by default.", valueName: "KIND"))
        var kind: String?

        @Option(name: .customLong("bundle-id"), help: ArgumentHelp("The app's bundle ID; default the data's (not checked).", valueName: "ID"))
        var bundleID: String?

        @Option(name: .customLong("app-apple-id"), help: ArgumentHelp("The app's Apple ID (production); default the data's (not checked).", valueName: "N"))
        var appAppleID: Int64?

        @Option(name: .long, help: ArgumentHelp("production, sandbox or xcode; default the data's.", valueName: "ENV"))
        var environment: String?

        @Option(name: .long, help: ArgumentHelp("A root (PEM or DER) to use instead of Apple's compiled-in roots. Repeatable.", valueName: "CERT"))
        var root: [String] = []

        @Option(name: .long, help: ArgumentHelp("Judge the chain at this time (RFC 3339); no rule moves it.", valueName: "RFC3339"))
        var at: String?

        @Flag(name: .customLong("no-revocation"), help: "Check no OCSP or CRL (offline material).")
        var noRevocation = false

        @Flag(name: .long, help: "Print the result as JSON on standard output.")
        var json = false

        @Option(name: .customLong("claim-for"), help: ArgumentHelp("Claim the verified transaction for this account in --ledger.", valueName: "ACCOUNT"))
        var claimFor: String?

        @Option(name: .long, help: ArgumentHelp("The purchase ledger (SQLite, created if missing) --claim-for records in.", valueName: "FILE"))
        var ledger: String?

        @Argument(help: ArgumentHelp("The signed data or receipt; - for standard input.", valueName: "FILE|-"))
        var file: String

        func validate() throws {
            if let kind, AppStorePurchaseKind(rawValue: kind) == nil {
                throw ValidationError("--kind \"\(kind)\" is not one of \(AppStorePurchaseKind.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            if let environment, !["production", "sandbox", "xcode"].contains(environment) {
                throw ValidationError("--environment \"\(environment)\" is not production, sandbox or xcode.")
            }
            if environment == "xcode" && root.count != 1 {
                throw ValidationError("--environment xcode needs exactly one --root: the StoreKit test certificate Xcode signed with.")
            }
            if let at, RFC3339.parse(at) == nil {
                throw ValidationError("--at \"\(at)\" is not an RFC 3339 time such as 2026-01-31T12:00:00Z.")
            }
            if (claimFor == nil) != (ledger == nil) {
                throw ValidationError("--claim-for and --ledger go together: the account to claim for, and the ledger to record it in.")
            }
            if claimFor != nil, let kind, kind != AppStorePurchaseKind.transaction.rawValue {
                throw ValidationError("--claim-for claims a signed transaction, not a \(kind).")
            }
        }

        func run() async throws {
            let material = try readMaterial()
            let kind = try kind.flatMap(AppStorePurchaseKind.init(rawValue:)) ?? inferredKind(material)
            let request = PurchaseVerificationRequest(
                kind: kind, bundleID: bundleID, appAppleID: appAppleID,
                environment: environment.map { PurchaseVerificationRequest.environment(named: $0) }, roots: try loadRoots(),
                time: at.flatMap(RFC3339.parse), revocation: noRevocation ? .disabled : .softFail(fetcher: CurlRevocationFetcher()))
            let outcome = request.verify(material)
            if case .refused(let error) = outcome.result, error.code == .invalidConfiguration {
                // Not a verdict on the data: the options cannot make a verifier.
                throw CommandFailure(status: CommandFailure.usage, message: "error: \(error.reason)")
            }
            if let claimFor, let ledger, case .verified(_, let payload) = outcome.result {
                guard let transaction = payload as? AppStoreTransaction else {
                    throw CommandFailure(status: CommandFailure.usage, message: "error: --claim-for claims a signed transaction; \(file) is a \(kind.rawValue).")
                }
                for note in outcome.notes { StandardError.warn(note) }
                try await LedgerClaimOutput.claim(transaction, for: claimFor, in: ledger, json: json)
                return
            }
            print(outcome, json: json)
            if case .refused = outcome.result { throw CommandFailure(status: CommandFailure.rejected, message: "") }
        }

        private func readMaterial() throws -> [UInt8] {
            let data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: file)
            guard let data, !data.isEmpty else {
                throw CommandFailure(status: CommandFailure.usage, message: "error: cannot read \(file == "-" ? "standard input" : file), or it is empty.")
            }
            return Array(data)
        }

        private func inferredKind(_ material: [UInt8]) throws -> AppStorePurchaseKind {
            guard let kind = AppStorePurchaseKind.infer(material) else {
                throw CommandFailure(
                    status: CommandFailure.usage,
                    message: "error: \(file) is neither a compact JWS nor a receipt (DER or base64); name the kind with --kind.")
            }
            return kind
        }

        private func loadRoots() throws -> [Certificate]? {
            guard !root.isEmpty else { return nil }
            do {
                return try root.flatMap { try Certificate.certificates(contentsOfFile: $0) }
            } catch let error as TrustError {
                throw CommandFailure(status: CommandFailure.usage, message: "error: \(error.reason)")
            }
        }

        private func print(_ outcome: PurchaseVerificationRequest.Outcome, json: Bool) {
            if json {
                Swift.print(JSONText.render(outcome))
                return
            }
            for note in outcome.notes { StandardError.warn(note) }
            switch outcome.result {
            case .verified(let summary, _):
                Swift.print("verified: \(summary)")
            case .refused(let error):
                StandardError.write("refused: \(outcome.kind.rawValue): \(error)")
            }
        }
    }

    struct Lookup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "lookup",
            abstract: "Look up the purchase ledger: who holds a transaction or an order, what an account holds now.",
            discussion: """
                The support question: --transaction ID or --order ID prints each grant (account, \
                when granted, product, state); --account ACCOUNT prints its entitlements now. \
                Exit status: 0 found, 1 nothing found, 2 usage error, 3 the ledger unavailable.

                Examples:
                  servertrust purchases lookup --ledger ledger.sqlite --transaction 2000000123456789
                  servertrust purchases lookup --ledger ledger.sqlite --account user-42 --json
                """
        )

        @Option(name: .long, help: ArgumentHelp("The purchase ledger (SQLite).", valueName: "FILE"))
        var ledger: String

        @Option(name: .long, help: ArgumentHelp("app_store (default) or google_play.", valueName: "STORE"))
        var store = PurchaseStore.appStore.rawValue

        @Option(name: .long, help: ArgumentHelp("A transaction id.", valueName: "ID"))
        var transaction: String?

        @Option(name: .long, help: ArgumentHelp("An order id (the App Store's web order line item id).", valueName: "ID"))
        var order: String?

        @Option(name: .long, help: ArgumentHelp("An account: its entitlements now.", valueName: "ACCOUNT"))
        var account: String?

        @Flag(name: .long, help: "Print the result as JSON on standard output.")
        var json = false

        func validate() throws {
            guard [transaction, order, account].compactMap({ $0 }).count == 1 else {
                throw ValidationError("Give exactly one of --transaction, --order and --account.")
            }
            guard PurchaseStore.known.contains(PurchaseStore(rawValue: store)) else {
                throw ValidationError("--store \"\(store)\" is not \(PurchaseStore.known.map(\.rawValue).sorted().joined(separator: " or ")).")
            }
            guard FileManager.default.fileExists(atPath: ledger) else { throw ValidationError("--ledger \(ledger): no such file.") }
        }

        func run() async throws {
            try await LedgerClaimOutput.lookup(
                ledger: ledger, store: PurchaseStore(rawValue: store), transaction: transaction, order: order, account: account, json: json)
        }
    }
}
