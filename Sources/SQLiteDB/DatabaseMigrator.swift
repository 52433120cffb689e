/// Schema migrations, applied in the order they were registered, each once per database.
///
/// Applied migrations are recorded by identifier in `grdb_migrations (identifier TEXT NOT NULL
/// PRIMARY KEY)`: the table GRDB's migrator keeps, so databases written while this project used GRDB
/// open as they are. Each migration runs in its own transaction with foreign keys off and checked
/// (`PRAGMA foreign_key_check`) before it commits, so a migration may rebuild a table others refer to.
public struct DatabaseMigrator: Sendable {
    private var migrations: [(identifier: String, migrate: @Sendable (Database) throws -> Void)] = []

    public init() {}

    /// The migrations' identifiers, in the order they apply.
    public var identifiers: [String] { migrations.map(\.identifier) }

    public mutating func registerMigration(_ identifier: String, migrate: @escaping @Sendable (Database) throws -> Void) {
        precondition(!migrations.contains { $0.identifier == identifier }, "migration registered twice: \(identifier)")
        migrations.append((identifier, migrate))
    }

    /// Applies the migrations `writer`'s database has not had yet, all of them or those up to and
    /// including `last` (to make a database as an earlier version left it).
    public func migrate(_ writer: some DatabaseWriter, upTo last: String? = nil) throws {
        var wanted = migrations[...]
        if let last {
            guard let end = migrations.firstIndex(where: { $0.identifier == last }) else {
                throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "no migration named \(last)")
            }
            wanted = migrations[...end]
        }
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            let applied = try Set(String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
            let foreignKeys = try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false
            for migration in wanted where !applied.contains(migration.identifier) {
                if foreignKeys { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
                defer { if foreignKeys { try? db.execute(sql: "PRAGMA foreign_keys = ON") } }
                try db.inTransaction(.immediate) {
                    try migration.migrate(db)
                    if foreignKeys, try Row.fetchOne(db, sql: "PRAGMA foreign_key_check") != nil {
                        throw DatabaseError(
                            resultCode: .SQLITE_CONSTRAINT_FOREIGNKEY,
                            message: "migration \(migration.identifier) leaves a foreign key violated")
                    }
                    try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [migration.identifier])
                    return .commit
                }
            }
        }
    }

    /// The identifiers of the migrations `db` has had.
    public func appliedIdentifiers(_ db: Database) throws -> Set<String> {
        guard try db.tableExists("grdb_migrations") else { return [] }
        return try Set(String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
    }
}
