import CloudKitWeb
import GRDB

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

    init(row: Row) throws {
        zone = row["zone"]
        name = row["name"]
        type = row["type"]
        tag = row["tag"]
        if let text: String = row["fields"] {
            fields = try Record.decodeStoredFields(text)
        } else {
            fields = [:]
        }
        if let ts: Int64 = row["created_ts"] {
            created = RecordStamp(timestamp: ts, userRecordName: row["created_user"], deviceID: row["created_device"])
        }
        if let ts: Int64 = row["modified_ts"] {
            modified = RecordStamp(timestamp: ts, userRecordName: row["modified_user"], deviceID: row["modified_device"])
        }
        shortGUID = row["short_guid"]
        parent = row["parent"]
        share = row["share"]
        deleted = (row["deleted"] as Int64? ?? 0) != 0
        seq = row["seq"]
    }

    init(zone: String, name: String, type: String?) {
        self.zone = zone
        self.name = name
        self.type = type
        self.fields = [:]
        self.deleted = false
        self.seq = 0
    }

    static func load(_ db: Database, dbID: Int64, zone: String, name: String) throws -> StoredRecord? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM record WHERE db = ? AND zone = ? AND name = ?"), arguments: [dbID, zone, name]
        ).map(StoredRecord.init(row:))
    }

    /// `encodedFields`: the fields already encoded by the caller (they are encoded once per save).
    func save(_ db: Database, dbID: Int64, encodedFields: String? = nil) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO record (db, zone, name, type, tag, fields, created_ts, created_user, created_device,
                  modified_ts, modified_user, modified_device, short_guid, parent, share, deleted, seq)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: [
                dbID, zone, name, type, tag, deleted ? nil : (encodedFields ?? Record.encodeStoredFields(fields)),
                created?.timestamp, created?.userRecordName, created?.deviceID,
                modified?.timestamp, modified?.userRecordName, modified?.deviceID,
                shortGUID, parent, share, deleted ? 1 : 0, seq,
            ])
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
