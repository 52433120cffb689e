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

    init(path: String, method: String) throws {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        func notFound() -> ServiceError {
            ServiceError(.notFound, "could not find handler for endpoint", status: 404)
        }
        guard parts.count >= 7, parts[0] == "database", parts[1] == "1" else { throw notFound() }
        guard let container = PercentEncoding.decode(Substring(parts[2])), !container.isEmpty else { throw notFound() }
        // Container identifiers begin with `iCloud.` (§1.1).
        guard Self.isContainerID(container) else { throw Self.invalidContainer(container) }
        guard let environment = CloudKitEnvironment(rawValue: parts[3]) else {
            throw ServiceError.badRequest("unknown environment '\(parts[3].prefix(40))'; use development or production")
        }
        guard let scope = DatabaseScope(rawValue: parts[4]) else {
            throw ServiceError.badRequest("unknown database '\(parts[4].prefix(40))'; use public, private or shared")
        }
        let operation = parts[5...].joined(separator: "/")
        // users/discover is both a GET and a POST: the method picks the endpoint.
        let named = Self.endpoints.filter { $0.operation == operation }
        guard let endpoint = named.first(where: { $0.method.rawValue == method.uppercased() }) ?? named.first else { throw notFound() }
        guard endpoint.method.rawValue == method.uppercased() else {
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
        self.rule = EndpointRule.rule(endpoint)
    }

    static func isContainerID(_ text: String) -> Bool { text.hasPrefix("iCloud.") && text.count > "iCloud.".count }

    static func invalidContainer(_ text: String) -> ServiceError {
        ServiceError.badRequest("container identifier '\(text.prefix(80))' is not valid: it begins with iCloud.")
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
