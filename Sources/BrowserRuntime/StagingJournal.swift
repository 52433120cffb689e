import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB
import RecordBrowser

/// Staged operations on disk (XDG state dir, owner-only), written on every change, so a crash, a
/// `kill -9` or a dropped SSH connection loses nothing staged. A commit records the requests it is
/// about to send before sending them, so the next start can find out whether they were applied.
///
/// One file per account (server, container, environment, signed-in identity): staged edits are never
/// restored under another server or user. Each entry also names its database, zone owner and zone.
public final class StagingJournal: Sendable {
    let pool: DatabasePool
    public let path: String
    public let account: Account

    public static func defaultDirectory() -> String {
        Paths.join(XDG.stateHome(), "ckbrowse")
    }

    public init(directory: String = StagingJournal.defaultDirectory(), account: Account) throws {
        self.account = account
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        (pool, path) = try OwnerOnlyDatabase.open(directory: directory, prefix: "journal-", account: account, configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE staged (position INTEGER PRIMARY KEY, operation TEXT NOT NULL);
                CREATE TABLE inflight (position INTEGER PRIMARY KEY, database TEXT NOT NULL, body TEXT NOT NULL, sent_at INTEGER NOT NULL);
                """)
        }
        migrator.registerMigration("v2-owner") { db in
            try db.execute(sql: "ALTER TABLE inflight ADD COLUMN owner TEXT")
        }
        try migrator.migrate(pool)
    }

    /// What a journal of the earlier layout (one file per container and environment, whatever the
    /// server or user) holds: it is never restored silently; the user decides.
    public static func legacy(directory: String = StagingJournal.defaultDirectory(), account: Account) -> LegacyJournal? {
        let path = OwnerOnlyDatabase.legacyPath(directory: directory, prefix: "journal-", container: account.container, environment: account.environment)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            let queue = try DatabaseQueue(path: path, configuration: { var c = Configuration(); c.readonly = true; return c }())
            return try queue.read { db in
                let texts = try String.fetchAll(db, sql: "SELECT operation FROM staged ORDER BY position")
                let batch = try batch(texts, account: account)
                let inflight = try inflight(db, account: account, hasOwner: false)
                return LegacyJournal(path: path, batch: batch, inflight: inflight)
            }
        } catch {
            return LegacyJournal(path: path, batch: StagedBatch(), inflight: [], unreadable: String(describing: error))
        }
    }

    /// Removes a journal of the earlier layout (after the user kept its entries here, or discarded them).
    public static func removeLegacy(path: String) {
        OwnerOnlyDatabase.remove(path)
    }

    /// Replaces the journal's staged operations with `batch` (one transaction).
    public func save(_ batch: StagedBatch) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM staged")
            try Self.write(batch, db)
        }
    }

    public func load() throws -> StagedBatch {
        let texts = try pool.read { db in try String.fetchAll(db, sql: "SELECT operation FROM staged ORDER BY position") }
        return try Self.batch(texts, account: account)
    }

    /// Records the requests of a commit before they are sent.
    public func beginCommit(_ plan: CommitPlan, at milliseconds: Int64) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM inflight")
            for (i, request) in plan.requests.enumerated() {
                try db.execute(sql: "INSERT INTO inflight (position, database, owner, body, sent_at) VALUES (?, ?, ?, ?, ?)",
                               arguments: [i, request.database.rawValue, request.zone.owner, request.body.json.text, milliseconds])
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
            try Self.write(batch, db)
        }
    }

    /// Requests sent by a process that died before reading the answer.
    public func inflight() throws -> [CommitPlan.Request] {
        try pool.read { db in try Self.inflight(db, account: account, hasOwner: true) }
    }

    static func inflight(_ db: Database, account: Account, hasOwner: Bool) throws -> [CommitPlan.Request] {
        try Row.fetchAll(db, sql: "SELECT * FROM inflight ORDER BY position").compactMap { row in
            guard let database = DatabaseScope(rawValue: row["database"]) else { return nil }
            let body = try ModifyRecordsRequest(json: JSON(parsing: row["body"] as String))
            let zoneID = body.zoneID ?? .default
            let scope = Scope(account: account, database: database)
            let zone = hasOwner ? ZoneKey(scope: scope, owner: row["owner"] ?? "", zoneName: zoneID.zoneName) : ZoneKey(scope: scope, zoneID: zoneID)
            return CommitPlan.Request(zone: zone, body: body)
        }
    }

    /// The batch's record operations, then its zone operations, one row each.
    static func write(_ batch: StagedBatch, _ db: Database) throws {
        var texts = batch.operations.map { encode($0).text }
        for z in batch.zoneOperations {
            var object = JSONObject()
            object.set("kind", z.kind == .create ? "createZone" : "deleteZone")
            object.set("database", z.zone.database.rawValue)
            object.set("owner", z.zone.owner)
            object.set("zoneName", z.zone.zoneName)
            texts.append(JSON.object(object).text)
        }
        for op in batch.subscriptionOperations {
            var object = JSONObject()
            object.set("kind", op.kind.rawValue + "Subscription")
            object.set("database", op.database.rawValue)
            object.set("subscription", op.subscription.json)
            if let base = op.base { object.set("base", base.json) }
            if op.recreatesFired { object.set("recreatesFired", true) }
            texts.append(JSON.object(object).text)
        }
        for (i, text) in texts.enumerated() {
            try db.execute(sql: "INSERT INTO staged (position, operation) VALUES (?, ?)", arguments: [i, text])
        }
    }

    static func batch(_ texts: [String], account: Account) throws -> StagedBatch {
        var batch = StagedBatch()
        for text in texts {
            let json = try JSON(parsing: text)
            if case .object(let o) = json, let kind = o["kind"]?.stringValue, kind == "createZone" || kind == "deleteZone" {
                guard let database = o["database"]?.stringValue.flatMap(DatabaseScope.init(rawValue:)), let name = o["zoneName"]?.stringValue else {
                    throw JSONDecodingError(message: "damaged journal entry: a zone operation without its zone")
                }
                let zone = ZoneKey(scope: Scope(account: account, database: database), owner: o["owner"]?.stringValue ?? "", zoneName: name)
                batch.stage(zone: StagedZoneOperation(kind: kind == "createZone" ? .create : .delete, zone: zone))
            } else if case .object(let o) = json, let kind = o["kind"]?.stringValue, kind.hasSuffix("Subscription"),
                let opKind = StagedSubscriptionOperation.Kind(rawValue: String(kind.dropLast("Subscription".count))) {
                guard let database = o["database"]?.stringValue.flatMap(DatabaseScope.init(rawValue:)), let definition = o["subscription"] else {
                    throw JSONDecodingError(message: "damaged journal entry: a subscription operation without its database or subscription")
                }
                var op = StagedSubscriptionOperation(kind: opKind, scope: Scope(account: account, database: database),
                                                     subscription: try Subscription(json: definition), base: try o["base"].map(Subscription.init(json:)))
                op.recreatesFired = o["recreatesFired"] == .bool(true)
                batch.stage(subscription: op)
            } else {
                batch.stage(try decode(json, account: account))
            }
        }
        return batch
    }

    static func encode(_ o: StagedOperation) -> JSON {
        var object = JSONObject()
        object.set("kind", o.kind.rawValue)
        if o.mode != .conditional { object.set("mode", o.mode.rawValue) }
        object.set("database", o.database.rawValue)
        object.set("owner", o.zone.owner)
        object.set("zoneName", o.zone.zoneName)
        object.set("recordName", o.recordName)
        object.set("recordType", o.recordType)
        object.set("baseTag", o.baseTag)
        object.set("baseFields", Record.encodeFields(o.baseFields))
        object.set("changes", Record.encodeFields(o.changes))
        if let share = o.share {
            var s = JSONObject()
            s.set("forRecord", share.forRecord)
            s.set("root", share.root)
            s.set("publicPermission", share.publicPermission)
            s.set("participants", share.participants)
            s.set("basePublicPermission", share.basePublicPermission)
            s.set("baseParticipants", share.baseParticipants)
            object.set("share", JSON.object(s))
        }
        return .object(object)
    }

    /// An entry of this layout (`owner` + `zoneName`) or of the earlier one (`zoneID`), as an operation
    /// of `account`.
    static func decode(_ json: JSON, account: Account) throws -> StagedOperation {
        guard case .object(let o) = json, let kind = o["kind"]?.stringValue.flatMap(StagedOperation.Kind.init(rawValue:)),
            let database = o["database"]?.stringValue.flatMap(DatabaseScope.init(rawValue:)),
            let name = o["recordName"]?.stringValue
        else { throw JSONDecodingError(message: "damaged journal entry") }
        let scope = Scope(account: account, database: database)
        let zone: ZoneKey
        if let zoneName = o["zoneName"]?.stringValue {
            zone = ZoneKey(scope: scope, owner: o["owner"]?.stringValue ?? "", zoneName: zoneName)
        } else if let zoneID = o["zoneID"] {
            zone = ZoneKey(scope: scope, zoneID: try ZoneID(json: zoneID))
        } else {
            throw JSONDecodingError(message: "damaged journal entry: no zone")
        }
        var base = Record(recordName: name, recordType: o["recordType"]?.stringValue, recordChangeTag: o["baseTag"]?.stringValue)
        base.fields = try o["baseFields"].map { try Record.decodeFields($0).0 } ?? [:]
        let changes = try o["changes"].map { try Record.decodeFields($0).0 } ?? [:]
        var operation = StagedOperation(kind: kind, zone: zone, base: base, changes: changes)
        operation.mode = o["mode"]?.stringValue.flatMap(StagedOperation.Mode.init(rawValue:)) ?? .conditional
        if let s = o["share"] {
            var share = ShareEdit(newShareOf: try s["forRecord"].map { try RecordLink(json: $0) })
            share.root = try s["root"].map { try Record(json: $0) }
            share.publicPermission = try s["publicPermission"].map { try SharePermission(json: $0) }
            share.basePublicPermission = try s["basePublicPermission"].map { try SharePermission(json: $0) }
            share.participants = try s["participants"]?.decodeArray { try ShareParticipant(json: $0) } ?? []
            share.baseParticipants = try s["baseParticipants"]?.decodeArray { try ShareParticipant(json: $0) } ?? []
            operation.share = share
        }
        return operation
    }
}
