#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CSQLite

/// A row's columns read by position, from a `Row` or straight from a statement on a row (see
/// `Database.forEachRow`): one reader for both, so a type that reads rows reads them one way.
public protocol ColumnReader {
    func text(_ column: Int32) -> String?
    func integer(_ column: Int32) -> Int64?
}

/// One result row. A row from `fetchAll`/`fetchOne` holds its values; a row from a cursor reads the
/// statement it came from, and is valid only until the cursor moves (`copy()` keeps it).
///
/// Subscripts read a column by position or by name (exact, then ignoring case). Reading NULL or a value
/// of another type as a non-optional value is a programming error and stops the process, as reading a
/// column that does not exist; fetches that convert values (`String.fetchAll`) throw instead.
public final class Row {
    private enum Storage {
        case values([DatabaseValue], names: [String])
        case statement(Statement)
    }

    private let storage: Storage

    init(copying statement: Statement) {
        let raw = statement.sqliteStatement
        storage = .values((0..<sqlite3_column_count(raw)).map { DatabaseValue(statement: raw, column: $0) }, names: statement.columnNames)
    }

    init(live statement: Statement) { storage = .statement(statement) }

    /// A row that holds its values, for a row kept beyond its cursor's step.
    public func copy() -> Row {
        switch storage {
        case .values: self
        case .statement(let statement): Row(copying: statement)
        }
    }

    /// The statement a cursor's row reads; nil for a row that holds its values.
    public var statement: Statement? {
        if case .statement(let statement) = storage { statement } else { nil }
    }

    public var count: Int {
        switch storage {
        case .values(let values, _): values.count
        case .statement(let statement): statement.columnCount
        }
    }

    public var columnNames: [String] {
        switch storage {
        case .values(_, let names): names
        case .statement(let statement): statement.columnNames
        }
    }

    /// The value at column `index`.
    public func databaseValue(at index: Int) -> DatabaseValue {
        precondition(index >= 0 && index < count, "row index out of range: \(index)")
        switch storage {
        case .values(let values, _): return values[index]
        case .statement(let statement): return DatabaseValue(statement: statement.sqliteStatement, column: Int32(index))
        }
    }

    private func index(of name: String) -> Int {
        let found: Int?
        switch storage {
        case .values(_, let names):
            found = Statement.position(of: name, in: names)
        case .statement(let statement):
            found = statement.index(ofColumn: name)
        }
        guard let found else { fatalError("no such column in row: \(name)") }
        return found
    }

    /// Column `index` as a `Value`; nil for NULL when `orNil`, and a stop for anything else that is not one.
    private func convert<Value: DatabaseValueConvertible>(_ index: Int, orNil: Bool, _ column: @autoclosure () -> String) -> Value? {
        let converted: Value?
        let isNull: Bool
        switch storage {
        case .values(let values, _):
            precondition(index >= 0 && index < values.count, "row index out of range: \(index)")
            isNull = values[index].isNull
            converted = isNull && orNil ? nil : Value.fromDatabaseValue(values[index])
        case .statement(let statement):
            let raw = statement.sqliteStatement
            precondition(index >= 0 && index < sqlite3_column_count(raw), "row index out of range: \(index)")
            isNull = sqlite3_column_type(raw, Int32(index)) == SQLITE_NULL
            converted = isNull && orNil ? nil : Value.fromStatement(raw, column: Int32(index))
        }
        if converted == nil && !(isNull && orNil) {
            fatalError("could not read \(Value.self) from \(isNull ? "NULL" : "a value of another type") in column \(column())")
        }
        return converted
    }

    @_disfavoredOverload
    public subscript<Value: DatabaseValueConvertible>(_ index: Int) -> Value {
        convert(index, orNil: false, String(index))!
    }

    public subscript<Value: DatabaseValueConvertible>(_ index: Int) -> Value? {
        convert(index, orNil: true, String(index))
    }

    @_disfavoredOverload
    public subscript<Value: DatabaseValueConvertible>(_ name: String) -> Value {
        convert(index(of: name), orNil: false, name)!
    }

    public subscript<Value: DatabaseValueConvertible>(_ name: String) -> Value? {
        convert(index(of: name), orNil: true, name)
    }

    // The types rows are read as, each a subscript of its own: a call of the generic subscripts from
    // another module is not specialized, and made the Swift runtime look up `Optional<Value>`'s
    // metadata on every read (400 k instructions of a 200-record query page).
    public subscript(_ index: Int) -> String { convert(index, orNil: false, String(index))! }
    public subscript(_ index: Int) -> String? { convert(index, orNil: true, String(index)) }
    public subscript(_ index: Int) -> Int64 { convert(index, orNil: false, String(index))! }
    public subscript(_ index: Int) -> Int64? { convert(index, orNil: true, String(index)) }
    public subscript(_ index: Int) -> Int { convert(index, orNil: false, String(index))! }
    public subscript(_ index: Int) -> Int? { convert(index, orNil: true, String(index)) }
    public subscript(_ index: Int) -> Double { convert(index, orNil: false, String(index))! }
    public subscript(_ index: Int) -> Double? { convert(index, orNil: true, String(index)) }
    public subscript(_ index: Int) -> Bool { convert(index, orNil: false, String(index))! }
    public subscript(_ index: Int) -> Bool? { convert(index, orNil: true, String(index)) }
    public subscript(_ index: Int) -> Data { convert(index, orNil: false, String(index))! }
    public subscript(_ index: Int) -> Data? { convert(index, orNil: true, String(index)) }

    public subscript(_ index: Int) -> DatabaseValue { databaseValue(at: index) }
    public subscript(_ name: String) -> DatabaseValue { databaseValue(at: index(of: name)) }

    /// The row's values, in column order.
    public var databaseValues: [DatabaseValue] { (0..<count).map(databaseValue(at:)) }
}

extension Row: ColumnReader {
    public func text(_ column: Int32) -> String? { self[Int(column)] }
    public func integer(_ column: Int32) -> Int64? { self[Int(column)] }
}

/// A statement on a row, read in place.
public struct StatementRow: ColumnReader {
    public let statement: SQLiteStatement
    public init(statement: SQLiteStatement) { self.statement = statement }

    /// Text up to its first NUL character, invalid UTF-8 repaired.
    public func text(_ column: Int32) -> String? {
        guard sqlite3_column_type(statement, column) != SQLITE_NULL, let bytes = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: bytes)
    }

    public func integer(_ column: Int32) -> Int64? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, column)
    }
}

/// Rows read one at a time (`while let row = try cursor.next()`). Each row reads the statement in
/// place and is valid until the next call; the statement is reset at the end, and when the cursor goes
/// away before it.
public final class RowCursor {
    public let statement: Statement
    private var done = false
    /// The one row every step answers: it reads the statement, wherever the statement is.
    private let row: Row

    private let generation: Int

    init(_ statement: Statement) {
        self.statement = statement
        row = Row(live: statement)
        generation = statement.generation
    }

    deinit { if !done && statement.generation == generation { sqlite3_reset(statement.sqliteStatement) } }

    public func next() throws -> Row? {
        guard !done else { return nil }
        guard statement.generation == generation else {
            done = true
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "a cursor read after its statement ran again", sql: statement.sql)
        }
        do {
            if try statement.step() { return row }
        } catch {
            done = true
            throw error
        }
        done = true
        return nil
    }

    /// Calls `body` with each remaining row.
    public func forEach(_ body: (Row) throws -> Void) throws {
        while let row = try next() { try body(row) }
    }
}

extension DatabaseValueConvertible {
    static func decoded(_ value: DatabaseValue, sql: String) throws -> Self {
        guard let converted = fromDatabaseValue(value) else {
            throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "could not read \(Self.self) from \(value.isNull ? "NULL" : "a value of another type")", sql: sql)
        }
        return converted
    }

    /// The first column of the first row; nil when there is no row or it holds NULL.
    public static func fetchOne(_ statement: Statement, arguments: StatementArguments = []) throws -> Self? {
        try statement.setArguments(arguments)
        defer { sqlite3_reset(statement.sqliteStatement) }
        guard try statement.step() else { return nil }
        let value = DatabaseValue(statement: statement.sqliteStatement, column: 0)
        return value.isNull ? nil : try decoded(value, sql: statement.sql)
    }

    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Self? {
        try fetchOne(db.makeStatement(sql: sql), arguments: arguments)
    }

    /// The first column of every row.
    public static func fetchAll(_ statement: Statement, arguments: StatementArguments = []) throws -> [Self] {
        try statement.setArguments(arguments)
        // Reset however the loop ends: a statement left on a row holds its read transaction open.
        defer { sqlite3_reset(statement.sqliteStatement) }
        var values: [Self] = []
        while try statement.step() {
            values.append(try decoded(DatabaseValue(statement: statement.sqliteStatement, column: 0), sql: statement.sql))
        }
        return values
    }

    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Self] {
        try fetchAll(db.makeStatement(sql: sql), arguments: arguments)
    }
}

extension Row {
    public static func fetchCursor(_ statement: Statement, arguments: StatementArguments = []) throws -> RowCursor {
        try statement.setArguments(arguments)
        return RowCursor(statement)
    }

    public static func fetchCursor(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> RowCursor {
        try fetchCursor(db.makeStatement(sql: sql), arguments: arguments)
    }

    public static func fetchAll(_ statement: Statement, arguments: StatementArguments = []) throws -> [Row] {
        try statement.setArguments(arguments)
        defer { sqlite3_reset(statement.sqliteStatement) }
        var rows: [Row] = []
        while try statement.step() { rows.append(Row(copying: statement)) }
        return rows
    }

    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Row] {
        try fetchAll(db.makeStatement(sql: sql), arguments: arguments)
    }

    public static func fetchOne(_ statement: Statement, arguments: StatementArguments = []) throws -> Row? {
        try statement.setArguments(arguments)
        defer { sqlite3_reset(statement.sqliteStatement) }
        return try statement.step() ? Row(copying: statement) : nil
    }

    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Row? {
        try fetchOne(db.makeStatement(sql: sql), arguments: arguments)
    }
}

extension Row: Equatable {
    /// Rows are equal when they have the same column names and values, in order.
    public static func == (lhs: Row, rhs: Row) -> Bool {
        lhs.columnNames == rhs.columnNames && lhs.databaseValues == rhs.databaseValues
    }
}

extension Row: CustomStringConvertible {
    public var description: String {
        "[" + zip(columnNames, databaseValues).map { "\($0):\($1)" }.joined(separator: " ") + "]"
    }
}
