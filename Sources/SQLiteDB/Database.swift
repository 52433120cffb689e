#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite

/// How a transaction takes its locks (SQLite's `BEGIN DEFERRED|IMMEDIATE|EXCLUSIVE`).
public enum TransactionKind: String, Sendable {
    case deferred = "DEFERRED", immediate = "IMMEDIATE", exclusive = "EXCLUSIVE"

    /// The statement that begins such a transaction.
    var beginSQL: String {
        switch self {
        case .deferred: "BEGIN DEFERRED TRANSACTION"
        case .immediate: "BEGIN IMMEDIATE TRANSACTION"
        case .exclusive: "BEGIN EXCLUSIVE TRANSACTION"
        }
    }
}

/// What a transaction's or savepoint's body asks for at its end.
public enum TransactionCompletion: Sendable { case commit, rollback }

/// A column of a table, as `PRAGMA table_info` describes it.
public struct ColumnInfo: Sendable {
    public let name: String
    public let type: String
    public let isNotNull: Bool
    public let primaryKeyIndex: Int
}

/// SQLite keeps statistics of its memory (`sqlite3_memory_used`, the soft heap limit) by taking one
/// process-wide mutex around every allocation and free it makes: 5.6 % of the server's time on a
/// 200-record update batch went to locking and unlocking it (perf, PERFORMANCE.md), and every page
/// read paid it too. Nothing here reads those statistics or sets a heap limit, so they are off, set
/// once per process before SQLite initializes; false when SQLite was initialized before this module
/// opened its first connection (SQLite then refuses the setting, and the statistics stay on).
public let sqliteMemoryStatisticsOff: Bool = csqlite_config_memory_statistics(0) == SQLITE_OK

/// One SQLite connection. A `Database` is used by one thread at a time: a `DatabaseQueue` or
/// `DatabasePool` hands it to the closures it runs and never to two at once.
public final class Database {
    /// The C connection, for code that steps statements itself.
    public let sqliteConnection: SQLiteConnection?
    public let path: String
    private var statementCache: [SQLKey: Statement] = [:]
    private var commitHooks: [(Database) -> Void] = []
    private var rollbackHooks: [(Database) -> Void] = []
    /// Why the last ROLLBACK failed, while its transaction may still be open.
    var rollbackFailure: (any Error)?
    private var isOpen = true

    init(path: String, configuration: Configuration) throws {
        _ = sqliteMemoryStatisticsOff
        self.path = path
        var connection: OpaquePointer?
        let flags = (configuration.readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &connection, flags, nil)
        guard code == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close(connection)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
        }
        sqliteConnection = connection
        sqlite3_extended_result_codes(connection, 1)
        switch configuration.busyMode {
        case .immediateError: break
        case .timeout(let seconds): sqlite3_busy_timeout(connection, Int32(min(seconds * 1000, Double(Int32.max))))
        }
        do {
            if configuration.foreignKeysEnabled { try execute(sql: "PRAGMA foreign_keys = ON") }
        } catch {
            // deinit runs for a throwing init once every property is set: it must not close again.
            sqlite3_close(connection)
            isOpen = false
            throw error
        }
    }

    deinit {
        statementCache.removeAll()
        if isOpen { sqlite3_close_v2(sqliteConnection) }
    }

    /// Finalizes the cached statements and closes the connection; an error leaves it open.
    func close() throws {
        statementCache.removeAll()
        let code = sqlite3_close(sqliteConnection)
        guard code == SQLITE_OK else { throw error(code, sql: nil) }
        isOpen = false
    }

    /// The error SQLite reports for `code` on this connection.
    func error(_ code: Int32, sql: String?) -> DatabaseError {
        let message = sqliteConnection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
    }

    // MARK: Statements

    /// A new prepared statement of `sql` (one statement; trailing whitespace and semicolons allowed).
    public func makeStatement(sql: String) throws -> Statement {
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let code = sql.withCString { sqlite3_prepare_v2(sqliteConnection, $0, -1, &statement, &tail) }
        guard code == SQLITE_OK else { throw error(code, sql: sql) }
        guard let statement else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "no statement in SQL", sql: sql)
        }
        return Statement(database: self, sqliteStatement: statement, sql: sql)
    }

    /// The statement of `sql`, prepared once per connection and kept.
    public func cachedStatement(sql: String) throws -> Statement {
        if let cached = statementCache[SQLKey(sql)] { return cached }
        let statement = try makeStatement(sql: sql)
        statementCache[SQLKey(sql)] = statement
        return statement
    }

    /// Runs every statement of `sql` in turn; `arguments` are consumed in order, each statement taking
    /// as many as it has parameters, and must all be used.
    public func execute(sql: String, arguments: StatementArguments = []) throws {
        var remaining = arguments.values[...]
        try sql.withCString { start in
            var next: UnsafePointer<CChar>? = start
            while let cursor = next, cursor.pointee != 0 {
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let code = sqlite3_prepare_v2(sqliteConnection, cursor, -1, &statement, &tail)
                guard code == SQLITE_OK else { throw error(code, sql: sql) }
                next = tail
                guard let statement else { continue }  // whitespace or a comment
                let prepared = Statement(database: self, sqliteStatement: statement, sql: String(cString: sqlite3_sql(statement)))
                let count = Int(sqlite3_bind_parameter_count(statement))
                guard remaining.count >= count else {
                    throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "wrong number of statement arguments", sql: sql)
                }
                try prepared.execute(arguments: StatementArguments(remaining.prefix(count)))
                remaining = remaining.dropFirst(count)
            }
        }
        guard remaining.isEmpty else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "wrong number of statement arguments: \(remaining.count) left unused", sql: sql)
        }
    }

    /// Runs the cached statement `sql` to its end with the values `bind` adds (one per `?`, in order).
    public func run(_ sql: String, _ bind: (inout Bindings) -> Void) throws {
        try forEachRow(sql, bind) { _ in }
    }

    /// The first row of the cached statement `sql`, read by `read` from the statement while it is on
    /// that row (column values it reads are valid only there); nil when there is none. The statement is
    /// stepped to its end.
    public func firstRow<T>(_ sql: String, _ bind: (inout Bindings) -> Void, read: (SQLiteStatement) throws -> T) throws -> T? {
        var first: T?
        try forEachRow(sql, bind) { row in
            if first == nil { first = try read(row.statement) }
        }
        return first
    }

    /// Calls `body` with the statement on each row of the cached statement `sql` in turn.
    public func forEachRow(_ sql: String, _ bind: (inout Bindings) -> Void, _ body: (StatementRow) throws -> Void) throws {
        let cached = try cachedStatement(sql: sql)
        let bound = try cached.rebind(bind)
        precondition(bound == cached.parameterCount, "\(bound) values bound for: \(sql)")
        let statement = cached.sqliteStatement
        defer { sqlite3_reset(statement) }
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw error(code, sql: sql) }
            try body(StatementRow(statement: statement))
        }
    }

    // MARK: State

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changesCount: Int { Int(sqlite3_changes(sqliteConnection)) }
    public var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(sqliteConnection) }
    /// True between BEGIN and COMMIT or ROLLBACK.
    public var isInsideTransaction: Bool { sqlite3_get_autocommit(sqliteConnection) == 0 }

    public func tableExists(_ name: String) throws -> Bool {
        try Int.fetchOne(self, sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [name]) != nil
    }

    public func columns(in table: String) throws -> [ColumnInfo] {
        try Row.fetchAll(self, sql: "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)", arguments: [table]).map {
            ColumnInfo(name: $0[0], type: $0[1] ?? "", isNotNull: $0[2], primaryKeyIndex: $0[3])
        }
    }

    // MARK: Transactions

    /// Runs `body` in a transaction, committed when it returns `.commit` and rolled back when it
    /// returns `.rollback` or throws. Hooks registered with `afterNextTransaction` run after it ends.
    public func inTransaction(_ kind: TransactionKind = .deferred, _ body: () throws -> TransactionCompletion) throws {
        if let failure = rollbackFailure, isInsideTransaction {
            // A ROLLBACK that failed left its transaction open (BEGIN would fail, and every write after
            // it, with "cannot start a transaction within a transaction"): it is ended first.
            do {
                try cachedStatement(sql: "ROLLBACK TRANSACTION").execute()
            } catch {
                throw DatabaseError(
                    resultCode: (error as? DatabaseError)?.extendedResultCode ?? .SQLITE_ERROR,
                    message: "the connection's last transaction could not be rolled back (\(failure)), nor now (\(error))")
            }
        }
        rollbackFailure = nil
        // The transaction's and savepoints' own statements are prepared once per connection: their
        // prepares were 105 k instructions of a fixture's loop of five requests.
        try cachedStatement(sql: kind.beginSQL).execute()
        let completion: TransactionCompletion
        do {
            completion = try body()
        } catch {
            rollback()
            throw error
        }
        switch completion {
        case .commit: try commit()
        case .rollback: rollback()
        }
    }

    /// `body`'s result, run in a transaction committed unless it throws.
    func committing<T>(_ kind: TransactionKind, _ body: (Database) throws -> T) throws -> T {
        var result: T?
        try inTransaction(kind) {
            result = try body(self)
            return .commit
        }
        return result!
    }

    /// Runs `body` in a savepoint, kept when it returns `.commit` and rolled back when it returns
    /// `.rollback` or throws; outside a transaction, the savepoint is one.
    public func inSavepoint(_ body: () throws -> TransactionCompletion) throws {
        guard isInsideTransaction else { return try inTransaction(.deferred, body) }
        try cachedStatement(sql: "SAVEPOINT nested").execute()
        let completion: TransactionCompletion
        do {
            completion = try body()
        } catch {
            try? cachedStatement(sql: "ROLLBACK TO SAVEPOINT nested").execute()
            try? cachedStatement(sql: "RELEASE SAVEPOINT nested").execute()
            throw error
        }
        if completion == .rollback { try cachedStatement(sql: "ROLLBACK TO SAVEPOINT nested").execute() }
        try cachedStatement(sql: "RELEASE SAVEPOINT nested").execute()
    }

    /// Registers what runs after the current (or next) transaction commits, or rolls back. Only
    /// transactions this module opens (`write`, `inTransaction`) run the hooks.
    public func afterNextTransaction(onCommit: @escaping (Database) -> Void, onRollback: ((Database) -> Void)? = nil) {
        commitHooks.append(onCommit)
        if let onRollback { rollbackHooks.append(onRollback) }
    }

    func commit() throws {
        do {
            try cachedStatement(sql: "COMMIT TRANSACTION").execute()
        } catch {
            rollback()
            throw error
        }
        let hooks = commitHooks
        commitHooks = []
        rollbackHooks = []
        for hook in hooks { hook(self) }
    }

    func rollback() {
        if isInsideTransaction {
            // Not thrown: rollback runs while another error is on its way out, and that one says what
            // went wrong. Kept: the next transaction ends this one first (`inTransaction`).
            do { try cachedStatement(sql: "ROLLBACK TRANSACTION").execute() } catch { rollbackFailure = error }
        }
        let hooks = rollbackHooks
        commitHooks = []
        rollbackHooks = []
        for hook in hooks { hook(self) }
    }
}

/// A statement cache's key: the SQL text, hashed by its length and every (length / 32)th of its bytes
/// (fewer than 64 of them), not all of them. Every cached statement is looked up by its text, several
/// times a request; hashing the whole text (SipHash over 100-300 bytes) was most of a lookup's 1,000
/// instructions, 2 % of a fixture suite's loop (scripts/bench-fixture.sh; callgrind).
///
/// Two keys are equal when their texts have the same UTF-8 bytes, which is what SQLite compiles and what
/// the hash reads (`String`'s `==` would call two spellings of one Unicode text equal while their
/// hashes differ). The same literal answers at once (the same storage); other storage is compared with
/// `memcmp` (a byte loop of `elementsEqual` cost 104 k instructions of a fixture loop's 4.5 M, as
/// many texts are built per call), so texts that share a hash only cost a comparison.
struct SQLKey: Hashable {
    let sql: String

    init(_ sql: String) { self.sql = sql }

    static func == (a: SQLKey, b: SQLKey) -> Bool {
        let contiguous = a.sql.utf8.withContiguousStorageIfAvailable { x in
            b.sql.utf8.withContiguousStorageIfAvailable { y in
                x.count == y.count && (x.baseAddress == y.baseAddress || x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
        if let contiguous, let equal = contiguous { return equal }
        return a.sql.utf8.elementsEqual(b.sql.utf8)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(sql.utf8.withContiguousStorageIfAvailable(Self.sampledHash) ?? Array(sql.utf8).withUnsafeBufferPointer(Self.sampledHash))
    }

    /// FNV-1a over the length and every `stride`th byte (the last one included).
    static func sampledHash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        guard !bytes.isEmpty else { return h }
        let stride = max(1, bytes.count / 32)
        var i = bytes.count - 1
        while i >= 0 {
            h = (h ^ UInt64(bytes[i])) &* 0x100_0000_01b3
            i -= stride
        }
        return h
    }
}
