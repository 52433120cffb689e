import CloudKitWeb
import Crypto
import Foundation
import GRDB

/// Wakes long-polls when writes commit. A poll reads its queue, and if it is empty waits for a wake
/// (a version counter closes the gap between reading and waiting) or its hold time.
final class Courier: Sendable {
    enum Wake { case woken, timeout, replaced }

    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Wake, Never>
    }

    private struct State {
        var closed = false
        var version: UInt64 = 0
        var nextID: UInt64 = 0
        var waiters: [String: Waiter] = [:]
    }

    private let state = Mutex(State())

    var version: UInt64 { state.withLock { $0.version } }
    var isClosed: Bool { state.withLock { $0.closed } }

    /// The server is stopping: waiting polls end now, new ones are refused.
    func close() {
        let waiters = state.withLock { s -> [Waiter] in
            s.closed = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(returning: .replaced) }
    }

    /// Something was queued: every waiting poll looks at its queue again.
    func wakeAll() {
        let waiters = state.withLock { s -> [Waiter] in
            s.version &+= 1
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(returning: .woken) }
    }

    /// Waits for a wake after `seen`, at most `seconds`. A newer poll for the same token replaces this one.
    func wait(token: String, after seen: UInt64, seconds: Double) async -> Wake {
        await withCheckedContinuation { continuation in
            let (id, replaced, immediate) = state.withLock { s -> (UInt64, Waiter?, Bool) in
                if s.version != seen || s.closed { return (0, nil, true) }
                s.nextID += 1
                let old = s.waiters[token]
                s.waiters[token] = Waiter(id: s.nextID, continuation: continuation)
                return (s.nextID, old, false)
            }
            replaced?.continuation.resume(returning: .replaced)
            if immediate {
                continuation.resume(returning: .woken)
                return
            }
            Task {
                try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
                let waiter = self.state.withLock { s -> Waiter? in
                    guard let w = s.waiters[token], w.id == id else { return nil }
                    s.waiters[token] = nil
                    return w
                }
                waiter?.continuation.resume(returning: .timeout)
            }
        }
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
            guard let owner = try String.fetchOne(db, sql: "SELECT created_by FROM device_token WHERE token = ?", arguments: [token]) else { return .unknown }
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
        var stoppingJSON = JSONObject()
        stoppingJSON.set("uuid", uuid)
        stoppingJSON.set("serverErrorCode", ServerErrorCode.tryAgainLater.rawValue)
        stoppingJSON.set("reason", "the server is stopping")
        stoppingJSON.set("retryAfter", JSON.int(1))
        let stopping = respond(503, .object(stoppingJSON), uuid: uuid, extra: [("Retry-After", "1")])
        let unknown = respond(404, errorJSON(.notFound, "unknown push token", uuid), uuid: uuid, extra: [])
        guard request.method.uppercased() == "GET" else {
            return respond(405, errorJSON(.badRequest, "the webcourier URL takes GET", uuid), uuid: uuid, extra: [("Allow", "GET")])
        }
        guard let token = PercentEncoding.decode(Substring(encoded)), !token.isEmpty else { return unknown }
        do {
            while true {
                if courier.isClosed { return stopping }
                let seen = courier.version
                let ttlCutoff = Int64((configuration.now().timeIntervalSince1970 - settings.ttlSeconds) * 1000)
                let next = try await store.pool.write { db -> (known: Bool, payload: String?, dropped: Int) in
                    guard let dropped = try Int.fetchOne(db, sql: "SELECT dropped FROM device_token WHERE token = ?", arguments: [token]) else {
                        return (false, nil, 0)
                    }
                    try db.execute(sql: "DELETE FROM notification_queue WHERE token = ? AND created_at < ?", arguments: [token, ttlCutoff])
                    guard let row = try Row.fetchOne(db, sql: "SELECT id, payload FROM notification_queue WHERE token = ? ORDER BY id LIMIT 1", arguments: [token]) else {
                        return (true, nil, 0)
                    }
                    try db.execute(sql: "DELETE FROM notification_queue WHERE id = ?", arguments: [row["id"] as Int64])
                    if dropped > 0 { try db.execute(sql: "UPDATE device_token SET dropped = 0 WHERE token = ?", arguments: [token]) }
                    return (true, row["payload"], dropped)
                }
                guard next.known else { return unknown }
                if let payload = next.payload {
                    var headers: [(name: String, value: String)] = [(name: "Content-Type", value: "application/json")]
                    if next.dropped > 0 { headers.append((name: "X-Ckbrowse-Dropped-Notifications", value: String(next.dropped))) }
                    return ServerResponse(status: 200, headers: headers, body: Array(payload.utf8))
                }
                if deadline.timeIntervalSinceNow <= 0 { return ServerResponse(status: 200, headers: [], body: []) }
                // A commit in this process wakes the poll at once. One made by another process on the
                // same data directory (`ckbrowse apply`, a second browser on the demo) is seen by the
                // store's change stamp, read every quarter second while waiting.
                let stamp = store.changeStamp()
                var outcome = Courier.Wake.timeout
                while deadline.timeIntervalSinceNow > 0 && !courier.isClosed {
                    outcome = await courier.wait(token: token, after: seen, seconds: min(deadline.timeIntervalSinceNow, 0.25))
                    guard case .timeout = outcome else { break }
                    if store.changeStamp() != stamp {
                        outcome = .woken
                        break
                    }
                }
                switch outcome {
                case .woken: continue
                case .timeout, .replaced: return courier.isClosed ? stopping : ServerResponse(status: 200, headers: [], body: [])
                }
            }
        } catch {
            return respond(500, errorJSON(.internalError, "internal error", uuid), uuid: uuid, extra: [])
        }
    }
}
