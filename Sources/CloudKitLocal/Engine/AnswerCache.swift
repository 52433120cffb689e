import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encoded answers of read requests, kept while the store is unchanged.
///
/// Clients ask the same questions again and again: every fresh install or simulator pages a zone from
/// no sync token, every poll for changes repeats its last token until something changes, and the
/// browser reopens zones. An answer depends only on the request (endpoint, database, body) and on what
/// is stored, so it can be reused until the next commit: every entry belongs to one *change stamp*
/// (`Store.changeStamp()`), and the first request that sees another stamp empties the cache.
///
/// A hit is answered only to a caller authentication accepts without a word (`knownCaller`): the
/// credentials are the configuration's, in memory, so that needs no SQLite either.
final class AnswerCache: Sendable {
    struct Key: Hashable, Sendable {
        var endpoint: String
        var database: DatabaseKey
        /// The signed-in user's record name ("" for none).
        var reader: String
        var body: [UInt8]
    }

    typealias Counters = AnswerCacheCounters

    private struct State {
        var stamp: Int64?
        /// The half hour the entries were computed in (`LocalCloudKit.downloadURLBucket`): answers
        /// carry download URLs that expire, so none is kept past the half hour it was made in.
        var bucket: Int64 = 0
        var answers: [Key: [UInt8]] = [:]
        /// Insertion order, for evicting the oldest first once `limit` bytes are held.
        var order: [Key] = []
        var bytes = 0
        var counters = Counters()

        /// Moves to `stamp` if it is newer (emptying everything); false if it is older than the
        /// current one. `data_version` only grows, so an older stamp was read before the last commit.
        mutating func advance(to stamp: Int64, bucket: Int64) -> Bool {
            if let current = self.stamp, current >= stamp, current != stamp || self.bucket == bucket { return current == stamp }
            let counters = self.counters
            self = State(stamp: stamp, bucket: bucket)
            self.counters = counters
            return true
        }
    }

    /// The bytes of answers kept at most; 0 keeps none.
    let limit: Int
    private let state = Mutex(State())
    private let clock: @Sendable () -> Date

    init(limit: Int, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.limit = limit
        self.clock = clock
    }

    private var bucket: Int64 { Int64(clock().timeIntervalSince1970 * 1000) / LocalCloudKit.downloadURLBucket }

    var isEnabled: Bool { limit > 0 }
    var counters: Counters { state.withLock { $0.counters } }

    /// The answer stored for `key` at `stamp`, if any.
    func answer(_ key: Key, at stamp: Int64) -> [UInt8]? {
        state.withLock { state in
            if state.advance(to: stamp, bucket: bucket), let answer = state.answers[key] {
                state.counters.hits += 1
                return answer
            }
            return nil
        }
    }

    /// Keeps an answer computed from what was stored at `stamp` (read *before* the answer's read
    /// transaction began, so a commit in between makes the entry stale, never wrong).
    func store(_ answer: [UInt8], for key: Key, at stamp: Int64) {
        // One answer may take at most a quarter of the cache (a page is at most a few MB).
        guard isEnabled, answer.count + key.body.count <= limit / 4 else { return }
        state.withLock { state in
            guard state.advance(to: stamp, bucket: bucket), state.answers[key] == nil else { return }
            state.answers[key] = answer
            state.order.append(key)
            state.bytes += answer.count + key.body.count
            state.counters.stored += 1
            var dropped = 0
            while state.bytes > limit, dropped < state.order.count {
                let oldest = state.order[dropped]
                dropped += 1
                if let old = state.answers.removeValue(forKey: oldest) {
                    state.bytes -= old.count + oldest.body.count
                    state.counters.evicted += 1
                }
            }
            state.order.removeFirst(dropped)
        }
    }

    func countSynchronousAnswer() { state.withLock { $0.counters.computedSynchronously += 1 } }
    func countSynchronousWrite() { state.withLock { $0.counters.writtenSynchronously += 1 } }
}

/// What the answer cache did since the server started (tests and `bench serve` print it).
public struct AnswerCacheCounters: Sendable, Equatable {
    /// Requests answered from the cache.
    public var hits = 0
    /// Answers kept.
    public var stored = 0
    /// Answers dropped to stay within the size limit (not counting those a commit made stale).
    public var evicted = 0
    /// Reads computed on the HTTP server's event loop (`LocalCloudKit.answerOnEventLoop`).
    public var computedSynchronously = 0
    /// Writes and fixture resets answered on the event loop (`LocalCloudKit.answerWriteOnEventLoop`).
    public var writtenSynchronously = 0
}
