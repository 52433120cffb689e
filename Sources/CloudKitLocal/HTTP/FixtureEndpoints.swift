import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB

/// What a test harness needs of the server, as with Firebase's emulators and DynamoDB Local:
///
///     GET  /ready                                        200 {"ready": true} once the server answers
///     POST /admin/1/{container}/{environment}/reset      wipes that container and environment
///
/// The reset needs `ckAPIToken` valid for the container; it answers what it deleted.
extension LocalCloudKit {
    static let adminPathPrefix = "/admin/1/"

    func readiness() -> ServerResponse {
        ServerResponse(status: 200, headers: [(name: "Content-Type", value: "application/json")], body: Array(#"{"ready":true}"#.utf8))
    }

    /// The methods `/ready` takes: the endpoint table's GET, and HEAD (its headers alone). The full path
    /// and the connection guard's answer over the cap both ask this.
    static func isReadinessMethod(_ method: String) -> Bool { ["GET", "HEAD"].contains(method.uppercased()) }

    /// `/ready` as the endpoint table lists it; any other method is a 405 naming the two it takes, as
    /// the other endpoints of this server answer a method they do not take.
    func readiness(_ request: ServerRequest) throws -> ServerResponse {
        guard Self.isReadinessMethod(request.method) else {
            var error = ServiceError(.badRequest, "method \(request.method.prefix(10)) not allowed here: GET /ready", status: 405)
            error.extraHeaders = [("Allow", "GET, HEAD")]
            throw error
        }
        return readiness()
    }

    /// `/ready` on the calling thread (the HTTP server's event loop), with the same checks and answer as
    /// the full path: a harness polls it until the server answers, and each poll hopped into Swift
    /// concurrency and back, 93 µs of the server's CPU against a lookup's 78 (scripts: PERFORMANCE.md).
    /// Nil for anything else.
    public func answerReadinessOnEventLoop(_ request: ServerRequest) -> ServerResponse? {
        guard request.path == "/ready", request.method == "GET", requestPolicyRefusal(request) == nil else { return nil }
        return withCORS(readiness(), request)
    }

    func handleAdmin(_ request: ServerRequest, uuid: String) async throws -> ServerResponse {
        let (container, environment) = try adminReset(request)
        return respond(200, Self.resetAnswer(try await reset(container: container, environment: environment)), uuid: uuid, extra: [])
    }

    /// The container and environment a reset request names, once its path, method and caller are
    /// checked.
    func adminReset(_ request: ServerRequest) throws -> (container: String, environment: CloudKitEnvironment) {
        let parts = request.path.dropFirst(Self.adminPathPrefix.count).split(separator: "/").map(String.init)
        guard parts.count == 3, parts[2] == "reset", let container = PercentEncoding.decode(Substring(parts[0])) else {
            throw ServiceError(.notFound, "could not find handler for endpoint", status: 404)
        }
        guard let environment = CloudKitEnvironment(rawValue: parts[1]) else {
            throw ServiceError.badRequest("unknown environment '\(parts[1].prefix(40))'; use development or production")
        }
        guard request.method.uppercased() == "POST" else {
            var error = ServiceError(.badRequest, "method \(request.method.prefix(10)) not allowed here", status: 405)
            error.extraHeaders = [("Allow", "POST")]
            throw error
        }
        try checkOwnEndpointAccess(request, container: container)
        return (container, environment)
    }

    static func resetAnswer(_ report: SchemaChangeReport) -> JSON {
        .object([
            "deleted": .object([
                "records": .int(Int64(report.deletedRecords)), "zones": .int(Int64(report.deletedZones)), "subscriptions": .int(Int64(report.deletedSubscriptions)),
            ]),
        ])
    }

    /// Puts one container and environment back to the state the server started it in: every
    /// database's records, custom zones (reported deleted to database change feeds), subscriptions and
    /// shares are deleted, and its schema (types, fields and their indexes, grants, roles and who holds
    /// them) becomes what it was when the server started (`markStartingState`: after `serve --schema`
    /// and `--role`), so what tests created just in time goes and what the server was started with
    /// stays. Default zones start a new incarnation, so sync tokens from before are refused. Other
    /// containers and environments, users, tokens and keys are kept.
    public func reset(container: String, environment: CloudKitEnvironment) async throws -> SchemaChangeReport {
        let starting = startingSchemas.withLock { $0 }
        return try await store.pool.write { db in try self.reset(db, to: starting, container: container, environment: environment) }
    }

    /// `reset` on the calling thread (`answerWriteOnEventLoop`).
    func resetNow(container: String, environment: CloudKitEnvironment) throws -> SchemaChangeReport {
        let starting = startingSchemas.withLock { $0 }
        return try store.pool.write { db in try self.reset(db, to: starting, container: container, environment: environment) }
    }

    private func reset(_ db: Database, to starting: SchemaRows, container: String, environment: CloudKitEnvironment) throws -> SchemaChangeReport {
        var report = try Self.deleteData(db, container: container, environment: environment)
        // The schema tables are compared with the starting state only when they changed since this
        // container was last found (or put back) in it: a suite resets between every two tests, and
        // the comparison was a quarter of a reset's work.
        let key = container + "\u{0}" + environment.rawValue
        if try schemaKeptAt.withLock({ $0[key] }) != SchemaTables.version(db) {
            try starting.restore(db, container: container, environment: environment.rawValue)
            let version = try SchemaTables.version(db)
            schemaKeptAt.withLock { $0[key] = version }
        }
        report.removedTypes = [:]
        return report
    }

    /// Remembers every container's schema as it is now as the state a fixture reset returns to. The
    /// server's start calls it once its schema file and roles are in (`serve --schema`, `--role`).
    public func markStartingState() throws {
        keepStartingState(try store.pool.read { db in try SchemaRows(db) })
    }

    /// Keeps `rows` as the state a fixture reset returns to (what was known of the old one goes).
    func keepStartingState(_ rows: SchemaRows) {
        startingSchemas.withLock { $0 = rows }
        schemaKeptAt.withLock { $0 = [:] }
    }

    /// Deletes the data of every database of a container and environment (the schema is kept).
    static func deleteData(_ db: Database, container: String, environment: CloudKitEnvironment) throws -> SchemaChangeReport {
        // Cached statements: a test suite resets between tests, and compiling these statements was
        // most of a reset's work (scripts/bench-fixture.sh).
        var report = SchemaChangeReport()
        let databases = try Int64.fetchAll(
            db.cachedStatement(sql: "SELECT id FROM ckdb WHERE container = ? AND environment = ?"), arguments: [container, environment.rawValue])
        for id in databases {
            report.deletedRecords += try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM record WHERE db = ? AND deleted = 0"), arguments: [id]) ?? 0
            report.deletedZones += try Int.fetchOne(
                db.cachedStatement(sql: "SELECT count(*) FROM zone WHERE db = ? AND deleted = 0 AND name <> ?"), arguments: [id, ZoneID.defaultZoneName]) ?? 0
            report.deletedSubscriptions += try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM subscription WHERE db = ?"), arguments: [id]) ?? 0
            for table in ["record", "field_index", "reference", "subscription", "share", "share_participant"] {
                try db.cachedStatement(sql: "DELETE FROM \(table) WHERE db = ?").execute(arguments: [id])
            }
            try db.cachedStatement(sql: "DELETE FROM shared_zone WHERE shared_db = ? OR owner_db = ?").execute(arguments: [id, id])
            // Custom zones are marked deleted (changes/database then reports them so); the default
            // zone starts a new incarnation, so sync tokens from before are refused.
            let seq = try db.nextSeq(id)
            try db.cachedStatement(sql: "UPDATE zone SET deleted = 1, seq = ? WHERE db = ? AND name <> ? AND deleted = 0")
                .execute(arguments: [seq, id, ZoneID.defaultZoneName])
            try db.cachedStatement(sql: "UPDATE zone SET incarnation = ?, seq = ? WHERE db = ? AND name = ?")
                .execute(arguments: [seq, seq, id, ZoneID.defaultZoneName])
        }
        // Asset files go with the records (receipts for them fail from now on).
        try db.cachedStatement(sql: "DELETE FROM asset_blob WHERE container = ? AND environment = ?").execute(arguments: [container, environment.rawValue])
        return report
    }
}

/// The rows of the schema tables (`SchemaTables`), every container's, kept in memory.
struct SchemaRows: Sendable {
    static let tables = ["field_schema", "type_grant", "schema_role", "role_member", "schema_origin"]

    /// Per table: its columns, and its rows (container and environment are the first two columns).
    var tables: [String: (columns: [String], rows: [[DatabaseValue]])] = [:]

    init() {}

    init(_ db: Database) throws {
        for table in Self.tables {
            let columns = try db.columns(in: table).map(\.name).filter { $0 != "container" && $0 != "environment" }
            let list = (["container", "environment"] + columns).map { "\"\($0)\"" }.joined(separator: ", ")
            let rows = try Row.fetchAll(db, sql: "SELECT \(list) FROM \(table)").map { row in (0..<row.count).map { row[$0] as DatabaseValue } }
            tables[table] = (["container", "environment"] + columns, rows)
        }
    }

    /// The rows kept, per container and environment (`[container, environment]`) and table, as sets:
    /// a fixture resets between every two tests of a suite, and `isCurrent` built these on every reset.
    /// Built by the first reset, not at start: the browser's embedded server never resets, and
    /// building them (the first hashing of `[DatabaseValue]` arrays, sets and dictionaries of them) was
    /// 1.6 M of the 47 M instructions before the demo's first frame.
    private var kept: [[DatabaseValue]: [String: Set<[DatabaseValue]>]] {
        keptSets.withLock { kept in
            if let kept { return kept }
            var built: [[DatabaseValue]: [String: Set<[DatabaseValue]>]] = [:]
            for (table, (_, rows)) in tables {
                for row in rows { built[[row[0], row[1]], default: [:]][table, default: []].insert(row) }
            }
            kept = built
            return built
        }
    }
    /// Nil until the first reset builds it; a copy of the struct shares it.
    private let keptSets = Mutex<[[DatabaseValue]: [String: Set<[DatabaseValue]>]]?>(nil)

    /// Replaces a container and environment's schema with the one kept, and the query index with
    /// what that schema indexes (the data is gone: see `reset`).
    func restore(_ db: Database, container: String, environment: String) throws {
        // Between the tests of a suite the schema is usually the one kept: then nothing is rewritten
        // (and the query index, emptied with the data, needs nothing either).
        if try isCurrent(db, container: container, environment: environment) { return }
        let indexed = try FieldIndex.specs(db, container: container, environment: environment)
        for table in Self.tables {
            try db.cachedStatement(sql: "DELETE FROM \(table) WHERE container = ? AND environment = ?").execute(arguments: [container, environment])
            guard let (columns, rows) = tables[table] else { continue }
            let insert = try db.makeStatement(
                sql: "INSERT INTO \(table) (\(columns.map { "\"\($0)\"" }.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))")
            for row in rows where row[0] == container.databaseValue && row[1] == environment.databaseValue {
                try insert.execute(arguments: StatementArguments(row))
            }
        }
        try FieldIndex.refresh(db, container: container, environment: environment, before: indexed)
    }

    /// Whether a container and environment's schema tables hold exactly the rows kept.
    func isCurrent(_ db: Database, container: String, environment: String) throws -> Bool {
        for table in Self.tables {
            let columns = tables[table]?.columns ?? ["container", "environment"]
            let kept = self.kept[[container.databaseValue, environment.databaseValue]]?[table] ?? []
            let list = columns.map { "\"\($0)\"" }.joined(separator: ", ")
            let current = try Row.fetchAll(db.cachedStatement(sql: "SELECT \(list) FROM \(table) WHERE container = ? AND environment = ?"), arguments: [container, environment])
            guard current.count == kept.count, current.allSatisfy({ row in kept.contains((0..<row.count).map { row[$0] as DatabaseValue }) }) else {
                return false
            }
        }
        return true
    }
}

