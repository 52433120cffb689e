import CloudKitWeb
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SQLiteDB

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
        if let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
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

    /// The credentials a query carries, read in one pass, as `queryItems` reads parameters:
    /// `ckAPIToken`, and `ckWebAuthToken` or else its alias `ckSession` (the last of a name wins, and
    /// a malformed value reads as empty); and that same token as sent, before percent-decoding, so
    /// the check that its `+ / =` were encoded looks at the value that is used (it once looked at the
    /// first such parameter spelled as sent: a decoy before the real one, or the name written
    /// `ck%57ebAuthToken`, passed a token sent unencoded).
    /// Every request is authenticated from it, answers from the cache too: the dictionary of every
    /// parameter and the second pass for the raw value were a tenth of such an answer's own work.
    struct Credentials: Equatable {
        var apiToken: String?
        var webAuthToken: String?
        var rawWebAuthToken: Substring?
    }

    var credentials: Credentials {
        var found = Credentials()
        guard let query else { return found }
        var webAuthToken: (decoded: String, raw: Substring)?, session: (decoded: String, raw: Substring)?
        Self.forEachQueryPair(query) { key, value in
            guard let parameter = Self.credentialParameter(key) else { return }
            let decoded = Self.decodedValue(value)
            switch parameter {
            case .apiToken: found.apiToken = decoded
            case .webAuthToken: webAuthToken = (decoded, value.map { Substring($0) } ?? "")
            case .session: session = (decoded, value.map { Substring($0) } ?? "")
            }
        }
        found.webAuthToken = (webAuthToken ?? session)?.decoded
        found.rawWebAuthToken = (webAuthToken ?? session)?.raw
        return found
    }

    /// The query's parameters, percent-decoded (`+` as a space in names); a later parameter of the
    /// same name wins, and one whose name or value is malformed is left out.
    var queryItems: [String: String] {
        var items: [String: String] = [:]
        guard let query else { return items }
        Self.forEachQueryPair(query) { key, value in
            guard let key = Self.decodedName(key) else { return }
            items[key] = Self.decodedValue(value)
        }
        return items
    }

    /// A parameter's name, percent-decoded with `+` as a space; nil when malformed (the parameter is
    /// then left out).
    static func decodedName(_ key: Substring.UTF8View) -> String? {
        PercentEncoding.decode(Substring(key), plusAsSpace: true)
    }

    /// A parameter's value, percent-decoded (`+` stays); empty when missing or malformed. A value
    /// without `%` is made from its bytes at once (with the names, decoding every request's tokens
    /// through `Substring`s was 4 k instructions of a cached answer's 169 k).
    static func decodedValue(_ value: Substring.UTF8View?) -> String {
        guard let value else { return "" }
        if let plain = value.withContiguousStorageIfAvailable({ bytes -> String? in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return "" }
            return memchr(base, Int32(UInt8(ascii: "%")), bytes.count) == nil ? String(decoding: bytes, as: UTF8.self) : nil
        }), let plain {
            return plain
        }
        return PercentEncoding.decode(Substring(value), plusAsSpace: false) ?? ""
    }

    /// The query parameters `credentials` reads.
    enum CredentialParameter {
        case apiToken, webAuthToken, session

        /// Each parameter's name, as UTF-8.
        static let names: [(bytes: [UInt8], parameter: CredentialParameter)] = [
            (Array("ckAPIToken".utf8), .apiToken), (Array("ckWebAuthToken".utf8), .webAuthToken), (Array("ckSession".utf8), .session),
        ]

        /// The parameter named by `bytes`, if any.
        init?(named bytes: some Sequence<UInt8>) {
            guard let entry = Self.names.first(where: { $0.bytes.elementsEqual(bytes) }) else { return nil }
            self = entry.parameter
        }
    }

    /// Which credential a parameter named `key` carries, if any. A name with no `%` or `+` to decode,
    /// as nearly every one is, is compared as bytes; another is decoded first (`+` as a space), as
    /// `queryItems` decodes it.
    static func credentialParameter(_ key: Substring.UTF8View) -> CredentialParameter? {
        var compared: CredentialParameter??
        _ = key.withContiguousStorageIfAvailable { bytes in
            guard !bytes.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else { return }
            compared = .some(CredentialParameter(named: bytes))
        }
        if let compared { return compared }
        // Not contiguous (a string bridged from elsewhere), or a name to decode.
        return decodedName(key).flatMap { CredentialParameter(named: $0.utf8) }
    }

    /// Each non-empty `&`-separated pair of a query: the name, and the value after the first `=` (nil
    /// without one). Bytes, not characters: `&` and `=` never occur inside a UTF-8 sequence, and a
    /// parameter `=…` with an empty name is still a pair (it once split into nothing, and the
    /// server stopped on `?=`).
    /// The separators are found in the string's contiguous UTF-8 by offset (a generic `firstIndex`
    /// over `Substring.UTF8View` cost a few percent of a cached answer); a native string turns an
    /// offset into an index in constant time.
    static func forEachQueryPair(_ query: String, _ body: (Substring.UTF8View, Substring.UTF8View?) -> Void) {
        var contiguous = query
        var pairs: [(start: Int, equals: Int?, end: Int)] = []
        contiguous.withUTF8 { bytes in
            var start = 0
            while start < bytes.count {
                var end = start
                var equals: Int?
                while end < bytes.count, bytes[end] != UInt8(ascii: "&") {
                    if equals == nil && bytes[end] == UInt8(ascii: "=") { equals = end }
                    end += 1
                }
                if start < end { pairs.append((start, equals, end)) }
                start = end + 1
            }
        }
        let utf8 = Substring(contiguous).utf8
        func index(_ offset: Int) -> Substring.UTF8View.Index { utf8.index(utf8.startIndex, offsetBy: offset) }
        for pair in pairs {
            if let equals = pair.equals {
                body(utf8[index(pair.start)..<index(equals)], utf8[index(equals + 1)..<index(pair.end)])
            } else {
                body(utf8[index(pair.start)..<index(pair.end)], nil)
            }
        }
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
    /// Web origins (`http://localhost:8080`) whose pages may call the server (CORS); `*` allows any;
    /// nil allows pages served from this machine (loopback origins). Apple's console sets these per
    /// API token ("Allowed Origins"). A request from another origin is refused before it runs.
    public var allowedOrigins: Set<String>?
    /// Host names (besides IP addresses, `localhost` and `*.localhost`) requests may be addressed to
    /// (`Host`): a DNS-rebinding page arrives under its own name and is refused.
    public var allowedHosts: Set<String> = []
    /// Apple's documented contract (§2.2): each web auth token works once; the answer carries its
    /// replacement. Off by default, because the live service was observed to accept old tokens. A
    /// token is spent only by a 2xx answer (which carries its replacement): CloudKit JS adopts a new
    /// token only from a 2xx answer, so spending it on an error would lock Apple's own client out.
    public var singleUseWebAuthTokens = false
    /// How long a web auth token this server minted (sign-in, and the replacement every answer carries)
    /// stays valid, in seconds. Apple does not publish its figure; a day keeps a page that is in use
    /// signed in (every answer renews it) and ends one left alone. The configured `--user` tokens are
    /// credentials, not sessions: they last as long as the configuration names them.
    public var webAuthTokenLifetime: Double = 24 * 60 * 60
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
    /// Queries are answered from the query index (`FieldIndex`) where it can answer them; false reads
    /// every candidate of the type, as earlier versions did (the tests' oracle).
    public var usesQueryIndexes = true
    /// Writes (records/modify, zones/modify, subscriptions/modify and a fixture reset) are answered on
    /// the HTTP server's event loop, as bounded reads are (`answerWriteOnEventLoop`), instead of hopping
    /// into Swift concurrency, Hummingbird's responder and the pool's writer queue and back. For a store in
    /// RAM (`serve --in-memory`, a test fixture), where a commit waits for no disk: a test suite's
    /// requests come one after another, so its rate is set by those hops more than by the writes.
    /// A store on disk keeps its writes off the event loop (a commit there waits for fsync, and the
    /// loop's other connections would wait with it).
    public var answersWritesOnEventLoop = false

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
    /// The HMAC of minted web auth tokens, keyed and not yet fed: each token's MAC starts from a copy
    /// (copy-on-write), so the key is not hashed into the pads again for every answer (a sixth of a
    /// cached page's instructions went to minting its token). Not declared Sendable, but an immutable
    /// value, only ever copied.
    nonisolated(unsafe) let tokenMAC: HMAC<SHA256>
    /// The same key as stored (`setting` 'token-secret'), for snapshots that carry credentials.
    let tokenSecret: String
    let databaseIDs = Mutex<[DatabaseKey: Int64]>([:])
    let baseURL: Mutex<String>
    /// Wakes webcourier long-polls when payloads are queued for them.
    let courier: Courier
    /// Web auth tokens already used, when they are single-use (kept in memory: a restart forgets them).
    let usedWebTokens = Mutex<Set<String>>([])
    /// Who may call: what the configuration says now (never what an earlier start stored).
    let credentials: CredentialSet
    /// Answers of reads, reused until the next commit.
    let answers: AnswerCache
    /// Download tokens by file id (see `downloadToken`).
    let downloadTokens = Mutex<[DownloadGrant: String]>([:])
    /// File ids by container, environment and checksum, as read at one change stamp (a file comes
    /// and goes only with a commit, which moves the stamp).
    let blobIDs = StampedMemo<BlobKey, Int64?>()
    /// Record types' schemas by container, environment and name, as read at one change stamp.
    let typeSchemas = StampedMemo<TypeKey, RecordTypeSchema?>(capacity: 10_000)
    /// What a write reads of a record type's schema, by container, environment and name, at one schema
    /// version (`SchemaTables.version`): its fields' wire types ("" for the type itself) and its indexed
    /// fields. Read once per request before; each was a statement and a walk over the type's rows, 60 k
    /// of a one-record write's 560 k instructions (callgrind).
    let writeFieldTypes = StampedMemo<TypeKey, [String: String]>(capacity: 10_000)
    let writeIndexSpecs = StampedMemo<TypeKey, FieldIndex.Spec>(capacity: 10_000)
    /// Every container's schema as the server started it (`markStartingState`): a fixture reset puts
    /// a container back to it.
    let startingSchemas = Mutex(SchemaRows())
    /// Per container and environment: the schema version (`SchemaTables.version`) at which its schema
    /// tables last held the starting state (a reset then needs no comparison).
    let schemaKeptAt = Mutex<[String: Int64]>([:])
    /// Web auth tokens minted this second, by what they say (`mintWebAuthToken`).
    let mintedTokens = Mutex(MintedTokens())

    public init(store: Store, configuration: LocalServerConfiguration) throws {
        self.store = store
        self.configuration = configuration
        self.baseURL = Mutex(configuration.baseURL)
        self.answers = AnswerCache(limit: configuration.answerCacheBytes, clock: configuration.now)
        self.credentials = CredentialSet(configuration)
        self.courier = Courier(store: store)
        let secret: String = try store.pool.write { db in
            // Earlier versions kept credentials in the data directory, where a removed token went on
            // working after a restart: they are the configuration's alone now, so none stay on disk.
            for table in ["api_token", "web_user", "server_key"] { try db.execute(sql: "DELETE FROM \(table)") }
            for user in configuration.users {
                let contact = configuration.userContacts[user.name]
                try db.execute(
                    sql: """
                        INSERT INTO user_info (name, record_name, email, phone) VALUES (?, ?, ?, ?)
                        ON CONFLICT (name) DO UPDATE SET email = coalesce(excluded.email, email), phone = coalesce(excluded.phone, phone)
                        """,
                    arguments: [user.name, Self.userRecordName(for: user.name), contact?.email, contact?.phone])
            }
            if let secret = try String.fetchOne(db, sql: "SELECT value FROM setting WHERE key = 'token-secret'") {
                return secret
            }
            let secret = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            try db.execute(sql: "INSERT INTO setting (key, value) VALUES ('token-secret', ?)", arguments: [secret])
            return secret
        }
        tokenSecret = secret
        tokenMAC = HMAC<SHA256>(key: SymmetricKey(data: Data(base64Encoded: secret) ?? Data(secret.utf8)))
        let now = Int64((configuration.now().timeIntervalSince1970 * 1000).rounded())
        // The starting state is read on the writer, in the same transaction: a read here would open
        // a reader connection (SQLite parsing the whole schema again) before the demo's first frame.
        let starting = try store.pool.write { db in
            _ = try Self.collectUnusedAssets(db, now: now)
            return try SchemaRows(db)
        }
        keepStartingState(starting)
    }

    /// The user record name of a user name: `_` and 32 hex digits, as the service's look.
    public static func userRecordName(for name: String) -> String {
        "_" + String.hex(SHA256.hash(data: Data(name.utf8)).prefix(16))
    }

    /// The record name writes made with a server-to-server key are attributed to.
    static func keyUserRecordName(_ keyID: String) -> String { userRecordName(for: "server-key:" + keyID) }

    /// This run's credentials and the token secret, for a snapshot that is asked to carry them
    /// (`serve --export-credentials`).
    public func snapshotCredentials() -> SnapshotCredentials {
        var carried = SnapshotCredentials()
        carried.apiTokens = configuration.apiTokens.map { (token: $0, container: configuration.credentialContainers[$0]) }
        carried.users = configuration.users
        carried.serverKeys = configuration.serverKeys.map { (keyID: $0.keyID, publicKeyPEM: $0.publicKeyPEM, container: configuration.credentialContainers[$0.keyID]) }
        carried.tokenSecret = tokenSecret
        return carried
    }

    /// Where clients reach this server (known once the port is bound); used in `redirectURL`.
    public func setBaseURL(_ url: String) { baseURL.withLock { $0 = url } }

    // MARK: - Handling

    public func handle(_ request: ServerRequest) async -> ServerResponse {
        // Refused before anything runs, and without CORS headers (the page learns nothing).
        if let refusal = policyRefusalResponse(request) { return refusal }
        if request.method.uppercased() == "OPTIONS" { return preflight(request) }
        return withCORS(await answer(request), request)
    }

    func answer(_ request: ServerRequest) async -> ServerResponse {
        let uuid = Self.requestUUID()
        var extraHeaders: [(String, String)] = []
        // A single-use web auth token this request spent: an error answer gives it back (see
        // `singleUseWebAuthTokens`).
        var spentToken: String?
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
            if request.path == "/ready" { return try readiness(request) }
            if request.path.hasPrefix("/device/") {
                let (status, json, caller) = try await handleDevice(request, uuid: uuid, spent: &spentToken)
                // Every user-authenticated answer carries the next token (single-use tokens need it).
                extraHeaders += nextTokenHeader(caller)
                return respond(status, json, uuid: uuid, extra: extraHeaders)
            }
            let route = try Route.cached(path: request.path, method: request.method)
            if let cached = cachedResponse(request, route: route) { return cached }
            // Read before authentication and the answer's transaction: see `AnswerCache.store`.
            let stamp = store.changeStamp()
            let caller = try authenticate(request, route: route)
            spentToken = caller.spentToken
            extraHeaders += nextTokenHeader(caller)
            let body: JSON = try route.endpoint.method == .get ? .object([:]) : parseBody(request.body)
            let (status, reply) = try await dispatch(route, caller: caller, body: body, stamp: stamp)
            let bytes = reply.bytes
            if let stamp, caller.apiToken != nil, status == 200 && route.isCacheable {
                answers.store(bytes, for: answerKey(route, request, userRecordName: caller.userRecordName), at: stamp)
            }
            return respond(status, .encoded(bytes), uuid: uuid, extra: extraHeaders)
        } catch {
            unspend(spentToken)
            // With single-use tokens the request's token stays the one to use after an error: no
            // replacement is offered (CloudKit JS would not adopt it anyway).
            if configuration.singleUseWebAuthTokens { extraHeaders.removeAll { $0.0 == "X-Apple-CloudKit-Web-Auth-Token" } }
            return ServiceError.from(error).response(uuid: uuid, extraHeaders: extraHeaders)
        }
    }

    /// The answer to a request whose body is larger than `maximumBodyBytes` (the HTTP adapter stops
    /// reading it at the limit, so the service never sees the bytes).
    /// The answer to a request whose body passed its limit (`head`: the request without its body):
    /// the policy's refusal, else the limit's error, with CORS headers for a page that may read it.
    func oversizedBodyResponse(_ head: ServerRequest, isUpload: Bool) -> ServerResponse {
        if let refusal = policyRefusalResponse(head) { return refusal }
        return withCORS(isUpload ? assetTooLargeResponse() : bodyTooLarge(), head)
    }

    /// The request policy's refusal as answered (no CORS headers: the page learns nothing), nil when
    /// the request may go on.
    func policyRefusalResponse(_ request: ServerRequest) -> ServerResponse? {
        requestPolicyRefusal(request).map { $0.response(uuid: Self.requestUUID()) }
    }

    public func bodyTooLarge() -> ServerResponse {
        let uuid = Self.requestUUID()
        return ServiceError.badRequest("request body exceeds the limit of \(configuration.maximumBodyBytes) bytes").response(uuid: uuid)
    }

    // MARK: - Cached answers

    /// What the answer cache has done so far.
    public var answerCacheCounters: AnswerCacheCounters { answers.counters }

    // MARK: - CORS

    /// Response headers a web page (CloudKit JS) may read, as the service exposes them (§1.3).
    static let exposedHeaders = "X-Apple-Request-UUID, X-Apple-CloudKit-Web-Auth-Token, X-Apple-CloudKit-Session, X-Responding-Instance"

    /// Adds `Access-Control-Allow-Origin` (the caller's origin, when allowed) and the exposed headers
    /// to an answer of a request that came from a web page (`Origin`), for endpoints that take pages
    /// (the endpoint table: never the sign-in page, schema or admin endpoints).
    func withCORS(_ response: ServerResponse, _ request: ServerRequest) -> ServerResponse {
        guard let origin = request.header("Origin"), EndpointRule.rule(path: request.path, method: request.method)?.pages == .allowedOrigins,
            originAllowed(origin, request: request)
        else { return response }
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
            var error = ServiceError(.badRequest, "OPTIONS is only answered to CORS preflights (an Origin header)", status: 405)
            error.extraHeaders = [("Allow", "GET, POST, OPTIONS")]
            return error.response(uuid: uuid)
        }
        let method = request.header("Access-Control-Request-Method") ?? "GET"
        guard EndpointRule.rule(path: request.path, method: method)?.pages == .allowedOrigins, originAllowed(origin, request: request) else {
            return ServiceError(.accessDenied, "origin \(origin.prefix(100)) may not call \(Self.quoted(request.path, limit: 200)) (serve --allow-origin)", status: 403)
                .response(uuid: uuid)
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
        guard answers.isEnabled, let stamp = store.changeStamp(), let (_, user) = knownCaller(request, route: route, credentials: request.credentials),
            let answer = answers.answer(answerKey(route, request, userRecordName: user?.recordName), at: stamp)
        else { return nil }
        return knownCallerAnswer(answer, user: user)
    }

    /// The next web auth token a signed-in caller's answer carries (none for a caller without a user).
    func nextTokenHeader(_ caller: Caller) -> [(String, String)] {
        guard let user = caller.userName else { return [] }
        return [("X-Apple-CloudKit-Web-Auth-Token", mintWebAuthToken(user: user, session: caller.session ?? ""))]
    }

    /// A 200 answer to a caller known at this stamp: its own request UUID and, for a signed-in user, a
    /// minted web auth token (`mintWebAuthToken`: the same one within a second).
    func knownCallerAnswer(_ bytes: [UInt8], user: SignedInUser?) -> ServerResponse {
        var extra: [(String, String)] = []
        if let user { extra.append(("X-Apple-CloudKit-Web-Auth-Token", mintWebAuthToken(user: user.name, session: user.session))) }
        return respond(200, .encoded(bytes), uuid: Self.requestUUID(), extra: extra)
    }

    /// The caller of a cacheable read, when authentication accepts it without a word (nil: the full
    /// path must answer, with its reason). A single-use token must be checked, and spent, by the full
    /// path on every request.
    /// `credentials` are the request's, read once by the caller.
    func knownCaller(_ request: ServerRequest, route: Route, credentials query: ServerRequest.Credentials) -> (apiToken: String, user: SignedInUser?)? {
        guard route.isCacheable, !configuration.singleUseWebAuthTokens, request.header("X-Apple-CloudKit-Request-KeyID") == nil,
            request.body.count <= configuration.maximumBodyBytes, requestPolicyRefusal(request, rule: route.rule) == nil
        else { return nil }
        guard let apiToken = query.apiToken, credentials.acceptsAPIToken(apiToken, container: route.container) else { return nil }
        var user: SignedInUser?
        if let token = query.webAuthToken, !token.isEmpty {
            guard let raw = query.rawWebAuthToken,
                !Self.hasUnencodedBase64(raw), let known = signedInUser(webToken: token)
            else { return nil }
            user = known
        }
        if user == nil && route.needsUser { return nil }
        return (apiToken, user)
    }

    /// An answer given on the calling thread (the HTTP server's event loop), and whether it came from
    /// the answer cache (the same bytes answer every request until the next commit).
    public struct EventLoopAnswer: Sendable {
        public var response: ServerResponse
        public var isCached: Bool
    }

    /// A read answered on the calling thread (the HTTP server's event loop), without the hops into
    /// Swift concurrency and the database pool's queues that the full path takes (on a page, those hops cost more
    /// than the page): from the answer cache when the store has not changed since the answer was
    /// computed, else computed from SQLite when the work is bounded. Only when authentication needs
    /// nothing SQLite must tell (the request's tokens were found valid at this change stamp) and the
    /// database is known; nil otherwise, and on any error (the full path then answers, with its
    /// reason).
    public func answerOnEventLoop(_ request: ServerRequest) -> EventLoopAnswer? {
        guard request.path.hasPrefix("/database/1/"), let route = try? Route.cached(path: request.path, method: request.method),
            let stamp = store.changeStamp()
        else { return nil }
        let query = request.credentials
        guard let (apiToken, user) = knownCaller(request, route: route, credentials: query) else { return nil }
        let answerKey = answerKey(route, request, userRecordName: user?.recordName)
        if answers.isEnabled, let answer = answers.answer(answerKey, at: stamp) {
            return EventLoopAnswer(response: withCORS(knownCallerAnswer(answer, user: user), request), isCached: true)
        }
        // Bounded work (the endpoint table's `bounded`: at most a page of records) is computed here.
        // A query is, when SQLite cuts its page (one zone, no filters, sorted by the record times);
        // one that must read every candidate of its type throws `NotBoundedWork()` and takes the
        // full path.
        guard route.isBounded else { return nil }
        let owner = route.scope == .public ? "" : (user?.recordName ?? "")
        let key = DatabaseKey(container: route.container, environment: route.environment, scope: route.scope, owner: owner)
        guard let dbID = databaseIDs.withLock({ $0[key] }),
            let body = route.endpoint.method == .get ? JSON.object([:]) : try? parseBody(request.body)
        else { return nil }
        var caller = Caller(apiToken: apiToken)
        caller.userName = user?.name
        caller.userRecordName = user?.recordName
        caller.session = user?.session
        caller.webToken = query.webAuthToken
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

    /// Where `requestUUID` draws its bits.
    static let requestIDs = RequestIDs()

    /// A random (version 4) UUID in lower case, for `X-Apple-Request-UUID`; Foundation's `UUID` and
    /// `uuidString` cost more than a cached answer's lookup. Its bits come from `RequestIDs`, not from
    /// the system's generator: that is two `getrandom` calls, and every answer carries one.
    static func requestUUID() -> String {
        let (high, low) = requestIDs.next()
        var bytes = withUnsafeBytes(of: (high, low)) { Array($0) }
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

    func answerKey(_ route: Route, _ request: ServerRequest, userRecordName: String?) -> AnswerCache.Key {
        let owner = route.scope == .public ? "" : (userRecordName ?? "")
        // A public answer depends on who reads too: record types may grant READ to some roles only.
        return AnswerCache.Key(
            endpoint: route.endpoint.operation,
            database: DatabaseKey(container: route.container, environment: route.environment, scope: route.scope, owner: owner),
            reader: userRecordName ?? "",
            body: route.endpoint.method == .get ? [] : request.body)
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
}

/// The bits of request UUIDs: random to look at, without a system call each. SplitMix64 (Steele, Lea
/// and Flood) over a counter that starts at a random value: its mixing is a bijection, so the 128 bits
/// drawn never repeat in a process (a UUID keeps 122 of them, the rest being its version and variant).
/// Not a secret (the UUID names a request in logs, and the state can be worked out from it): tokens,
/// nonces and share keys still come from `SystemRandomNumberGenerator`.
final class RequestIDs: Sendable {
    private let counter: Mutex<UInt64>

    init(seed: UInt64 = { var random = SystemRandomNumberGenerator(); return random.next() }()) { counter = Mutex(seed) }

    /// 128 bits: two consecutive outputs.
    func next() -> (UInt64, UInt64) {
        let first = counter.withLock { counter in
            counter &+= 2 &* Self.gamma
            return counter &- Self.gamma
        }
        return (Self.mix(first), Self.mix(first &+ Self.gamma))
    }

    private static let gamma: UInt64 = 0x9E37_79B9_7F4A_7C15

    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A tiny lock-protected value (Swift 6's `Synchronization.Mutex` needs macOS 15).
final class Mutex<Value: Sendable>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
