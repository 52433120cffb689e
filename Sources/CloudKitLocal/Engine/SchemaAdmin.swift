import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB

/// What a schema import, deploy or reset changed.
public struct SchemaChangeReport: Sendable, Hashable {
    /// Record types the new schema lacks, with the development records of each that were dropped.
    public var removedTypes: [String: Int] = [:]
    /// Fields the new schema lacks (`Type.field`), whose values were dropped.
    public var removedFields: [String] = []
    /// Fields the new schema gives another type (`Type.field (INT64 → DOUBLE)`), whose values were
    /// dropped: they were reported as removed, though the field is still there.
    public var retypedFields: [String] = []
    /// Records that lost values of removed or retyped fields.
    public var strippedRecords = 0
    /// Development records, zones and subscriptions deleted by a reset.
    public var deletedRecords = 0
    public var deletedZones = 0
    public var deletedSubscriptions = 0

    /// One line per fact, for logs and command output.
    public var lines: [String] {
        var lines: [String] = []
        for (type, count) in removedTypes.sorted(by: { $0.key < $1.key }) {
            lines.append("removed record type \(type) (\(count) development record\(count == 1 ? "" : "s") dropped)")
        }
        for field in removedFields.sorted() { lines.append("removed field \(field)") }
        for field in retypedFields.sorted() { lines.append("retyped field \(field): its values were dropped") }
        if strippedRecords > 0 {
            let which = retypedFields.isEmpty ? "removed" : removedFields.isEmpty ? "retyped" : "removed or retyped"
            lines.append("\(strippedRecords) record\(strippedRecords == 1 ? "" : "s") lost values of \(which) fields")
        }
        if deletedRecords + deletedZones + deletedSubscriptions > 0 {
            lines.append("deleted development data: \(deletedRecords) records, \(deletedZones) zones, \(deletedSubscriptions) subscriptions")
        }
        return lines
    }
}

extension LocalCloudKit {
    /// The schema of a container and environment: what was imported or deployed, plus what
    /// just-in-time creation added in development. System types (`cloudkit.share`) are left out.
    public func schema(container: String, environment: CloudKitEnvironment) throws -> CloudKitSchema {
        try store.pool.read { db in try SchemaTables.load(db, container: container, environment: environment) }
    }

    /// Whether the environment's schema was inferred from data an earlier version wrote (every field
    /// indexed), rather than created just in time, imported or deployed.
    public func schemaIsInferred(container: String, environment: CloudKitEnvironment) throws -> Bool {
        try store.pool.read { db in try SchemaTables.origin(db, container: container, environment: environment) == "inferred" }
    }

    /// Imports a whole schema into development, as `cktool import-schema` does (§2.5): the file is the
    /// schema, not a delta. Refused, changing nothing, when it would remove or retype what production
    /// has. Types and fields it drops from development lose their data (records of a removed type are
    /// deleted, values of a removed or retyped field are dropped): CloudKit says such data becomes
    /// unreachable; deleting it is our choice (unconfirmed whether CloudKit keeps it hidden).
    @discardableResult
    public func importSchema(_ schema: CloudKitSchema, container: String) async throws -> SchemaChangeReport {
        // Users is in every container (§1.6): a file that leaves it out keeps it.
        var complete = schema
        if complete.recordType("Users") == nil { complete.recordTypes.append(SchemaTables.usersType) }
        return try await store.pool.write { [complete] db in
            let schema = complete
            let production = try SchemaTables.load(db, container: container, environment: .production)
            let problems = SchemaCompatibility.destructiveChanges(from: production, to: schema)
            guard problems.isEmpty else { throw ServiceError.badRequest("schema refused: " + problems.joined(separator: "; ")) }
            let development = try SchemaTables.load(db, container: container, environment: .development)
            var report = SchemaChangeReport()
            let databases = try Int64.fetchAll(
                db, sql: "SELECT id FROM ckdb WHERE container = ? AND environment = 'development'", arguments: [container])
            for type in development.recordTypes {
                guard let replacement = schema.recordType(type.name) else {
                    report.removedTypes[type.name] = try self.dropRecords(ofType: type.name, in: databases, db)
                    continue
                }
                let dropped = type.fields.filter { field in
                    !field.isSystem && replacement.field(field.name).map { $0.type.wireType != field.type.wireType } ?? true
                }
                guard !dropped.isEmpty else { continue }
                for field in dropped {
                    if let retyped = replacement.field(field.name) {
                        report.retypedFields.append("\(type.name).\(field.name) (\(field.type.description) → \(retyped.type.description))")
                    } else {
                        report.removedFields.append("\(type.name).\(field.name)")
                    }
                }
                report.strippedRecords += try self.dropValues(of: Set(dropped.map(\.name)), ofType: type.name, in: databases, db)
            }
            let indexed = try FieldIndex.specs(db, container: container, environment: "development")
            try SchemaTables.replace(db, container: container, environment: .development, with: schema, origin: "imported")
            try FieldIndex.refresh(db, container: container, environment: "development", before: indexed)
            return report
        }
    }

    /// Promotes development's schema to production (the Console's "Deploy Schema Changes", §2.3):
    /// all or nothing, refused when it would remove a production type or field or change a field's type.
    public func deploySchema(container: String) async throws {
        try await store.pool.write { db in
            let development = try SchemaTables.load(db, container: container, environment: .development)
            let production = try SchemaTables.load(db, container: container, environment: .production)
            let problems = SchemaCompatibility.destructiveChanges(from: production, to: development)
            guard problems.isEmpty else { throw ServiceError.badRequest("deploy refused: " + problems.joined(separator: "; ")) }
            let indexed = try FieldIndex.specs(db, container: container, environment: "production")
            try SchemaTables.replace(db, container: container, environment: .production, with: development, origin: "deployed")
            try FieldIndex.refresh(db, container: container, environment: "production", before: indexed)
        }
    }

    /// Puts development's schema back to production's and deletes all development data (§2.4, as
    /// `cktool reset-schema`): records, custom zones, subscriptions and shares of every development
    /// database. Each default zone starts a new incarnation, so sync tokens from before are refused.
    public func resetSchema(container: String) async throws -> SchemaChangeReport {
        try await store.pool.write { db in
            let production = try SchemaTables.load(db, container: container, environment: .production)
            let report = try Self.deleteData(db, container: container, environment: .development)
            try db.execute(
                sql: "DELETE FROM field_schema WHERE container = ? AND environment = 'development' AND record_type LIKE '%.%'", arguments: [container])
            try db.execute(
                sql: "DELETE FROM type_grant WHERE container = ? AND environment = 'development' AND record_type LIKE '%.%'", arguments: [container])
            let indexed = try FieldIndex.specs(db, container: container, environment: "development")
            try SchemaTables.replace(db, container: container, environment: .development, with: production, origin: "reset")
            try FieldIndex.refresh(db, container: container, environment: "development", before: indexed)
            return report
        }
    }

    /// Indexes every record type's `___recordID` (QUERYABLE) and creation and modification times
    /// (QUERYABLE SORTABLE), as a developer does in the Console so that a type can be browsed.
    public func addSystemIndexes(container: String, environment: CloudKitEnvironment) async throws {
        try await store.pool.write { db in
            var schema = try SchemaTables.load(db, container: container, environment: environment)
            for index in schema.recordTypes.indices where schema.recordTypes[index].name != "Users" {
                var type = schema.recordTypes[index]
                for (name, indexes) in [("___recordID", [SchemaIndex.queryable]), ("___createTime", [.queryable, .sortable]), ("___modTime", [.queryable, .sortable])] {
                    let system = CloudKitSchema.systemFields.first { $0.name == name }!
                    type.fields.removeAll { $0.name == name }
                    type.fields.append(FieldSchema(name: name, type: system.type, indexes: Set(indexes)))
                }
                schema.recordTypes[index] = type
            }
            let origin = try SchemaTables.origin(db, container: container, environment: environment) ?? "demo"
            let indexed = try FieldIndex.specs(db, container: container, environment: environment.rawValue)
            try SchemaTables.replace(db, container: container, environment: environment, with: schema, origin: origin)
            try FieldIndex.refresh(db, container: container, environment: environment.rawValue, before: indexed)
        }
    }

    /// Takes `index` off a field of a record type, as a developer does in the Console (the query index
    /// is refreshed in the same transaction).
    public func removeIndex(_ index: SchemaIndex, recordType: String, field: String, container: String, environment: CloudKitEnvironment) async throws {
        try await store.pool.write { db in
            var schema = try SchemaTables.load(db, container: container, environment: environment)
            guard let t = schema.recordTypes.firstIndex(where: { $0.name == recordType }),
                  let f = schema.recordTypes[t].fields.firstIndex(where: { $0.name == field }) else { return }
            schema.recordTypes[t].fields[f].indexes.remove(index)
            let origin = try SchemaTables.origin(db, container: container, environment: environment) ?? "demo"
            let indexed = try FieldIndex.specs(db, container: container, environment: environment.rawValue)
            try SchemaTables.replace(db, container: container, environment: environment, with: schema, origin: origin)
            try FieldIndex.refresh(db, container: container, environment: environment.rawValue, before: indexed)
        }
    }

    /// Assigns a custom role to a user (`serve --role`; the Console's user-record view, §4.3).
    public func assignRole(_ role: String, to userName: String, container: String, environment: CloudKitEnvironment) async throws {
        try await store.pool.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO role_member (container, environment, user, role) VALUES (?, ?, ?, ?)",
                arguments: [container, environment.rawValue, Self.userRecordName(for: userName), role])
        }
    }

    func dropRecords(ofType type: String, in databases: [Int64], _ db: Database) throws -> Int {
        var count = 0
        for id in databases {
            count += try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM record WHERE db = ? AND type = ? AND deleted = 0"), arguments: [id, type]) ?? 0
            try db.execute(
                sql: "DELETE FROM reference WHERE db = ? AND (zone, source) IN (SELECT zone, name FROM record WHERE db = ? AND type = ?)",
                arguments: [id, id, type])
            try db.cachedStatement(sql: "DELETE FROM record WHERE db = ? AND type = ?").execute(arguments: [id, type])
        }
        return count
    }

    func dropValues(of fields: Set<String>, ofType type: String, in databases: [Int64], _ db: Database) throws -> Int {
        var count = 0
        for id in databases {
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT zone, name, fields FROM record WHERE db = ? AND type = ? AND deleted = 0"), arguments: [id, type]) {
                guard let text: String = row[2] else { continue }
                var values = try Record.decodeStoredFields(text)
                guard values.keys.contains(where: fields.contains) else { continue }
                for field in fields { values[field] = nil }
                try db.execute(
                    sql: "UPDATE record SET fields = ? WHERE db = ? AND zone = ? AND name = ?",
                    arguments: [Record.encodeStoredFields(values), id, row[0] as String, row[1] as String])
                try db.execute(
                    sql: "DELETE FROM reference WHERE db = ? AND zone = ? AND source = ? AND field IN (\(fields.map { _ in "?" }.joined(separator: ",")))",
                    arguments: StatementArguments([id, row[0] as String, row[1] as String] as [any DatabaseValueConvertible]) + StatementArguments(Array(fields)))
                count += 1
            }
            // The rows changed lost their stored renderings (`RecordWire`): rendered again.
            try RecordWire.fillMissing(db, dbID: id)
        }
        return count
    }
}
