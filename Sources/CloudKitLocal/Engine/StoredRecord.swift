import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB

/// A record as stored: its current state (or tombstone) and the change that produced it.
struct StoredRecord: Sendable {
    var zone: String
    var name: String
    var type: String?
    var tag: String?
    var fields: [String: FieldValue]
    var created: RecordStamp?
    var modified: RecordStamp?
    var shortGUID: String?
    var parent: String?
    var share: String?
    var deleted: Bool
    var seq: Int64
    /// The fields hold an uploaded asset (`record.has_assets`): answers add its download URL.
    var hasAssets = false
    /// The rendering `save` stored (`RecordWire`), for the write's own answer.
    var rendering: Data?

    /// The columns `init(row:)` reads, in its order (read by position: a read by name compares
    /// column names, which showed up in profiles of change pages).
    static let columns = """
        zone, name, type, tag, fields, created_ts, created_user, created_device, modified_ts, modified_user,
        modified_device, short_guid, parent, share, deleted, seq, has_assets, wire
        """
    /// The stored wire JSON of `fields` when the row was read with `parsingFields: false` (then
    /// `fields` is empty): an answer copies it instead of parsing and encoding it again.
    var storedFieldsText: String?

    /// A row selected with `StoredRecord.columns` (a `Row`, or a statement on the row).
    init(row: some ColumnReader, parsingFields: Bool = true) throws {
        zone = row.text(0) ?? ""
        name = row.text(1) ?? ""
        type = row.text(2)
        tag = row.text(3)
        fields = [:]
        if let text = row.text(4) {
            if parsingFields { fields = try Record.decodeStoredFields(text) } else { storedFieldsText = text }
        }
        if let ts = row.integer(5) {
            created = RecordStamp(timestamp: ts, userRecordName: row.text(6), deviceID: row.text(7))
        }
        if let ts = row.integer(8) {
            modified = RecordStamp(timestamp: ts, userRecordName: row.text(9), deviceID: row.text(10))
        }
        shortGUID = row.text(11)
        parent = row.text(12)
        share = row.text(13)
        deleted = (row.integer(14) ?? 0) != 0
        seq = row.integer(15) ?? 0
        hasAssets = (row.integer(16) ?? 0) != 0
    }

    init(zone: String, name: String, type: String?) {
        self.zone = zone
        self.name = name
        self.type = type
        self.fields = [:]
        self.deleted = false
        self.seq = 0
    }

    static func load(_ db: Database, dbID: Int64, zone: String, name: String, parsingFields: Bool = true) throws -> StoredRecord? {
        try db.firstRow("SELECT \(columns) FROM record WHERE db = ? AND zone = ? AND name = ?", { $0.add(dbID); $0.add(zone); $0.add(name) }) {
            try StoredRecord(row: StatementRow(statement: $0), parsingFields: parsingFields)
        }
    }

    /// Writes the record's row. `stored` is the row as read before this write (live or tombstone), nil
    /// when there is none: an existing row is updated in place, keeping its rowid, so SQLite touches only
    /// the indexes on columns that change (the change feed's) instead of deleting and re-inserting the
    /// row and every index entry, as INSERT OR REPLACE does. `encodedFields`: the fields already encoded
    /// by the caller (they are encoded once per save).
    /// Returns the rendering stored with the row (nil when none is kept: see `RecordWire`).
    @discardableResult
    func save(_ db: Database, dbID: Int64, encodedFields: String? = nil, over stored: StoredRecord?) throws -> Data? {
        let fieldsText = deleted ? nil : (encodedFields ?? Record.encodeStoredFields(fields))
        let rendering = RecordWire.render(self, fieldsText: fieldsText)
        // A live record changed keeps its type, creation and `deleted`: they are left out of the SET, so
        // SQLite leaves the indexes on them (record_type_created, record_type_name: `WHERE deleted = 0`)
        // alone instead of replacing their entries with the same ones (SQLite updates every index on a
        // column an UPDATE sets, changed or not).
        let live = stored.map { !$0.deleted && !deleted && $0.type == type && $0.created == created } ?? false
        let typeChanges = stored.map { $0.type != type } ?? true
        let sql = stored == nil ? Self.insertSQL : live ? Self.updateLiveSQL : typeChanges ? Self.updateWithTypeSQL : Self.updateSQL
        try db.run(sql) { values in
            // In `savedColumns`' order, without `keptWhenLive` for a live record.
            values.add(tag)
            values.add(fieldsText)
            if !live {
                values.add(created?.timestamp)
                values.add(created?.userRecordName)
                values.add(created?.deviceID)
            }
            values.add(modified?.timestamp)
            values.add(modified?.userRecordName)
            values.add(modified?.deviceID)
            values.add(shortGUID)
            values.add(parent)
            values.add(share)
            if !live { values.add(deleted) }
            values.add(seq)
            values.add(!deleted && hasAssets)
            values.add(rendering)
            // Then the type of a new row or a changed one, and the row's key.
            if typeChanges { values.add(type) }
            values.add(dbID)
            values.add(zone)
            values.add(name)
        }
        return rendering
    }

    /// The columns `save` writes, in the order it binds them.
    static let savedColumns = [
        "tag", "fields", "created_ts", "created_user", "created_device", "modified_ts", "modified_user", "modified_device",
        "short_guid", "parent", "share", "deleted", "seq", "has_assets", "wire",
    ]
    /// What a live record's update leaves as it is.
    static let keptWhenLive: Set<String> = ["created_ts", "created_user", "created_device", "deleted"]
    static let insertSQL =
        "INSERT INTO record (\((savedColumns + ["type", "db", "zone", "name"]).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: savedColumns.count + 4).joined(separator: ", ")))"
    static let updateSQL = "UPDATE record SET \(assignments(savedColumns)) WHERE db = ? AND zone = ? AND name = ?"
    static let updateWithTypeSQL = "UPDATE record SET \(assignments(savedColumns)), type = ? WHERE db = ? AND zone = ? AND name = ?"
    static let updateLiveSQL = "UPDATE record SET \(assignments(savedColumns.filter { !keptWhenLive.contains($0) })) WHERE db = ? AND zone = ? AND name = ?"

    private static func assignments(_ columns: [String]) -> String {
        columns.map { "\($0) = ?" }.joined(separator: ", ")
    }

    /// Writes `wire(zoneID:desiredKeys: nil, numbersAsStrings: false)` with the stored fields text
    /// copied in as it is, when the record was read without parsing its fields or has just been saved.
    /// The keys and their order are `Record.json`'s (tests compare this with records/lookup's answer).
    func write(into writer: inout JSONWriter, zoneID: ZoneID? = nil) {
        guard !deleted, let text = storedFieldsText else {
            return writer.write(wire(zoneID: zoneID, desiredKeys: nil, numbersAsStrings: false))
        }
        writer.raw(#"{"recordName":"#)
        writer.writeString(name)
        if let type {
            writer.raw(#","recordType":"#)
            writer.writeString(type)
        }
        if let tag {
            writer.raw(#","recordChangeTag":"#)
            writer.writeString(tag)
        }
        writer.raw(#","fields":"#)
        writer.raw(text.utf8)
        writer.raw(#","pluginFields":{}"#)
        // The stamps and links are written as their `json` would be, without building it: making and
        // writing those dictionaries was a third of rendering a record on every write (callgrind).
        if let created { Self.writeStamp(created, key: #","created":"#, into: &writer) }
        if let modified { Self.writeStamp(modified, key: #","modified":"#, into: &writer) }
        writer.raw(#","deleted":false"#)
        if let shortGUID {
            writer.raw(#","shortGUID":"#)
            writer.writeString(shortGUID)
        }
        if let parent { Self.writeLink(parent, key: #","parent":"#, into: &writer) }
        if let share { Self.writeLink(share, key: #","share":"#, into: &writer) }
        if let zoneID {
            writer.raw(#","zoneID":"#)
            writer.write(zoneID.json)
        }
        writer.raw("}")
    }

    /// `key` and `RecordStamp.json`, `{"timestamp":…,"userRecordName":…,"deviceID":…}` (absent values
    /// left out, as `JSONObject.set` leaves them).
    private static func writeStamp(_ stamp: RecordStamp, key: StaticString, into writer: inout JSONWriter) {
        writer.raw(key)
        writer.raw(#"{"timestamp":"#)
        writer.writeInt(stamp.timestamp)
        if let user = stamp.userRecordName {
            writer.raw(#","userRecordName":"#)
            writer.writeString(user)
        }
        if let device = stamp.deviceID {
            writer.raw(#","deviceID":"#)
            writer.writeString(device)
        }
        writer.raw("}")
    }

    /// `key` and `RecordLink(recordName: name).json`.
    private static func writeLink(_ name: String, key: StaticString, into writer: inout JSONWriter) {
        writer.raw(key)
        writer.raw(#"{"recordName":"#)
        writer.writeString(name)
        writer.raw("}")
    }

    /// The record dictionary the service answers with.
    func wire(zoneID: ZoneID?, desiredKeys: [String]?, numbersAsStrings: Bool) -> JSON {
        if deleted {
            var object = JSONObject()
            // Tombstones and delete results are `{ recordName, deleted: true }`, as observed.
            object.set("recordName", name)
            object.set("deleted", true)
            return .object(object)
        }
        var record = Record(recordName: name, recordType: type, recordChangeTag: tag)
        if let desiredKeys {
            let wanted = Set(desiredKeys)
            record.fields = fields.filter { wanted.contains($0.key) }
        } else {
            record.fields = fields
        }
        record.created = created
        record.modified = modified
        record.deleted = false
        record.shortGUID = shortGUID
        record.parent = parent.map { RecordLink(recordName: $0) }
        record.share = share.map { RecordLink(recordName: $0) }
        record.zoneID = zoneID
        record.pluginFields = [:]
        var json = record.json
        if numbersAsStrings, case .object(var object) = json, case .object(var fieldsObject)? = object["fields"] {
            for i in fieldsObject.pairs.indices {
                fieldsObject.pairs[i].value = NumbersAsStrings.apply(fieldsObject.pairs[i].value)
            }
            object["fields"] = .object(fieldsObject)
            json = .object(object)
        }
        return json
    }
}

/// `numbersAsStrings`: INT64, DOUBLE and TIMESTAMP values (and list elements) as JSON strings; other
/// numbers (timestamps in `created`, asset sizes) stay numbers. Exact coverage is unconfirmed in the
/// reference; this is its recommended behaviour.
enum NumbersAsStrings {
    static func apply(_ field: JSON) -> JSON {
        guard case .object(var object) = field, let type = object["type"]?.stringValue, let value = object["value"] else {
            return field
        }
        switch type {
        case "INT64", "DOUBLE", "TIMESTAMP": object["value"] = stringify(value)
        case "INT64_LIST", "DOUBLE_LIST", "TIMESTAMP_LIST":
            if case .array(let elements) = value { object["value"] = .array(elements.map(stringify)) }
        default: return field
        }
        return .object(object)
    }

    static func stringify(_ value: JSON) -> JSON {
        switch value {
        case .int(let i): return .string(String(i))
        case .double(let d): return .string(d.description)
        default: return value
        }
    }
}

extension Record {
    /// Field dictionaries are stored as the wire JSON, so every type round-trips exactly.
    static func encodeStoredFields(_ fields: [String: FieldValue]) -> String {
        encodeFields(fields).text
    }

    static func decodeStoredFields(_ text: String) throws -> [String: FieldValue] {
        try decodeFields(JSON(parsing: text)).0
    }
}
