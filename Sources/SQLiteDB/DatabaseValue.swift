#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CSQLite

/// One SQLite value: NULL, an integer, a real, text or a blob.
public struct DatabaseValue: Hashable, Sendable, CustomStringConvertible {
    public enum Storage: Hashable, Sendable {
        case null
        case int64(Int64)
        case double(Double)
        case string(String)
        case blob(Data)
    }

    public let storage: Storage
    public init(storage: Storage) { self.storage = storage }

    public static let null = DatabaseValue(storage: .null)
    public var isNull: Bool { if case .null = storage { true } else { false } }

    /// The value of column `column` of a statement on a row. Text is read up to its first NUL
    /// character, as it was bound (see `StatementArguments`).
    init(statement: OpaquePointer, column: Int32) {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: storage = .int64(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: storage = .double(sqlite3_column_double(statement, column))
        case SQLITE_TEXT: storage = .string(sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "")
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, column))
            if let bytes = sqlite3_column_blob(statement, column), count > 0 {
                storage = .blob(Data(bytes: bytes, count: count))
            } else {
                storage = .blob(Data())
            }
        default: storage = .null
        }
    }

    public var description: String {
        switch storage {
        case .null: "NULL"
        case .int64(let value): String(value)
        case .double(let value): String(value)
        case .string(let value): "'\(value)'"
        case .blob(let value): "<\(value.count) bytes>"
        }
    }
}

/// A Swift value that is stored as one SQLite value and read back from one.
public protocol DatabaseValueConvertible {
    var databaseValue: DatabaseValue { get }
    /// The value `dbValue` holds, or nil when it holds no such value (NULL included).
    static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Self?
    /// The value of column `column` of a statement on a row, read in place (the types rows are read
    /// as most often skip making a `DatabaseValue` first); nil as `fromDatabaseValue`.
    static func fromStatement(_ statement: SQLiteStatement, column: Int32) -> Self?
}

extension DatabaseValueConvertible {
    public static func fromStatement(_ statement: SQLiteStatement, column: Int32) -> Self? {
        fromDatabaseValue(DatabaseValue(statement: statement, column: column))
    }
}

extension DatabaseValue: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { self }
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> DatabaseValue? { dbValue }
}

extension Int64: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .int64(self)) }
    public static func fromStatement(_ statement: SQLiteStatement, column: Int32) -> Int64? {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: sqlite3_column_int64(statement, column)
        case SQLITE_FLOAT: Int64(exactly: sqlite3_column_double(statement, column))
        default: nil
        }
    }
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Int64? {
        switch dbValue.storage {
        case .int64(let value): value
        case .double(let value): Int64(exactly: value)
        default: nil
        }
    }
}

extension Int: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .int64(Int64(self))) }
    public static func fromStatement(_ statement: SQLiteStatement, column: Int32) -> Int? {
        Int64.fromStatement(statement, column: column).flatMap { Int(exactly: $0) }
    }
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Int? { Int64.fromDatabaseValue(dbValue).flatMap { Int(exactly: $0) } }
}

extension Int32: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .int64(Int64(self))) }
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Int32? { Int64.fromDatabaseValue(dbValue).flatMap { Int32(exactly: $0) } }
}

extension Bool: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .int64(self ? 1 : 0)) }
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Bool? {
        switch dbValue.storage {
        case .int64(let value): value != 0
        case .double(let value): value != 0
        default: nil
        }
    }
}

extension Double: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .double(self)) }
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Double? {
        switch dbValue.storage {
        case .int64(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }
}

extension String: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .string(self)) }
    public static func fromStatement(_ statement: SQLiteStatement, column: Int32) -> String? {
        guard sqlite3_column_type(statement, column) == SQLITE_TEXT else {
            return fromDatabaseValue(DatabaseValue(statement: statement, column: column))
        }
        return sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
    }
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> String? {
        switch dbValue.storage {
        case .string(let value): value
        case .blob(let value): String(validating: value, as: UTF8.self)
        default: nil
        }
    }
}

extension Data: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .blob(self)) }
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Data? {
        switch dbValue.storage {
        case .blob(let value): value
        case .string(let value): Data(value.utf8)
        default: nil
        }
    }
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { self?.databaseValue ?? .null }
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Wrapped?? {
        dbValue.isNull ? .some(nil) : Wrapped.fromDatabaseValue(dbValue).map { .some($0) }
    }
}

/// Values bound to a statement's `?` parameters, in order.
public struct StatementArguments: ExpressibleByArrayLiteral, Sendable {
    public var values: [DatabaseValue]

    public init() { values = [] }
    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) { values = elements.map { $0?.databaseValue ?? .null } }
    public init<S: Sequence>(_ sequence: S) where S.Element == (any DatabaseValueConvertible)? { values = sequence.map { $0?.databaseValue ?? .null } }
    public init<S: Sequence>(_ sequence: S) where S.Element == any DatabaseValueConvertible { values = sequence.map(\.databaseValue) }
    public init<S: Sequence>(_ sequence: S) where S.Element: DatabaseValueConvertible { values = sequence.map(\.databaseValue) }

    public var isEmpty: Bool { values.isEmpty }

    public static func + (lhs: StatementArguments, rhs: StatementArguments) -> StatementArguments {
        var sum = lhs
        sum.values += rhs.values
        return sum
    }
}
