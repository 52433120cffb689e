import CloudKitWeb
import Foundation
import GRDB

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

    func handleAdmin(_ request: ServerRequest, uuid: String) async throws -> ServerResponse {
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
        let report = try await reset(container: container, environment: environment)
        return respond(200, .object([
            "deleted": .object([
                "records": .int(Int64(report.deletedRecords)), "zones": .int(Int64(report.deletedZones)), "subscriptions": .int(Int64(report.deletedSubscriptions)),
            ]),
        ]), uuid: uuid, extra: [])
    }

    /// Wipes one container and environment, as if it had never been used: every database's records,
    /// custom zones (reported deleted to database change feeds), subscriptions and shares, and its
    /// schema (types, indexes, grants, roles). Default zones start a new incarnation, so sync tokens
    /// from before are refused. Other containers and
    /// environments, users, tokens and keys are kept.
    public func reset(container: String, environment: CloudKitEnvironment) async throws -> SchemaChangeReport {
        try await store.pool.write { db in
            var report = try Self.deleteData(db, container: container, environment: environment)
            for table in ["field_schema", "type_grant", "schema_role", "role_member", "schema_origin"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE container = ? AND environment = ?", arguments: [container, environment.rawValue])
            }
            report.removedTypes = [:]
            return report
        }
    }

    /// Deletes the data of every database of a container and environment (the schema is kept).
    static func deleteData(_ db: Database, container: String, environment: CloudKitEnvironment) throws -> SchemaChangeReport {
        var report = SchemaChangeReport()
        let databases = try Int64.fetchAll(
            db, sql: "SELECT id FROM ckdb WHERE container = ? AND environment = ?", arguments: [container, environment.rawValue])
        for id in databases {
            report.deletedRecords += try Int.fetchOne(db, sql: "SELECT count(*) FROM record WHERE db = ? AND deleted = 0", arguments: [id]) ?? 0
            report.deletedZones += try Int.fetchOne(
                db, sql: "SELECT count(*) FROM zone WHERE db = ? AND deleted = 0 AND name <> ?", arguments: [id, ZoneID.defaultZoneName]) ?? 0
            report.deletedSubscriptions += try Int.fetchOne(db, sql: "SELECT count(*) FROM subscription WHERE db = ?", arguments: [id]) ?? 0
            for table in ["record", "reference", "subscription", "share", "share_participant"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE db = ?", arguments: [id])
            }
            try db.execute(sql: "DELETE FROM shared_zone WHERE shared_db = ? OR owner_db = ?", arguments: [id, id])
            // Custom zones are marked deleted (changes/database then reports them so); the default
            // zone starts a new incarnation, so sync tokens from before are refused.
            let seq = try db.nextSeq(id)
            try db.execute(sql: "UPDATE zone SET deleted = 1, seq = ? WHERE db = ? AND name <> ? AND deleted = 0", arguments: [seq, id, ZoneID.defaultZoneName])
            try db.execute(sql: "UPDATE zone SET incarnation = ?, seq = ? WHERE db = ? AND name = ?", arguments: [seq, seq, id, ZoneID.defaultZoneName])
        }
        // Asset files go with the records (receipts for them fail from now on).
        try db.execute(sql: "DELETE FROM asset_blob WHERE container = ? AND environment = ?", arguments: [container, environment.rawValue])
        return report
    }
}
