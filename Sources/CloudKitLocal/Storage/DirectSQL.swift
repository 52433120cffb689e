import Foundation
import GRDB
import GRDBSQLite

/// The statements a record's write runs (its row read and written, its query index rows replaced),
/// bound and stepped through SQLite's C API on GRDB's cached statements. Profiles of a 200-operation
/// records/modify (issue 33) spent more on GRDB's handling of each statement than SQLite spent running
/// it: `StatementArguments` made from an array (boxing each value through a protocol and a key path),
/// its validation, a `Row` and a cursor per read, a lower-cased column name per named read. Here a
/// value goes straight from its Swift type to `sqlite3_bind_*`, and a row is read by column position.
///
/// Values are bound as GRDB binds them, so rows written here and rows written or queried through GRDB
/// agree: text up to its first NUL character (GRDB passes SQLite a C string), an empty blob as an empty blob.
///
/// Errors are GRDB's `DatabaseError`, with the extended result code SQLite returned and its message,
/// as GRDB throws them, so callers tell them apart the same way. Statements are left reset, with their
/// bindings in place; GRDB clears and rebinds when it runs the same cached statement itself.
struct Bindings {
    let statement: SQLiteStatement
    private(set) var count: Int32 = 0
    /// The first result code other than SQLITE_OK a bind returned (a value too big, out of memory):
    /// the statement is not run then, rather than run with what the slot held before.
    private(set) var failure: Int32?

    init(_ statement: SQLiteStatement) { self.statement = statement }

    private mutating func check(_ code: Int32) {
        if code != SQLITE_OK && failure == nil { failure = code }
    }

    /// SQLite copies what it is given (`SQLITE_TRANSIENT`): the Swift value may go away at once.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    mutating func add(_ value: Int64) {
        count += 1
        check(sqlite3_bind_int64(statement, count, value))
    }

    mutating func add(_ value: Int) { add(Int64(value)) }

    mutating func add(_ value: Bool) { add(Int64(value ? 1 : 0)) }

    mutating func add(_ value: Double) {
        count += 1
        check(sqlite3_bind_double(statement, count, value))
    }

    /// Text up to its first NUL character, as GRDB binds it.
    mutating func add(_ value: String) {
        count += 1
        var text = value
        let code = text.withUTF8 { bytes -> Int32 in
            // An empty buffer may have no address, and a NULL pointer would bind NULL, not ''.
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(statement, count, "", 0, Self.transient) }
            let length = memchr(base, 0, bytes.count).map { UnsafeRawPointer(base).distance(to: UnsafeRawPointer($0)) } ?? bytes.count
            return sqlite3_bind_text(statement, count, base, Int32(length), Self.transient)
        }
        check(code)
    }

    /// Bytes; an empty value as an empty blob (not NULL), as GRDB binds it.
    mutating func add(_ value: Data) {
        count += 1
        let code = value.withUnsafeBytes { bytes -> Int32 in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_zeroblob(statement, count, 0) }
            return sqlite3_bind_blob(statement, count, base, Int32(bytes.count), Self.transient)
        }
        check(code)
    }

    mutating func addNull() {
        count += 1
        check(sqlite3_bind_null(statement, count))
    }

    mutating func add(_ value: Int64?) { if let value { add(value) } else { addNull() } }
    mutating func add(_ value: Double?) { if let value { add(value) } else { addNull() } }
    mutating func add(_ value: String?) { if let value { add(value) } else { addNull() } }
    mutating func add(_ value: Data?) { if let value { add(value) } else { addNull() } }

    mutating func add(_ value: DatabaseValue) {
        switch value.storage {
        case .null: addNull()
        case .int64(let i): add(i)
        case .double(let d): add(d)
        case .string(let s): add(s)
        case .blob(let data): add(data)
        }
    }
}

extension Database {
    /// Runs the cached statement `sql` to its end with the values `bind` adds (one per `?`, in order).
    func run(_ sql: String, _ bind: (inout Bindings) -> Void) throws {
        try forEachRow(sql, bind) { _ in }
    }

    /// The first row of the cached statement `sql`, read by `read` from the statement while it is on
    /// that row (column values it reads are valid only there); nil when there is none. The statement is
    /// stepped to its end, so it is finished as GRDB's own fetches leave it.
    func firstRow<T>(_ sql: String, _ bind: (inout Bindings) -> Void, read: (SQLiteStatement) throws -> T) throws -> T? {
        var first: T?
        try forEachRow(sql, bind) { row in
            if first == nil { first = try read(row.statement) }
        }
        return first
    }

    /// Calls `body` with the statement on each row of the cached statement `sql` in turn.
    func forEachRow(_ sql: String, _ bind: (inout Bindings) -> Void, _ body: (StatementRow) throws -> Void) throws {
        let cached = try prepared(sql, bind)
        let statement = cached.sqliteStatement
        defer { sqlite3_reset(statement) }
        try withExtendedLifetime(cached) {
            while true {
                let code = sqlite3_step(statement)
                if code == SQLITE_DONE { return }
                guard code == SQLITE_ROW else { throw failure(code, sql) }
                try body(StatementRow(statement: statement))
            }
        }
    }

    private func prepared(_ sql: String, _ bind: (inout Bindings) -> Void) throws -> Statement {
        let cached = try cachedStatement(sql: sql)
        let statement = cached.sqliteStatement
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        var bindings = Bindings(statement)
        bind(&bindings)
        precondition(bindings.count == sqlite3_bind_parameter_count(statement), "\(bindings.count) values bound for: \(sql)")
        if let code = bindings.failure { throw failure(code, sql) }
        return cached
    }

    private func failure(_ code: Int32, _ sql: String) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqliteConnection)), sql: sql)
    }
}

/// A row's columns read by position, from a GRDB `Row` or straight from a statement on a row (see
/// `Database.firstRow`): one reader for both, so a type that reads rows reads them one way.
protocol ColumnReader {
    func text(_ column: Int32) -> String?
    func integer(_ column: Int32) -> Int64?
}

extension Row: ColumnReader {
    func text(_ column: Int32) -> String? { self[Int(column)] }
    func integer(_ column: Int32) -> Int64? { self[Int(column)] }
}

/// A statement on a row.
struct StatementRow: ColumnReader {
    let statement: SQLiteStatement

    /// Text as GRDB reads it: up to its first NUL character, invalid UTF-8 repaired.
    func text(_ column: Int32) -> String? {
        guard sqlite3_column_type(statement, column) != SQLITE_NULL, let bytes = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: bytes)
    }

    func integer(_ column: Int32) -> Int64? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, column)
    }
}
