import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB
import RecordBrowser

/// The browser's local cache: records fetched from a zone, with the zone's sync token, in SQLite under
/// the XDG cache directory (one file per account: server, container, environment and signed-in
/// identity; lists keyed by database, zone owner and zone). Reopening a zone shows these records at
/// once and fetches only the changes since the token. The file is readable by its owner only.
public final class RecordCache: Sendable {
    let pool: DatabasePool
    public let path: String
    /// A cache file of the earlier layout (one per container and environment, whatever the server)
    /// that was removed when this one opened: its records could belong to any server.
    public let droppedLegacyFile: String?

    public static func defaultDirectory() -> String {
        Paths.join(XDG.cacheHome(), "ckbrowse")
    }

    /// Opens (or creates) the cache for an account.
    public init(directory: String = RecordCache.defaultDirectory(), account: Account) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA cache_size = -2048")  // 2 MB: memory stays flat however large the zone
        }
        (pool, path) = try OwnerOnlyDatabase.open(directory: directory, prefix: "", account: account, configuration: configuration)
        let legacy = OwnerOnlyDatabase.legacyPath(directory: directory, prefix: "", container: account.container, environment: account.environment)
        if FileManager.default.fileExists(atPath: legacy) {
            OwnerOnlyDatabase.remove(legacy)
            droppedLegacyFile = legacy
        } else {
            droppedLegacyFile = nil
        }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE list (key TEXT PRIMARY KEY, sync_token TEXT, marker TEXT, more INTEGER NOT NULL DEFAULT 1,
                                   next_position INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE record (
                  key TEXT NOT NULL, name TEXT NOT NULL, position INTEGER NOT NULL,
                  type TEXT, modified INTEGER, modified_by TEXT, tag TEXT, deleted INTEGER NOT NULL DEFAULT 0,
                  json BLOB,
                  PRIMARY KEY (key, name));
                CREATE INDEX record_position ON record (key, position);
                """)
        }
        migrator.registerMigration("v2-counts") { db in
            // The row count is kept, not counted: COUNT(*) per page made paging a large zone quadratic.
            try db.execute(sql: "ALTER TABLE list ADD COLUMN count INTEGER NOT NULL DEFAULT 0")
            try db.execute(sql: "UPDATE list SET count = (SELECT COUNT(*) FROM record WHERE record.key = list.key)")
        }
        migrator.registerMigration("v3-search") { db in
            // The lower-cased text of every field value, for `/` (rows of earlier versions match by name
            // and type until their record is fetched again).
            try db.execute(sql: "ALTER TABLE record ADD COLUMN search TEXT")
        }
        migrator.registerMigration("v4-columns") { db in
            // `:columns` remembered per record type (the file is the account's: server, container, …).
            try db.execute(sql: "CREATE TABLE list_columns (record_type TEXT PRIMARY KEY, names TEXT NOT NULL)")
        }
        migrator.registerMigration("v5-deleted-count") { db in
            // Tombstones among the rows, kept like the count: a first load shows them (and says how
            // many), a reopen drops them, so both can say what they count.
            try db.execute(sql: "ALTER TABLE list ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0")
            try db.execute(sql: "UPDATE list SET deleted = (SELECT COUNT(*) FROM record WHERE record.key = list.key AND record.deleted = 1)")
        }
        migrator.registerMigration("v6-command-history") { db in
            // The `:` lines run on this account (the file is the account's), for ↑/↓.
            try db.execute(sql: "CREATE TABLE command_history (id INTEGER PRIMARY KEY AUTOINCREMENT, line TEXT NOT NULL UNIQUE)")
        }
        try migrator.migrate(pool)
    }

    /// The cached records (of any list of the zone) that refer to `key`, and, following DELETE_SELF,
    /// to the records its deletion deletes: at most `limit` records followed.
    public func deleteImpact(of key: RecordKey, limit: Int = 10_000) throws -> DeleteImpact {
        let prefix = key.zone.description + "\u{1F}"
        return try pool.read { db in
            var referrers: [Referrer] = []
            var seen: Set<String> = [key.recordName]
            var level = [key.recordName]
            var truncated: Int?
            // Level by level (the records one step further down the cascade), 200 names a query: a
            // candidate holds one of the names as JSON has them (quoted), then its fields are checked.
            while !level.isEmpty && truncated == nil {
                var next: [String] = []
                for start in stride(from: 0, to: level.count, by: 200) {
                    let targets = Set(level[start..<min(level.count, start + 200)])
                    let needles = targets.sorted().map { JSON.string($0).text }
                    let test = Array(repeating: "instr(json, ?) > 0", count: needles.count).joined(separator: " OR ")
                    var arguments: [(any DatabaseValueConvertible)?] = [prefix.unicodeScalars.count, prefix]  // SQLite counts code points
                    for needle in needles { arguments.append(needle) }
                    let rows = try Row.fetchCursor(
                        db, sql: "SELECT name, type, json FROM record WHERE substr(key, 1, ?) = ? AND deleted = 0 AND json IS NOT NULL AND (\(test))",
                        arguments: StatementArguments(arguments))
                    try Self.forEachReference(rows, in: key.zone) { referrer in
                        guard targets.contains(referrer.target) else { return }
                        referrers.append(referrer)
                        guard referrer.action == .deleteSelf, seen.insert(referrer.key.recordName).inserted else { return }
                        if seen.count > limit { truncated = limit } else { next.append(referrer.key.recordName) }
                    }
                }
                level = next
            }
            return DeleteImpact(referrers: referrers, truncatedAt: truncated)
        }
    }

    /// The cached records of `key`'s zone (any of its lists) that refer to it, with how many cached
    /// records were read and whether the zone's change feed was read to its end (the whole zone cached).
    public func referencedBy(_ key: RecordKey) throws -> ReferencedBy {
        let prefix = key.zone.description + "\u{1F}"
        return try pool.read { db in
            var referrers: [Referrer] = []
            // A candidate holds the name as JSON has it (quoted); its fields are then checked.
            let rows = try Row.fetchCursor(
                db, sql: "SELECT name, type, json FROM record WHERE substr(key, 1, ?) = ? AND deleted = 0 AND json IS NOT NULL AND instr(json, ?) > 0",
                arguments: [prefix.unicodeScalars.count, prefix, JSON.string(key.recordName).text])
            try Self.forEachReference(rows, in: key.zone) { if $0.target == key.recordName { referrers.append($0) } }
            let looked = try Int.fetchOne(
                db, sql: "SELECT COUNT(DISTINCT name) FROM record WHERE substr(key, 1, ?) = ? AND deleted = 0",
                arguments: [prefix.unicodeScalars.count, prefix]) ?? 0
            let more = try Int.fetchOne(db, sql: "SELECT more FROM list WHERE key = ? AND sync_token IS NOT NULL", arguments: [ListKey(zone: key.zone).description])
            return ReferencedBy(referrers: referrers, looked: looked, wholeZone: more == 0)
        }
    }

    /// Every reference the records of `rows` (name, type, json of a zone's cached records) hold to a
    /// record of `zone`, as the referrer it makes; a record in several lists of the zone is read once.
    static func forEachReference(_ rows: RowCursor, in zone: ZoneKey, _ body: (Referrer) -> Void) throws {
        var read: Set<String> = []
        while let row = try rows.next() {
            let name: String = row["name"]
            guard read.insert(name).inserted, let data: Data = row["json"], let record = try? CloudKitWeb.Record.decode(from: data) else { continue }
            for (field, value) in record.fields.sorted(by: { $0.key < $1.key }) {
                let references: [Reference]
                switch value {
                case .reference(let r): references = [r]
                case .referenceList(let rs): references = rs
                default: continue
                }
                for r in references where r.zoneID == nil || r.zoneID?.zoneName == zone.zoneName {
                    body(Referrer(key: RecordKey(zone: zone, recordName: name), recordType: record.recordType, field: field, action: r.action, target: r.recordName))
                }
            }
        }
    }

    /// The account's `:` lines, oldest first (at most `limit`, the newest).
    public func commandHistory(limit: Int = 200) throws -> [String] {
        try pool.read { db in
            try String.fetchAll(db, sql: "SELECT line FROM (SELECT id, line FROM command_history ORDER BY id DESC LIMIT ?) ORDER BY id", arguments: [limit])
        }
    }

    /// Adds a `:` line as the newest (an earlier copy goes), keeping the newest `limit`.
    public func rememberCommand(_ line: String, limit: Int = 200) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM command_history WHERE line = ?", arguments: [line])
            try db.execute(sql: "INSERT INTO command_history (line) VALUES (?)", arguments: [line])
            try db.execute(sql: "DELETE FROM command_history WHERE id NOT IN (SELECT id FROM command_history ORDER BY id DESC LIMIT ?)", arguments: [limit])
        }
    }

    /// What `/` matches in a record besides its name and type: its field values as the browser shows
    /// them, lower-cased.
    static func searchText(_ record: CloudKitWeb.Record) -> String {
        var parts: [String] = []
        for (_, value) in record.fields {
            if value.isList { parts += value.listElements.map(Format.scalar) } else { parts.append(Format.scalar(value)) }
        }
        return parts.joined(separator: "\u{1F}").lowercased()
    }

    /// The saved position of a list: its sync token (change feeds) and whether more is coming.
    public struct ListState: Sendable, Hashable {
        public var syncToken: String?
        public var continuationMarker: String?
        public var moreComing: Bool
        public var count: Int
        /// Of `count`, the rows that are tombstones (records deleted since an earlier page).
        public var deleted: Int = 0
    }

    /// Opens a list: tombstones from an earlier session are dropped (deleted records leave the cache).
    /// Positions are kept dense (0 ..< count), so an unfiltered window is a range lookup, never an OFFSET scan.
    public func open(_ key: ListKey) throws -> ListState {
        try pool.write { db in
            let k = key.description
            try db.execute(sql: "DELETE FROM record WHERE key = ? AND deleted = 1", arguments: [k])
            if db.changesCount > 0 {
                // Renumber the survivors in order: O(n log n), only when tombstones were dropped.
                try db.execute(sql: "DROP TABLE IF EXISTS temp.renumber")
                try db.execute(sql: """
                    CREATE TEMP TABLE renumber AS
                      SELECT name, ROW_NUMBER() OVER (ORDER BY position) - 1 AS p FROM record WHERE key = ?
                    """, arguments: [k])
                try db.execute(sql: "CREATE INDEX temp.renumber_name ON renumber (name)")
                try db.execute(sql: "UPDATE record SET position = (SELECT p FROM temp.renumber WHERE renumber.name = record.name) WHERE key = ?", arguments: [k])
                let count = try Int64.fetchOne(db, sql: "SELECT COUNT(*) FROM temp.renumber") ?? 0
                try db.execute(sql: "DROP TABLE temp.renumber")
                try db.execute(sql: "UPDATE list SET count = ?, next_position = ?, deleted = 0 WHERE key = ?", arguments: [count, count, k])
            }
            return try Self.state(db, key)
        }
    }

    static func state(_ db: Database, _ key: ListKey) throws -> ListState {
        let row = try Row.fetchOne(db, sql: "SELECT * FROM list WHERE key = ?", arguments: [key.description])
        return ListState(
            syncToken: row?["sync_token"], continuationMarker: row?["marker"], moreComing: (row?["more"] as Int64? ?? 1) != 0,
            count: Int(row?["count"] as Int64? ?? 0), deleted: Int(row?["deleted"] as Int64? ?? 0))
    }

    /// Forgets a list (a token the server refused, or a new query).
    public func reset(_ key: ListKey) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM record WHERE key = ?", arguments: [key.description])
            try db.execute(sql: "DELETE FROM list WHERE key = ?", arguments: [key.description])
        }
    }

    /// Applies one page in one transaction: changed records replace their row in place (keeping their
    /// position), new ones are appended, deletions become tombstones; then the token is saved. A crash
    /// between pages leaves the previous token with the previous rows.
    @discardableResult
    public func apply(_ key: ListKey, records: [RecordResult], syncToken: String?, continuationMarker: String?, moreComing: Bool) throws -> ListState {
        try pool.write { db in
            let next = try Self.upsert(db, key, records)
            // Positions are dense, so the count is the next position.
            try db.execute(
                sql: "UPDATE list SET sync_token = COALESCE(?, sync_token), marker = ?, more = ?, next_position = ?, count = ? WHERE key = ?",
                arguments: [syncToken, continuationMarker, moreComing ? 1 : 0, next, next, key.description])
            return try Self.state(db, key)
        }
    }

    /// Writes records outside paging (saved by a commit, or the server's versions after a conflict):
    /// rows are replaced in place or appended; the list's token, marker and more-coming are kept.
    @discardableResult
    public func store(_ key: ListKey, records: [RecordResult]) throws -> ListState {
        try pool.write { db in
            let next = try Self.upsert(db, key, records)
            try db.execute(sql: "UPDATE list SET next_position = ?, count = ? WHERE key = ?", arguments: [next, next, key.description])
            return try Self.state(db, key)
        }
    }

    /// Changed records replace their row in place (keeping their position), new ones are appended,
    /// deletions become tombstones. Returns the next free position.
    static func upsert(_ db: Database, _ key: ListKey, _ records: [RecordResult]) throws -> Int64 {
        let k = key.description
        try db.execute(sql: "INSERT OR IGNORE INTO list (key) VALUES (?)", arguments: [k])
        var next = try Int64.fetchOne(db, sql: "SELECT next_position FROM list WHERE key = ?", arguments: [k]) ?? 0
        let exists = try db.makeStatement(sql: "SELECT deleted FROM record WHERE key = ? AND name = ?")
        var tombstones: Int64 = 0
        let upsert = try db.makeStatement(sql: """
            INSERT INTO record (key, name, position, type, modified, modified_by, tag, deleted, json, search) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (key, name) DO UPDATE SET type = COALESCE(excluded.type, record.type), modified = excluded.modified,
              modified_by = excluded.modified_by, tag = excluded.tag, deleted = excluded.deleted, json = excluded.json,
              search = excluded.search
            """)
        for result in records {
            guard let name = result.recordName, result.error == nil else { continue }
            // A record already listed keeps its position (and the count); a new one is appended.
            let previous = try Int64.fetchOne(exists, arguments: [k, name])
            let isNew = previous == nil
            let position = isNew ? next : 0
            let wasDeleted = previous == 1
            switch result {
            case .record(let record):
                if wasDeleted { tombstones -= 1 }
                try upsert.execute(arguments: [k, record.recordName, position, record.recordType, record.modified?.timestamp,
                                               record.modified?.userRecordName, record.recordChangeTag, 0, Data(record.json.bytes), searchText(record)])
            case .deleted:
                if !wasDeleted { tombstones += 1 }
                try upsert.execute(arguments: [k, name, position, nil, nil, nil, nil, 1, nil, nil])
            case .failure:
                continue
            }
            if isNew { next += 1 }
        }
        if tombstones != 0 { try db.execute(sql: "UPDATE list SET deleted = deleted + ? WHERE key = ?", arguments: [tombstones, k]) }
        return next
    }

    /// Rows `start..<start+count` in list order (or ordered by `sort`), optionally only those whose
    /// name, type or a field value contains `filter` (case-insensitive), each with the values of
    /// `fields` (names CloudKit allows; others are left blank).
    public func window(
        _ key: ListKey, filter: String?, start: Int, count: Int, fields: [String] = [], sort: ListSort? = nil, labels: [String: String] = [:]
    ) throws -> (rows: [RecordSummary], matching: Int) {
        let fields = fields.filter(FieldNames.isValid)
        var extracted = fields.flatMap { name in
            ["json_extract(CAST(json AS TEXT), '$.fields.\(name).value')", "json_extract(CAST(json AS TEXT), '$.fields.\(name).type')"]
        }
        // One column of each type's own field (type names are quoted as SQL strings).
        let labelCases = labels.filter { FieldNames.isValid($0.value) }.sorted { $0.key < $1.key }
        if fields.isEmpty, !labelCases.isEmpty {
            func pick(_ part: String) -> String {
                "CASE type " + labelCases.map { "WHEN '\($0.key.replacing("'", with: "''"))' THEN json_extract(CAST(json AS TEXT), '$.fields.\($0.value).\(part)')" }
                    .joined(separator: " ") + " END"
            }
            extracted = [pick("value"), pick("type")]
        }
        let columnCount = extracted.count / 2
        let select = (["name", "type", "modified", "modified_by", "tag", "deleted"] + extracted).joined(separator: ", ")
        return try pool.read { db in
            func summaries(_ rows: [Row]) -> [RecordSummary] {
                rows.map { row in
                    var summary = Self.summary(row)
                    summary.columns = (0..<columnCount).map { Self.cellText(row[6 + 2 * $0], type: row[7 + 2 * $0]) }
                    return summary
                }
            }
            if filter?.isEmpty ?? true, sort == nil {
                // Unfiltered: positions are dense, so the window is a range of the index.
                let total = Int(try Int64.fetchOne(db, sql: "SELECT count FROM list WHERE key = ?", arguments: [key.description]) ?? 0)
                let rows = try Row.fetchAll(
                    db, sql: "SELECT \(select) FROM record WHERE key = ? AND position >= ? AND position < ? ORDER BY position",
                    arguments: [key.description, start, start + count])
                return (summaries(rows), total)
            }
            var condition = "key = ?"
            var arguments: [any DatabaseValueConvertible] = [key.description]
            if let filter, !filter.isEmpty {
                condition += " AND (instr(lower(name), ?) > 0 OR instr(lower(COALESCE(type, '')), ?) > 0 OR instr(COALESCE(search, ''), ?) > 0)"
                arguments += [filter.lowercased(), filter.lowercased(), filter.lowercased()]
            }
            var order = "position"
            if let sort, FieldNames.isValid(sort.field) {
                // Records without the field come last either way; ties keep the fetched order.
                let value = "json_extract(CAST(json AS TEXT), '$.fields.\(sort.field).value')"
                order = "(\(value) IS NULL), \(value) \(sort.descending ? "DESC" : "ASC"), position"
            }
            let matching = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM record WHERE \(condition)", arguments: StatementArguments(arguments)) ?? 0
            let rows = try Row.fetchAll(
                db, sql: "SELECT \(select) FROM record WHERE \(condition) ORDER BY \(order) LIMIT ? OFFSET ?",
                arguments: StatementArguments(arguments + [count, start]))
            return (summaries(rows), matching)
        }
    }

    /// A field's value in a list column: text as it is, numbers as numbers, timestamps as dates,
    /// anything else (lists, references, locations) as its JSON, on one line.
    static func cellText(_ value: DatabaseValue, type: String?) -> String {
        switch value.storage {
        case .null: return ""
        case .int64(let i): return type == "TIMESTAMP" ? Format.short(i) : String(i)
        case .double(let d): return d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .string(let s): return s.replacing("\n", with: "⏎")
        case .blob(let data): return String(decoding: data, as: UTF8.self)
        }
    }

    /// The columns remembered for a record type, if any.
    public func columns(for recordType: String) throws -> [String]? {
        try pool.read { db in
            try String.fetchOne(db, sql: "SELECT names FROM list_columns WHERE record_type = ?", arguments: [recordType])
                .map { $0.split(separator: ",").map(String.init) }
        }
    }

    /// Remembers the columns of a record type (empty: forget them).
    public func setColumns(_ names: [String], for recordType: String) throws {
        try pool.write { db in
            if names.isEmpty {
                try db.execute(sql: "DELETE FROM list_columns WHERE record_type = ?", arguments: [recordType])
            } else {
                try db.execute(sql: "INSERT OR REPLACE INTO list_columns (record_type, names) VALUES (?, ?)", arguments: [recordType, names.joined(separator: ",")])
            }
        }
    }

    /// The stored JSON of the named records of a list (those it holds; tombstones left out), in
    /// chunks of 500 names (SQLite's limit on bound parameters), each chunk in name order.
    static func forEachJSON(_ db: Database, _ key: ListKey, names: [String], _ body: (Data) throws -> Void) throws {
        for start in stride(from: 0, to: names.count, by: 500) {
            let chunk = Array(names[start..<min(names.count, start + 500)])
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let rows = try Data.fetchAll(
                db, sql: "SELECT json FROM record WHERE key = ? AND deleted = 0 AND json IS NOT NULL AND name IN (\(marks)) ORDER BY name",
                arguments: StatementArguments([key.description] + chunk))
            for data in rows { try body(data) }
        }
    }

    /// The `fields` dictionaries of the named records of a list (those it holds, in no order).
    public func fields(_ key: ListKey, names: [String]) throws -> [JSONObject] {
        guard !names.isEmpty else { return [] }
        return try pool.read { db in
            var result: [JSONObject] = []
            try Self.forEachJSON(db, key, names: names) { data in
                if case .object(let record) = try JSON(parsing: Array(data)), case .object(let fields)? = record["fields"] { result.append(fields) }
            }
            return result
        }
    }

    static func summary(_ row: Row) -> RecordSummary {
        RecordSummary(recordName: row["name"], recordType: row["type"], modified: row["modified"], modifiedBy: row["modified_by"],
                      changeTag: row["tag"], deleted: (row["deleted"] as Int64) != 0)
    }

    /// The cached record dictionary of one record.
    public func record(_ key: ListKey, name: String) throws -> CloudKitWeb.Record? {
        try pool.read { db in
            guard let data = try Data.fetchOne(db, sql: "SELECT json FROM record WHERE key = ? AND name = ?", arguments: [key.description, name]) else { return nil }
            return try CloudKitWeb.Record.decode(from: data)
        }
    }

    /// The schema the cached records show (record types, their fields and the fields' types; no
    /// indexes or grants, which records do not carry), and how many records of each type are cached.
    /// Reads at most `limit` records, most recent lists first.
    public func inferredSchema(limit: Int = 50_000) throws -> (CloudKitSchema, counts: [String: Int]) {
        try pool.read { db in
            var types: [String: [String: SchemaFieldType]] = [:]
            let rows = try Row.fetchCursor(
                db, sql: "SELECT type, json FROM record WHERE deleted = 0 AND json IS NOT NULL AND type IS NOT NULL AND type NOT LIKE '%.%' ORDER BY rowid DESC LIMIT ?",
                arguments: [limit])
            while let row = try rows.next() {
                let type: String = row[0]
                guard let data: Data = row[1], let record = try? CloudKitWeb.Record.decode(from: data) else { continue }
                var fields = types[type] ?? [:]
                for (name, value) in record.fields where fields[name] == nil {
                    if let fieldType = SchemaFieldType(wireType: value.type.rawValue) { fields[name] = fieldType }
                }
                types[type] = fields
            }
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT type, COUNT(DISTINCT name) FROM record WHERE deleted = 0 AND type IS NOT NULL GROUP BY type") {
                counts[row[0]] = row[1]
            }
            let schema = CloudKitSchema(recordTypes: types.keys.sorted().map { name in
                RecordTypeSchema(name: name, fields: types[name]!.sorted { $0.key < $1.key }.map { FieldSchema(name: $0.key, type: $0.value) })
            })
            return (schema, counts)
        }
    }

    /// Zones of one database (of this file's account) that have a saved sync token.
    public func cachedZones(_ scope: Scope) throws -> Set<ZoneKey> {
        try pool.read { db in
            let prefix = scope.database.rawValue + "\u{1F}"
            let keys = try String.fetchAll(db, sql: "SELECT key FROM list WHERE sync_token IS NOT NULL AND substr(key, 1, ?) = ?", arguments: [prefix.utf8.count, prefix])
            return Set(keys.compactMap { key in
                // database, owner, zone, query (empty for a change feed)
                let parts = key.components(separatedBy: "\u{1F}")
                return parts.count == 4 && parts[3].isEmpty ? ZoneKey(scope: scope, owner: parts[1], zoneName: parts[2]) : nil
            })
        }
    }
}
