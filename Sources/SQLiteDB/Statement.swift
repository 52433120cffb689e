#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SQLite's prepared statement, as the C API names it.
public typealias SQLiteStatement = OpaquePointer
/// SQLite's connection, as the C API names it.
public typealias SQLiteConnection = OpaquePointer

/// A prepared statement of one connection. Each use resets it, clears its bindings and binds anew;
/// a statement is left reset after it ran to its end (and by a cursor when the cursor goes away), so
/// it holds no read lock between uses.
public final class Statement {
    public let sqliteStatement: SQLiteStatement
    public let sql: String
    unowned let database: Database
    /// Counts the statement's uses, so a cursor of an earlier use does not reset a later one.
    var generation = 0

    init(database: Database, sqliteStatement: SQLiteStatement, sql: String) {
        self.database = database
        self.sqliteStatement = sqliteStatement
        self.sql = sql
    }

    deinit { sqlite3_finalize(sqliteStatement) }

    public var columnCount: Int { Int(sqlite3_column_count(sqliteStatement)) }

    /// The result columns' names, in order.
    public private(set) lazy var columnNames: [String] = (0..<sqlite3_column_count(sqliteStatement)).map {
        sqlite3_column_name(sqliteStatement, $0).map { String(cString: $0) } ?? ""
    }

    /// The position of the column named `name`: an exact match first, then one ignoring ASCII case, as
    /// SQLite matches names.
    func index(ofColumn name: String) -> Int? { Self.position(of: name, in: columnNames) }

    static func position(of name: String, in names: [String]) -> Int? {
        if let exact = names.firstIndex(of: name) { return exact }
        let lowered = name.lowercased()
        return names.firstIndex { $0.lowercased() == lowered }
    }

    /// The number of `?` parameters.
    var parameterCount: Int { Int(sqlite3_bind_parameter_count(sqliteStatement)) }

    /// Resets the statement (a new use: a cursor of an earlier one stops), clears its bindings and
    /// binds what `bind` adds, in order; answers how many values it added.
    func rebind(_ bind: (inout Bindings) -> Void) throws -> Int {
        generation &+= 1
        sqlite3_reset(sqliteStatement)
        sqlite3_clear_bindings(sqliteStatement)
        var bindings = Bindings(sqliteStatement)
        bind(&bindings)
        if let code = bindings.failure { throw database.error(code, sql: sql) }
        return Int(bindings.count)
    }

    /// Resets the statement and binds `arguments`, one per parameter: too few or too many is an error.
    public func setArguments(_ arguments: StatementArguments) throws {
        guard arguments.values.count == parameterCount else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "wrong number of statement arguments: \(arguments.values.count) for \(parameterCount) parameters", sql: sql)
        }
        _ = try rebind { bindings in
            for value in arguments.values { bindings.add(value) }
        }
    }

    /// Runs the statement to its end with `arguments`.
    public func execute(arguments: StatementArguments = []) throws {
        try setArguments(arguments)
        try run()
    }

    /// Steps the statement, already bound, to its end, and resets it.
    func run() throws {
        defer { sqlite3_reset(sqliteStatement) }
        while true {
            let code = sqlite3_step(sqliteStatement)
            if code == SQLITE_DONE { return }
            if code != SQLITE_ROW { throw database.error(code, sql: sql) }
        }
    }

    /// One step: true on a row, false at the end (the statement is then reset).
    func step() throws -> Bool {
        let code = sqlite3_step(sqliteStatement)
        if code == SQLITE_ROW { return true }
        sqlite3_reset(sqliteStatement)
        if code == SQLITE_DONE { return false }
        throw database.error(code, sql: sql)
    }
}

/// Values bound straight from their Swift types to a statement's parameters, in order: the way the
/// hot paths bind, without making `DatabaseValue`s first.
///
/// Text is bound up to its first NUL character (SQLite is given a C string's length), and read back
/// the same way; an empty `Data` is an empty blob, not NULL.
public struct Bindings {
    public let statement: SQLiteStatement
    public private(set) var count: Int32 = 0
    /// The first result code other than SQLITE_OK a bind returned (a value too big, out of memory):
    /// the statement is not run then, rather than run with what the slot held before.
    public private(set) var failure: Int32?

    public init(_ statement: SQLiteStatement) { self.statement = statement }

    private mutating func check(_ code: Int32) {
        if code != SQLITE_OK && failure == nil { failure = code }
    }

    /// SQLite copies what it is given (`SQLITE_TRANSIENT`): the Swift value may go away at once.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    public mutating func add(_ value: Int64) {
        count += 1
        check(sqlite3_bind_int64(statement, count, value))
    }

    public mutating func add(_ value: Int) { add(Int64(value)) }

    public mutating func add(_ value: Bool) { add(Int64(value ? 1 : 0)) }

    public mutating func add(_ value: Double) {
        count += 1
        check(sqlite3_bind_double(statement, count, value))
    }

    /// Text up to its first NUL character.
    public mutating func add(_ value: String) {
        count += 1
        var text = value
        let code = text.withUTF8 { bytes -> Int32 in
            // An empty buffer may have no address, and a NULL pointer would bind NULL, not ''.
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(statement, count, "", 0, Self.transient) }
            let length = memchr(base, 0, bytes.count).map { UnsafeRawPointer(base).distance(to: UnsafeRawPointer($0)) } ?? bytes.count
            // 64-bit lengths: a value past SQLite's limit is refused (SQLITE_TOOBIG), not a trap here.
            return sqlite3_bind_text64(statement, count, base, sqlite3_uint64(length), Self.transient, UInt8(SQLITE_UTF8))
        }
        check(code)
    }

    /// Bytes; an empty value as an empty blob (not NULL).
    public mutating func add(_ value: Data) {
        count += 1
        let code = value.withUnsafeBytes { bytes -> Int32 in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_zeroblob(statement, count, 0) }
            return sqlite3_bind_blob64(statement, count, base, sqlite3_uint64(bytes.count), Self.transient)
        }
        check(code)
    }

    public mutating func addNull() {
        count += 1
        check(sqlite3_bind_null(statement, count))
    }

    public mutating func add(_ value: Int64?) { if let value { add(value) } else { addNull() } }
    public mutating func add(_ value: Double?) { if let value { add(value) } else { addNull() } }
    public mutating func add(_ value: String?) { if let value { add(value) } else { addNull() } }
    public mutating func add(_ value: Data?) { if let value { add(value) } else { addNull() } }

    public mutating func add(_ value: DatabaseValue) {
        switch value.storage {
        case .null: addNull()
        case .int64(let i): add(i)
        case .double(let d): add(d)
        case .string(let s): add(s)
        case .blob(let data): add(data)
        }
    }
}
