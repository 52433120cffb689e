import CloudKitWeb

/// A parsed `/database/1/{container}/{environment}/{database}/{operation}` path.
struct Route: Sendable {
    var container: String
    var environment: CloudKitEnvironment
    var scope: DatabaseScope
    var endpoint: Endpoint
    /// Who may call it, from where, and how it may be answered (`EndpointRule.all`).
    let rule: EndpointRule?

    static let endpoints: [Endpoint] = [
        .zonesList, .zonesLookup, .zonesModify, .zonesChanges, .changesDatabase, .changesZone, .recordsChanges, .recordsQuery,
        .recordsLookup, .recordsModify, .subscriptionsList, .subscriptionsLookup, .subscriptionsModify, .usersCurrent,
        .usersCaller, .usersDiscover, .usersDiscoverAll, .usersLookupEmail, .usersLookupID, .recordsResolve, .recordsAccept,
        .assetsUpload, .assetsRereference,
    ]

    init(container: String, environment: CloudKitEnvironment, scope: DatabaseScope, endpoint: Endpoint) {
        self.container = container
        self.environment = environment
        self.scope = scope
        self.endpoint = endpoint
        self.rule = EndpointRule.rule(endpoint)
    }

    /// The endpoints and their rules by operation (`users/discover` has two, by method).
    private static let byOperation: [String: [(endpoint: Endpoint, rule: EndpointRule?)]] = Dictionary(
        grouping: endpoints.map { (endpoint: $0, rule: EndpointRule.rule($0)) }, by: \.endpoint.operation)

    /// `init(path:method:)`, remembered: every request is routed, answers from the cache too, and a
    /// client sends the same few paths again and again (parsing one was 5 % of such an answer's
    /// instructions). Only routes found are kept, of paths up to `longestRemembered` bytes, at most
    /// `rememberedCount` of them (then the memory starts again): paths that fail cost what they always
    /// did and cannot crowd the memory.
    static func cached(path: String, method: String) throws -> Route {
        let key = RouteKey(path: path, method: method)
        if let route = remembered.withLock({ $0[key] }) { return route }
        let route = try Route(path: path, method: method)
        // A long path (up to the HTTP decoder's 80 KB, a container name that long) is parsed each
        // time: 256 of them would hold some 40 MB here.
        guard path.utf8.count <= longestRemembered else { return route }
        remembered.withLock { routes in
            if routes.count >= rememberedCount { routes = [:] }
            routes[key] = route
        }
        return route
    }

    static let rememberedCount = 256
    static let longestRemembered = 512
    private static let remembered = Mutex<[RouteKey: Route]>([:])

    private struct RouteKey: Hashable, Sendable {
        var path: String
        var method: String
    }

    init(path: String, method: String) throws {
        // `/database/1/{container}/{environment}/{database}/{operation…}`, cut at its first seven
        // slashes on the UTF-8 view (this runs for every request, cached answers included).
        func notFound() -> ServiceError {
            ServiceError(.notFound, "could not find handler for endpoint", status: 404)
        }
        // Found by offset in the contiguous bytes (a generic `firstIndex` over the view cost more than
        // the rest of routing); a native string turns an offset into an index in constant time.
        var path = path
        var offsets: [Int] = []
        offsets.reserveCapacity(7)
        path.withUTF8 { bytes in
            for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "/") {
                offsets.append(offset)
                if offsets.count == 7 { break }
            }
        }
        guard offsets.count == 7 else { throw notFound() }
        let utf8 = Substring(path).utf8
        let slashes = offsets.map { utf8.index(utf8.startIndex, offsetBy: $0) }
        func part(_ n: Int) -> Substring { Substring(utf8[utf8.index(after: slashes[n])..<slashes[n + 1]]) }
        guard part(0) == "database", part(1) == "1" else { throw notFound() }
        let encoded = part(2)
        let decoded = encoded.utf8.contains(UInt8(ascii: "%")) ? PercentEncoding.decode(encoded) : String(encoded)
        guard let container = decoded, !container.isEmpty else { throw notFound() }
        // Container identifiers begin with `iCloud.` (§1.1).
        guard Self.isContainerID(container) else { throw Self.invalidContainer(container) }
        guard let environment = CloudKitEnvironment(rawValue: String(part(3))) else {
            throw ServiceError.badRequest("unknown environment '\(part(3).prefix(40))'; use development or production")
        }
        guard let scope = DatabaseScope(rawValue: String(part(4))) else {
            throw ServiceError.badRequest("unknown database '\(part(4).prefix(40))'; use public, private or shared")
        }
        let operation = String(Substring(utf8[utf8.index(after: slashes[5])...]))
        // users/discover is both a GET and a POST: the method picks the endpoint.
        let upper = method.utf8.contains { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) } ? method.uppercased() : method
        let named = Self.byOperation[operation] ?? []
        guard let (endpoint, rule) = named.first(where: { $0.endpoint.method.rawValue == upper }) ?? named.first else { throw notFound() }
        guard endpoint.method.rawValue == upper else {
            var error = ServiceError(.badRequest, "method \(method.prefix(10)) not allowed for \(operation)", status: 405)
            error.extraHeaders = [("Allow", endpoint.method.rawValue)]
            throw error
        }
        guard endpoint.databases.contains(scope) else {
            throw ServiceError.badRequest("endpoint not applicable in the database type '\(scope.rawValue)db'")
        }
        self.container = container
        self.environment = environment
        self.scope = scope
        self.endpoint = endpoint
        self.rule = rule
    }

    static func isContainerID(_ text: String) -> Bool { text.hasPrefix("iCloud.") && text.count > "iCloud.".count }

    static func invalidContainer(_ text: String) -> ServiceError {
        ServiceError.badRequest("container identifier '\(text.prefix(80))' is not valid: it must begin with iCloud. (iCloud.com.example.App)")
    }

    /// Private and shared databases, writes to the public one and users/* need a signed-in user
    /// (the endpoint table's `userIn`; an endpoint without a rule needs one).
    var needsUser: Bool {
        guard let rule else { return true }
        return rule.caller == .user || rule.userIn.contains(scope)
    }

    /// Reads whose answer depends only on the request and the stored data (see `AnswerCache`); the
    /// users/* answers and share metadata depend on the caller, who is not part of a public key.
    /// Asset answers carry fresh URLs and receipts with their own expiry.
    var isCacheable: Bool { rule?.cacheable ?? false }

    /// Bounded work (at most a page of records): may be computed on the event loop.
    var isBounded: Bool { rule?.bounded ?? false }

    var isWrite: Bool {
        switch endpoint {
        case .recordsModify, .zonesModify, .subscriptionsModify, .recordsAccept: return true
        default: return false
        }
    }
}
