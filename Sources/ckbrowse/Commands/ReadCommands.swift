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
import RecordBrowser
import TerminalUI

/// Exit statuses of the read commands, in every command's help.
let readExitStatuses = "Exit status: 0 success, 1 failure, 3 not found (record, zone or subscription), 4 authentication, 64 bad usage."

/// `ckbrowse zones`
struct Zones: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the zones of a database.",
        discussion: "Prints one zone per line as JSON (or a table on a terminal). " + readExitStatuses)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var out: OutputOptions

    func run() async throws {
        do {
            let resolved = try await connection.resolve()
            var printer = Printer(out, columns: ["ZONE", "OWNER", "TYPE", "ATOMIC"])
            for result in try await resolved.client.database(resolved.info.database).listZones() {
                switch result {
                case .zone(let z):
                    printer.add(json: z.json, cells: [z.zoneID.zoneName, z.zoneID.ownerRecordName ?? "", z.zoneID.zoneType?.rawValue ?? "", z.atomic == true ? "yes" : "no"])
                case .failure(let e):
                    printer.add(json: e.json, failure: e.zoneID?.zoneName ?? "?", code: e.serverErrorCode, reason: e.reason)
                }
            }
            printer.finish()
        } catch let error as ValidationError { throw error } catch { Failure.exit(error) }
    }
}

/// `ckbrowse changes ZONE [--since TOKEN] [--all]`
struct Changes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read a zone's change feed (records/changes).",
        discussion: """
            Prints one record (or tombstone) per line as JSON, then a last line {"syncToken": …, "moreComing": …} \
            to resume from with --since (select records with jq 'select(.recordName)'). Without --all, one page. \
            \(readExitStatuses)
            """)

    @Argument(help: "The zone's name.") var zone: String
    @Option(help: "Resume after this sync token (from an earlier run's last line).") var since: String?
    @Flag(help: "Follow the feed to its end (every page).") var all = false
    @Option(help: "Records per page (1-200).") var limit = 200
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var out: OutputOptions

    func validate() throws {
        guard (1...200).contains(limit) else { throw ValidationError("--limit must be between 1 and 200") }
    }

    func run() async throws {
        do {
            let resolved = try await connection.resolve()
            let db = resolved.client.database(resolved.info.database)
            // --json: one document, {"records": [...], "syncToken": …, "moreComing": …}.
            var printer = Printer(format: out.json ? .json : out.format, columns: Cells.recordColumns, asArray: false)
            var collected: [JSON] = []
            let progress = Progress()
            var count = 0
            var last: RecordChangesPage?
            for try await page in db.recordChangePages(zoneID: ZoneID(zoneName: zone), syncToken: since, resultsLimit: limit) {
                for result in page.records {
                    if out.json { collected.append(result.json) } else { printer.add(record: result) }
                }
                count += page.records.count
                last = page
                progress.update("\(Format.plural(count, "record"))…")
                if !all { break }
            }
            progress.done()
            if out.json {
                var document = JSONObject()
                document.set("records", JSON.array(collected))
                if let last {
                    document.set("syncToken", last.syncToken)
                    document.set("moreComing", last.moreComing)
                }
                Out.json(.object(document))
                return
            }
            printer.finish()
            if let last {
                let trailer: JSON = ["syncToken": .string(last.syncToken), "moreComing": .bool(last.moreComing)]
                if out.format == .json { Out.json(trailer) } else {
                    Out.line("")
                    Out.line("\(Format.plural(count, "record")) · sync token \(last.syncToken)\(last.moreComing ? " · more coming (--all reads to the end)" : "")")
                }
            }
        } catch let error as ValidationError { throw error } catch { Failure.exit(error) }
    }
}

/// `ckbrowse query TYPE [--filter 'FIELD OP VALUE']... [--sort FIELD[:desc]]`
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Query records of a type (records/query).",
        discussion: """
            Filters are 'FIELD COMPARATOR VALUE' (EQUALS, NOT_EQUALS, LESS_THAN, GREATER_THAN_OR_EQUALS, IN, BEGINS_WITH, \
            LIST_CONTAINS, …); integers are INT64, numbers with a dot DOUBLE, a,b,c a list for IN, a "quoted" value a STRING. \
            Several filters are ANDed. A system field goes by its name (recordName, createdTimestamp, …) or its schema name \
            (___recordID, ___createTime, …). Prints one record per line as JSON (or a table on a terminal); when more records \
            match than were read, a last line {"continuationMarker": …, "moreComing": true} (the table: a line naming it) \
            says so, and --continue MARKER reads on from there. \(readExitStatuses)
            """)

    @Argument(help: "The record type.") var type: String
    @Option(name: .customLong("filter"), help: ArgumentHelp("A filter (repeatable).", valueName: "FIELD OP VALUE")) var filters: [String] = []
    @Option(name: .customLong("sort"), help: ArgumentHelp("Sort by a field, ascending (or :desc) (repeatable).", valueName: "FIELD[:desc]")) var sorts: [String] = []
    @Option(help: "The zone (default: the default zone).") var zone: String?
    @Option(help: "Records per page (1-200).") var limit = 200
    @Flag(help: "Follow continuation markers to the last page.") var all = false
    @Option(name: .customLong("continue"), help: ArgumentHelp("Read on after a page that ended with this continuationMarker.", valueName: "marker"))
    var continuationMarker: String?
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var out: OutputOptions

    func makeQuery() throws -> Query {
        var words = [type]
        for filter in filters {
            let parts = filter.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
            guard parts.count == 3 else { throw ValidationError("--filter '\(filter)': expected 'FIELD COMPARATOR VALUE'") }
            words += parts
        }
        var query: Query
        do { query = try Browser.parseQuery(words) } catch let error as BrowserFailure { throw ValidationError(error.message) }
        var descriptors: [CloudKitWeb.SortDescriptor] = []
        for sort in sorts {
            let parts = sort.split(separator: ":").map(String.init)
            guard let field = parts.first, parts.count <= 2, parts.count == 1 || ["asc", "desc"].contains(parts[1]) else {
                throw ValidationError("--sort '\(sort)': expected FIELD or FIELD:desc")
            }
            descriptors.append(CloudKitWeb.SortDescriptor(field, ascending: parts.count == 1 || parts[1] == "asc"))
        }
        if !descriptors.isEmpty { query.sortBy = descriptors }
        return query
    }

    func validate() throws {
        guard (1...200).contains(limit) else { throw ValidationError("--limit must be between 1 and 200") }
        _ = try makeQuery()
    }

    func run() async throws {
        do {
            let resolved = try await connection.resolve()
            let db = resolved.client.database(resolved.info.database)
            var request = QueryRequest(query: try makeQuery())
            request.zoneID = zone.map { ZoneID(zoneName: $0) }
            request.resultsLimit = limit
            request.continuationMarker = continuationMarker
            var printer = Printer(out, columns: Cells.recordColumns)
            let progress = Progress()
            var count = 0
            var marker: String?
            for try await page in db.queryPages(request) {
                for result in page.records { printer.add(record: result) }
                count += page.records.count
                marker = page.continuationMarker
                progress.update("\(Format.plural(count, "record"))…")
                if !all { break }
            }
            progress.done()
            printer.finish()
            // A page is not the whole answer: said, with where to read on (it ended silently at 200).
            guard let marker else { return }
            switch out.format {
            case .json where out.json:
                Out.error("ckbrowse: more records match: --continue \(marker) reads on, --all reads to the end")
            case .json: Out.json(["continuationMarker": .string(marker), "moreComing": .bool(true)])
            case .table:
                Out.line("")
                Out.line("\(Format.plural(count, "record")) · more match: --continue \(marker) reads on, --all reads to the end")
            }
        } catch let error as ValidationError { throw error } catch { Failure.exit(error) }
    }
}

/// `ckbrowse get NAME...`
struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Look records up by name (records/lookup).",
        discussion: "Prints one record per line as JSON (or a table on a terminal); a missing record is its error dictionary and exit status 3. " + readExitStatuses)

    @Argument(help: "Record names (up to 200).") var names: [String]
    @Option(help: "The zone (default: the default zone).") var zone: String?
    @Option(help: ArgumentHelp("Write this ASSETID field's file instead of printing the record (one record name; needs --to).", valueName: "field"))
    var asset: String?
    @Option(help: ArgumentHelp("With --asset: the element of an ASSETID_LIST field (0 first).", valueName: "n")) var index = 0
    @Option(name: .customLong("to"), help: ArgumentHelp("With --asset: the file to write (- for standard output).", valueName: "file"))
    var output: String?
    @Flag(help: "With --asset: write over --to FILE when it exists (by default an existing file is left alone).") var force = false
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var out: OutputOptions

    func validate() throws {
        guard !names.isEmpty, names.count <= 200 else { throw ValidationError("give 1 to 200 record names") }
        if asset != nil {
            guard names.count == 1 else { throw ValidationError("--asset takes one record name") }
            guard let output else { throw ValidationError("--asset needs --to FILE (or - for standard output)") }
            // As the browser's o and :export: nothing is written over unless asked.
            if output != "-", !force, FileManager.default.fileExists(atPath: output) {
                throw ValidationError("\(TerminalText.visible(output)) exists (nothing overwritten): give another name, or --force to write over it")
            }
        } else if force {
            throw ValidationError("--force writes over an asset's --to FILE: name its field with --asset")
        } else if output != nil {
            throw ValidationError("--to writes an asset: name its field with --asset")
        }
    }

    func run() async throws {
        if let asset, let output { return try await writeAsset(asset, to: output) }
        var errors: [RecordError] = []
        do {
            let resolved = try await connection.resolve()
            let results = try await resolved.client.database(resolved.info.database).lookupRecords(names, zoneID: zone.map { ZoneID(zoneName: $0) })
            var printer = Printer(out, columns: Cells.recordColumns)
            for result in results {
                if let error = result.error { errors.append(error) }
                printer.add(record: result)
            }
            printer.finish()
        } catch let error as ValidationError { throw error } catch { Failure.exit(error) }
        // Each error also on standard error, where a script's user sees it whatever stdout feeds.
        for error in errors { Out.error("ckbrowse: '\(error.recordName ?? "?")': \(Cells.failure(error.serverErrorCode, error.reason))") }
        if let status = Failure.status(errors.map(\.serverErrorCode)) { throw ExitCode(status) }
    }
}

extension Get {
    /// Downloads one asset of one record to a file (or standard output), with progress on a terminal.
    func writeAsset(_ field: String, to output: String) async throws {
        do {
            let resolved = try await connection.resolve()
            let results = try await resolved.client.database(resolved.info.database).lookupRecords(names, zoneID: zone.map { ZoneID(zoneName: $0) })
            guard let result = results.first else { throw BrowserFailure(message: "records/lookup answered nothing") }
            guard let record = result.record else {
                Out.error("ckbrowse: '\(result.error?.recordName ?? names[0])': \(result.error.map { Cells.failure($0.serverErrorCode, $0.reason) } ?? "no such record")")
                throw ExitCode(ExitStatus.notFound)
            }
            let chosen: Asset
            switch record.fields[field] {
            case .asset(let a)?:
                // Not silently the one asset when another element was asked for.
                guard index == 0 else { throw BrowserFailure(message: "'\(field)' of '\(record.recordName)' holds one asset (ASSETID): --index is for an ASSETID_LIST field") }
                chosen = a
            case .assetList(let list)?:
                guard list.indices.contains(index) else { throw BrowserFailure(message: "'\(field)' holds \(list.count) assets: --index 0 to \(max(0, list.count - 1))") }
                chosen = list[index]
            case let other?: throw BrowserFailure(message: "'\(field)' of '\(record.recordName)' is \(other.type.rawValue), not an asset")
            case nil: throw BrowserFailure(message: "'\(record.recordName)' has no field '\(field)'")
            }
            let toStandardOutput = output == "-"
            let path = toStandardOutput ? FileManager.default.temporaryDirectory.appendingPathComponent("ckbrowse-asset-\(UUID().uuidString)").path : output
            let progress = Progress()
            let name = toStandardOutput ? "\(record.recordName)-\(field)" : Paths.lastComponent(output)
            let written = try await resolved.client.downloadAsset(chosen, to: path, fileName: name) { done, total in
                progress.update(AssetProgress.describe(done: done, total: total))
            }
            progress.done()
            if toStandardOutput {
                defer { try? FileManager.default.removeItem(atPath: path) }
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { throw BrowserFailure(message: "cannot read the downloaded file") }
                defer { close(fd) }
                var chunk = [UInt8](repeating: 0, count: 1 << 20)
                while true {
                    let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { break }
                    try FileOutput.standardOutput.write(contentsOf: chunk[0..<n])
                }
            } else {
                Out.error("wrote \(written) bytes to \(output)")
            }
        } catch let error as ValidationError { throw error } catch let error as ExitCode { throw error } catch { Failure.exit(error) }
    }
}
