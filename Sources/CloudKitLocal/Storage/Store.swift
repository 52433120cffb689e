import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CSQLite
import SQLiteDB

/// The server's SQLite database: one file under the data directory, WAL mode, all migrations here.
/// Every request that writes runs in exactly one transaction (see `LocalCloudKit`).
public final class Store: Sendable {
    let pool: DatabasePool
    public let path: String
    /// A connection that never writes, kept only to read `PRAGMA data_version` (see `changeStamp()`).
    private let stampReader: ChangeStampReader

    /// `inMemory`: the directory is in RAM (`serve --in-memory`), and so are SQLite's statement and
    /// savepoint journals and temporary b-trees (`temp_store = MEMORY`). This machine's libsqlite3
    /// writes each of them to a file in /var/tmp: every records/modify (it runs in a savepoint) created,
    /// wrote, unlinked and closed one, a fifth of a test suite's loop (scripts/bench-fixture.sh). A
    /// store on disk keeps that default: a reset of a large container journals every page its deletes
    /// touch, which must not have to fit in memory.
    public init(directory: String, inMemory: Bool = false) throws {
        path = Paths.join(directory, "cloudkit.sqlite")
        // The file holds the secret that signs tokens and asset URLs, users' data and push tokens:
        // owner-only, and never a link that would send the writes elsewhere.
        try OwnerOnlyFiles.prepareDirectory(directory, holding: "cloudkit.sqlite")
        try OwnerOnlyFiles.prepareFile(path, companions: ["-wal", "-shm", "-journal"])
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // Durable on power loss too: an acknowledged write survives a restart.
            try db.execute(sql: "PRAGMA synchronous = FULL")
            if inMemory { try db.execute(sql: "PRAGMA temp_store = MEMORY") }
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try Self.migrator.migrate(pool)
        stampReader = try ChangeStampReader(path: path)
    }

    // MARK: Snapshots

    /// The name of a snapshot's manifest, next to its `cloudkit.sqlite`.
    static let snapshotManifest = "snapshot.json"

    /// Writes a consistent copy of the whole store (every container and environment) into `directory`:
    /// `cloudkit.sqlite` (this store's SQLite schema, as SERVER.md documents it) and `snapshot.json`
    /// (`{"format": "ckbrowse-snapshot", "version": 1, "created": ISO8601}`). Safe while serving: SQLite's
    /// `VACUUM INTO` copies one consistent state (writes wait for it on the writer connection).
    ///
    /// A snapshot carries data, not credentials: the secret that signs tokens and asset URLs is left
    /// out, and the credential tables are empty, unless `credentials` writes them (`serve
    /// --export-credentials`). Owner-only files, as the data directory's.
    public func exportSnapshot(to directory: String, credentials: SnapshotCredentials? = nil) throws {
        try OwnerOnlyFiles.prepareDirectory(directory, holding: "cloudkit.sqlite")
        let target = Paths.join(directory, "cloudkit.sqlite")
        let partial = target + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        try OwnerOnlyFiles.prepareFile(partial, companions: [])
        try? FileManager.default.removeItem(atPath: partial)
        try pool.writeWithoutTransaction { db in try db.execute(sql: "VACUUM INTO ?", arguments: [partial]) }
        try OwnerOnlyFiles.tighten(partial)
        let copy = try DatabaseQueue(path: partial)
        try copy.write { db in
            for table in ["api_token", "web_user", "server_key"] { try db.execute(sql: "DELETE FROM \(table)") }
            if let credentials {
                try credentials.write(db)
            } else {
                try db.execute(sql: "DELETE FROM setting WHERE key = 'token-secret'")
            }
        }
        try copy.close()
        try? FileManager.default.removeItem(atPath: target)
        try FileManager.default.moveItem(atPath: partial, toPath: target)
        let manifest = #"{"format":"ckbrowse-snapshot","version":1,"created":"\#(ISO8601.string(from: Date()))"}"# + "\n"
        let manifestPath = Paths.join(directory, Self.snapshotManifest)
        try? FileManager.default.removeItem(atPath: manifestPath)
        try OwnerOnlyFiles.prepareFile(manifestPath, companions: [])
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: manifestPath))
    }

    /// Every table, index and trigger some migration creates (name to type), and the text of every
    /// trigger one creates, as each step of the migrations leaves them: a snapshot an earlier version wrote holds
    /// what a later migration drops (`record_types`, v13), and the migrations bring it up to date once
    /// it is imported.
    static func migratedObjects() throws -> (objects: [String: String], triggers: [String: Set<String>]) {
        let fresh = try DatabaseQueue()
        var objects: [String: String] = [:], triggers: [String: Set<String>] = [:]
        for identifier in migrator.identifiers {
            try migrator.migrate(fresh, upTo: identifier)
            try fresh.read { db in
                for row in try Row.fetchAll(db, sql: "SELECT type, name, sql FROM sqlite_master") {
                    let type: String = row["type"], name: String = row["name"]
                    objects[name] = type
                    if type == "trigger", let sql: String = row["sql"] { triggers[name, default: []].insert(sql) }
                }
            }
        }
        return (objects, triggers)
    }

    /// Puts a snapshot written by `exportSnapshot` into an empty data directory, before a store is
    /// opened on it (migrations then bring an older snapshot up to date).
    ///
    /// A snapshot from elsewhere is data, not code: one holding a trigger, a view, a virtual table or
    /// any table or index this server does not create is refused, as is one whose files are links.
    /// Credentials and the token secret it may carry are dropped, unless `credentials` is true: then
    /// they are returned, for the caller to accept as if the flags had named them.
    @discardableResult
    public static func importSnapshot(from snapshot: String, into directory: String, credentials: Bool = false) throws -> SnapshotCredentials? {
        let manifestPath = Paths.join(snapshot, snapshotManifest)
        guard let manifest = try? String(contentsOfFile: manifestPath, encoding: .utf8), manifest.contains(#""format":"ckbrowse-snapshot""#) else {
            throw SnapshotError(message: "\(snapshot) is not a ckbrowse snapshot (no \(snapshotManifest) naming the format)")
        }
        let source = Paths.join(snapshot, "cloudkit.sqlite")
        guard FileManager.default.fileExists(atPath: source) else { throw SnapshotError(message: "\(snapshot) has no cloudkit.sqlite") }
        for name in ["cloudkit.sqlite", "cloudkit.sqlite-wal", "cloudkit.sqlite-shm", snapshotManifest] where OwnerOnlyFiles.isLink(Paths.join(snapshot, name)) {
            throw SnapshotError(message: "\(snapshot)/\(name) is a symbolic link: a snapshot holds files, not links")
        }
        let target = Paths.join(directory, "cloudkit.sqlite")
        guard !FileManager.default.fileExists(atPath: target), !OwnerOnlyFiles.isLink(target) else {
            throw SnapshotError(message: "\(directory) already holds data: import a snapshot into an empty --data directory or with --in-memory")
        }
        try OwnerOnlyFiles.prepareDirectory(directory, holding: "cloudkit.sqlite")
        let partial = target + ".import"
        try? FileManager.default.removeItem(atPath: partial)
        try FileManager.default.copyItem(atPath: source, toPath: partial)
        try OwnerOnlyFiles.tighten(partial)
        do {
            let found = try checkSnapshotObjects(partial, credentials: credentials)
            try FileManager.default.moveItem(atPath: partial, toPath: target)
            return found
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        }
    }

    /// Checks a copied snapshot's schema objects against what the migrations create, and takes its
    /// credentials out (returning them when asked). Runs before any migration, so no trigger could
    /// have fired yet.
    static func checkSnapshotObjects(_ path: String, credentials: Bool) throws -> SnapshotCredentials? {
        let (known, triggers) = try migratedObjects()
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            // Nothing in the file may run: no triggers (checked below, and off meanwhile).
            try db.execute(sql: "PRAGMA recursive_triggers = OFF")
        }
        let copy: DatabaseQueue
        do { copy = try DatabaseQueue(path: path, configuration: configuration) } catch {
            throw SnapshotError(message: "the snapshot's cloudkit.sqlite is not an SQLite database this server can open")
        }
        defer { try? copy.close() }
        return try copy.writeWithoutTransaction { db -> SnapshotCredentials? in
            guard let integrity = try String.fetchOne(db, sql: "PRAGMA quick_check"), integrity == "ok" else {
                throw SnapshotError(message: "the snapshot's cloudkit.sqlite is damaged (SQLite's quick_check failed)")
            }
            for row in try Row.fetchAll(db, sql: "SELECT type, name, sql FROM sqlite_master") {
                let type: String = row["type"]
                let name: String = row["name"]
                if name.hasPrefix("sqlite_autoindex_") || name == "sqlite_sequence" || name.hasPrefix("sqlite_stat") { continue }
                // A trigger only when it is one of ours, word for word (a snapshot of this version has it).
                let isOurTrigger = type == "trigger" && (row["sql"] as String?).map { triggers[name]?.contains($0) ?? false } ?? false
                guard type == "table" || type == "index" || isOurTrigger else {
                    throw SnapshotError(message: "the snapshot holds a \(type) ('\(name.prefix(60))'): a snapshot carries data, not code, so it is refused")
                }
                guard known[name] == type else {
                    throw SnapshotError(message: "the snapshot holds a \(type) '\(name.prefix(60))' this server does not create: refused")
                }
            }
            if try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table'").contains(where: { $0.uppercased().contains("VIRTUAL") }) {
                throw SnapshotError(message: "the snapshot holds a virtual table: refused")
            }
            let found = credentials ? try SnapshotCredentials(db) : nil
            try db.inTransaction {
                for table in ["api_token", "web_user", "server_key"] where try known[table] != nil && db.tableExists(table) {
                    try db.execute(sql: "DELETE FROM \(table)")
                }
                if !credentials, try db.tableExists("setting") { try db.execute(sql: "DELETE FROM setting WHERE key = 'token-secret'") }
                return .commit
            }
            return found
        }
    }

    /// A number that changes whenever anything is committed to the database, by this process or
    /// another one sharing the file (`ckbrowse serve` and the embedded demo can share a directory).
    /// SQLite's `data_version` moves on every commit made by *other* connections; this connection
    /// never writes, so it sees them all. Runs on the calling thread (a few microseconds, no I/O in
    /// WAL mode). Nil if SQLite fails: callers then treat nothing as unchanged.
    public func changeStamp() -> Int64? { stampReader.read() }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // One row per (container, environment, database, owner): the public database has owner "",
            // private and shared databases belong to one user each. `seq` is the database's change counter.
            try db.execute(sql: """
                CREATE TABLE ckdb (
                  id INTEGER PRIMARY KEY,
                  container TEXT NOT NULL, environment TEXT NOT NULL, scope TEXT NOT NULL, owner TEXT NOT NULL,
                  seq INTEGER NOT NULL DEFAULT 0,
                  UNIQUE (container, environment, scope, owner));
                CREATE TABLE zone (
                  db INTEGER NOT NULL REFERENCES ckdb(id), name TEXT NOT NULL, owner TEXT NOT NULL,
                  incarnation INTEGER NOT NULL,   -- seq at creation; tokens of an older incarnation are refused
                  seq INTEGER NOT NULL,           -- last change in the zone (database change feed)
                  deleted INTEGER NOT NULL DEFAULT 0,
                  PRIMARY KEY (db, name));
                CREATE TABLE record (
                  db INTEGER NOT NULL, zone TEXT NOT NULL, name TEXT NOT NULL,
                  type TEXT, tag TEXT, fields TEXT,
                  created_ts INTEGER, created_user TEXT, created_device TEXT,
                  modified_ts INTEGER, modified_user TEXT, modified_device TEXT,
                  short_guid TEXT, parent TEXT, share TEXT,
                  deleted INTEGER NOT NULL DEFAULT 0,
                  seq INTEGER NOT NULL,           -- the change that produced this state
                  PRIMARY KEY (db, zone, name));
                CREATE INDEX record_changes ON record (db, zone, seq);
                CREATE INDEX record_types ON record (db, zone, type);
                CREATE TABLE reference (
                  db INTEGER NOT NULL, zone TEXT NOT NULL, source TEXT NOT NULL, field TEXT NOT NULL,
                  target_zone TEXT NOT NULL, target TEXT NOT NULL, action TEXT NOT NULL);
                CREATE INDEX reference_target ON reference (db, target_zone, target);
                CREATE INDEX reference_source ON reference (db, zone, source);
                CREATE TABLE subscription (
                  db INTEGER NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, owner TEXT NOT NULL,
                  created_seq INTEGER NOT NULL,
                  PRIMARY KEY (db, id));
                CREATE TABLE field_schema (
                  container TEXT NOT NULL, environment TEXT NOT NULL, record_type TEXT NOT NULL,
                  field TEXT NOT NULL, type TEXT NOT NULL,
                  PRIMARY KEY (container, environment, record_type, field));
                CREATE TABLE api_token (token TEXT PRIMARY KEY, container TEXT);
                CREATE TABLE web_user (token TEXT PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE server_key (key_id TEXT PRIMARY KEY, public_key_pem TEXT NOT NULL);
                CREATE TABLE setting (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                """)
        }
        migrator.registerMigration("v2-notifications") { db in
            // Device tokens (tokens/create), the containers they receive pushes from (tokens/register),
            // queued webcourier payloads, and the per-user badge counters.
            try db.execute(sql: """
                CREATE TABLE device_token (
                  token TEXT PRIMARY KEY, apns_environment TEXT NOT NULL, created_by TEXT NOT NULL, session TEXT,
                  created_at INTEGER NOT NULL, dropped INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE token_binding (
                  token TEXT NOT NULL, container TEXT NOT NULL, environment TEXT NOT NULL, user TEXT NOT NULL,
                  PRIMARY KEY (token, container, environment));
                CREATE INDEX token_binding_user ON token_binding (container, environment, user);
                CREATE TABLE notification_queue (id INTEGER PRIMARY KEY, token TEXT NOT NULL, payload TEXT NOT NULL, created_at INTEGER NOT NULL);
                CREATE INDEX notification_queue_token ON notification_queue (token, id);
                CREATE TABLE badge (container TEXT NOT NULL, user TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (container, user));
                """)
        }
        migrator.registerMigration("v3-sharing") { db in
            // Users as others find them (users/discover, users/lookup, share participants): the name
            // signs in; email and phone are look-up keys. Filled from the configuration at start.
            // A share is a `cloudkit.share` record in the owner's private database (its row in
            // `record` carries tag, seq and shortGUID); `share` adds what the record table cannot:
            // the shared root (NULL: the whole zone) and the public permission. Participants are
            // rows of their own, resolved to users where their look-up info matches one.
            // `shared_zone` is each participant's shared database: the zones shared with them, with
            // the participant database's own change counter (changes/database there).
            try db.execute(sql: """
                CREATE TABLE user_info (
                  name TEXT PRIMARY KEY, record_name TEXT NOT NULL UNIQUE, email TEXT, phone TEXT);
                CREATE INDEX user_info_email ON user_info (email COLLATE NOCASE);
                CREATE TABLE share (
                  db INTEGER NOT NULL, zone TEXT NOT NULL, name TEXT NOT NULL, root TEXT,
                  public_permission TEXT NOT NULL DEFAULT 'NONE', short_guid TEXT NOT NULL UNIQUE,
                  PRIMARY KEY (db, zone, name));
                CREATE TABLE share_participant (
                  db INTEGER NOT NULL, zone TEXT NOT NULL, share TEXT NOT NULL, participant_id TEXT NOT NULL,
                  user_record_name TEXT, email TEXT, phone TEXT,
                  permission TEXT NOT NULL, type TEXT NOT NULL, status TEXT NOT NULL,
                  PRIMARY KEY (db, zone, share, participant_id));
                CREATE INDEX share_participant_user ON share_participant (user_record_name, status);
                CREATE TABLE shared_zone (
                  shared_db INTEGER NOT NULL, owner_db INTEGER NOT NULL, zone TEXT NOT NULL,
                  seq INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0,
                  PRIMARY KEY (shared_db, owner_db, zone));
                CREATE INDEX shared_zone_owner ON shared_zone (owner_db, zone);
                """)
        }
        migrator.registerMigration("v4-record-parent") { db in
            // A record share reaches its root's descendants by `parent`, one level at a time: this
            // keeps each step an index lookup. Partial: records without a parent (most) cost nothing.
            try db.execute(sql: "CREATE INDEX record_parent ON record (db, zone, parent) WHERE parent IS NOT NULL")
        }
        migrator.registerMigration("v5-schema") { db in
            // The schema of each container and environment (issue 19): field_schema gains each
            // field's indexes and, where the .ckdb type says more than the wire type (ENCRYPTED,
            // NUMBER), that type; system fields get rows when indexed. Grants per record type, custom
            // roles, the users holding them, and whether a schema was inferred from older data.
            try db.execute(sql: """
                ALTER TABLE field_schema ADD COLUMN indexes TEXT NOT NULL DEFAULT '';
                ALTER TABLE field_schema ADD COLUMN declared TEXT;
                CREATE TABLE type_grant (
                  container TEXT NOT NULL, environment TEXT NOT NULL, record_type TEXT NOT NULL,
                  role TEXT NOT NULL, permissions TEXT NOT NULL,
                  PRIMARY KEY (container, environment, record_type, role));
                CREATE TABLE schema_role (
                  container TEXT NOT NULL, environment TEXT NOT NULL, name TEXT NOT NULL, id INTEGER NOT NULL,
                  PRIMARY KEY (container, environment, name));
                CREATE TABLE role_member (
                  container TEXT NOT NULL, environment TEXT NOT NULL, user TEXT NOT NULL, role TEXT NOT NULL,
                  PRIMARY KEY (container, environment, user, role));
                CREATE TABLE schema_origin (
                  container TEXT NOT NULL, environment TEXT NOT NULL, origin TEXT NOT NULL,
                  PRIMARY KEY (container, environment));
                """)
            try SchemaTables.inferFromOlderData(db)
        }
        migrator.registerMigration("v6-key-container") { db in
            // A server-to-server key, like an API token, may be bound to one container.
            try db.execute(sql: "ALTER TABLE server_key ADD COLUMN container TEXT")
        }
        migrator.registerMigration("v7-assets") { db in
            // Asset bytes, one row per file per container and environment (the same bytes uploaded
            // twice are kept once: `checksum` is derived from them). Kept in SQLite, not beside it, so a
            // snapshot, a reset and a crash mid-commit treat them with the records that use them.
            // `record.has_assets` marks the rows whose fields hold an uploaded asset: only those have
            // a download URL added on the way out; every other row is still copied as stored.
            try db.execute(sql: """
                CREATE TABLE asset_blob (
                  id INTEGER PRIMARY KEY,
                  container TEXT NOT NULL, environment TEXT NOT NULL,
                  checksum TEXT NOT NULL, size INTEGER NOT NULL, data BLOB NOT NULL,
                  created_ms INTEGER NOT NULL,
                  UNIQUE (container, environment, checksum));
                ALTER TABLE record ADD COLUMN has_assets INTEGER NOT NULL DEFAULT 0;
                CREATE INDEX record_assets ON record (db) WHERE has_assets = 1;
                """)
        }
        migrator.registerMigration("v8-query-times") { db in
            // records/query's newest-first listing (no filter, sorted by a record time) is sorted by
            // SQLite: these let it walk a type's records in time order instead of reading and sorting
            // them all for every page.
            try db.execute(sql: """
                CREATE INDEX record_type_created ON record (db, zone, type, created_ts, name) WHERE deleted = 0;
                CREATE INDEX record_type_modified ON record (db, zone, type, modified_ts, name) WHERE deleted = 0;
                """)
        }
        migrator.registerMigration("v9-single-use-uploads") { db in
            // Upload URLs already used (each works once), kept until they would have expired anyway.
            try db.execute(sql: "CREATE TABLE used_upload (token TEXT PRIMARY KEY, expires INTEGER NOT NULL)")
        }
        migrator.registerMigration("v10-field-index") { db in
            // Queries found and ordered by SQLite (issue 33): the values of every indexed field in
            // `field_index` (see `FieldIndex`), and the records of a type in name order. A store written
            // by an earlier version gets them built here, once, with progress on stderr when it is big.
            try db.execute(sql: FieldIndex.tableSQL)
            try FieldIndex.buildAll(db)
        }
        migrator.registerMigration("v11-record-wire") { db in
            // Each record's answer rendered once, when written (`RecordWire`): a store written by an
            // earlier version gets them here, once, with progress on stderr when it is big.
            try db.execute(sql: RecordWire.migrationSQL)
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM record WHERE deleted = 0") ?? 0
            let loud = total > 50_000
            if loud { FileOutput.standardError.write("rendering \(total) records once for the answers…\n") }
            var done = 0, reported = 0
            try RecordWire.fillMissing(db) { n in
                done += n
                if loud, done * 10 / max(total, 1) > reported {
                    reported = done * 10 / max(total, 1)
                    FileOutput.standardError.write("  records rendered: \(min(reported * 10, 100)) % (\(done) records)\n")
                }
            }
            if loud { FileOutput.standardError.write("records rendered\n") }
        }
        migrator.registerMigration("v12-schema-version") { db in
            // A value that changes with every write to the schema tables (`SchemaTables.version`).
            try db.execute(sql: SchemaTables.versionSQL)
        }
        migrator.registerMigration("v13-drop-record-types") { db in
            // `record (db, zone, type)` served no statement: a query on a type also says `deleted = 0`,
            // which `record_type_name` (v10) serves, and a statement on a type across zones reads its
            // database's rows either way (EXPLAIN QUERY PLAN, checked by a test). It cost an index
            // write on every create and every delete.
            try db.execute(sql: "DROP INDEX IF EXISTS record_types")
        }
        return migrator
    }
}

/// Identifies one database of one container.
struct DatabaseKey: Hashable, Sendable {
    var container: String
    var environment: CloudKitEnvironment
    var scope: DatabaseScope
    /// "" for the public database; the user record name otherwise.
    var owner: String
}

extension Database {
    /// The id of a database, created on first use (a container is created on first use too).
    func databaseID(_ key: DatabaseKey) throws -> Int64 {
        if let id = try Int64.fetchOne(
            self, sql: "SELECT id FROM ckdb WHERE container = ? AND environment = ? AND scope = ? AND owner = ?",
            arguments: [key.container, key.environment.rawValue, key.scope.rawValue, key.owner])
        {
            return id
        }
        try execute(
            sql: "INSERT INTO ckdb (container, environment, scope, owner) VALUES (?, ?, ?, ?)",
            arguments: [key.container, key.environment.rawValue, key.scope.rawValue, key.owner])
        let id = lastInsertedRowID
        // Every database has its default zone.
        try execute(
            sql: "INSERT INTO zone (db, name, owner, incarnation, seq) VALUES (?, ?, ?, 0, 0)",
            arguments: [id, ZoneID.defaultZoneName, key.owner.isEmpty ? "_defaultOwner" : key.owner])
        return id
    }

    /// Read-only lookup: nil when the database was never used.
    func existingDatabaseID(_ key: DatabaseKey) throws -> Int64? {
        try Int64.fetchOne(
            self, sql: "SELECT id FROM ckdb WHERE container = ? AND environment = ? AND scope = ? AND owner = ?",
            arguments: [key.container, key.environment.rawValue, key.scope.rawValue, key.owner])
    }

    /// Advances and returns the database's change counter, for requests that change a few things (zones,
    /// subscriptions). records/modify counts through its `ChangeLog` instead, which reads the counter
    /// once and writes it back once; a request uses one or the other, never both.
    func nextSeq(_ db: Int64) throws -> Int64 {
        // One cached statement (SQLite ≥ 3.35: RETURNING) instead of an UPDATE and a SELECT.
        try Int64.fetchOne(cachedStatement(sql: "UPDATE ckdb SET seq = seq + 1 WHERE id = ? RETURNING seq"), arguments: [db]) ?? 0
    }
}

/// A snapshot that cannot be imported, and why.
public struct SnapshotError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
}
