import CSQLite
import Dispatch
import Foundation
@testable import SQLiteDB
import Testing

/// The database layer's own rules, on real SQLite files in a temporary directory.
@Suite struct SQLiteDBTests {
    static func temporaryPath(_ name: String = "db.sqlite") throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sqlitedb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name).path
    }

    @Test func migrationsRunOnceInOrderAndAreRecordedWhereGRDBRecordedThem() throws {
        let path = try Self.temporaryPath()
        // A database GRDB migrated to "v1": its table and its record of the migration.
        do {
            let old = try DatabaseQueue(path: path)
            try old.write { db in
                try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY); INSERT INTO grdb_migrations VALUES ('v1')")
                try db.execute(sql: "CREATE TABLE a (x INTEGER)")
            }
            try old.close()
        }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in try db.execute(sql: "CREATE TABLE a (x INTEGER)") }  // would fail if run again
        migrator.registerMigration("v2") { db in try db.execute(sql: "ALTER TABLE a ADD COLUMN y TEXT") }
        migrator.registerMigration("v3") { db in try db.execute(sql: "INSERT INTO a (x, y) VALUES (1, 'three')") }
        let pool = try DatabasePool(path: path)
        try migrator.migrate(pool)
        try migrator.migrate(pool)  // nothing left to run
        try pool.read { db throws in
            #expect(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid") == ["v1", "v2", "v3"])
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM a") == 1)
        }
    }

    @Test func aFailingMigrationLeavesNothingBehind() throws {
        let queue = try DatabaseQueue(path: try Self.temporaryPath())
        var migrator = DatabaseMigrator()
        migrator.registerMigration("good") { db in try db.execute(sql: "CREATE TABLE p (id INTEGER PRIMARY KEY)") }
        migrator.registerMigration("bad") { db in
            try db.execute(sql: "CREATE TABLE c (p INTEGER REFERENCES p(id)); INSERT INTO c VALUES (42)")  // no p 42
        }
        #expect(throws: DatabaseError.self) { try migrator.migrate(queue) }
        try queue.read { db throws in
            #expect(try db.tableExists("p"))
            #expect(try !db.tableExists("c"))
            #expect(try migrator.appliedIdentifiers(db) == ["good"])
            #expect(try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") == true)
        }
    }

    @Test func aWriteThatThrowsIsRolledBackAndItsHooksSeeTheRollback() throws {
        let pool = try DatabasePool(path: try Self.temporaryPath())
        try pool.write { db in try db.execute(sql: "CREATE TABLE t (v TEXT)") }
        struct Refused: Error {}
        let outcomes = Outcomes()
        #expect(throws: Refused.self) {
            try pool.write { db in
                try db.execute(sql: "INSERT INTO t VALUES ('lost')")
                db.afterNextTransaction(onCommit: { _ in outcomes.add("commit 1") }, onRollback: { _ in outcomes.add("rollback 1") })
                throw Refused()
            }
        }
        try pool.write { db in
            try db.execute(sql: "INSERT INTO t VALUES ('kept')")
            db.afterNextTransaction(onCommit: { db in outcomes.add("commit 2, in transaction: \(db.isInsideTransaction)") })
        }
        #expect(outcomes.all == ["rollback 1", "commit 2, in transaction: false"])
        #expect(try pool.read { db in try String.fetchAll(db, sql: "SELECT v FROM t") } == ["kept"])
    }

    @Test func aReadSeesOneCommittedStateWhileAWriteRuns() async throws {
        let pool = try DatabasePool(path: try Self.temporaryPath())
        try await pool.write { db in try db.execute(sql: "CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1)") }
        let inserted = DispatchSemaphore(value: 0), readDone = DispatchSemaphore(value: 0)
        async let writing: Void = pool.write { db in
            try db.execute(sql: "INSERT INTO t VALUES (2)")
            inserted.signal()
            readDone.wait()  // the read below runs while this transaction is open
        }
        inserted.wait()
        let during = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") }
        readDone.signal()
        try await writing
        let after = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") }
        #expect(during == 1)
        #expect(after == 2)
    }

    /// The statement cache keys a statement by its text's bytes: two spellings of one Unicode text
    /// (`String`'s `==` calls them equal) are two statements, each answering its own bytes; the same
    /// text in other storage is the same key, with the same hash.
    @Test func theStatementCacheKeysATextByItsBytes() throws {
        let composed = "SELECT '\u{E9}'", decomposed = "SELECT 'e\u{301}'"
        #expect(composed == decomposed && SQLKey(composed) != SQLKey(decomposed))
        let built = ["SELECT", "'\u{E9}'"].joined(separator: " ")
        #expect(SQLKey(built) == SQLKey(composed) && SQLKey(built).hashValue == SQLKey(composed).hashValue)
        let long = String(repeating: "SELECT 1 + ", count: 40) + "1", longBuilt = (0..<40).map { _ in "SELECT 1 + " }.joined() + "1"
        #expect(SQLKey(long) == SQLKey(longBuilt) && SQLKey(long).hashValue == SQLKey(longBuilt).hashValue)
        #expect(SQLKey(long) != SQLKey(String(long.dropLast()) + "2"))
        let queue = try DatabaseQueue()
        try queue.write { db in
            for (sql, expected) in [(composed, [0xC3, 0xA9]), (decomposed, [0x65, 0xCC, 0x81]), (composed, [0xC3, 0xA9]), (built, [0xC3, 0xA9])] as [(String, [UInt8])] {
                let bytes = try db.firstRow(sql, { _ in }) { statement in
                    Array(UnsafeBufferPointer(start: sqlite3_column_text(statement, 0), count: Int(sqlite3_column_bytes(statement, 0))))
                }
                #expect(bytes == expected, "\(Array(sql.utf8))")
            }
        }
    }

    @Test func executeRunsEveryStatementAndChecksTheArguments() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (a, b); INSERT INTO t VALUES (?, ?); INSERT INTO t VALUES (?, NULL);", arguments: [1, "one", 2])
            #expect(try Row.fetchAll(db, sql: "SELECT a, b FROM t ORDER BY a").map { [$0[0] as Int, $0["B"] as String?] as [AnyHashable?] } == [[1, "one"], [2, nil]])
            do {
                try db.execute(sql: "INSERT INTO t VALUES (?, ?)", arguments: [1])
                Issue.record("too few arguments were accepted")
            } catch let error as DatabaseError {
                #expect(error.resultCode == .SQLITE_MISUSE)
            }
            #expect(throws: DatabaseError.self) { try db.execute(sql: "INSERT INTO t VALUES (?, ?)", arguments: [1, 2, 3]) }
            // A value that cannot be read as the asked type: an error from a fetch.
            do {
                _ = try Int.fetchAll(db, sql: "SELECT b FROM t")
                Issue.record("text was read as Int")
            } catch let error as DatabaseError {
                #expect(error.resultCode == .SQLITE_MISMATCH)
            }
        }
    }

    @Test func anErrorNamesTheStatementButNeverItsValues() throws {
        let queue = try DatabaseQueue()
        let secret = "sk-\(UUID().uuidString)"
        try queue.write { db in try db.execute(sql: "CREATE TABLE k (v TEXT UNIQUE); INSERT INTO k VALUES (?)", arguments: [secret]) }
        do {
            try queue.write { db in try db.execute(sql: "INSERT INTO k VALUES (?)", arguments: [secret]) }
            Issue.record("a duplicate was accepted")
        } catch let error as DatabaseError {
            #expect(error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE)
            #expect(error.resultCode == .SQLITE_CONSTRAINT)
            #expect(String(describing: error).contains("INSERT INTO k"))
            #expect(!String(describing: error).contains(secret))
        }
    }

    @Test func aCursorLeftBeforeItsEndResetsItsStatement() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (v INTEGER)")
            for i in 0..<10 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [i]) }
            let statement = try db.cachedStatement(sql: "SELECT v FROM t ORDER BY v")
            do {
                let cursor = try Row.fetchCursor(statement)
                let first = try cursor.next()
                #expect(first.map { $0[0] as Int } == 0)
                #expect(sqlite3_stmt_busy(statement.sqliteStatement) != 0)
            }
            #expect(sqlite3_stmt_busy(statement.sqliteStatement) == 0)
            #expect(try Int.fetchAll(statement).count == 10)
        }
    }
}

extension SQLiteDBTests {
    @Test func aFetchThatFailsLeavesNoReadOpen() throws {
        let pool = try DatabasePool(path: try Self.temporaryPath())
        try pool.write { db in try db.execute(sql: "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('a'), (NULL), ('c')") }
        try pool.read { db throws in
            let statement = try db.cachedStatement(sql: "SELECT v FROM t ORDER BY rowid")
            #expect(throws: DatabaseError.self) { try String.fetchAll(statement) }
            #expect(sqlite3_stmt_busy(statement.sqliteStatement) == 0)
        }
        // The reader goes back to the pool without an open snapshot: it sees the next commit.
        try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES ('d')") }
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 4)
    }

    @Test func aCursorOfAnEarlierUseThrowsAndLeavesTheLaterOneAlone() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (v INTEGER)")
            for i in 0..<5 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [i]) }
            let statement = try db.cachedStatement(sql: "SELECT v FROM t ORDER BY v")
            var first: RowCursor? = try Row.fetchCursor(statement)
            _ = try first?.next()
            let second = try Row.fetchCursor(statement)
            #expect(try second.next().map { $0[0] as Int } == 0)
            #expect(throws: DatabaseError.self) { _ = try first?.next() }
            first = nil  // its end must not reset the statement under `second`
            #expect(try second.next().map { $0[0] as Int } == 1)
        }
    }

    @Test func aClosedPoolRefusesWork() throws {
        let pool = try DatabasePool(path: try Self.temporaryPath())
        try pool.write { db in try db.execute(sql: "CREATE TABLE t (v INTEGER)") }
        _ = try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") }
        try pool.close()
        #expect(throws: DatabaseError.self) { try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") } }
        #expect(throws: DatabaseError.self) { try pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") } }
    }
}

/// Strings appended from hooks, which may run on the writer's queue.
final class Outcomes: @unchecked Sendable {
    private var items: [String] = []
    private let lock = NSLock()
    func add(_ item: String) { lock.withLock { items.append(item) } }
    var all: [String] { lock.withLock { items } }

    @Test func aReadThatWritesIsUndoneAndRefused() throws {
        let queue = try DatabaseQueue(path: try SQLiteDBTests.temporaryPath())
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (v INTEGER)") }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 0, "reading is a read")
        #expect(throws: DatabaseError.self) {
            try queue.read { db in try db.execute(sql: "INSERT INTO t (v) VALUES (1)") }
        }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 0, "the write was rolled back")
        try queue.write { db in try db.execute(sql: "INSERT INTO t (v) VALUES (2)") }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT v FROM t") } == 2, "writes still write")
    }

    @Test func aTransactionLeftOpenByAFailedRollbackIsEndedBeforeTheNext() throws {
        let queue = try DatabaseQueue(path: try SQLiteDBTests.temporaryPath())
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (v INTEGER)") }
        try queue.inDatabase { db in
            // As a ROLLBACK that failed leaves it: a transaction still open, with a write in it.
            try db.execute(sql: "BEGIN")
            try db.execute(sql: "INSERT INTO t (v) VALUES (1)")
            db.rollbackFailure = DatabaseError(resultCode: .SQLITE_IOERR, message: "simulated")
        }
        try queue.write { db in try db.execute(sql: "INSERT INTO t (v) VALUES (2)") }
        #expect(try queue.read { db in try Int.fetchAll(db, sql: "SELECT v FROM t") } == [2], "the stuck write is gone, the new one is in")
        // Without a failure on record, an open transaction is not ended behind the caller's back.
        try queue.inDatabase { db in try db.execute(sql: "BEGIN") }
        #expect(throws: DatabaseError.self) { try queue.write { db in try db.execute(sql: "INSERT INTO t (v) VALUES (3)") } }
    }

    #if os(Linux)
    /// SQLite's memory statistics are off (`sqliteMemoryStatisticsOff`): its allocations take no
    /// process-wide mutex, and so its count of memory in use stays at zero while it allocates. Linux
    /// only: on macOS the system's libsqlite3 may be initialized by the test host before this module
    /// opens a connection, and the setting is then refused (harmlessly: the statistics stay on).
    @Test func sqliteKeepsNoMemoryStatistics() throws {
        let queue = try DatabaseQueue(path: try SQLiteDBTests.temporaryPath())
        #expect(sqliteMemoryStatisticsOff, "set before SQLite initialized")
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (v TEXT)")
            for i in 0..<200 { try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [String(repeating: "x", count: i * 10)]) }
        }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 200)
        #expect(sqlite3_memory_used() == 0, "statistics kept: \(sqlite3_memory_used()) bytes counted")
    }
    #endif
}
