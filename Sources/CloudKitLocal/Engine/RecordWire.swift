import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite
import SQLiteDB

/// One stored rendering per record (issue 33): `record.wire` holds the bytes `RowJSON.writeRecord`
/// writes for the row (the record dictionary as change pages and queries answer it, without a
/// query's `zoneID`), so a page copies one column a record instead of reading seventeen and encoding
/// them again.
///
/// Written by `StoredRecord.save` in the write's statement, and filled from the rows themselves by the
/// migration that added it and after the few writes that change rows in bulk (`fillMissing`). It is
/// only ever a copy: a row without one is answered as before (`RowJSON`), and SQLite clears it
/// (`record_wire_stale`) whenever an UPDATE changes a column the rendering shows without writing a new
/// rendering, so a stale one cannot be answered. A record holding uploaded assets has its download
/// URLs spliced into the rendering on the way out, as into its fields text. Not kept (NULL):
/// tombstones (answered from their name), shares (their answer adds share keys), and records with a
/// NUL character in a text column (text is bound up to the NUL, so the row would not say what the
/// rendering says).
enum RecordWire {
    /// Column position in `StoredRecord.columns`.
    static let column: Int32 = 17

    static let migrationSQL = """
        ALTER TABLE record ADD COLUMN wire BLOB;
        CREATE TRIGGER record_wire_stale
          AFTER UPDATE OF name, type, tag, fields, created_ts, created_user, created_device, modified_ts, modified_user,
            modified_device, short_guid, parent, share, deleted, has_assets ON record
          WHEN NEW.wire IS NOT NULL AND NEW.wire IS OLD.wire
          BEGIN UPDATE record SET wire = NULL WHERE rowid = NEW.rowid; END;
        """

    /// The rendering `save` stores for `record` whose stored fields text is `fieldsText`; nil where
    /// none is kept (see above).
    static func render(_ record: StoredRecord, fieldsText: String?) -> Data? {
        guard !record.deleted, let type = record.type, type != Record.shareRecordType, let fieldsText else { return nil }
        // Checked one by one: an array of the eleven texts was allocated on every write.
        func clean(_ text: String?) -> Bool { text.map { !hasNUL($0) } ?? true }
        guard clean(record.name), clean(type), clean(fieldsText), clean(record.tag), clean(record.created?.userRecordName),
            clean(record.created?.deviceID), clean(record.modified?.userRecordName), clean(record.modified?.deviceID),
            clean(record.shortGUID), clean(record.parent), clean(record.share)
        else { return nil }
        var copy = record
        copy.storedFieldsText = fieldsText
        var writer = JSONWriter(capacity: fieldsText.utf8.count + 256)
        copy.write(into: &writer)
        return Data(writer.bytes)
    }

    /// Whether `text` holds a NUL character (memchr over its UTF-8: the generic `contains` showed up in
    /// profiles of every write, the fields text being most of a record).
    static func hasNUL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
            return memchr(base, 0, bytes.count) != nil
        }
    }

    /// The row's rendering where SQLite holds it (valid until the statement steps again); nil for NULL.
    static func bytes(_ statement: SQLiteStatement, column: Int32 = RecordWire.column) -> UnsafeBufferPointer<UInt8>? {
        guard sqlite3_column_type(statement, column) == SQLITE_BLOB, let start = sqlite3_column_blob(statement, column) else { return nil }
        return UnsafeBufferPointer(start: start.assumingMemoryBound(to: UInt8.self), count: Int(sqlite3_column_bytes(statement, column)))
    }

    /// Writes a rendering, with the query's `zoneID` as its last key when given.
    static func write(_ wire: UnsafeBufferPointer<UInt8>, zoneID: [UInt8]?, into writer: inout JSONWriter) {
        guard let zoneID, wire.count > 1 else { return writer.raw(wire) }
        writer.raw(UnsafeBufferPointer(rebasing: wire[..<(wire.count - 1)]))
        writeZoneIDEnd(zoneID, into: &writer)
    }

    /// What ends a rendering written with a query's `zoneID`, in place of its closing brace.
    static func writeZoneIDEnd(_ zoneID: [UInt8], into writer: inout JSONWriter) {
        writer.raw(#","zoneID":"#)
        writer.raw(zoneID)
        writer.raw("}")
    }

    /// Renders, from the rows as stored (so each rendering is exactly what `RowJSON` would write for
    /// its row), every live row of `dbID` (all databases when nil) that should
    /// have a rendering and has none. Returns how many were written; `progress` hears of each batch.
    @discardableResult
    static func fillMissing(_ db: Database, dbID: Int64? = nil, progress: ((Int) -> Void)? = nil) throws -> Int {
        let scope = dbID == nil ? "" : " AND db = ?"
        let select = try db.makeStatement(sql: """
            SELECT \(StoredRecord.columns), rowid FROM record
            WHERE rowid > ? AND wire IS NULL AND deleted = 0 AND type IS NOT NULL AND type <> ?\(scope)
            ORDER BY rowid LIMIT 1000
            """)
        let update = try db.makeStatement(sql: "UPDATE record SET wire = ? WHERE rowid = ?")
        var after: Int64 = 0, total = 0
        while true {
            // Rendered in batches, then written: the cursor is done before its table changes.
            var batch: [(Int64, Data)] = []
            var stepped = 0
            let rows = try Row.fetchCursor(
                select, arguments: StatementArguments([after.databaseValue, Record.shareRecordType.databaseValue] + (dbID.map { [$0.databaseValue] } ?? [])))
            while let row = try rows.next() {
                stepped += 1
                after = row[Int(column) + 1]
                // Download URLs are spliced into a valid text only (the answer decodes any other).
                if RowJSON.hasAssets(select.sqliteStatement), RowJSON.fieldsText(select.sqliteStatement) == nil { continue }
                var writer = JSONWriter(capacity: 1024)
                RowJSON.writeRecord(select.sqliteStatement, deleted: false, into: &writer)
                batch.append((after, Data(writer.bytes)))
            }
            guard stepped > 0 else { break }
            for (rowID, wire) in batch { try update.execute(arguments: [wire, rowID]) }
            total += batch.count
            progress?(batch.count)
        }
        return total
    }
}
