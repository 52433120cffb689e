import Dispatch

/// A database file in WAL mode with one writing connection and up to
/// `Configuration.maximumReaderCount` reading ones, so reads go on while a write runs and each read
/// sees one committed state.
///
/// Writes are serialized on the writer's queue and run in an immediate transaction, committed unless
/// the closure throws. Reads run in a deferred transaction on a read-only connection. The async forms
/// run the closure on a dispatch queue and resume the caller when it is done, so a task never blocks a
/// thread of Swift's concurrency pool waiting for SQLite.
public final class DatabasePool: DatabaseWriter, @unchecked Sendable {
    public let path: String
    private let configuration: Configuration
    private let writer: Database
    private let writerQueue: DispatchQueue
    private let writerKey = DispatchSpecificKey<Bool>()
    /// Readers not in use; guarded by `lock`.
    private var idleReaders: [Database] = []
    private var readerCount = 0
    private let lock = DispatchSemaphore(value: 1)
    private let available: DispatchSemaphore
    private let readQueue = DispatchQueue(label: "SQLiteDB.DatabasePool.read", attributes: .concurrent)
    /// Set by `close()`; guarded by `lock` (readers) and the writer's queue (the writer).
    private var closed = false

    public init(path: String, configuration: Configuration = Configuration()) throws {
        self.path = path
        self.configuration = configuration
        var writing = configuration
        writing.readonly = false
        writer = try Database(path: path, configuration: writing)
        // WAL: readers and the writer do not block each other. NORMAL is durable in WAL against a
        // crash of the process; a `prepareDatabase` may ask for FULL (power loss too).
        let mode = try String.fetchOne(writer, sql: "PRAGMA journal_mode = WAL")
        guard mode?.lowercased() == "wal" else {
            throw DatabaseError(resultCode: .SQLITE_ERROR, message: "could not put \(path) in WAL mode (journal_mode is \(mode ?? "unknown"))")
        }
        try writer.execute(sql: "PRAGMA synchronous = NORMAL")
        for prepare in configuration.preparations { try prepare(writer) }
        writerQueue = DispatchQueue(label: "SQLiteDB.DatabasePool.writer")
        writerQueue.setSpecific(key: writerKey, value: true)
        available = DispatchSemaphore(value: max(1, configuration.maximumReaderCount))
    }

    // MARK: Writing

    private func onWriter<T>(_ body: (Database) throws -> T) throws -> T {
        precondition(DispatchQueue.getSpecific(key: writerKey) == nil, "DatabasePool.write is not reentrant: a write inside another")
        return try writerQueue.sync {
            guard !closed else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the database pool is closed") }
            return try body(writer)
        }
    }

    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try onWriter { try $0.committing(.immediate, body) }
    }

    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try onWriter(body)
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            writerQueue.async {
                continuation.resume(with: Result {
                    guard !self.closed else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the database pool is closed") }
                    return try self.writer.committing(.immediate, body)
                })
            }
        }
    }

    // MARK: Reading

    private func acquireReader() throws -> Database {
        available.wait()
        lock.wait()
        if closed {
            lock.signal()
            available.signal()
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the database pool is closed")
        }
        if let reader = idleReaders.popLast() {
            lock.signal()
            return reader
        }
        readerCount += 1
        lock.signal()
        do {
            var reading = configuration
            reading.readonly = true
            // A reader waits rather than fail in WAL's rare busy moments (a recovery after a crash).
            if case .immediateError = reading.busyMode { reading.busyMode = .timeout(10) }
            let reader = try Database(path: path, configuration: reading)
            for prepare in configuration.preparations { try prepare(reader) }
            return reader
        } catch {
            lock.wait()
            readerCount -= 1
            lock.signal()
            available.signal()
            throw error
        }
    }

    private func release(_ reader: Database) {
        lock.wait()
        if closed { try? reader.close() } else { idleReaders.append(reader) }
        lock.signal()
        available.signal()
    }

    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        let reader = try acquireReader()
        defer { release(reader) }
        return try reader.committing(.deferred, body)
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            readQueue.async {
                continuation.resume(with: Result { try self.read(body) })
            }
        }
    }

    /// Closes every connection (a reader in use when its read ends); later uses throw.
    public func close() throws {
        try writerQueue.sync {
            guard !closed else { return }
            lock.wait()
            closed = true
            let readers = idleReaders
            idleReaders = []
            lock.signal()
            for reader in readers { try? reader.close() }
            try writer.close()
        }
    }
}
