import CloudKitWeb
import Foundation
import GRDB

extension LocalCloudKit {
    /// The schema of a container and environment as this server holds it: the record types and
    /// fields created just in time (development) or known to production, each field with the indexes
    /// just-in-time creation gives it (`cloudkit-schema.md` §2.1) and each type with the default
    /// grants, plus `Users`, which every container has. System types (`cloudkit.share`) are not
    /// user schema and are left out. Until schemas can be imported (issue 19), this is the schema.
    public func inferredSchema(container: String, environment: CloudKitEnvironment) throws -> CloudKitSchema {
        try store.pool.read { db in
            let environments = environment == .production ? ["production", "development"] : ["development"]
            var types: [String: RecordTypeSchema] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT record_type, field, type FROM field_schema WHERE container = ? AND environment IN (\(environments.map { _ in "?" }.joined(separator: ", "))) ORDER BY record_type, field",
                arguments: StatementArguments([container] + environments))
            {
                let typeName: String = row["record_type"]
                guard !typeName.contains(".") else { continue }
                var type = types[typeName] ?? RecordTypeSchema(name: typeName, grants: RecordTypeSchema.defaultGrants)
                let field: String = row["field"]
                if !field.isEmpty, type.field(field) == nil, let fieldType = SchemaFieldType(wireType: row["type"]) {
                    type.fields.append(FieldSchema(name: field, type: fieldType, indexes: fieldType.justInTimeIndexes))
                }
                types[typeName] = type
            }
            if types["Users"] == nil {
                types["Users"] = RecordTypeSchema(
                    name: "Users", fields: [FieldSchema(name: "roles", type: .list(.int64))],
                    grants: [SchemaGrant([.write], to: "_creator"), SchemaGrant([.read], to: "_world")])
            }
            return CloudKitSchema(recordTypes: types.values.sorted { $0.name < $1.name })
        }
    }
}
