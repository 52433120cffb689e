import class CloudKitModels.Lock
import CSQLite
import SQLiteDB

/// Reads SQLite's `PRAGMA data_version` (`Store.changeStamp()`) on a read-only connection of its own,
/// under a mutex, with the statement prepared once.
///
/// The answer cache asks before every answer, from every event loop. Through a `DatabaseQueue` that
/// was 7.8 k instructions a call (a dispatch queue's `sync`), about 5 % of an answer from the cache, and
/// the two event loops of a 2-core machine waited for each other in it (`perf`: 1.2 % of the server's
/// time in `_dispatch_sync_f_slow` under wrk). Here the lock is held for one step of one statement.
final class ChangeStampReader: @unchecked Sendable {
    private let lock = Lock()
    private let connection: OpaquePointer
    private let statement: OpaquePointer

    /// A read-only connection to the database file at `path` that never waits on a lock: it is read on
    /// the event loops, under one mutex, so a wait would stall every connection of both loops. In WAL
    /// mode a reader meets a lock only in recovery or against a connection in exclusive locking mode;
    /// then the stamp is nil, which every caller takes as "changed" (the request takes the full path,
    /// whose connections wait up to 10 s off the event loop).
    init(path: String) throws {
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close(opened)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
        }
        sqlite3_extended_result_codes(opened, 1)
        sqlite3_busy_timeout(opened, 0)
        var prepared: OpaquePointer?
        let prepareCode = sqlite3_prepare_v2(opened, "PRAGMA data_version", -1, &prepared, nil)
        guard prepareCode == SQLITE_OK, let prepared else {
            let message = String(cString: sqlite3_errmsg(opened))
            sqlite3_close(opened)
            throw DatabaseError(resultCode: ResultCode(rawValue: prepareCode), message: message, sql: "PRAGMA data_version")
        }
        connection = opened
        statement = prepared
    }

    deinit {
        sqlite3_finalize(statement)
        sqlite3_close_v2(connection)
    }

    /// The current `data_version`, or nil if SQLite fails (busy past the timeout, I/O).
    func read() -> Int64? {
        lock.withLock {
            defer { sqlite3_reset(statement) }
            guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
            return sqlite3_column_int64(statement, 0)
        }
    }
}
