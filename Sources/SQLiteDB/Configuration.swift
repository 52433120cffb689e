/// How connections are opened.
public struct Configuration: @unchecked Sendable {
    /// How long a statement waits for another connection's lock before failing with SQLITE_BUSY.
    public enum BusyMode: Sendable {
        case immediateError
        /// Seconds.
        case timeout(Double)
    }

    /// Connections open read-only (`SQLITE_OPEN_READONLY`).
    public var readonly = false
    public var busyMode: BusyMode = .immediateError
    /// `PRAGMA foreign_keys = ON` on every connection (SQLite's own default is off).
    public var foreignKeysEnabled = true
    /// The most connections a `DatabasePool` reads with at once.
    public var maximumReaderCount = 5
    var preparations: [(Database) throws -> Void] = []

    public init() {}

    /// Adds `body` to what runs on each new connection, after it is opened and configured.
    public mutating func prepareDatabase(_ body: @escaping (Database) throws -> Void) {
        preparations.append(body)
    }
}
