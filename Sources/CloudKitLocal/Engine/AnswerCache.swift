import CloudKitWeb

/// Encoded answers of read requests, kept while the store is unchanged.
///
/// Clients ask the same questions again and again: every fresh install or simulator pages a zone from
/// no sync token, every poll for changes repeats its last token until something changes, and the
/// browser reopens zones. An answer depends only on the request (endpoint, database, body) and on what
/// is stored, so it can be reused until the next commit: every entry belongs to one *change stamp*
/// (`Store.changeStamp()`), and the first request that sees another stamp empties the cache.
///
/// The authentication facts a hit needs are kept the same way (which API tokens and web auth tokens
/// were valid, which users exist), so a hit is answered without touching SQLite but never for a
/// caller a miss would refuse: they too are only trusted for the stamp they were read at.
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
        var answers: [Key: [UInt8]] = [:]
        /// Insertion order, for evicting the oldest first once `limit` bytes are held.
        var order: [Key] = []
        var bytes = 0
        var apiTokens: Set<APITokenFact> = []
        var webTokens: [String: KnownUser] = [:]
        var users: [String: KnownUser] = [:]
        var counters = Counters()

        /// Moves to `stamp` if it is newer (emptying everything); false if it is older than the
        /// current one. `data_version` only grows, so an older stamp was read before the last commit.
        mutating func advance(to stamp: Int64) -> Bool {
            if let current = self.stamp, current >= stamp { return current == stamp }
            let counters = self.counters
            self = State(stamp: stamp)
            self.counters = counters
            return true
        }
    }

    struct APITokenFact: Hashable {
        var token: String
        var container: String
    }

    /// A signed-in caller as authentication found them.
    struct KnownUser: Sendable {
        var name: String
        var recordName: String
        /// The web auth session of the token they came with.
        var session: String
    }

    /// The bytes of answers kept at most; 0 keeps none (authentication facts are still kept).
    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = limit }

    var isEnabled: Bool { limit > 0 }
    var counters: Counters { state.withLock { $0.counters } }

    /// The answer stored for `key` at `stamp`, if any.
    func answer(_ key: Key, at stamp: Int64) -> [UInt8]? {
        state.withLock { state in
            if state.advance(to: stamp), let answer = state.answers[key] {
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
            guard state.advance(to: stamp), state.answers[key] == nil else { return }
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

    // MARK: - Authentication facts

    func knowsAPIToken(_ token: String, container: String, at stamp: Int64) -> Bool {
        state.withLock { $0.stamp == stamp && $0.apiTokens.contains(APITokenFact(token: token, container: container)) }
    }

    func user(ofWebToken token: String, at stamp: Int64) -> KnownUser? {
        state.withLock { $0.stamp == stamp ? $0.webTokens[token] : nil }
    }

    /// A user that existed at `stamp` (for tokens the server minted, which name their user).
    func knownUser(_ name: String, at stamp: Int64) -> KnownUser? {
        state.withLock { $0.stamp == stamp ? $0.users[name] : nil }
    }

    /// Records what a full authentication found valid at `stamp`. Kept even when no answers are
    /// (`limit` 0): a few facts, and without them every request pays two SQLite reads to check
    /// its tokens again.
    func remember(apiToken: String, container: String, webToken: String?, user: KnownUser?, at stamp: Int64) {
        state.withLock { state in
            guard state.advance(to: stamp) else { return }
            // Bounded like the answers: a flood of distinct tokens must not grow memory.
            if state.apiTokens.count > 1_000 { state.apiTokens.removeAll() }
            if state.webTokens.count > 10_000 { state.webTokens.removeAll() }
            state.apiTokens.insert(APITokenFact(token: apiToken, container: container))
            if let user {
                state.users[user.name] = user
                if let webToken { state.webTokens[webToken] = user }
            }
        }
    }
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
}
