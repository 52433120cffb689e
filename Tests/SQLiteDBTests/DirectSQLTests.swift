import Foundation
import SQLiteDB
import Testing


/// `Bindings` (a write's statements bound through SQLite's C API) stores what GRDB stores for the same
/// values, and `StatementRow` reads what GRDB's `Row` reads: rows written one way are found and read
/// the other way (the query index is written by the first and queried through the second).
@Suite struct DirectSQLTests {
    static let values: [DatabaseValue] = [
        .null, 0.databaseValue, Int64.max.databaseValue, (-2.5).databaseValue, "".databaseValue, "plain".databaseValue,
        "é NFD e\u{301} 🧑‍🎨".databaseValue, "a\u{0}b".databaseValue, "\u{0}".databaseValue,
        Data().databaseValue, Data([0, 1, 2, 255]).databaseValue,
    ]

    @Test func bindingsStoreWhatGRDBStoresAndRowsReadTheSame() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (way TEXT, i INTEGER, v)")
            for (i, value) in Self.values.enumerated() {
                try db.execute(sql: "INSERT INTO t (way, i, v) VALUES ('grdb', ?, ?)", arguments: [i, value])
                try db.run("INSERT INTO t (way, i, v) VALUES ('direct', ?, ?)") {
                    $0.add(i)
                    $0.add(value)
                }
            }
            for i in Self.values.indices {
                let stored = try Row.fetchAll(db, sql: "SELECT v, typeof(v), length(CAST(v AS BLOB)) FROM t WHERE i = ? ORDER BY way", arguments: [i])
                #expect(stored.count == 2)
                #expect(stored[0] == stored[1], "value \(i) (\(Self.values[i])): direct \(stored[0]), GRDB \(stored[1])")
                // Text read back by the statement and by GRDB's Row: the same string (GRDB's Row reads
                // only text as a String).
                guard case .string = Self.values[i].storage else { continue }
                let direct = try db.firstRow("SELECT v FROM t WHERE i = ? AND way = 'direct'", { $0.add(i) }) { StatementRow(statement: $0).text(0) }
                let viaRow = try Row.fetchOne(db, sql: "SELECT v FROM t WHERE i = ? AND way = 'direct'", arguments: [i]).map { ($0 as Row).text(0) }
                #expect(direct == viaRow, "value \(i)")
            }
        }
    }

    @Test func aFailedStatementThrowsGRDBsErrorAndLeavesTheStatementUsable() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE u (k TEXT PRIMARY KEY)")
            try db.run("INSERT INTO u (k) VALUES (?)") { $0.add("x") }
            #expect(throws: DatabaseError.self) { try db.run("INSERT INTO u (k) VALUES (?)") { $0.add("x") } }
            do {
                try db.run("INSERT INTO u (k) VALUES (?)") { $0.add("x") }
            } catch let error as DatabaseError {
                #expect(error.resultCode == .SQLITE_CONSTRAINT)
            }
            try db.run("INSERT INTO u (k) VALUES (?)") { $0.add("y") }
            var keys: [String] = []
            try db.forEachRow("SELECT k FROM u ORDER BY k", { _ in }) { keys.append($0.text(0) ?? "?") }
            #expect(keys == ["x", "y"])
            // GRDB runs the same cached statement with its own arguments afterwards.
            try db.cachedStatement(sql: "INSERT INTO u (k) VALUES (?)").execute(arguments: ["z"])
            #expect(try String.fetchAll(db, sql: "SELECT k FROM u ORDER BY k") == ["x", "y", "z"])
        }
    }
}
