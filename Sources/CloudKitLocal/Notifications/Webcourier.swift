import CloudKitWeb
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import SQLiteDB

/// Why a waiting long-poll was resumed.
enum CourierWake: Equatable, Sendable {
    /// A payload may be queued for the poll's token: it reads its queue again.
    case woken
    /// The hold time ran out.
    case timeout
    /// A newer poll for the same token took over, or the server is stopping.
    case replaced
    /// The poll's client went away (its request was cancelled).
    case gone
}

/// Which waiting long-polls to wake, and when: the courier's bookkeeping as a value, with no clock and
/// no I/O, so its rules are tested directly (`CourierBookTests`). `Handle` is what resumes a poll (a
/// continuation in the server).
struct CourierBook<Handle> {
    typealias Wake = CourierWake

    struct Waiter {
        let id: UInt64
        let deadline: Double
        let handle: Handle
    }

    /// Moves whenever something may have been queued: a poll that read its queue at an older version
    /// reads it again instead of waiting (this closes the gap between reading and waiting).
    private(set) var version: UInt64 = 0
    private(set) var closed = false
    private var waiters: [String: Waiter] = [:]
    private var lastID: UInt64 = 0

    var isEmpty: Bool { waiters.isEmpty }
    var count: Int { waiters.count }
    var tokens: Set<String> { Set(waiters.keys) }

    mutating func newID() -> UInt64 {
        lastID += 1
        return lastID
    }

    /// A poll that read its queue at version `seen` waits until `deadline`. Answers the polls to
    /// resume now: this one (`.woken`) when something may have been queued since `seen`, or
    /// (`.replaced`) when the server is stopping; an older poll of the same token (`.replaced`).
    mutating func add(id: UInt64, token: String, seen: UInt64, deadline: Double, handle: Handle) -> [(Handle, Wake)] {
        if closed { return [(handle, .replaced)] }
        if version != seen { return [(handle, .woken)] }
        let older = waiters.updateValue(Waiter(id: id, deadline: deadline, handle: handle), forKey: token)
        return older.map { [($0.handle, .replaced)] } ?? []
    }

    /// The poll `id` no longer waits (its client went away): its handle, if it was still waiting.
    mutating func remove(id: UInt64) -> Handle? {
        guard let (token, waiter) = waiters.first(where: { $0.value.id == id }) else { return nil }
        waiters[token] = nil
        return waiter.handle
    }

    /// Something may have been queued for `tokens`: their polls read their queues again.
    mutating func queued(_ tokens: some Sequence<String>) -> [Handle] {
        version &+= 1
        return tokens.compactMap { waiters.removeValue(forKey: $0)?.handle }
    }

    /// Polls whose hold time has run out by `now`.
    mutating func expire(now: Double) -> [Handle] {
        let expired = waiters.filter { $0.value.deadline <= now }
        for token in expired.keys { waiters[token] = nil }
        return expired.values.map(\.handle)
    }

    /// The earliest hold time still running.
    var nextDeadline: Double? { waiters.values.lazy.map(\.deadline).min() }

    /// The server is stopping: every poll ends, and new ones are refused.
    mutating func close() -> [Handle] {
        closed = true
        defer { waiters = [:] }
        return waiters.values.map(\.handle)
    }
}

extension CourierBook: Sendable where Handle: Sendable {}
extension CourierBook.Waiter: Sendable where Handle: Sendable {}

/// Wakes long-polls when payloads are queued for them. A waiting poll costs a continuation and an
/// entry in `CourierBook`: no task, no timer and no polling of its own.
///
/// - A commit of this server that queued payloads wakes exactly the polls of those tokens
///   (`queued(_:)`, run after the commit by `enqueue`).
/// - A commit made by another process on the same data directory (`ckbrowse apply`, a second browser
///   on the demo) is seen by one watcher for the whole server: while any poll waits, it reads the
///   store's change stamp every `stampInterval` (a quarter second) and, when it moved, asks the store
///   once which waiting tokens have payloads queued.
/// - The same watcher ends polls whose hold time ran out.
final class Courier: Sendable {
    typealias Wake = CourierWake

    private typealias Book = CourierBook<CheckedContinuation<Wake, Never>>

    /// Reads the change stamp (`Store.changeStamp`).
    private let stamp: @Sendable () -> Int64?
    /// Which of these tokens have payloads queued (nil if the store could not say: all are woken).
    private let pending: @Sendable (Set<String>) -> Set<String>?
    private let stampInterval: Double
    private let book = Mutex(Book())
    /// The watcher's queue and timer; its state below is touched only on `queue`.
    private let queue = DispatchQueue(label: "ckbrowse.courier")
    /// Dispatch sources are thread-safe; it is set up in `init` and only scheduled after.
    nonisolated(unsafe) private let timer: any DispatchSourceTimer
    private let watcher = Mutex(Watcher())

    private struct Watcher {
        var lastStamp: Int64?
        var lastCheck: Double = 0
        /// When the timer fires next (nil: idle).
        var armedFor: Double?
    }

    init(stampInterval: Double = 0.25, stamp: @escaping @Sendable () -> Int64?, pending: @escaping @Sendable (Set<String>) -> Set<String>?) {
        self.stamp = stamp
        self.pending = pending
        self.stampInterval = stampInterval
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
    }

    /// A courier that watches `store`: its change stamp, and its queued payloads.
    convenience init(store: Store) {
        self.init(
            stamp: { store.changeStamp() },
            pending: { tokens in
                try? store.pool.read { db in
                    Set(try String.fetchAll(db.cachedStatement(sql: "SELECT DISTINCT token FROM notification_queue"))).intersection(tokens)
                }
            })
    }

    deinit { timer.cancel() }

    var version: UInt64 { book.withLock { $0.version } }
    var isClosed: Bool { book.withLock { $0.closed } }
    /// Polls waiting now.
    var waiting: Int { book.withLock { $0.count } }

    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// The server is stopping: waiting polls end now, new ones are refused.
    func close() {
        for waiter in book.withLock({ $0.close() }) { waiter.resume(returning: .replaced) }
    }

    /// A request of this server committed: a poll that read its queue before the commit reads it
    /// again rather than wait (the payloads themselves wake their polls through `queued`).
    func wakeAll() {
        _ = book.withLock { $0.queued([]) }
    }

    /// Payloads were queued for `tokens` and committed: their polls read their queues again.
    func queued(_ tokens: some Sequence<String>) {
        for waiter in book.withLock({ $0.queued(tokens) }) { waiter.resume(returning: .woken) }
    }

    /// Waits for a payload for `token` queued after version `seen`, at most `seconds`. A newer poll
    /// for the same token replaces this one; a cancelled task (its client went away) ends at once.
    func wait(token: String, after seen: UInt64, seconds: Double) async -> Wake {
        let id = book.withLock { $0.newID() }
        let deadline = Self.now() + max(0, seconds)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Wake, Never>) in
                let (resumes, waits) = book.withLock { book -> ([(CheckedContinuation<Wake, Never>, Wake)], Bool) in
                    // Cancelled before it waited: the cancellation handler found nothing to resume.
                    if Task.isCancelled { return ([(continuation, .gone)], false) }
                    let waits = !book.closed && book.version == seen  // else `add` resumes it at once
                    return (book.add(id: id, token: token, seen: seen, deadline: deadline, handle: continuation), waits)
                }
                for (waiter, wake) in resumes { waiter.resume(returning: wake) }
                if waits { arm() }
            }
        } onCancel: {
            book.withLock { $0.remove(id: id) }?.resume(returning: .gone)
        }
    }

    /// Starts (or brings forward) the watcher after a poll began to wait.
    private func arm() {
        queue.async { self.rearm() }
    }

    /// On `queue`: sets the timer to the next stamp check or hold deadline, or idles it when nobody waits.
    private func rearm() {
        let (empty, deadline) = book.withLock { ($0.isEmpty, $0.nextDeadline) }
        guard !empty else {
            watcher.withLock { $0.armedFor = nil }
            timer.schedule(deadline: .distantFuture)
            return
        }
        let next = watcher.withLock { w -> Double? in
            let check = max(w.lastCheck + stampInterval, Self.now())
            let next = min(check, deadline ?? check)
            if let armed = w.armedFor, armed <= next, armed > Self.now() { return nil }
            w.armedFor = next
            return next
        }
        guard let next else { return }
        timer.schedule(deadline: .now() + max(0, next - Self.now()), leeway: .milliseconds(5))
    }

    /// On `queue`: the timer fired.
    private func tick() {
        let now = Self.now()
        watcher.withLock { $0.armedFor = nil }
        let due = watcher.withLock { now - $0.lastCheck >= stampInterval * 0.9 }
        if due && !book.withLock({ $0.isEmpty }) {
            let current = stamp()
            let moved = watcher.withLock { w -> Bool in
                defer {
                    w.lastStamp = current
                    w.lastCheck = now
                }
                return current == nil || current != w.lastStamp
            }
            if moved {
                // Another process (or this one) committed: wake the polls whose tokens have payloads.
                let tokens = book.withLock { $0.tokens }
                let ready = pending(tokens) ?? tokens
                if !ready.isEmpty { queued(ready) }
            }
        }
        for waiter in book.withLock({ $0.expire(now: now) }) { waiter.resume(returning: .timeout) }
        rearm()
    }
}

extension LocalCloudKit {
    /// Ends waiting long-polls (503) so a stopping server does not wait out their hold time.
    public func closeLongPolls() { courier.close() }
}

/// `/device/1/{container}/{environment}/tokens/create|register` and `GET /webcourier/1/{token}`.
extension LocalCloudKit {
    func handleDevice(_ request: ServerRequest, uuid: String, spent: inout String?) async throws -> (Int, JSON, Caller) {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard parts.count == 6, parts[0] == "device", parts[1] == "1", parts[4] == "tokens",
            let container = PercentEncoding.decode(Substring(parts[2])), !container.isEmpty
        else { throw ServiceError(.notFound, "could not find handler for endpoint", status: 404) }
        // As `/database/1/…` checks it: a token is not stored for a container that cannot exist.
        guard Route.isContainerID(container) else { throw Route.invalidContainer(container) }
        guard let environment = CloudKitEnvironment(rawValue: parts[3]) else {
            throw ServiceError.badRequest("unknown environment '\(parts[3].prefix(40))'; use development or production")
        }
        let endpoint: Endpoint
        switch parts[5] {
        case "create": endpoint = .tokensCreate
        case "register": endpoint = .tokensRegister
        default: throw ServiceError(.notFound, "could not find handler for endpoint", status: 404)
        }
        guard request.method.uppercased() == "POST" else {
            var error = ServiceError(.badRequest, "method \(request.method.prefix(10)) not allowed for tokens/\(parts[5])", status: 405)
            error.extraHeaders = [("Allow", "POST")]
            throw error
        }
        let route = Route(container: container, environment: environment, scope: .public, endpoint: endpoint)
        if request.header("X-Apple-CloudKit-Request-KeyID") != nil {
            throw ServiceError(.authenticationFailed, "tokens belong to a signed-in user; server-to-server keys cannot create or register them")
        }
        let caller = try authenticate(request, route: route)
        spent = caller.spentToken
        guard let user = caller.userRecordName else { throw authenticationRequired(route, request, reason: "request needs authorization") }
        let body = try decodeBody(APNsToken.self, parseBody(request.body))
        guard ["development", "production"].contains(body.apnsEnvironment) else {
            throw ServiceError.badRequest("apnsEnvironment must be development or production")
        }
        let now = Int64(configuration.now().timeIntervalSince1970 * 1000)
        if endpoint == .tokensCreate {
            // Each call creates a new token and queue (spec §4.1: reuse is unconfirmed).
            let token = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            try await store.pool.write { db in
                try db.execute(
                    sql: "INSERT INTO device_token (token, apns_environment, created_by, session, created_at) VALUES (?, ?, ?, ?, ?)",
                    arguments: [token, body.apnsEnvironment, user, caller.session, now])
                try db.execute(
                    sql: "INSERT OR REPLACE INTO token_binding (token, container, environment, user) VALUES (?, ?, ?, ?)",
                    arguments: [token, container, environment.rawValue, user])
            }
            let url = baseURL.withLock { $0 } + "/webcourier/1/" + PercentEncoding.encodePathSegment(token)
            return (200, APNsToken(apnsEnvironment: body.apnsEnvironment, apnsToken: token, webcourierURL: url).json, caller)
        }
        guard let token = body.apnsToken, !token.isEmpty else { throw ServiceError.badRequest("tokens/register needs apnsToken") }
        enum Registration { case unknown, someoneElses, registered }
        let outcome = try await store.pool.write { db -> Registration in
            guard let owner = try String.fetchOne(db.cachedStatement(sql: "SELECT created_by FROM device_token WHERE token = ?"), arguments: [token]) else { return .unknown }
            // A push token is its creator's: registering another user's would send her pushes to him.
            guard owner == user else { return .someoneElses }
            // This container's subscriptions now also reach the token (spec §4.3).
            try db.execute(
                sql: "INSERT OR REPLACE INTO token_binding (token, container, environment, user) VALUES (?, ?, ?, ?)",
                arguments: [token, container, environment.rawValue, user])
            return .registered
        }
        switch outcome {
        case .unknown: throw ServiceError.badRequest("unknown apnsToken")
        case .someoneElses: throw ServiceError(.accessDenied, "this apnsToken was created by another user: create your own with tokens/create")
        case .registered: return (200, .object([:]), caller)
        }
    }

    /// One long-poll: the oldest queued payload at once, or the first that arrives within the hold
    /// time, or an empty 200 (keep-alive). Unknown token: 404. The number of notifications dropped
    /// since the last poll (a full queue) is in `X-Ckbrowse-Dropped-Notifications`.
    func pollWebcourier(_ request: ServerRequest) async -> ServerResponse {
        let encoded = String(request.path.dropFirst("/webcourier/1/".count))
        let settings = configuration.notifications
        let deadline = Date().addingTimeInterval(settings.holdSeconds)
        let uuid = UUID().uuidString.lowercased()
        var stoppingError = ServiceError(.tryAgainLater, "the server is stopping", status: 503)
        stoppingError.retryAfter = 1
        let stopping = stoppingError.response(uuid: uuid)
        let unknown = ServiceError(.notFound, "unknown push token", status: 404).response(uuid: uuid)
        guard request.method.uppercased() == "GET" else {
            var error = ServiceError(.badRequest, "the webcourier URL takes GET", status: 405)
            error.extraHeaders = [("Allow", "GET")]
            return error.response(uuid: uuid)
        }
        guard let token = PercentEncoding.decode(Substring(encoded)), !token.isEmpty else { return unknown }
        do {
            while true {
                if courier.isClosed { return stopping }
                let seen = courier.version
                let ttlCutoff = Int64((configuration.now().timeIntervalSince1970 - settings.ttlSeconds) * 1000)
                // A read first: a poll that finds nothing queued (most do) takes no write transaction.
                let peek = try await store.pool.read { db -> (known: Bool, queued: Bool) in
                    guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM device_token WHERE token = ?"), arguments: [token]) ?? false else {
                        return (false, false)
                    }
                    return (true, try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM notification_queue WHERE token = ? LIMIT 1"), arguments: [token]) ?? false)
                }
                guard peek.known else { return unknown }
                let next = !peek.queued ? (known: true, payload: nil, dropped: 0) : try await store.pool.write { db -> (known: Bool, payload: String?, dropped: Int) in
                    guard let dropped = try Int.fetchOne(db.cachedStatement(sql: "SELECT dropped FROM device_token WHERE token = ?"), arguments: [token]) else {
                        return (false, nil, 0)
                    }
                    try db.cachedStatement(sql: "DELETE FROM notification_queue WHERE token = ? AND created_at < ?").execute(arguments: [token, ttlCutoff])
                    guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, payload FROM notification_queue WHERE token = ? ORDER BY id LIMIT 1"), arguments: [token]) else {
                        return (true, nil, 0)
                    }
                    try db.cachedStatement(sql: "DELETE FROM notification_queue WHERE id = ?").execute(arguments: [row["id"] as Int64])
                    if dropped > 0 { try db.cachedStatement(sql: "UPDATE device_token SET dropped = 0 WHERE token = ?").execute(arguments: [token]) }
                    return (true, row["payload"], dropped)
                }
                guard next.known else { return unknown }
                if let payload = next.payload {
                    var headers: [(name: String, value: String)] = [(name: "Content-Type", value: "application/json")]
                    if next.dropped > 0 { headers.append((name: "X-Ckbrowse-Dropped-Notifications", value: String(next.dropped))) }
                    return ServerResponse(status: 200, headers: headers, body: Array(payload.utf8))
                }
                if deadline.timeIntervalSinceNow <= 0 { return ServerResponse(status: 200, headers: [], body: []) }
                // A waiting poll costs nothing until a payload is queued for its token (by this
                // process or another one on the same data directory: see `Courier`).
                switch await courier.wait(token: token, after: seen, seconds: deadline.timeIntervalSinceNow) {
                case .woken: continue
                case .timeout, .replaced, .gone: return courier.isClosed ? stopping : ServerResponse(status: 200, headers: [], body: [])
                }
            }
        } catch {
            return ServiceError.internalError.response(uuid: uuid)
        }
    }
}
