import CSQLite
import Dispatch

/// What both `DatabaseQueue` and `DatabasePool` offer for writing, so a migrator runs on either.
public protocol DatabaseWriter: AnyObject, Sendable {
    func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T
}

/// One connection, used by one closure at a time on a serial queue. Reads run in a deferred
/// transaction (one consistent state), writes in an immediate one, committed unless the closure throws.
public final class DatabaseQueue: DatabaseWriter, @unchecked Sendable {
    private let database: Database
    private let queue: DispatchQueue
    private let key = DispatchSpecificKey<Bool>()
    private var closed = false

    /// A connection to the file at `path`, created if missing (unless read-only).
    public init(path: String, configuration: Configuration = Configuration()) throws {
        database = try Database(path: path, configuration: configuration)
        queue = DispatchQueue(label: "SQLiteDB.DatabaseQueue")
        queue.setSpecific(key: key, value: true)
        for prepare in configuration.preparations { try prepare(database) }
    }

    /// A private in-memory database.
    public convenience init(configuration: Configuration = Configuration()) throws {
        try self.init(path: ":memory:", configuration: configuration)
    }

    private func serialized<T>(_ body: (Database) throws -> T) throws -> T {
        precondition(DispatchQueue.getSpecific(key: key) == nil, "DatabaseQueue is not reentrant: a read or write inside another")
        return try queue.sync {
            guard !closed else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the connection is closed") }
            return try body(database)
        }
    }

    /// `body` in a transaction that must not write: one that changed rows is rolled back and refused
    /// (SQLITE_READONLY). (SQLite's `query_only` would take two statements a read; the browser's cache
    /// reads on every key press. A pool's readers are read-only connections.)
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try serialized { db in
            let before = sqlite3_total_changes(db.sqliteConnection)
            return try db.committing(.deferred) { db in
                let result = try body(db)
                guard sqlite3_total_changes(db.sqliteConnection) == before else {
                    throw DatabaseError(resultCode: .SQLITE_READONLY, message: "a read changed rows; it was rolled back")
                }
                return result
            }
        }
    }

    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try serialized { try $0.committing(.immediate, body) }
    }

    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try serialized(body)
    }

    /// Runs `body` on the connection outside any transaction (as `writeWithoutTransaction`).
    public func inDatabase<T>(_ body: (Database) throws -> T) throws -> T {
        try serialized(body)
    }

    /// Closes the connection; later uses throw.
    public func close() throws {
        try queue.sync {
            guard !closed else { return }
            try database.close()
            closed = true
        }
    }
}
