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
import SQLiteDB
import RecordBrowser

/// Marks, bulk reads and exports over the cached rows of a list.
extension RecordCache {
    /// The `WHERE` of a list's rows matching a `/` filter (tombstones left out), and its arguments.
    static func matching(_ key: ListKey, filter: String?) -> (String, [any DatabaseValueConvertible]) {
        var condition = "key = ? AND deleted = 0"
        var arguments: [any DatabaseValueConvertible] = [key.description]
        if let filter, !filter.isEmpty {
            condition += " AND (instr(lower(name), ?) > 0 OR instr(lower(COALESCE(type, '')), ?) > 0 OR instr(COALESCE(search, ''), ?) > 0)"
            arguments += [filter.lowercased(), filter.lowercased(), filter.lowercased()]
        }
        return (condition, arguments)
    }

    /// The `ORDER BY` of a list shown sorted by a field (else in list order), as `window` orders it.
    static func order(_ sort: ListSort?) -> String {
        guard let sort, FieldNames.isValid(sort.field) else { return "position" }
        let value = "json_extract(CAST(json AS TEXT), '$.fields.\(sort.field).value')"
        return "(\(value) IS NULL), \(value) \(sort.descending ? "DESC" : "ASC"), position"
    }

    /// The names of rows `start ..< start + count` of a list as shown (filtered, sorted); tombstones
    /// are skipped (they cannot be marked) but keep their places.
    public func names(_ key: ListKey, filter: String?, sort: ListSort?, start: Int, count: Int) throws -> (names: [String], deleted: Int) {
        var (condition, arguments) = Self.matching(key, filter: filter)
        // Places are counted with the tombstones, as the window counts them.
        condition = condition.replacing(" AND deleted = 0", with: "")
        let rows = try pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT name, deleted FROM record WHERE \(condition) ORDER BY \(Self.order(sort)) LIMIT ? OFFSET ?",
                arguments: StatementArguments(arguments + [count, start])
            ).map { row in (name: row["name"] as String, deleted: (row["deleted"] as Int64) != 0) }
        }
        return (rows.filter { !$0.deleted }.map(\.name), rows.filter(\.deleted).count)
    }

    /// The cached records of a list by name (those it holds; tombstones left out), in one read.
    public func records(_ key: ListKey, names: [String]) throws -> [CloudKitWeb.Record] {
        guard !names.isEmpty else { return [] }
        return try pool.read { db in
            var result: [CloudKitWeb.Record] = []
            result.reserveCapacity(names.count)
            try Self.forEachJSON(db, key, names: names) { result.append(try CloudKitWeb.Record.decode(from: $0)) }
            return result
        }
    }

    /// Each cached record dictionary of a list as shown (filtered, sorted) or, with `names`, of those
    /// records, as the server sent it: read with a cursor, so memory stays flat however many there are.
    public func forEachRecordJSON(_ key: ListKey, filter: String?, sort: ListSort?, names: Set<String>?, _ body: (Data) throws -> Void) throws {
        let (condition, arguments) = Self.matching(key, filter: names == nil ? filter : nil)
        try pool.read { db in
            let cursor = try Row.fetchCursor(
                db, sql: "SELECT name, json FROM record WHERE \(condition) AND json IS NOT NULL ORDER BY \(names == nil ? Self.order(sort) : "name")",
                arguments: StatementArguments(arguments))
            while let row = try cursor.next() {
                if let names, !names.contains(row["name"] as String) { continue }
                try body(row["json"] as Data)
            }
        }
    }
}

/// Writes an export: to a temporary file beside the target, renamed over it once complete, so the
/// file is never left half-written.
enum Exporter {
    /// Why the file cannot be written (nil: it can): its directory is missing or not writable, or it
    /// is a directory.
    static func refusal(_ path: String) -> String? {
        let absolute = EffectRunner.absolutePath(path)
        let directory = Paths.parent(absolute)
        if FileManager.default.isDirectory(atPath: absolute) == true {
            return "\(path) is a directory"
        }
        guard FileManager.default.isDirectory(atPath: directory) == true else {
            return "the directory \(directory) does not exist"
        }
        guard FileManager.default.isWritableFile(atPath: directory) else { return "the directory \(directory) is not writable" }
        // As `o` does: an export never replaces a file (one the user meant to keep is easily named).
        if FileManager.default.fileExists(atPath: absolute) { return "\(path) exists (nothing overwritten): give another name" }
        return nil
    }

    static func export(_ request: ExportRequest, cache: RecordCache) -> BrowserEvent {
        if let refused = refusal(request.path) { return .exported(request, .failure(BrowserFailure(message: refused))) }
        let absolute = EffectRunner.absolutePath(request.path)
        let directory = Paths.parent(absolute)
        let temporary = directory + "/.\(Paths.lastComponent(absolute)).\(ProcessInfo.processInfo.processIdentifier).part"
        do {
            guard FileManager.default.createFile(atPath: temporary, contents: nil, attributes: [.posixPermissions: 0o600]),
                let handle = FileOutput(forWritingAtPath: temporary)
            else { return .exported(request, .failure(BrowserFailure(message: "cannot create a file in \(directory)"))) }
            var written = 0
            do {
                defer { try? handle.close() }
                var buffer = Data()
                buffer.reserveCapacity(1 << 20)
                func flush(_ force: Bool) throws {
                    guard force || buffer.count >= 1 << 20 else { return }
                    try handle.write(contentsOf: buffer)
                    buffer.removeAll(keepingCapacity: true)
                }
                let names = request.names.map(Set.init)
                switch request.format {
                case .jsonLines:
                    try cache.forEachRecordJSON(request.list, filter: request.filter, sort: request.sort, names: names) { data in
                        // The cached dictionary is compact JSON already: one record per line.
                        buffer.append(data.filter { $0 != 0x0A })
                        buffer.append(0x0A)
                        written += 1
                        try flush(false)
                    }
                case .csv:
                    // The columns: every field any exported record has (a first pass), in name order.
                    var fields: Set<String> = []
                    try cache.forEachRecordJSON(request.list, filter: request.filter, sort: request.sort, names: names) { data in
                        if case .object(let record) = try JSON(parsing: Array(data)), case .object(let f)? = record["fields"] {
                            for (name, _) in f.pairs { fields.insert(name) }
                        }
                    }
                    let columns = fields.sorted()
                    buffer.append(contentsOf: CSV.line(["recordName", "recordType", "recordChangeTag"] + columns).utf8)
                    try cache.forEachRecordJSON(request.list, filter: request.filter, sort: request.sort, names: names) { data in
                        guard case .object(let record) = try JSON(parsing: Array(data)) else { return }
                        var fieldValues: JSONObject = [:]
                        if case .object(let f)? = record["fields"] { fieldValues = f }
                        let cells = [CSV.text(record["recordName"]), CSV.text(record["recordType"]), CSV.text(record["recordChangeTag"])]
                            + columns.map { name -> String in
                                guard case .object(let field)? = fieldValues[name] else { return "" }
                                return CSV.text(field["value"])
                            }
                        buffer.append(contentsOf: CSV.line(cells).utf8)
                        written += 1
                        try flush(false)
                    }
                }
                try flush(true)
                try handle.synchronize()
            }
            // Nothing to export writes no file (an empty file would read as an export that worked).
            guard written > 0 else {
                try? FileManager.default.removeItem(atPath: temporary)
                let what = request.names != nil ? "none of the marked records is in the cache" : request.filter != nil ? "no record matches the filter" : "the list has no records"
                return .exported(request, .failure(BrowserFailure(message: "\(what): nothing written")))
            }
            // Whole or not at all, and never over a file: the complete file is linked to its name, which
            // fails if a file took that name meanwhile (rename would replace it).
            if link(temporary, absolute) != 0 {
                let reason = errno == EEXIST ? "\(request.path) exists (nothing overwritten): give another name" : "cannot write \(request.path): \(String(cString: strerror(errno)))"
                try? FileManager.default.removeItem(atPath: temporary)
                return .exported(request, .failure(BrowserFailure(message: reason)))
            }
            try? FileManager.default.removeItem(atPath: temporary)
            return .exported(request, .success(ExportResult(records: written, path: absolute)))
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            return .exported(request, .failure(BrowserFailure(message: "cannot write \(request.path): \(error)")))
        }
    }
}

/// RFC 4180 CSV: a cell with a comma, quote or line break is quoted, its quotes doubled; lines end
/// in CRLF.
enum CSV {
    static func line(_ cells: [String]) -> String {
        cells.map { cell in
            cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) ? "\"" + cell.replacing("\"", with: "\"\"") + "\"" : cell
        }.joined(separator: ",") + "\r\n"
    }

    /// A JSON value as a cell: strings as they are, numbers as numbers, anything else (lists,
    /// references, locations, assets) as its compact JSON.
    static func text(_ value: JSON?) -> String {
        switch value {
        case nil, .null?: return ""
        case .string(let s)?: return s
        case let value?: return value.text
        }
    }
}

extension RecordCache {
    /// `deleteImpact` of many records at once (a bulk `d`): the zone's cached records are read once
    /// and indexed by the records they refer to, instead of one scan of the zone per deleted record.
    public func deleteImpacts(of keys: [RecordKey], limit: Int = 10_000) throws -> [RecordKey: DeleteImpact] {
        var result: [RecordKey: DeleteImpact] = [:]
        for (zone, zoneKeys) in Dictionary(grouping: keys, by: \.zone) {
            let prefix = zone.description + "\u{1F}"
            // Target name → the references to it (each referring record read once).
            var incoming: [String: [Referrer]] = [:]
            try pool.read { db in
                let rows = try Row.fetchCursor(
                    db, sql: "SELECT name, type, json FROM record WHERE substr(key, 1, ?) = ? AND deleted = 0 AND json IS NOT NULL",
                    arguments: [prefix.unicodeScalars.count, prefix])
                try Self.forEachReference(rows, in: zone) { incoming[$0.target, default: []].append($0) }
            }
            for key in zoneKeys {
                var referrers: [Referrer] = []
                var seen: Set<String> = [key.recordName]
                var level = [key.recordName]
                var truncated: Int?
                while !level.isEmpty && truncated == nil {
                    var next: [String] = []
                    for target in level {
                        for referrer in incoming[target] ?? [] {
                            referrers.append(referrer)
                            guard referrer.action == .deleteSelf, seen.insert(referrer.key.recordName).inserted else { continue }
                            if seen.count > limit { truncated = limit } else { next.append(referrer.key.recordName) }
                        }
                    }
                    level = next
                }
                result[key] = DeleteImpact(referrers: referrers, truncatedAt: truncated)
            }
        }
        return result
    }
}
