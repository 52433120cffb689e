import ArgumentParser
import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `ckbrowse subscriptions [ID]`, `ckbrowse subscriptions create FILE…`, `ckbrowse subscriptions delete ID…`:
/// read a database's subscriptions, and move them between environments or servers (what `--json`
/// prints, `create` takes back).
struct Subscriptions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List subscriptions, show one, create them from a file, or delete them.",
        discussion: """
            With no argument, prints one subscription per line as JSON (or a table); with an ID, its whole definition.

            `subscriptions create FILE…` creates the subscriptions FILE holds (- for standard input): what `subscriptions --json` or `subscriptions` prints (an array, or one object per line), one object, or a subscriptions/modify body. --update sends updates instead; --dry-run prints the request and sends nothing. Production refuses creation, as CloudKit does. Before anything is sent, each create is checked against the server's subscriptions: an ID that exists with another definition (a create would leave it as it is; --update changes it) or a query subscription with the same record type and firesOn as another (CloudKit refuses such a twin) is named, and nothing is sent.

            `subscriptions delete ID…` deletes them.

            Exit status: 0 done, 1 failure (any subscription refused; each refusal is printed), 3 not found (an ID to show or delete), 4 authentication, 5 refused because the connection is read-only, 64 bad usage or file.
            """)

    @Argument(help: "An ID to show; or create FILE…; or delete ID….") var words: [String] = []
    @Flag(help: "With create: print the request that would be sent and send nothing.") var dryRun = false
    @Flag(help: "With create: send updates of existing subscriptions instead of creates.") var update = false
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var out: OutputOptions

    func run() async throws {
        switch words.first {
        case "create": try await create(Array(words.dropFirst()))
        case "delete": try await delete(Array(words.dropFirst()))
        default:
            guard words.count <= 1 else { return fail("subscriptions takes one ID to show (or create FILE…, delete ID…)", ExitStatus.usage) }
            try await show(words.first)
        }
    }

    func show(_ id: String?) async throws {
        var missing = false
        do {
            let resolved = try await connection.resolve()
            let db = resolved.client.database(resolved.info.database)
            let results: [SubscriptionResult]
            if let id { results = try await db.lookupSubscriptions([id]) } else { results = try await db.listSubscriptions() }
            if id != nil, out.format == .table, let s = results.first?.subscription {
                Out.json(s.json, pretty: true)
                return
            }
            missing = print(results)
        } catch let error as ValidationError { throw error } catch { Failure.exit(error) }
        if missing { throw ExitCode(ExitStatus.notFound) }
    }

    /// Prints results as rows (JSON lines, an array, or a table); true when one was NOT_FOUND.
    @discardableResult
    func print(_ results: [SubscriptionResult], refused: inout Bool) -> Bool {
        var missing = false
        var printer = Printer(out, columns: ["SUBSCRIPTION ID", "TYPE", "RECORD TYPE / ZONE", "FIRES ON", "ONCE"])
        for result in results {
            switch result {
            case .subscription(let s):
                let target: String = s.query?.recordType ?? s.zoneID?.zoneName ?? ""
                let fires: String = (s.firesOn ?? []).map { $0.rawValue }.joined(separator: ",")
                printer.add(json: s.json, cells: [s.subscriptionID ?? "", s.subscriptionType.rawValue, target, fires, s.firesOnce == true ? "yes" : ""])
            case .failure(let e):
                missing = missing || e.serverErrorCode == .notFound
                refused = true
                printer.add(json: e.json, failure: e.subscriptionID ?? "?", code: e.serverErrorCode, reason: e.reason)
            }
        }
        printer.finish()
        return missing
    }

    func print(_ results: [SubscriptionResult]) -> Bool {
        var refused = false
        return print(results, refused: &refused)
    }

    func create(_ files: [String]) async throws {
        guard !files.isEmpty else { return fail("subscriptions create takes one or more files (- for standard input)", ExitStatus.usage) }
        var subscriptions: [Subscription] = []
        for file in files {
            guard let data = Out.input(file) else { return fail(SystemErrorWords.cannotRead(file, expected: "readable"), ExitStatus.usage) }
            do { subscriptions += try Self.subscriptions(in: Array(data)) } catch { return fail("\(file): \(error)", ExitStatus.usage) }
        }
        guard !subscriptions.isEmpty else { return fail("no subscription in \(files.joined(separator: ", "))", ExitStatus.usage) }
        let operations = subscriptions.map { SubscriptionOperation(update ? .update : .create, $0) }
        try await send(operations)
    }

    func delete(_ ids: [String]) async throws {
        guard !ids.isEmpty else { return fail("subscriptions delete takes one or more subscription IDs", ExitStatus.usage) }
        try await send(ids.map { SubscriptionOperation.delete($0) })
    }

    func send(_ operations: [SubscriptionOperation]) async throws {
        let resolved = try await connection.resolve()
        let scope = resolved.info.database
        if dryRun {
            let path = Endpoint.subscriptionsModify.path(container: resolved.info.container, environment: resolved.info.environment, database: scope)
            Out.json(["method": "POST", "server": .string(resolved.info.server), "path": .string(path), "body": ModifySubscriptionsRequest(operations: operations).json], pretty: true)
            return
        }
        if let reason = resolved.readOnlyReason {
            return fail("refusing to write: this connection is read-only (\(reason))", ExitStatus.readOnly)
        }
        // CloudKit creates subscriptions in development only (the reference; the server says so per
        // item): refused here before anything is sent.
        if resolved.info.environment == .production, operations.contains(where: { $0.operationType == .create }) {
            return fail("subscriptions cannot be created in production; create them in development (CloudKit deploys them with the schema)", ExitStatus.failure)
        }
        var refused = false
        var missing = false
        do {
            try await checkCreates(operations, resolved.client.database(scope))
            for batch in stride(from: 0, to: operations.count, by: ModifyRecordsRequest.maximumOperations) {
                let part = Array(operations[batch..<min(batch + ModifyRecordsRequest.maximumOperations, operations.count)])
                let results = try await resolved.client.database(scope).modifySubscriptions(part)
                missing = print(results, refused: &refused) || missing
            }
        } catch let error as ValidationError { throw error } catch { Failure.exit(error) }
        if missing && operations.allSatisfy({ $0.operationType == .delete }) { throw ExitCode(ExitStatus.notFound) }
        if refused { throw ExitCode(ExitStatus.failure) }
    }

    /// Creates checked against what the server holds, before anything is sent, as the browser's
    /// editor checks them: an ID that exists with another definition (a create would answer the one
    /// stored, unchanged, and look like success), and a query subscription's twin (the service answers
    /// INTERNAL_ERROR, which says nothing of why). Each is said; nothing is sent then.
    func checkCreates(_ operations: [SubscriptionOperation], _ database: CloudKitDatabase) async throws {
        let creates = operations.filter { $0.operationType == .create }.map(\.subscription)
        guard !creates.isEmpty else { return }
        let existing: [Subscription] = try await database.listSubscriptions().compactMap {
            if case .subscription(let s) = $0 { return s } else { return nil }
        }
        var problems: [String] = []
        for (i, s) in creates.enumerated() {
            let id = s.subscriptionID ?? "?"
            if let stored = existing.first(where: { $0.subscriptionID == s.subscriptionID }) {
                if !stored.sameDefinition(as: s) {
                    problems.append("subscription '\(id)' exists with another definition: a create would leave it as it is; --update sends yours as an update")
                }
            } else if let twin = s.queryTwin(among: existing + creates[..<i]) {
                let fires = (s.firesOn ?? []).map(\.rawValue).sorted().joined(separator: ", ")
                problems.append("'\(id)': '\(twin.subscriptionID ?? "?")' already watches \(s.query?.recordType ?? "?") on \(fires): CloudKit keeps one query subscription per record type and firesOn set and refuses a twin (INTERNAL_ERROR); change firesOn, or update '\(twin.subscriptionID ?? "?")' (--update)")
            }
        }
        guard problems.isEmpty else {
            for problem in problems { Out.error("ckbrowse: " + problem) }
            Out.error("ckbrowse: nothing sent")
            exitProcess(ExitStatus.failure)
        }
    }

    /// The subscriptions a file holds: a JSON array, one object per line, one object, or a
    /// subscriptions/modify body (its operations' subscriptions).
    static func subscriptions(in bytes: [UInt8]) throws -> [Subscription] {
        func from(_ json: JSON) throws -> [Subscription] {
            if case .array(let items) = json { return try items.flatMap(from) }
            if case .array(let operations)? = json["operations"] {
                return try operations.map { try SubscriptionOperation(json: $0).subscription }
            }
            if json["serverErrorCode"] != nil { return [] }  // an error line `subscriptions` printed
            return [try Subscription(json: json)]
        }
        if let whole = try? JSON(parsing: bytes) { return try from(whole) }
        var found: [Subscription] = []
        for (index, line) in bytes.split(separator: UInt8(ascii: "\n")).enumerated() {
            let text = line.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }
            guard !text.isEmpty else { continue }
            do { found += try from(JSON(parsing: Array(text))) } catch { throw ValidationError("line \(index + 1): \(error)") }
        }
        return found
    }

    func fail(_ message: String, _ status: Int32) {
        Out.error("ckbrowse: \(message)")
        exitProcess(status)
    }
}
