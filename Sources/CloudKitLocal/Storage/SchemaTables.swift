import CloudKitWeb
import SQLiteDB

/// The schema of each container and environment in SQLite: `field_schema` (a row per record type,
/// field "" being the type itself, a row per field with its wire type, indexes and declared type),
/// `type_grant`, `schema_role`, `role_member`, `schema_origin`.
///
/// System record types (a dot in the name: `cloudkit.share`) are the service's, not the user's:
/// they are created just in time in every environment and never exported, imported or enforced.
enum SchemaTables {
    /// Grants of a type inferred from data written before schemas existed: any signed-in user reads,
    /// creates and writes, everyone reads, so nothing that worked stops working (issue 19).
    static let inferredGrants = [SchemaGrant([.read, .create, .write], to: "_icloud"), SchemaGrant([.read], to: "_world")]

    /// `Users`, which every container has (§1.6).
    static let usersType = RecordTypeSchema(
        name: "Users", fields: [FieldSchema(name: "roles", type: .list(.int64))],
        grants: [SchemaGrant([.write], to: "_creator"), SchemaGrant([.read], to: "_world")])

    static func isSystemType(_ name: String) -> Bool { name.contains(".") }

    // MARK: Reading

    static func load(_ db: Database, container: String, environment: CloudKitEnvironment) throws -> CloudKitSchema {
        var types: [String: RecordTypeSchema] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT record_type, field, type, indexes, declared FROM field_schema WHERE container = ? AND environment = ? ORDER BY record_type, field",
            arguments: [container, environment.rawValue])
        {
            let name: String = row[0]
            guard !isSystemType(name) else { continue }
            var type = types[name] ?? RecordTypeSchema(name: name)
            if let field = field(row) { type.fields.append(field) }
            types[name] = type
        }
        for row in try Row.fetchAll(
            db, sql: "SELECT record_type, role, permissions FROM type_grant WHERE container = ? AND environment = ?",
            arguments: [container, environment.rawValue])
        {
            types[row[0]]?.grants.append(grant(role: row[1], permissions: row[2]))
        }
        if types["Users"] == nil { types["Users"] = usersType }
        let roles = try String.fetchAll(
            db, sql: "SELECT name FROM schema_role WHERE container = ? AND environment = ? ORDER BY id", arguments: [container, environment.rawValue])
        return CloudKitSchema(roles: roles, recordTypes: types.values.sorted { $0.name < $1.name })
    }

    /// Changes with every write to a schema table (`SchemaRows.tables`), every container's: a new
    /// random value each time (triggers), so a value never comes back, not even after a rollback
    /// (a count could: a write rolled back, then another, different write gives the same count).
    /// What is read from those tables can be kept as long as this reads the same.
    static func version(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT CAST(value AS INTEGER) FROM setting WHERE key = 'schema-version'")) ?? 0
    }

    /// The schema version's row and its triggers (migration v12).
    static var versionSQL: String {
        var sql = "INSERT OR IGNORE INTO setting (key, value) VALUES ('schema-version', '0');\n"
        for table in SchemaRows.tables {
            for event in ["INSERT", "UPDATE", "DELETE"] {
                sql += "CREATE TRIGGER \(table)_\(event.lowercased())_version AFTER \(event) ON \(table) "
                    + "BEGIN UPDATE setting SET value = random() WHERE key = 'schema-version'; END;\n"
            }
        }
        return sql
    }

    /// One record type, or nil when the environment does not know it.
    static func type(_ db: Database, container: String, environment: CloudKitEnvironment, name: String) throws -> RecordTypeSchema? {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT record_type, field, type, indexes, declared FROM field_schema WHERE container = ? AND environment = ? AND record_type = ?"),
            arguments: [container, environment.rawValue, name])
        guard !rows.isEmpty else { return name == "Users" ? usersType : nil }
        var type = RecordTypeSchema(name: name, fields: rows.compactMap(field))
        type.grants = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT role, permissions FROM type_grant WHERE container = ? AND environment = ? AND record_type = ?"),
            arguments: [container, environment.rawValue, name]
        ).map { grant(role: $0[0], permissions: $0[1]) }
        return type
    }

    static func field(_ row: Row) -> FieldSchema? {
        let name: String = row[1]
        guard !name.isEmpty else { return nil }
        let declared: String? = row[4]
        guard let type = declared.flatMap(SchemaLanguage.fieldType) ?? SchemaFieldType(wireType: row[2]) else { return nil }
        let indexes = (row[3] as String).split(separator: " ").compactMap { SchemaIndex(rawValue: String($0)) }
        return FieldSchema(name: name, type: type, indexes: Set(indexes))
    }

    static func grant(role: String, permissions: String) -> SchemaGrant {
        SchemaGrant(Set(permissions.split(separator: ",").compactMap { SchemaGrant.Permission(rawValue: String($0)) }), to: role)
    }

    /// The roles a caller holds in a container's public database: `_world` always, `_icloud` when
    /// signed in (a server-to-server key counts, §4.1), and the custom roles assigned to the user.
    /// `_creator` depends on the record and is added by the caller of this function.
    static func roles(_ db: Database, container: String, environment: CloudKitEnvironment, user: String?) throws -> Set<String> {
        var roles: Set<String> = ["_world"]
        guard let user else { return roles }
        roles.insert("_icloud")
        roles.formUnion(try String.fetchAll(
            db.cachedStatement(sql: "SELECT role FROM role_member WHERE container = ? AND environment = ? AND user = ?"),
            arguments: [container, environment.rawValue, user]))
        return roles
    }

    static func origin(_ db: Database, container: String, environment: CloudKitEnvironment) throws -> String? {
        try String.fetchOne(
            db, sql: "SELECT origin FROM schema_origin WHERE container = ? AND environment = ?", arguments: [container, environment.rawValue])
    }

    // MARK: Writing

    /// A record type created just in time (development, or a system type anywhere): no system-field
    /// index (§2.1: browsing it needs `___recordID` QUERYABLE), the default grants (§1.6).
    static func addJustInTimeType(_ db: Database, container: String, environment: CloudKitEnvironment, name: String) throws {
        try db.execute(
            sql: "INSERT OR IGNORE INTO field_schema (container, environment, record_type, field, type) VALUES (?, ?, ?, '', '')",
            arguments: [container, environment.rawValue, name])
        for grant in RecordTypeSchema.defaultGrants { try insert(grant, db, container, environment, name) }
    }

    /// A field created just in time, with the indexes that gives it (§2.1).
    static func addJustInTimeField(_ db: Database, container: String, environment: CloudKitEnvironment, type: String, field: String, wireType: String) throws {
        let indexes = SchemaFieldType(wireType: wireType)?.justInTimeIndexes ?? []
        try db.cachedStatement(
            sql: "INSERT INTO field_schema (container, environment, record_type, field, type, indexes) VALUES (?, ?, ?, ?, ?, ?)"
        ).execute(arguments: [container, environment.rawValue, type, field, wireType, text(indexes)])
    }

    static func text(_ indexes: Set<SchemaIndex>) -> String { indexes.sorted().map(\.rawValue).joined(separator: " ") }

    static func insert(_ grant: SchemaGrant, _ db: Database, _ container: String, _ environment: CloudKitEnvironment, _ type: String) throws {
        let permissions = SchemaGrant.Permission.allCases.filter(grant.permissions.contains).map(\.rawValue).joined(separator: ",")
        try db.execute(
            sql: "INSERT OR REPLACE INTO type_grant (container, environment, record_type, role, permissions) VALUES (?, ?, ?, ?, ?)",
            arguments: [container, environment.rawValue, type, grant.role, permissions])
    }

    /// Replaces an environment's user schema (types, fields, indexes, grants, roles) with `schema`;
    /// system types stay. Data is not touched here (see `LocalCloudKit.importSchema`).
    static func replace(_ db: Database, container: String, environment: CloudKitEnvironment, with schema: CloudKitSchema, origin: String) throws {
        let env = environment.rawValue
        try db.cachedStatement(sql: "DELETE FROM field_schema WHERE container = ? AND environment = ? AND record_type NOT LIKE '%.%'").execute(arguments: [container, env])
        try db.cachedStatement(sql: "DELETE FROM type_grant WHERE container = ? AND environment = ? AND record_type NOT LIKE '%.%'").execute(arguments: [container, env])
        // Role ids stay with their names (they are what `Users.roles` would hold); new roles get the next.
        let existing = try Row.fetchAll(db.cachedStatement(sql: "SELECT name, id FROM schema_role WHERE container = ? AND environment = ?"), arguments: [container, env])
        var ids = Dictionary(uniqueKeysWithValues: existing.map { ($0[0] as String, $0[1] as Int64) })
        var next = (ids.values.max() ?? 0) + 1
        try db.cachedStatement(sql: "DELETE FROM schema_role WHERE container = ? AND environment = ?").execute(arguments: [container, env])
        for role in schema.roles {
            let id = ids[role] ?? next
            if ids[role] == nil { next += 1; ids[role] = id }
            try db.cachedStatement(sql: "INSERT INTO schema_role (container, environment, name, id) VALUES (?, ?, ?, ?)").execute(arguments: [container, env, role, id])
        }
        for type in schema.recordTypes {
            try db.execute(
                sql: "INSERT INTO field_schema (container, environment, record_type, field, type) VALUES (?, ?, ?, '', '')",
                arguments: [container, env, type.name])
            for field in type.fields {
                // System fields only matter when indexed; their type is fixed (§1.5).
                if field.isSystem && field.indexes.isEmpty { continue }
                let declared: String? = {
                    switch field.type {
                    case .encrypted, .number: return field.type.description
                    default: return nil
                    }
                }()
                try db.execute(
                    sql: "INSERT INTO field_schema (container, environment, record_type, field, type, indexes, declared) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    arguments: [container, env, type.name, field.name, field.type.wireType, text(field.indexes), declared])
            }
            for grant in type.grants where !grant.permissions.isEmpty { try insert(grant, db, container, environment, type.name) }
        }
        try db.execute(
            sql: "INSERT OR REPLACE INTO schema_origin (container, environment, origin) VALUES (?, ?, ?)", arguments: [container, env, origin])
    }

    // MARK: Data written before schemas

    /// Migration `v5-schema`: data written by an earlier version had types and fields but no indexes,
    /// grants or production schema. It gets a schema under which everything that worked still works:
    /// every field and system field carries every index its type allows, the permissive
    /// `inferredGrants`, and production gets the same schema (earlier versions enforced development's
    /// schema in production). The environments are marked `inferred`.
    static func inferFromOlderData(_ db: Database) throws {
        for row in try Row.fetchAll(db, sql: "SELECT rowid, type FROM field_schema WHERE field <> ''") {
            let indexes = SchemaFieldType(wireType: row[1]).map(\.allowedIndexes) ?? []
            try db.execute(sql: "UPDATE field_schema SET indexes = ? WHERE rowid = ?", arguments: [text(indexes), row[0] as Int64])
        }
        for row in try Row.fetchAll(db, sql: "SELECT container, environment, record_type FROM field_schema WHERE field = ''") {
            let container: String = row[0], env: String = row[1], type: String = row[2]
            guard !isSystemType(type), let environment = CloudKitEnvironment(rawValue: env) else { continue }
            for system in CloudKitSchema.systemFields where system.name != "___etag" {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO field_schema (container, environment, record_type, field, type, indexes) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [container, env, type, system.name, system.type.wireType, text(system.type.allowedIndexes)])
            }
            for grant in inferredGrants { try insert(grant, db, container, environment, type) }
        }
        try db.execute(sql: """
            INSERT OR IGNORE INTO field_schema (container, environment, record_type, field, type, indexes, declared)
              SELECT container, 'production', record_type, field, type, indexes, declared FROM field_schema WHERE environment = 'development';
            INSERT OR IGNORE INTO type_grant (container, environment, record_type, role, permissions)
              SELECT container, 'production', record_type, role, permissions FROM type_grant WHERE environment = 'development';
            INSERT OR IGNORE INTO schema_origin (container, environment, origin)
              SELECT DISTINCT container, environment, 'inferred' FROM field_schema;
            """)
    }
}
