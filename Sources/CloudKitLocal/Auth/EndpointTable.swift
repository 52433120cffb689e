import CloudKitWeb

/// Every endpoint the server answers, and for each: who may call it, from where, what grant it
/// needs, whether it may be answered from the answer cache, and whether its work is bounded (answered
/// on the event loop). Routing (`Route`, `LocalCloudKit.answer`), authentication (`needsUser`), the
/// cache (`isCacheable`), the event-loop path (`isBounded`) and the web-page rules
/// (`RequestPolicy`) all read it; SERVER.md's endpoint table is printed from it
/// (`ckbrowse serve --endpoints`) and a test checks the two agree.
public struct EndpointRule: Sendable, Hashable {
    /// Who may call.
    public enum Caller: String, Sendable, CaseIterable {
        /// No credential at all.
        case anyone = "anyone"
        /// `ckAPIToken` valid for the container; a user (`ckWebAuthToken`) where `needsUser` says.
        case apiToken = "API token (+ user where marked)"
        /// `ckAPIToken` valid for the container, or a server-to-server key (public database only).
        case apiTokenOrKey = "API token or server key (+ user where marked)"
        /// `ckAPIToken` and a signed-in user.
        case user = "API token + signed-in user"
        /// `ckAPIToken` valid for the container, and no web page (our own management endpoints).
        case admin = "API token, never a web page"
        /// The URL is its own permission: a MAC-signed, expiring token in the path.
        case signedURL = "the signed URL (expires)"
        /// The push token in the path, which only its creator was given.
        case pushToken = "the push token in the URL"
    }

    /// Which web pages may call (the `Origin` a browser sends).
    public enum Pages: String, Sendable {
        /// Pages from an allowed origin (CORS answers them; others are refused before anything runs).
        case allowedOrigins = "allowed origins (CORS)"
        /// Only this server's own page (the sign-in form posting to itself); no CORS.
        case ownPage = "its own page only, no CORS"
        /// No web page at all: a request carrying `Origin` or `Sec-Fetch-Site` (other than a
        /// navigation) is refused.
        case none = "no web page"
    }

    public var name: String
    public var method: String
    public var path: String
    public var caller: Caller
    /// Databases in which a signed-in user is needed (for `/database/1/` endpoints).
    public var userIn: Set<DatabaseScope>
    public var pages: Pages
    /// The grant or share permission the operation needs, in words.
    public var permission: String
    public var cacheable: Bool
    public var bounded: Bool

    /// The rule of a `/database/1/` endpoint.
    static func database(
        _ endpoint: Endpoint, caller: Caller = .apiTokenOrKey, userIn: Set<DatabaseScope> = [.private, .shared], permission: String,
        cacheable: Bool = false, bounded: Bool = false
    ) -> EndpointRule {
        EndpointRule(
            name: endpoint.operation, method: endpoint.method.rawValue,
            path: "/database/1/{container}/{environment}/{\(endpoint.databases.map(\.rawValue).sorted().joined(separator: ","))}/\(endpoint.operation)",
            caller: caller, userIn: userIn.intersection(endpoint.databases), pages: .allowedOrigins, permission: permission, cacheable: cacheable,
            bounded: bounded)
    }

    static let readRecords = "READ grant of the record type (public); owner or share participant (shared)"
    static let writeRecords = "CREATE/WRITE grants (public); owner, or a READ_WRITE participant (shared)"
    static let everyDatabase: Set<DatabaseScope> = [.public, .private, .shared]

    /// The whole table, in the order SERVER.md lists it.
    public static let all: [EndpointRule] = [
        .database(.zonesList, permission: "own zones; shared zones the caller participates in", cacheable: true, bounded: true),
        .database(.zonesLookup, permission: "as zones/list", cacheable: true, bounded: true),
        .database(.zonesModify, caller: .user, permission: "own database only (the shared database refuses)"),
        .database(.changesDatabase, permission: "as zones/list", cacheable: true, bounded: true),
        .database(.changesZone, permission: readRecords, cacheable: true, bounded: true),
        .database(.zonesChanges, permission: "as zones/list", cacheable: true),
        .database(.recordsChanges, permission: readRecords, cacheable: true, bounded: true),
        .database(.recordsQuery, permission: readRecords + "; indexes as the schema says", cacheable: true, bounded: true),
        .database(.recordsLookup, permission: readRecords, cacheable: true, bounded: true),
        .database(.recordsModify, userIn: everyDatabase, permission: writeRecords),
        .database(.subscriptionsList, permission: "own subscriptions", cacheable: true),
        .database(.subscriptionsLookup, permission: "own subscriptions", cacheable: true),
        .database(.subscriptionsModify, userIn: everyDatabase, permission: "own subscriptions"),
        .database(.usersCurrent, caller: .user, userIn: everyDatabase, permission: "the caller"),
        .database(.usersCaller, caller: .user, userIn: everyDatabase, permission: "the caller"),
        .database(.usersDiscover, caller: .user, userIn: everyDatabase, permission: "discoverable users"),
        .database(.usersDiscoverAll, caller: .user, userIn: everyDatabase, permission: "discoverable users"),
        .database(.usersLookupEmail, caller: .user, userIn: everyDatabase, permission: "discoverable users"),
        .database(.usersLookupID, caller: .user, userIn: everyDatabase, permission: "discoverable users"),
        .database(.recordsResolve, caller: .user, userIn: everyDatabase, permission: "the share's participants, or anyone with a public share"),
        .database(.recordsAccept, caller: .user, userIn: everyDatabase, permission: "an invited participant, or anyone with a public share"),
        .database(.assetsUpload, caller: .user, userIn: everyDatabase, permission: "as records/modify of the record named"),
        .database(.assetsRereference, caller: .user, userIn: everyDatabase, permission: readRecords),
        EndpointRule(
            name: "tokens/create", method: "POST", path: "/device/1/{container}/{environment}/tokens/create", caller: .user, userIn: [],
            pages: .allowedOrigins, permission: "the caller (the token is theirs)", cacheable: false, bounded: false),
        EndpointRule(
            name: "tokens/register", method: "POST", path: "/device/1/{container}/{environment}/tokens/register", caller: .user, userIn: [],
            pages: .allowedOrigins, permission: "a push token the caller created", cacheable: false, bounded: false),
        EndpointRule(
            name: "webcourier", method: "GET", path: "/webcourier/1/{push token}", caller: .pushToken, userIn: [], pages: .allowedOrigins,
            permission: "the push token's own queue", cacheable: false, bounded: false),
        EndpointRule(
            name: "asset upload", method: "POST", path: "/upload/1/{signed token}", caller: .signedURL, userIn: [], pages: .allowedOrigins,
            permission: "the record field assets/upload named; once; 15 minutes", cacheable: false, bounded: false),
        EndpointRule(
            name: "asset download", method: "GET", path: "/assets/1/{signed token}/{file name}", caller: .signedURL, userIn: [],
            pages: .allowedOrigins, permission: "the reader can still read a record holding the file; expires", cacheable: false, bounded: false),
        EndpointRule(
            name: "sign-in page", method: "GET", path: "/signin?container=C[&callback=URL][&origin=O]", caller: .anyone, userIn: [], pages: .none,
            permission: "none (lists user names)", cacheable: false, bounded: true),
        EndpointRule(
            name: "sign-in", method: "POST", path: "/signin", caller: .anyone, userIn: [], pages: .ownPage,
            permission: "the form's signed nonce (no cross-site form)", cacheable: false, bounded: true),
        EndpointRule(
            name: "share page", method: "GET", path: "/share/{shortGUID}", caller: .anyone, userIn: [], pages: .none,
            permission: "the shortGUID (as a share URL)", cacheable: false, bounded: false),
        EndpointRule(
            name: "schema", method: "GET", path: "/schema/1/{container}/{environment}", caller: .admin, userIn: [], pages: .none,
            permission: "the container's API token", cacheable: false, bounded: false),
        EndpointRule(
            name: "schema validate/import/deploy/reset", method: "POST", path: "/schema/1/{container}/{environment}/{validate,import,deploy,reset}",
            caller: .admin, userIn: [], pages: .none, permission: "the container's API token", cacheable: false, bounded: false),
        EndpointRule(
            name: "fixture reset", method: "POST", path: "/admin/1/{container}/{environment}/reset", caller: .admin, userIn: [], pages: .none,
            permission: "the container's API token", cacheable: false, bounded: false),
        EndpointRule(
            name: "readiness", method: "GET", path: "/ready", caller: .anyone, userIn: [], pages: .none, permission: "none", cacheable: false,
            bounded: true),
    ]

    /// The rules of CloudKit's endpoints (`/database/1/…` and `/device/1/…`), by method and operation.
    static let byOperation: [String: EndpointRule] = {
        var rules: [String: EndpointRule] = [:]
        for rule in all where rule.path.hasPrefix("/database/1/") || rule.path.hasPrefix("/device/1/") { rules[rule.method + " " + rule.name] = rule }
        return rules
    }()

    /// The rule of one of CloudKit's endpoints (a test checks that every one has a rule).
    static func rule(_ endpoint: Endpoint) -> EndpointRule? {
        byOperation[endpoint.method.rawValue + " " + endpoint.operation]
    }

    /// The rule of any path this server answers (nil: none, a 404).
    public static func rule(path: String, method: String) -> EndpointRule? {
        if path.hasPrefix("/database/1/") {
            return (try? Route.cached(path: path, method: method))?.rule
        }
        let prefixes: [(String, String?)] = [
            ("/device/1/", nil), ("/webcourier/1/", "webcourier"), (LocalCloudKit.uploadPathPrefix, "asset upload"),
            (LocalCloudKit.downloadPathPrefix, "asset download"), ("/share/", "share page"), (LocalCloudKit.adminPathPrefix, "fixture reset"),
        ]
        for (prefix, name) in prefixes where path.hasPrefix(prefix) {
            let name = name ?? (path.hasSuffix("/register") ? "tokens/register" : "tokens/create")
            return all.first { $0.name == name }
        }
        if path.hasPrefix(LocalCloudKit.schemaPathPrefix) {
            return all.first { $0.name == (method.uppercased() == "GET" ? "schema" : "schema validate/import/deploy/reset") }
        }
        if path == "/signin" { return all.first { $0.name == (method.uppercased() == "POST" ? "sign-in" : "sign-in page") } }
        if path == "/ready" { return all.first { $0.name == "readiness" } }
        return nil
    }

    /// The table as JSON (`serve --endpoints json`), for tests that walk every endpoint.
    public static var json: JSON {
        .array(all.map { rule in
            .object([
                "name": .string(rule.name), "method": .string(rule.method), "path": .string(rule.path), "caller": .string(String(describing: rule.caller)),
                "userIn": .array(rule.userIn.map(\.rawValue).sorted().map { .string($0) }), "pages": .string(String(describing: rule.pages)),
                "permission": .string(rule.permission), "cacheable": .bool(rule.cacheable), "bounded": .bool(rule.bounded),
            ])
        })
    }

    /// The table as Markdown, as SERVER.md shows it.
    public static var markdown: String {
        var lines = [
            "| endpoint | method | path | who may call | user needed in | web pages | grant or permission | cached | bounded |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for rule in all {
            let users = rule.userIn.isEmpty ? "—" : rule.userIn.map(\.rawValue).sorted().joined(separator: ", ")
            lines.append(
                "| \(rule.name) | \(rule.method) | `\(rule.path)` | \(rule.caller.rawValue) | \(users) | \(rule.pages.rawValue) | \(rule.permission) | "
                    + "\(rule.cacheable ? "yes" : "no") | \(rule.bounded ? "yes" : "no") |")
        }
        return lines.joined(separator: "\n")
    }
}
