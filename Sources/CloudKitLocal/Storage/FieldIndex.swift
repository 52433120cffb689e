import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB

/// The query index (issue 33): one table, `field_index`, holding for every live record and every
/// indexed field of its type (a field with QUERYABLE, SORTABLE or SEARCHABLE in the schema) the values
/// a query compares, so SQLite finds and orders records instead of the server reading every record of
/// the type. Kept in the write's transaction by records/modify, and rebuilt for a type when its
/// indexed fields change (schema import, deploy, reset, a field created just in time).
///
/// One table keyed by field name, not an SQLite index per field: field names come from clients and
/// never reach SQL text (they are bound values), and a schema change is rows, not DDL.
///
/// Rows (`kind`, `v`, `w`):
/// - `value` (0): a scalar field's value as `FilterPredicate.Scalar` compares it: numbers (INT64,
///   DOUBLE, TIMESTAMP) as REAL, text (STRING, a REFERENCE's record name) as TEXT in Unicode NFC (Swift
///   compares strings by canonical equivalence, SQLite by code points: NFC makes them agree). `v`
///   has no declared type, so SQLite orders REAL before TEXT exactly as `Scalar` orders numbers before
///   text, and never converts one into the other. BYTES as a BLOB (equality only); a LOCATION as its
///   latitude in `v` and longitude in `w` (NEAR's bounding box). A record lacking a SORTABLE scalar
///   field has a row with `v` NULL, so records without a value can be walked (they sort last).
/// - `element` (1): each distinct scalar element of a list field.
/// - `token` (2): each distinct `CONTAINS_*_TOKENS` word of a SEARCHABLE STRING field (NFC).
/// - `present` (3): a list field (or another value without a `value` row) is present; `v` is
///   'unknown' for an untyped list (`UNKNOWN_LIST`), which some comparators refuse, and 'location'
///   for a LOCATION whose coordinates are off the globe (NEAR then reads it).
enum FieldIndex {
    enum Kind: Int64 {
        case value = 0, element = 1, token = 2, present = 3
    }

    /// What a record type indexes: its user fields that carry an index, with their wire type.
    struct Spec: Equatable, Sendable {
        struct Field: Equatable, Sendable {
            var wireType: String
            var indexes: Set<SchemaIndex>

            var searchable: Bool { indexes.contains(.searchable) && wireType == FieldType.string.rawValue }
            /// A sortable field whose values are scalars: records lacking it get a NULL row.
            var walksMissing: Bool { indexes.contains(.sortable) && FieldIndex.isScalarType(wireType) }
        }

        var fields: [String: Field] = [:]
        var isEmpty: Bool { fields.isEmpty }

        init() {}

        /// A type's schema as read for a query (the same rows `FieldIndex.spec` reads).
        init(_ type: RecordTypeSchema) {
            for field in type.fields where !field.isSystem && !field.indexes.isEmpty {
                fields[field.name] = Field(wireType: field.type.wireType, indexes: field.indexes)
            }
        }
    }

    /// Types whose values `FilterPredicate.scalar` reads as numbers or text.
    static func isScalarType(_ wireType: String) -> Bool {
        ["STRING", "INT64", "DOUBLE", "TIMESTAMP", "REFERENCE"].contains(wireType)
    }

    static let tableSQL = """
        CREATE TABLE field_index (
          db INTEGER NOT NULL, zone TEXT NOT NULL, type TEXT NOT NULL, field TEXT NOT NULL,
          kind INTEGER NOT NULL, v, w REAL, name TEXT NOT NULL);
        CREATE INDEX field_index_walk ON field_index (db, zone, type, field, kind, v, name);
        CREATE INDEX field_index_record ON field_index (db, zone, name, field, kind, v);
        CREATE INDEX record_type_name ON record (db, zone, type, name) WHERE deleted = 0;
        """

    // MARK: What is indexed

    /// The indexed user fields of every type of a container and environment.
    static func specs(_ db: Database, container: String, environment: String) throws -> [String: Spec] {
        var specs: [String: Spec] = [:]
        try db.forEachRow(
            "SELECT record_type, field, type, indexes FROM field_schema WHERE container = ? AND environment = ? AND field <> '' AND indexes <> ''",
            {
                $0.add(container)
                $0.add(environment)
            }
        ) { row in
            guard let type = row.text(0), let (field, indexed) = indexedField(row, from: 1) else { return }
            specs[type, default: Spec()].fields[field] = indexed
        }
        return specs
    }

    /// One type's indexed user fields.
    static func spec(_ db: Database, container: String, environment: String, type: String) throws -> Spec {
        var spec = Spec()
        try db.forEachRow(
            "SELECT field, type, indexes FROM field_schema WHERE container = ? AND environment = ? AND record_type = ? AND field <> '' AND indexes <> ''",
            {
                $0.add(container)
                $0.add(environment)
                $0.add(type)
            }
        ) { row in
            guard let (field, indexed) = indexedField(row, from: 0) else { return }
            spec.fields[field] = indexed
        }
        return spec
    }

    /// A `field_schema` row's field, wire type and indexes (at `column` and the two after it), when it
    /// is a user field with an index.
    private static func indexedField(_ row: some ColumnReader, from column: Int32) -> (String, Spec.Field)? {
        guard let field = row.text(column), !field.hasPrefix("___") else { return nil }
        let indexes = Set((row.text(column + 2) ?? "").split(separator: " ").compactMap { SchemaIndex(rawValue: String($0)) })
        guard !indexes.isEmpty else { return nil }
        return (field, Spec.Field(wireType: row.text(column + 1) ?? "", indexes: indexes))
    }

    // MARK: Values

    /// Text as the index holds it: NFC (ASCII is already). The standard library's own normalization
    /// (`_nfcCodeUnits`, public though underscored), not Foundation's `precomposedStringWithCanonicalMapping`,
    /// which is ICU's and would link ICU's data into the binary; a test holds the two equal.
    static func text(_ s: String) -> String {
        s.utf8.allSatisfy { $0 < 0x80 } ? s : String(decoding: s._nfcCodeUnits, as: UTF8.self)
    }

    /// A scalar as the index holds it.
    static func value(_ scalar: FilterPredicate.Scalar) -> DatabaseValue {
        switch scalar {
        case .number(let d): return d.databaseValue
        case .text(let s): return text(s).databaseValue
        }
    }

    struct Entry {
        var kind: Kind
        var v: DatabaseValue
        var w: Double?
    }

    /// The rows one field's value gives (nil: the record lacks the field).
    static func entries(_ value: FieldValue?, _ field: Spec.Field) -> [Entry] {
        guard let value, value != .null else {
            return field.walksMissing ? [Entry(kind: .value, v: .null, w: nil)] : []
        }
        if let scalar = FilterPredicate.scalar(value) {
            var entries = [Entry(kind: .value, v: Self.value(scalar), w: nil)]
            if field.searchable, case .string(let s) = value {
                for token in Set(FilterPredicate.tokens(s).map(text)).sorted() {
                    entries.append(Entry(kind: .token, v: token.databaseValue, w: nil))
                }
            }
            return entries
        }
        switch value {
        case .bytes(let data):
            return [Entry(kind: .value, v: data.databaseValue, w: nil)]
        case .location(let location):
            // Coordinates outside the globe's ranges fall outside any bounding box: NEAR checks them all.
            guard (-90...90).contains(location.latitude), (-180...180).contains(location.longitude) else {
                return [Entry(kind: .present, v: "location".databaseValue, w: nil)]
            }
            return [Entry(kind: .value, v: location.latitude.databaseValue, w: location.longitude)]
        case .unknownList:
            return [Entry(kind: .present, v: "unknown".databaseValue, w: nil)]
        default:
            var entries = [Entry(kind: .present, v: .null, w: nil)]
            if value.isList {
                var seen = Set<DatabaseValue>()
                for element in value.listElements {
                    guard let scalar = FilterPredicate.scalar(element) else { continue }
                    let v = Self.value(scalar)
                    if seen.insert(v).inserted { entries.append(Entry(kind: .element, v: v, w: nil)) }
                }
            }
            return entries
        }
    }

    // MARK: Writing

    /// Writes a record's rows for `fields` (nil: every indexed field of `spec`), replacing what they
    /// held unless the record is new. `values` gives a field's value (nil: the record lacks it).
    static func write(
        _ db: Database, dbID: Int64, zone: String, type: String, name: String, spec: Spec, only fields: Set<String>?, isNew: Bool,
        values: (String) throws -> FieldValue?
    ) throws {
        let names = fields.map { $0.filter { spec.fields[$0] != nil } } ?? Set(spec.fields.keys)
        if !isNew {
            if fields == nil {
                try removeRecord(db, dbID: dbID, zone: zone, name: name)
            } else {
                for field in names {
                    try db.run("DELETE FROM field_index WHERE db = ? AND zone = ? AND name = ? AND field = ?") {
                        $0.add(dbID)
                        $0.add(zone)
                        $0.add(name)
                        $0.add(field)
                    }
                }
            }
        }
        guard !names.isEmpty else { return }
        // A record's rows go in one statement (of up to `rowsPerInsert` rows): a statement's own
        // cost (binding, stepping, resetting) was most of what an index row cost a fixture's writes.
        var rows: [(field: String, entry: Entry)] = []
        for field in names.sorted() {
            for entry in entries(try values(field), spec.fields[field]!) { rows.append((field, entry)) }
        }
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(start + rowsPerInsert, rows.count)]
            try db.run(insertSQL(rows: chunk.count)) { values in
                for row in chunk {
                    values.add(dbID)
                    values.add(zone)
                    values.add(type)
                    values.add(row.field)
                    values.add(row.entry.kind.rawValue)
                    values.add(row.entry.v)
                    values.add(row.entry.w)
                    values.add(name)
                }
            }
            start += chunk.count
        }
    }

    /// Rows one INSERT into `field_index` takes at most (8 values each, well under SQLite's limit).
    static let rowsPerInsert = 32

    /// `INSERT INTO field_index … VALUES (…), …` for `rows` rows, made once per count.
    static func insertSQL(rows: Int) -> String {
        insertSQLs[rows - 1]
    }

    private static let insertSQLs: [String] = (1...rowsPerInsert).map { count in
        "INSERT INTO field_index (db, zone, type, field, kind, v, w, name) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?)", count: count).joined(separator: ", ")
    }

    /// Drops a record's rows (it was deleted).
    static func removeRecord(_ db: Database, dbID: Int64, zone: String, name: String) throws {
        try db.run("DELETE FROM field_index WHERE db = ? AND zone = ? AND name = ?") {
            $0.add(dbID)
            $0.add(zone)
            $0.add(name)
        }
    }

    /// The databases of a container and environment.
    static func databases(_ db: Database, container: String, environment: String) throws -> [Int64] {
        try Int64.fetchAll(db.cachedStatement(sql: "SELECT id FROM ckdb WHERE container = ? AND environment = ?"), arguments: [container, environment])
    }

    /// A field just created (just in time): records of its type written before lack it, so a
    /// sortable scalar field gets their NULL rows.
    static func addedField(_ db: Database, container: String, environment: String, type: String, field: String, wireType: String, indexes: Set<SchemaIndex>) throws {
        guard !field.hasPrefix("___"), Spec.Field(wireType: wireType, indexes: indexes).walksMissing else { return }
        for id in try databases(db, container: container, environment: environment) {
            try db.cachedStatement(sql: """
                INSERT INTO field_index (db, zone, type, field, kind, v, w, name)
                  SELECT db, zone, type, ?, 0, NULL, NULL, name FROM record WHERE db = ? AND type = ? AND deleted = 0
                """).execute(arguments: [field, id, type])
        }
    }

    /// Rebuilds the rows of the types whose indexed fields differ between `before` and now (a schema
    /// import, deploy or reset), in the caller's transaction.
    static func refresh(_ db: Database, container: String, environment: String, before: [String: Spec]) throws {
        let after = try specs(db, container: container, environment: environment)
        for type in Set(before.keys).union(after.keys) where before[type] != after[type] {
            try rebuild(db, container: container, environment: environment, type: type, spec: after[type] ?? Spec())
        }
    }

    /// Rebuilds every row of one type in every database of a container and environment.
    static func rebuild(
        _ db: Database, container: String, environment: String, type: String, spec: Spec, progress: ((Int) -> Void)? = nil
    ) throws {
        for id in try databases(db, container: container, environment: environment) {
            try db.cachedStatement(sql: "DELETE FROM field_index WHERE db = ? AND type = ?").execute(arguments: [id, type])
            guard !spec.isEmpty else { continue }
            let names = Set(spec.fields.keys)
            let rows = try Row.fetchCursor(db, sql: "SELECT zone, name, fields FROM record WHERE db = ? AND type = ? AND deleted = 0", arguments: [id, type])
            while let row = try rows.next() {
                let fields = try decodeFields(row[2], names)
                try write(db, dbID: id, zone: row[0], type: type, name: row[1], spec: spec, only: nil, isNew: true) { fields[$0] }
                progress?(1)
            }
        }
    }

    /// Builds the whole index (migration `v10-field-index`), printing progress to stderr for stores
    /// of more than 50,000 records.
    static func buildAll(_ db: Database) throws {
        let total = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM record WHERE deleted = 0")) ?? 0
        let loud = total > 50_000
        if loud { FileOutput.standardError.write("building query indexes for \(total) records…\n") }
        var done = 0, reported = 0
        let pairs = try Row.fetchAll(db.cachedStatement(sql: "SELECT DISTINCT container, environment FROM ckdb"))
        for pair in pairs {
            let container: String = pair[0], environment: String = pair[1]
            for (type, spec) in try specs(db, container: container, environment: environment) {
                try rebuild(db, container: container, environment: environment, type: type, spec: spec) { n in
                    done += n
                    if loud, done * 10 / max(total, 1) > reported {
                        reported = done * 10 / max(total, 1)
                        FileOutput.standardError.write("  query indexes: \(min(reported * 10, 100)) % (\(done) records)\n")
                    }
                }
            }
        }
        if loud { FileOutput.standardError.write("query indexes built\n") }
    }

    /// The named fields of a stored fields text, decoding only those (text this server did not
    /// write is decoded whole).
    static func decodeFields(_ text: String?, _ names: Set<String>) throws -> [String: FieldValue] {
        guard let text, !names.isEmpty else { return [:] }
        guard let entries = FieldsText.entries(of: Array(text.utf8)) else {
            return try Record.decodeStoredFields(text).filter { names.contains($0.key) }
        }
        var fields: [String: FieldValue] = [:]
        for name in names {
            guard let bytes = entries[name] else { continue }
            fields[name] = try Record.decodeFields(JSON(parsing: Array(#"{"x":"#.utf8) + bytes + [UInt8(ascii: "}")])).0["x"]
        }
        return fields
    }
}
