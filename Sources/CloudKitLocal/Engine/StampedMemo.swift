/// Facts read from SQLite at one change stamp, kept for the requests at that stamp: anything a commit
/// can change moves the stamp, so a fact read at stamp S holds for every request that read S. The
/// first request at a new stamp forgets the old facts.
final class StampedMemo<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let memo = Mutex<(stamp: Int64, values: [Key: Value])>((-1, [:]))
    private let capacity: Int

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// The value of `key` at `stamp`: kept, or computed and kept. Without a stamp it is computed.
    func value(at stamp: Int64?, _ key: Key, compute: () throws -> Value) rethrows -> Value {
        guard let stamp else { return try compute() }
        if let known = memo.withLock({ $0.stamp == stamp ? $0.values[key] : nil }) { return known }
        let value = try compute()
        memo.withLock { memo in
            if memo.stamp != stamp || memo.values.count >= capacity { memo = (stamp, [:]) }
            memo.values[key] = value
        }
        return value
    }
}
