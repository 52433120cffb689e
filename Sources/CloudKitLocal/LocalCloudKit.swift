import CloudKitWeb
import Crypto
import Foundation
import GRDB

/// One HTTP exchange as the server sees it, independent of the HTTP library.
public struct ServerRequest: Sendable {
    public var method: String
    /// Path without the query string.
    public var path: String
    public var query: String?
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, path: String, query: String?, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// A request whose target is a path with an optional `?query`, as HTTP sends it.
    public init(method: String, target: Substring, headers: [(name: String, value: String)], body: [UInt8]) {
        if let mark = target.firstIndex(of: "?") {
            self.init(method: method, path: String(target[..<mark]), query: String(target[target.index(after: mark)...]), headers: headers, body: body)
        } else {
            self.init(method: method, path: String(target), query: nil, headers: headers, body: body)
        }
    }

    func header(_ name: String) -> String? {
        headers.first { Self.sameFieldName($0.name, name) }?.value
    }

    /// ASCII case-insensitive equality (header names are ASCII; Foundation's compare is far slower).
    static func sameFieldName(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return zip(a.utf8, b.utf8).allSatisfy { x, y in
            x == y || (x | 0x20 == y | 0x20 && (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(x | 0x20))
        }
    }

    /// A query parameter's value as sent, before percent-decoding.
    func rawQueryValue(_ name: String) -> Substring? {
        for pair in (query ?? "").split(separator: "&") where pair.hasPrefix(name + "=") {
            return pair.dropFirst(name.count + 1)
        }
        return nil
    }

    var queryItems: [String: String] {
        var items: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard let key = PercentEncoding.decode(kv[0], plusAsSpace: true) else { continue }
            items[key] = kv.count > 1 ? PercentEncoding.decode(kv[1], plusAsSpace: false) ?? "" : ""
        }
        return items
    }
}

public struct ServerResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
}

/// Settings of the local server.
public struct LocalServerConfiguration: Sendable {
    /// Accepted `ckAPIToken` values (in addition to those stored by a seed).
    public var apiTokens: [String] = []
    /// The container each API token or server-to-server key ID belongs to (§2.1: a token is bound to
    /// one container; elsewhere it is AUTHENTICATION_FAILED). One not listed works for any container,
    /// a convenience of the local server for quick starts.
    public var credentialContainers: [String: String] = [:]
    /// Web origins (`http://localhost:8080`) whose pages may call the server (CORS); nil allows any, as
    /// suits a server on loopback. Apple's console sets these per API token ("Allowed Origins").
    public var allowedOrigins: Set<String>?
    /// Apple's documented contract (§2.2): each web auth token works once; the answer carries its
    /// replacement. Off by default, because the live service was observed to accept old tokens.
    public var singleUseWebAuthTokens = false
    /// Users: a name and the web auth token that signs them in.
    public var users: [(name: String, token: String)] = []
    /// How other users find a user (users/discover, users/lookup, share participants), by name.
    public var userContacts: [String: UserContact] = [:]
    /// Server-to-server keys: Key ID and the PEM public key registered for it.
    public var serverKeys: [(keyID: String, publicKeyPEM: String)] = []
    /// Base URL clients reach the server at (for `redirectURL` and sign-in pages).
    public var baseURL: String = "http://127.0.0.1"
    /// Accepted clock skew of server-to-server signature dates, in seconds (the real value is
    /// unconfirmed; the reference suggests ±10 minutes).
    public var signatureWindow: Double = 600
    /// Request bodies larger than this are refused with BAD_REQUEST.
    public var maximumBodyBytes: Int = 16 << 20
    /// The largest asset file an upload URL takes: 15 MB, as the assets/upload page says; the Data
    /// Size Limits page says 50 MB (the reference notes the conflict), so it can be raised.
    public var maximumAssetBytes: Int = 15 << 20
    /// Bytes of encoded read answers kept for repeated requests while nothing changes (0: none).
    public var answerCacheBytes: Int = 64 << 20
    /// The answer cache of a server inside the browser's process (the embedded demo): the browser
    /// keeps its own record cache, so a few MB for repeated small reads, not 64 MB of pages.
    public static let embeddedAnswerCacheBytes = 4 << 20
    /// The clock (injected in tests).
    public var now: @Sendable () -> Date = { Date() }
    /// Subscriptions firing and the webcourier long-poll.
    public var notifications = NotificationSettings()
    /// Refuse queries the schema's indexes do not allow, as CloudKit does (`IndexRules`). Off only
    /// for tests written before schemas were enforced (`serve --no-index-rules`).
    public var enforcesIndexes = true

    public init() {}
}

/// How a user is found by others: an email address and a phone number (either may be absent).
public struct UserContact: Sendable, Hashable {
    public var email: String?
    public var phone: String?
    public init(email: String? = nil, phone: String? = nil) {
        self.email = email
        self.phone = phone
    }
}

/// The local CloudKit-compatible service: routes `/database/1/…` requests, authenticates them as the
/// real service does, and runs each against the SQLite store (one transaction per writing request).
/// The HTTP server and the in-process transport both call `handle(_:)`.
public final class LocalCloudKit: Sendable {
    public let store: Store
    let configuration: LocalServerConfiguration
    /// The HMAC key for minted web auth tokens. `SymmetricKey` is not declared Sendable, but it is an
    /// immutable value read concurrently only (it was rebuilt from bytes on every request before).
    nonisolated(unsafe) let tokenKey: SymmetricKey
    let databaseIDs = Mutex<[DatabaseKey: Int64]>([:])
    let baseURL: Mutex<String>
    /// Wakes webcourier long-polls when payloads are queued for them.
    let courier: Courier
    /// Web auth tokens already used, when they are single-use (kept in memory: a restart forgets them).
    let usedWebTokens = Mutex<Set<String>>([])
    /// Answers of reads, reused until the next commit.
    let answers: AnswerCache
    /// Download tokens by file id (see `downloadToken`).
    let downloadTokens = Mutex<[Int64: String]>([:])
    /// File ids by container, environment and checksum, as read at one change stamp (a file comes
    /// and goes only with a commit, which moves the stamp).
    let blobIDs = StampedMemo<BlobKey, Int64?>()
    /// Record types' schemas by container, environment and name, as read at one change stamp.
    let typeSchemas = StampedMemo<TypeKey, RecordTypeSchema?>(capacity: 10_000)

    public init(store: Store, configuration: LocalServerConfiguration) throws {
        self.store = store
        self.configuration = configuration
        self.baseURL = Mutex(configuration.baseURL)
        self.answers = AnswerCache(limit: configuration.answerCacheBytes)
        self.courier = Courier(store: store)
        let secret: String = try store.pool.write { db in
            for token in configuration.apiTokens {
                try db.execute(
                    sql: "INSERT INTO api_token (token, container) VALUES (?, ?) ON CONFLICT (token) DO UPDATE SET container = excluded.container",
                    arguments: [token, configuration.credentialContainers[token]])
            }
            for user in configuration.users {
                try db.execute(sql: "INSERT OR REPLACE INTO web_user (token, name) VALUES (?, ?)", arguments: [user.token, user.name])
                let contact = configuration.userContacts[user.name]
                try db.execute(
                    sql: """
                        INSERT INTO user_info (name, record_name, email, phone) VALUES (?, ?, ?, ?)
                        ON CONFLICT (name) DO UPDATE SET email = coalesce(excluded.email, email), phone = coalesce(excluded.phone, phone)
                        """,
                    arguments: [user.name, Self.userRecordName(for: user.name), contact?.email, contact?.phone])
            }
            for key in configuration.serverKeys {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO server_key (key_id, public_key_pem, container) VALUES (?, ?, ?)",
                    arguments: [key.keyID, key.publicKeyPEM, configuration.credentialContainers[key.keyID]])
            }
            if let secret = try String.fetchOne(db, sql: "SELECT value FROM setting WHERE key = 'token-secret'") {
                return secret
            }
            let secret = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            try db.execute(sql: "INSERT INTO setting (key, value) VALUES ('token-secret', ?)", arguments: [secret])
            return secret
        }
        tokenKey = SymmetricKey(data: Data(base64Encoded: secret) ?? Data(secret.utf8))
        let now = Int64((configuration.now().timeIntervalSince1970 * 1000).rounded())
        try store.pool.write { db in _ = try Self.collectUnusedAssets(db, now: now) }
    }

    /// The user record name of a user name: `_` and 32 hex digits, as the service's look.
    public static func userRecordName(for name: String) -> String {
        "_" + SHA256.hash(data: Data(name.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// The record name writes made with a server-to-server key are attributed to.
    static func keyUserRecordName(_ keyID: String) -> String { userRecordName(for: "server-key:" + keyID) }

    /// Where clients reach this server (known once the port is bound); used in `redirectURL`.
    public func setBaseURL(_ url: String) { baseURL.withLock { $0 = url } }

    // MARK: - Handling

    public func handle(_ request: ServerRequest) async -> ServerResponse {
        if request.method.uppercased() == "OPTIONS" { return preflight(request) }
        return withCORS(await answer(request), request)
    }

    func answer(_ request: ServerRequest) async -> ServerResponse {
        let uuid = Self.requestUUID()
        var extraHeaders: [(String, String)] = []
        if request.path.hasPrefix("/webcourier/1/") { return await pollWebcourier(request) }
        if request.path.hasPrefix("/share/") { return await sharePage(String(request.path.dropFirst("/share/".count))) }
        if request.path == "/signin" { return await signInPage(request) }
        do {
            // Asset bytes: uploads may be larger than a JSON body; their URLs are their permission.
            if request.path.hasPrefix(Self.uploadPathPrefix) { return try await uploadAssetBytes(request, uuid: uuid) }
            if request.path.hasPrefix(Self.downloadPathPrefix) { return try await downloadAsset(request, uuid: uuid) }
            if request.body.count > configuration.maximumBodyBytes {
                throw ServiceError.badRequest("request body of \(request.body.count) bytes exceeds the limit of \(configuration.maximumBodyBytes)")
            }
            if request.path.hasPrefix(Self.schemaPathPrefix) { return try await handleSchema(request, uuid: uuid) }
            if request.path.hasPrefix(Self.adminPathPrefix) { return try await handleAdmin(request, uuid: uuid) }
            if request.path == "/ready" { return readiness() }
            if request.path.hasPrefix("/device/") {
                let (status, json) = try await handleDevice(request, uuid: uuid)
                return respond(status, json, uuid: uuid, extra: extraHeaders)
            }
            let route = try Route(path: request.path, method: request.method)
            if let cached = cachedResponse(request, route: route) { return cached }
            // Read before authentication and the answer's transaction: see `AnswerCache.store`.
            let stamp = store.changeStamp()
            let caller = try await authenticate(request, route: route, stamp: stamp)
            if let user = caller.userName {
                extraHeaders.append(("X-Apple-CloudKit-Web-Auth-Token", mintWebAuthToken(user: user, session: caller.session ?? "")))
            }
            let body: JSON = try route.endpoint.method == .get ? .object([:]) : parseBody(request.body)
            let (status, reply) = try await dispatch(route, caller: caller, body: body, stamp: stamp)
            let bytes = reply.bytes
            if let stamp, let apiToken = caller.apiToken {
                answers.remember(
                    apiToken: apiToken, container: route.container, webToken: caller.webToken,
                    user: caller.userName.map { AnswerCache.KnownUser(name: $0, recordName: caller.userRecordName ?? "", session: caller.session ?? "") },
                    at: stamp)
                if status == 200 && route.isCacheable {
                    answers.store(bytes, for: answerKey(route, request, userRecordName: caller.userRecordName), at: stamp)
                }
            }
            return respond(status, .encoded(bytes), uuid: uuid, extra: extraHeaders)
        } catch let error as ServiceError {
            var object = JSONObject()
            object.set("uuid", uuid)
            object.set("serverErrorCode", error.code.rawValue)
            object.set("reason", error.reason)
            object.set("redirectURL", error.redirectURL)
            object.set("retryAfter", error.retryAfter)
            return respond(error.status, .object(object), uuid: uuid, extra: extraHeaders + error.extraHeaders)
        } catch let error as JSONDecodingError {
            return respond(400, errorJSON(.badRequest, "BadRequestException: \(error.description)", uuid), uuid: uuid, extra: extraHeaders)
        } catch {
            return respond(500, errorJSON(.internalError, "internal error", uuid), uuid: uuid, extra: extraHeaders)
        }
    }

    /// The answer to a request whose body is larger than `maximumBodyBytes` (the HTTP adapter stops
    /// reading it at the limit, so the service never sees the bytes).
    public func bodyTooLarge() -> ServerResponse {
        let uuid = Self.requestUUID()
        let reason = "request body exceeds the limit of \(configuration.maximumBodyBytes) bytes"
        return respond(400, errorJSON(.badRequest, reason, uuid), uuid: uuid, extra: [])
    }

    // MARK: - Cached answers

    /// What the answer cache has done so far.
    public var answerCacheCounters: AnswerCacheCounters { answers.counters }

    // MARK: - CORS

    /// Response headers a web page (CloudKit JS) may read, as the service exposes them (§1.3).
    static let exposedHeaders = "X-Apple-Request-UUID, X-Apple-CloudKit-Web-Auth-Token, X-Apple-CloudKit-Session, X-Responding-Instance"

    func originAllowed(_ origin: String) -> Bool {
        configuration.allowedOrigins.map { $0.contains(origin) } ?? true
    }

    /// Adds `Access-Control-Allow-Origin` (the caller's origin, when allowed) and the exposed headers
    /// to an answer of a request that came from a web page (`Origin`).
    func withCORS(_ response: ServerResponse, _ request: ServerRequest) -> ServerResponse {
        guard let origin = request.header("Origin"), originAllowed(origin) else { return response }
        var response = response
        response.headers += [
            (name: "Access-Control-Allow-Origin", value: origin), (name: "Vary", value: "Origin"),
            (name: "Access-Control-Expose-Headers", value: Self.exposedHeaders),
        ]
        return response
    }

    /// The answer to a CORS preflight (`OPTIONS`): the methods and headers CloudKit requests use, for an
    /// allowed origin; 403 for another (the browser then does not send the request).
    func preflight(_ request: ServerRequest) -> ServerResponse {
        let uuid = Self.requestUUID()
        guard let origin = request.header("Origin") else {
            return respond(405, errorJSON(.badRequest, "OPTIONS is only answered to CORS preflights (an Origin header)", uuid), uuid: uuid, extra: [("Allow", "GET, POST, OPTIONS")])
        }
        guard originAllowed(origin) else {
            return respond(403, errorJSON(.accessDenied, "origin \(origin.prefix(100)) is not allowed (serve --allow-origin)", uuid), uuid: uuid, extra: [])
        }
        let requested = request.header("Access-Control-Request-Headers")
            ?? "Content-Type, X-Apple-CloudKit-Request-KeyID, X-Apple-CloudKit-Request-ISO8601Date, X-Apple-CloudKit-Request-SignatureV1, X-CK-Device-Token"
        return ServerResponse(status: 204, headers: [
            (name: "Access-Control-Allow-Origin", value: origin), (name: "Vary", value: "Origin"),
            (name: "Access-Control-Allow-Methods", value: "GET, POST, OPTIONS"),
            (name: "Access-Control-Allow-Headers", value: requested),
            (name: "Access-Control-Max-Age", value: "600"),
            (name: "X-Apple-Request-UUID", value: uuid),
        ], body: [])
    }

    /// The cached answer to a read, when the store has not changed since it was computed and the
    /// request's tokens were valid then (requests the event loop passed on still find one here: an
    /// answer stored meanwhile, or a CORS request).
    func cachedResponse(_ request: ServerRequest, route: Route) -> ServerResponse? {
        guard answers.isEnabled, let stamp = store.changeStamp(), let (_, user) = knownCaller(request, route: route, at: stamp),
            let answer = answers.answer(answerKey(route, request, userRecordName: user?.recordName), at: stamp)
        else { return nil }
        return knownCallerAnswer(answer, user: user)
    }

    /// A 200 answer to a caller known at this stamp: its own request UUID and, for a signed-in user, a
    /// freshly minted web auth token.
    func knownCallerAnswer(_ bytes: [UInt8], user: AnswerCache.KnownUser?) -> ServerResponse {
        var extra: [(String, String)] = []
        if let user { extra.append(("X-Apple-CloudKit-Web-Auth-Token", mintWebAuthToken(user: user.name, session: user.session))) }
        return respond(200, .encoded(bytes), uuid: Self.requestUUID(), extra: extra)
    }

    /// The caller of a cacheable read, when what authentication needs was found valid at `stamp`
    /// (nil: the full path must check it). A single-use token must be checked, and spent, by
    /// authentication on every request.
    func knownCaller(_ request: ServerRequest, route: Route, at stamp: Int64) -> (apiToken: String, user: AnswerCache.KnownUser?)? {
        guard route.isCacheable, !configuration.singleUseWebAuthTokens, request.header("X-Apple-CloudKit-Request-KeyID") == nil,
            request.body.count <= configuration.maximumBodyBytes
        else { return nil }
        let items = request.queryItems
        guard let apiToken = items["ckAPIToken"], answers.knowsAPIToken(apiToken, container: route.container, at: stamp) else { return nil }
        var user: AnswerCache.KnownUser?
        if let token = items["ckWebAuthToken"] ?? items["ckSession"], !token.isEmpty {
            guard let known = knownUser(webToken: token, at: stamp) else { return nil }
            user = known
        }
        if user == nil && route.needsUser { return nil }
        return (apiToken, user)
    }

    /// Endpoints whose answer is bounded work (at most a page of records): computed on the calling
    /// thread by `answerOnEventLoop`. A query is, when SQLite cuts its page (one zone, no filters,
    /// sorted by the record times); one that must read every candidate of its type throws
    /// `NotBoundedWork()` there and takes the full path.
    static let synchronousEndpoints: Set<String> = [
        Endpoint.recordsChanges.operation, Endpoint.changesZone.operation, Endpoint.recordsLookup.operation,
        Endpoint.zonesList.operation, Endpoint.zonesLookup.operation, Endpoint.changesDatabase.operation,
        Endpoint.recordsQuery.operation,
    ]

    /// An answer given on the calling thread (the HTTP server's event loop), and whether it came from
    /// the answer cache (the same bytes answer every request until the next commit).
    public struct EventLoopAnswer: Sendable {
        public var response: ServerResponse
        public var isCached: Bool
    }

    /// A read answered on the calling thread (the HTTP server's event loop), without the hops into
    /// Swift concurrency and GRDB's queues that the full path takes (on a page, those hops cost more
    /// than the page): from the answer cache when the store has not changed since the answer was
    /// computed, else computed from SQLite when the work is bounded. Only when authentication needs
    /// nothing SQLite must tell (the request's tokens were found valid at this change stamp) and the
    /// database is known; nil otherwise, and on any error (the full path then answers, with its
    /// reason).
    public func answerOnEventLoop(_ request: ServerRequest) -> EventLoopAnswer? {
        guard request.path.hasPrefix("/database/1/"), let route = try? Route(path: request.path, method: request.method),
            let stamp = store.changeStamp(), let (apiToken, user) = knownCaller(request, route: route, at: stamp)
        else { return nil }
        let answerKey = answerKey(route, request, userRecordName: user?.recordName)
        if answers.isEnabled, let answer = answers.answer(answerKey, at: stamp) {
            return EventLoopAnswer(response: withCORS(knownCallerAnswer(answer, user: user), request), isCached: true)
        }
        guard Self.synchronousEndpoints.contains(route.endpoint.operation) else { return nil }
        let owner = route.scope == .public ? "" : (user?.recordName ?? "")
        let key = DatabaseKey(container: route.container, environment: route.environment, scope: route.scope, owner: owner)
        guard let dbID = databaseIDs.withLock({ $0[key] }),
            let body = route.endpoint.method == .get ? JSON.object([:]) : try? parseBody(request.body)
        else { return nil }
        var caller = Caller(apiToken: apiToken)
        caller.userName = user?.name
        caller.userRecordName = user?.recordName
        caller.session = user?.session
        let items = request.queryItems
        caller.webToken = items["ckWebAuthToken"] ?? items["ckSession"]
        caller.deviceToken = request.header("X-CK-Device-Token")
        var context = RequestContext(
            route: route, caller: caller, key: key, dbID: dbID, now: Int64((configuration.now().timeIntervalSince1970 * 1000).rounded()))
        context.stamp = stamp
        context.boundedOnly = true
        guard let (status, reply) = try? store.pool.read({ db in try self.read(route.endpoint, db, context, body) }), status == 200 else { return nil }
        let bytes = reply.bytes
        answers.countSynchronousAnswer()
        answers.store(bytes, for: answerKey, at: stamp)
        return EventLoopAnswer(response: withCORS(knownCallerAnswer(bytes, user: user), request), isCached: false)
    }

    /// A random (version 4) UUID in lower case, for `X-Apple-Request-UUID`; Foundation's `UUID` and
    /// `uuidString` cost more than a cached answer's lookup.
    static func requestUUID() -> String {
        var random = SystemRandomNumberGenerator()
        var bytes = withUnsafeBytes(of: (random.next() as UInt64, random.next() as UInt64)) { Array($0) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The signed-in user of a web auth token as known at `stamp`: a token seen then, or one this
    /// server minted (MAC checked) for a user known then.
    func knownUser(webToken token: String, at stamp: Int64) -> AnswerCache.KnownUser? {
        if let known = answers.user(ofWebToken: token, at: stamp) { return known }
        guard let minted = mintedTokenParts(token), let known = answers.knownUser(minted.user, at: stamp) else { return nil }
        return AnswerCache.KnownUser(name: known.name, recordName: known.recordName, session: minted.session)
    }

    func answerKey(_ route: Route, _ request: ServerRequest, userRecordName: String?) -> AnswerCache.Key {
        let owner = route.scope == .public ? "" : (userRecordName ?? "")
        // A public answer depends on who reads too: record types may grant READ to some roles only.
        return AnswerCache.Key(
            endpoint: route.endpoint.operation,
            database: DatabaseKey(container: route.container, environment: route.environment, scope: route.scope, owner: owner),
            reader: userRecordName ?? "",
            body: route.endpoint.method == .get ? [] : request.body)
    }

    func errorJSON(_ code: ServerErrorCode, _ reason: String, _ uuid: String) -> JSON {
        ["uuid": .string(uuid), "serverErrorCode": .string(code.rawValue), "reason": .string(reason)]
    }

    func respond(_ status: Int, _ json: JSON, uuid: String, extra: [(String, String)]) -> ServerResponse {
        respond(status, .json(json), uuid: uuid, extra: extra)
    }

    func respond(_ status: Int, _ reply: Reply, uuid: String, extra: [(String, String)]) -> ServerResponse {
        var headers: [(name: String, value: String)] = [
            (name: "Content-Type", value: "application/json; charset=UTF-8"),
            (name: "X-Apple-Request-UUID", value: uuid),
        ]
        headers += extra.map { (name: $0.0, value: $0.1) }
        return ServerResponse(status: status, headers: headers, body: reply.bytes)
    }

    func parseBody(_ body: [UInt8]) throws -> JSON {
        guard !body.isEmpty else { throw ServiceError.badRequest("BadRequestException: missing request body") }
        let json: JSON
        do {
            json = try JSON(parsing: body)
        } catch let error as JSONDecodingError {
            throw ServiceError.badRequest("BadRequestException: Unexpected input: \(error.description)")
        }
        guard case .object = json else { throw ServiceError.badRequest("BadRequestException: the body must be a JSON object") }
        return json
    }

    // MARK: - Authentication

    struct Caller: Sendable {
        /// The `ckAPIToken` the request was accepted with (nil for server-to-server keys).
        var apiToken: String?
        var userName: String?
        var userRecordName: String?
        var keyID: String?
        var webToken: String?
        /// The web auth session (stable across token rotations).
        var session: String?
        /// `X-CK-Device-Token`: our extension naming the writing device (origin exclusion `header`).
        var deviceToken: String?

        var actingRecordName: String? { userRecordName ?? keyID.map(LocalCloudKit.keyUserRecordName) }
    }

    /// `stamp`: the store's change stamp read before this request, to reuse what earlier requests at
    /// the same stamp found valid (see `AnswerCache`); nil checks everything in SQLite.
    func authenticate(_ request: ServerRequest, route: Route, stamp: Int64? = nil) async throws -> Caller {
        if let keyID = request.header("X-Apple-CloudKit-Request-KeyID") {
            return try await authenticateServerKey(request, keyID: keyID, route: route)
        }
        let items = request.queryItems
        guard let apiToken = items["ckAPIToken"], !apiToken.isEmpty else {
            throw ServiceError(.authenticationFailed, "missing ckAPIToken")
        }
        // What a request at the same change stamp found valid is still valid (no commit since).
        if stamp.map({ answers.knowsAPIToken(apiToken, container: route.container, at: $0) }) != true {
            try await checkAPIToken(apiToken, container: route.container)
        }
        var caller = Caller(apiToken: apiToken)
        caller.deviceToken = request.header("X-CK-Device-Token")
        // `ckSession` is accepted as an alias of `ckWebAuthToken` (reference §1.2, unconfirmed).
        if let token = items["ckWebAuthToken"] ?? items["ckSession"], !token.isEmpty {
            // The service rejects a token whose `+`, `/` or `=` were not percent-encoded (§1.2); so
            // does this server, so that a client with that bug fails here as it would live.
            if let raw = request.rawQueryValue("ckWebAuthToken") ?? request.rawQueryValue("ckSession"), raw.contains(where: { "+/=".contains($0) }) {
                throw authenticationRequired(route, reason: "the web auth token is not valid: its '+', '/' and '=' must be sent percent-encoded (%2B, %2F, %3D)")
            }
            if configuration.singleUseWebAuthTokens {
                let fresh = usedWebTokens.withLock { $0.insert(token).inserted }
                guard fresh else {
                    throw authenticationRequired(
                        route, reason: "the web auth token was already used: each works once (send the one from the last answer's X-Apple-CloudKit-Web-Auth-Token)")
                }
            }
            let remembered = stamp.flatMap { knownUser(webToken: token, at: $0) }
            var name = remembered?.name
            if name == nil { name = try await userName(forWebToken: token) }
            guard let name else {
                throw authenticationRequired(route, reason: "the web auth token is not valid (expired or unknown)")
            }
            caller.userName = name
            caller.userRecordName = remembered?.recordName ?? Self.userRecordName(for: name)
            caller.webToken = token
            caller.session = remembered?.session ?? Self.session(ofWebToken: token)
        }
        if caller.userName == nil && route.needsUser {
            throw authenticationRequired(route, reason: "request needs authorization")
        }
        return caller
    }

    /// An API token must be known and, when bound to a container, used for that one (§2.1, §7.8).
    func checkAPIToken(_ token: String, container: String) async throws {
        let known = try await store.pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM api_token WHERE token = ? AND (container IS NULL OR container = ?)", arguments: [token, container]) ?? false
        }
        guard known else { throw ServiceError(.authenticationFailed, "unknown API token for this container") }
    }

    /// Our own endpoints (schema, admin) name a container and take `ckAPIToken` valid for it.
    func checkOwnEndpointAccess(_ request: ServerRequest, container: String) async throws {
        guard Route.isContainerID(container) else { throw Route.invalidContainer(container) }
        guard let token = request.queryItems["ckAPIToken"], !token.isEmpty else { throw ServiceError(.authenticationFailed, "missing ckAPIToken") }
        try await checkAPIToken(token, container: container)
    }

    func authenticationRequired(_ route: Route, reason: String) -> ServiceError {
        let url = baseURL.withLock { $0 } + "/signin?container=" + PercentEncoding.encodeQueryValue(route.container)
        return ServiceError(.authenticationRequired, reason, redirectURL: url)
    }

    func authenticateServerKey(_ request: ServerRequest, keyID: String, route: Route) async throws -> Caller {
        let failed = ServiceError(.authenticationFailed, "authentication failed")
        guard let dateText = request.header("X-Apple-CloudKit-Request-ISO8601Date"),
            let signatureText = request.header("X-Apple-CloudKit-Request-SignatureV1"),
            let date = ISO8601.date(from: dateText),
            abs(date.timeIntervalSince(configuration.now())) <= configuration.signatureWindow,
            let signatureData = Data(base64Encoded: signatureText),
            let signature = try? P256.Signing.ECDSASignature(derRepresentation: signatureData)
        else { throw failed }
        // A key bound to a container signs for that container only.
        let pem = try await store.pool.read { db in
            try String.fetchOne(
                db, sql: "SELECT public_key_pem FROM server_key WHERE key_id = ? AND (container IS NULL OR container = ?)", arguments: [keyID, route.container])
        }
        guard let pem, let key = try? P256.Signing.PublicKey(pemRepresentation: pem) else { throw failed }
        // Both body-hash forms clients send for bodyless requests are accepted: empty, and hash of "".
        var candidates = [ServerToServerKey.stringToSign(date: dateText, body: request.body.isEmpty ? nil : request.body, subpath: request.path)]
        if request.body.isEmpty { candidates.append(ServerToServerKey.stringToSign(date: dateText, body: [], subpath: request.path)) }
        guard candidates.contains(where: { key.isValidSignature(signature, for: Array($0.utf8)) }) else { throw failed }
        // Server-to-server keys reach only the public database, and no users/* endpoint.
        guard !route.endpoint.operation.hasPrefix("users/") else {
            throw ServiceError(.authenticationFailed, "server-to-server keys cannot call users endpoints (there is no signed-in user)")
        }
        guard route.scope == .public else {
            throw ServiceError(.authenticationFailed, "server-to-server keys can only access the public database")
        }
        return Caller(keyID: keyID)
    }

    /// Web auth tokens: the configured ones, plus the rotated ones this server minted (HMAC-signed, so
    /// no table grows). Old tokens keep working, as observed on the live service.
    func userName(forWebToken token: String) async throws -> String? {
        if let name = try await store.pool.read({ db in
            try String.fetchOne(db, sql: "SELECT name FROM web_user WHERE token = ?", arguments: [token])
        }) {
            return name
        }
        guard let minted = mintedTokenParts(token) else { return nil }
        let exists = try await store.pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM web_user WHERE name = ?", arguments: [minted.user]) ?? false
        }
        return exists ? minted.user : nil
    }

    /// The user and session of a token this server minted, if its MAC is right (the user may have
    /// been removed since: callers check that).
    func mintedTokenParts(_ token: String) -> (user: String, session: String)? {
        guard let parts = OpaqueToken.decode(token), parts.count == 4 || parts.count == 5, parts[0] == "w1" else { return nil }
        let expected = mac(parts[1..<(parts.count - 1)].joined(separator: "\u{1F}"))
        guard expected == parts[parts.count - 1] else { return nil }
        return (parts[1], parts.count == 5 ? parts[2] : Self.session(ofWebToken: token))
    }

    /// A rotated token carries the session of the token it replaces, so a session survives rotation
    /// (origin exclusion `session` compares sessions).
    func mintWebAuthToken(user: String, session: String) -> String {
        var random = SystemRandomNumberGenerator()
        let nonce = Base64URL.encode(withUnsafeBytes(of: (random.next() as UInt64, random.next() as UInt64)) { Array($0) })
        return OpaqueToken.encode(["w1", user, session, nonce, mac([user, session, nonce].joined(separator: "\u{1F}"))])
    }

    /// The session a web auth token belongs to: carried by the tokens this server mints, otherwise
    /// derived from the token itself.
    static func session(ofWebToken token: String) -> String {
        if let parts = OpaqueToken.decode(token), parts.count == 5, parts[0] == "w1" { return parts[2] }
        return SHA256.hash(data: Data(token.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    func mac(_ text: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: tokenKey)).base64EncodedString()
    }
}

/// A tiny lock-protected value (Swift 6's `Synchronization.Mutex` needs macOS 15).
final class Mutex<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
