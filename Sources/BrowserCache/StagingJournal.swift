import CloudKitWeb
import Foundation
import GRDB
import RecordBrowser

/// Staged operations on disk (XDG state dir, owner-only), written on every change, so a crash, a
/// `kill -9` or a dropped SSH connection loses nothing staged. A commit records the requests it is
/// about to send before sending them, so the next start can find out whether they were applied.
public final class StagingJournal: Sendable {
    let pool: DatabasePool
    public let path: String

    public static func defaultDirectory() -> String {
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() as NSString).appendingPathComponent(".local/state")
        return (base as NSString).appendingPathComponent("ckbrowse")
    }

    public init(directory: String = StagingJournal.defaultDirectory(), container: String, environment: CloudKitEnvironment) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        (pool, path) = try OwnerOnlyDatabase.open(directory: directory, prefix: "journal-", container: container, environment: environment, configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE staged (position INTEGER PRIMARY KEY, operation TEXT NOT NULL);
                CREATE TABLE inflight (position INTEGER PRIMARY KEY, database TEXT NOT NULL, body TEXT NOT NULL, sent_at INTEGER NOT NULL);
                """)
        }
        try migrator.migrate(pool)
    }

    /// Replaces the journal's staged operations with `batch` (one transaction).
    public func save(_ batch: StagedBatch) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM staged")
            for (i, operation) in batch.operations.enumerated() {
                try db.execute(sql: "INSERT INTO staged (position, operation) VALUES (?, ?)", arguments: [i, Self.encode(operation).text])
            }
        }
    }

    public func load() throws -> StagedBatch {
        let texts = try pool.read { db in try String.fetchAll(db, sql: "SELECT operation FROM staged ORDER BY position") }
        return StagedBatch(operations: try texts.map { try Self.decode(JSON(parsing: $0)) })
    }

    /// Records the requests of a commit before they are sent.
    public func beginCommit(_ plan: CommitPlan, at milliseconds: Int64) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM inflight")
            for (i, request) in plan.requests.enumerated() {
                try db.execute(sql: "INSERT INTO inflight (position, database, body, sent_at) VALUES (?, ?, ?, ?)",
                               arguments: [i, request.database.rawValue, request.body.json.text, milliseconds])
            }
        }
    }

    /// The answer was read: the commit is no longer in flight.
    public func endCommit() throws {
        try pool.write { db in try db.execute(sql: "DELETE FROM inflight") }
    }

    /// The answer was read and applied to the staged batch: both are written in one transaction, so
    /// a crash leaves either the commit in flight with the old batch, or neither.
    public func finishCommit(remaining batch: StagedBatch) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM inflight")
            try db.execute(sql: "DELETE FROM staged")
            for (i, operation) in batch.operations.enumerated() {
                try db.execute(sql: "INSERT INTO staged (position, operation) VALUES (?, ?)", arguments: [i, Self.encode(operation).text])
            }
        }
    }

    /// Requests sent by a process that died before reading the answer.
    public func inflight() throws -> [CommitPlan.Request] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT database, body FROM inflight ORDER BY position").compactMap { row in
                guard let scope = DatabaseScope(rawValue: row["database"]) else { return nil }
                return CommitPlan.Request(database: scope, body: try ModifyRecordsRequest(json: JSON(parsing: row["body"] as String)))
            }
        }
    }

    static func encode(_ o: StagedOperation) -> JSON {
        var object = JSONObject()
        object.set("kind", o.kind.rawValue)
        if o.mode != .conditional { object.set("mode", o.mode.rawValue) }
        object.set("database", o.database.rawValue)
        object.set("zoneID", o.zoneID)
        object.set("recordName", o.recordName)
        object.set("recordType", o.recordType)
        object.set("baseTag", o.baseTag)
        object.set("baseFields", Record.encodeFields(o.baseFields))
        object.set("changes", Record.encodeFields(o.changes))
        return .object(object)
    }

    static func decode(_ json: JSON) throws -> StagedOperation {
        guard case .object(let o) = json, let kind = o["kind"]?.stringValue.flatMap(StagedOperation.Kind.init(rawValue:)),
            let scope = o["database"]?.stringValue.flatMap(DatabaseScope.init(rawValue:)), let zone = o["zoneID"],
            let name = o["recordName"]?.stringValue
        else { throw JSONDecodingError(message: "damaged journal entry") }
        var base = Record(recordName: name, recordType: o["recordType"]?.stringValue, recordChangeTag: o["baseTag"]?.stringValue)
        base.fields = try o["baseFields"].map { try Record.decodeFields($0).0 } ?? [:]
        let changes = try o["changes"].map { try Record.decodeFields($0).0 } ?? [:]
        var operation = StagedOperation(kind: kind, database: scope, zoneID: try ZoneID(json: zone), base: base, changes: changes)
        operation.mode = o["mode"]?.stringValue.flatMap(StagedOperation.Mode.init(rawValue:)) ?? .conditional
        return operation
    }
}
