import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB

/// Fills a custom zone with many records straight through SQL (for benchmarks of paging and caching:
/// going through records/modify would take minutes for a million records). The rows are exactly what
/// records/modify would store, with consecutive change sequence numbers.
public enum BulkSeed {
    /// `extraFields` adds fields to record `i` (STRING, INT64 or DOUBLE values), created as the first
    /// save of each would create them.
    public static func fill(
        _ service: LocalCloudKit, container: String, userName: String, zoneName: String, count: Int, recordType: String = "Item",
        extraFields: [String: @Sendable (Int) -> FieldValue] = [:]
    ) async throws {
        let owner = LocalCloudKit.userRecordName(for: userName)
        let key = DatabaseKey(container: container, environment: .development, scope: .private, owner: owner)
        let dbID = try await service.databaseID(key)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try await service.store.pool.write { db in
            var seq = try Int64.fetchOne(db, sql: "SELECT seq FROM ckdb WHERE id = ?", arguments: [dbID]) ?? 0
            seq += 1
            try db.execute(sql: "INSERT OR REPLACE INTO zone (db, name, owner, incarnation, seq, deleted) VALUES (?, ?, ?, ?, ?, 0)",
                           arguments: [dbID, zoneName, owner, seq, seq])
            // The fields with the indexes just-in-time creation gives them.
            let extras = extraFields.keys.sorted().map { ($0, extraFields[$0]!(0).type.rawValue) }
            for (field, type) in [("", ""), ("title", "STRING"), ("n", "INT64"), ("when", "TIMESTAMP")] + extras {
                let indexes = SchemaFieldType(wireType: type)?.justInTimeIndexes ?? []
                try db.execute(sql: "INSERT OR IGNORE INTO field_schema (container, environment, record_type, field, type, indexes) VALUES (?, 'development', ?, ?, ?, ?)",
                               arguments: [container, recordType, field, type, SchemaTables.text(indexes)])
            }
            let insert = try db.makeStatement(sql: """
                INSERT OR REPLACE INTO record (db, zone, name, type, tag, fields, created_ts, created_user, created_device,
                  modified_ts, modified_user, modified_device, deleted, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'bulk', ?, ?, 'bulk', 0, ?)
                """)
            for i in 0..<count {
                seq += 1
                var fields: [String: FieldValue] = ["title": .string("Item \(i)"), "n": .int64(Int64(i)), "when": .timestamp(now - Int64(i))]
                for (field, value) in extraFields { fields[field] = value(i) }
                try insert.execute(arguments: [dbID, zoneName, String(cFormat: "item-%07d", i), recordType, String(seq, radix: 36),
                                               Record.encodeStoredFields(fields), now, owner, now, owner, seq])
            }
            try db.execute(sql: "UPDATE zone SET seq = ? WHERE db = ? AND name = ?", arguments: [seq, dbID, zoneName])
            try db.execute(sql: "UPDATE ckdb SET seq = ? WHERE id = ?", arguments: [seq, dbID])
            // Each record's stored rendering and the query index, as records/modify keeps them.
            try RecordWire.fillMissing(db, dbID: dbID)
            let spec = try FieldIndex.spec(db, container: container, environment: "development", type: recordType)
            try FieldIndex.rebuild(db, container: container, environment: "development", type: recordType, spec: spec)
        }
    }
}
