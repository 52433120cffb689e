/// `created` / `modified`: when, by whom, from which device.
public struct RecordStamp: JSONConvertible, Hashable {
    /// Milliseconds since epoch.
    public var timestamp: Int64
    public var userRecordName: String?
    public var deviceID: String?

    public init(timestamp: Int64, userRecordName: String? = nil, deviceID: String? = nil) {
        self.timestamp = timestamp
        self.userRecordName = userRecordName
        self.deviceID = deviceID
    }

    public init(json: JSON) throws {
        let object = try json.object()
        timestamp = try at("timestamp") { try object.required("timestamp").int64() }
        userRecordName = try object.string("userRecordName")
        deviceID = try object.string("deviceID")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("timestamp", timestamp)
        object.set("userRecordName", userRecordName)
        object.set("deviceID", deviceID)
        return .object(object)
    }
}

/// `{ "recordName": … }` as used by `parent`, `share` and (with a change tag) `forRecord`.
public struct RecordLink: JSONConvertible, Hashable {
    public var recordName: String
    /// Present on `forRecord` (the shared record's tag) and sometimes on `share`.
    public var recordChangeTag: String?
    public var zoneID: ZoneID?

    public init(recordName: String, recordChangeTag: String? = nil, zoneID: ZoneID? = nil) {
        self.recordName = recordName
        self.recordChangeTag = recordChangeTag
        self.zoneID = zoneID
    }

    public init(json: JSON) throws {
        let object = try json.object()
        recordName = try at("recordName") { try object.required("recordName").string() }
        recordChangeTag = try object.string("recordChangeTag")
        zoneID = try object.decode("zoneID")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("recordName", recordName)
        object.set("recordChangeTag", recordChangeTag)
        object.set("zoneID", zoneID)
        return .object(object)
    }
}

/// Record dictionary (requests and responses).
public struct Record: JSONConvertible, Hashable {
    /// The share record type as the live service spells it (Apple's pages say `cloudKit.share`: wrong).
    public static let shareRecordType = "cloudkit.share"

    public var recordName: String
    public var recordType: String?
    public var recordChangeTag: String?
    public var fields: [String: FieldValue]
    public var created: RecordStamp?
    public var modified: RecordStamp?
    /// True for tombstones and delete results.
    public var deleted: Bool?
    public var shortGUID: String?
    public var parent: RecordLink?
    public var share: RecordLink?
    public var zoneID: ZoneID?
    public var pluginFields: [String: FieldValue]?
    /// Names of fields sent with `isEncrypted: true`.
    public var encryptedFieldNames: Set<String>
    /// The record-level `encryptedFields` key, as observed.
    public var encryptedFields: [String]?

    // Share records (`recordType == "cloudkit.share"`).
    public var owner: ShareParticipant?
    public var participants: [ShareParticipant]?
    public var publicPermission: SharePermission?
    public var currentUserParticipant: ShareParticipant?

    // Request-only keys.
    public var createShortGUID: Bool?
    public var forRecord: RecordLink?

    public init(
        recordName: String, recordType: String? = nil, recordChangeTag: String? = nil,
        fields: [String: FieldValue] = [:]
    ) {
        self.recordName = recordName
        self.recordType = recordType
        self.recordChangeTag = recordChangeTag
        self.fields = fields
        encryptedFieldNames = []
    }

    /// A tombstone: the record was deleted.
    public var isDeleted: Bool { deleted == true }
    public var isShare: Bool { recordType == Self.shareRecordType }

    public init(json: JSON) throws {
        guard case .object(let object) = json else {
            throw JSONDecodingError(message: "expected a record, found \(json.kindName)")
        }
        var recordName: String?
        self.fields = [:]
        self.encryptedFieldNames = []
        // One pass over the keys: this is the hot path of every change page.
        for (key, value) in object.pairs {
            if value.isNull { continue }
            switch key {
            case "recordName": recordName = try at(key) { try value.string() }
            case "recordType": recordType = try at(key) { try value.string() }
            case "recordChangeTag": recordChangeTag = try at(key) { try value.string() }
            case "fields": (fields, encryptedFieldNames) = try at(key) { try Self.decodeFields(value) }
            case "created": created = try at(key) { try RecordStamp(json: value) }
            case "modified": modified = try at(key) { try RecordStamp(json: value) }
            case "deleted": deleted = try at(key) { try value.bool() }
            case "shortGUID": shortGUID = try at(key) { try value.string() }
            case "parent": parent = try at(key) { try RecordLink(json: value) }
            case "share": share = try at(key) { try RecordLink(json: value) }
            case "zoneID": zoneID = try at(key) { try ZoneID(json: value) }
            case "pluginFields": pluginFields = try at(key) { try Self.decodeFields(value).0 }
            case "encryptedFields": encryptedFields = try at(key) { try value.stringArray() }
            case "owner": owner = try at(key) { try ShareParticipant(json: value) }
            case "participants": participants = try at(key) { try value.decodeArray { try ShareParticipant(json: $0) } }
            case "publicPermission": publicPermission = try at(key) { try SharePermission(json: value) }
            case "currentUserParticipant": currentUserParticipant = try at(key) { try ShareParticipant(json: value) }
            case "createShortGUID": createShortGUID = try at(key) { try value.bool() }
            case "forRecord": forRecord = try at(key) { try RecordLink(json: value) }
            default: break  // unknown keys from a newer server are ignored
            }
        }
        guard let recordName else { throw JSONDecodingError(message: "missing required key 'recordName'") }
        self.recordName = recordName
    }

    package static func decodeFields(_ json: JSON) throws -> ([String: FieldValue], Set<String>) {
        guard case .object(let object) = json else {
            throw JSONDecodingError(message: "expected an object of fields, found \(json.kindName)")
        }
        var fields = [String: FieldValue](minimumCapacity: object.count)
        var encrypted = Set<String>()
        for (name, value) in object.pairs {
            fields[name] = try at(name) { try FieldValue(json: value) }
            if case .object(let dict) = value, case .bool(true)? = dict["isEncrypted"] { encrypted.insert(name) }
        }
        return (fields, encrypted)
    }

    package static func encodeFields(_ fields: [String: FieldValue], encrypted: Set<String> = []) -> JSON {
        var object = JSONObject()
        object.pairs.reserveCapacity(fields.count)
        for name in fields.keys.sorted() {
            var value = fields[name]!.json
            if encrypted.contains(name), case .object(var dict) = value {
                dict.set("isEncrypted", JSON.bool(true))
                value = .object(dict)
            }
            object.pairs.append((key: name, value: value))
        }
        return .object(object)
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("recordName", recordName)
        object.set("recordType", recordType)
        object.set("recordChangeTag", recordChangeTag)
        if !fields.isEmpty || (deleted != true) {
            object.set("fields", Self.encodeFields(fields, encrypted: encryptedFieldNames))
        }
        object.set("pluginFields", pluginFields.map { Self.encodeFields($0) })
        object.set("encryptedFields", encryptedFields)
        object.set("created", created)
        object.set("modified", modified)
        object.set("deleted", deleted)
        object.set("shortGUID", shortGUID)
        object.set("parent", parent)
        object.set("share", share)
        object.set("zoneID", zoneID)
        object.set("owner", owner)
        object.set("participants", participants)
        object.set("publicPermission", publicPermission)
        object.set("currentUserParticipant", currentUserParticipant)
        object.set("createShortGUID", createShortGUID)
        object.set("forRecord", forRecord)
        return .object(object)
    }
}

/// One item of a `records` result list: a record, a tombstone, or an error for that record.
public enum RecordResult: JSONConvertible, Hashable {
    case record(Record)
    /// `{ "recordName": …, "deleted": true }`
    case deleted(recordName: String, zoneID: ZoneID?)
    case failure(RecordError)

    public init(json: JSON) throws {
        if json.isErrorItem {
            self = .failure(try RecordError(json: json))
            return
        }
        let record = try Record(json: json)
        if record.isDeleted && record.recordType == nil {
            self = .deleted(recordName: record.recordName, zoneID: record.zoneID)
        } else {
            self = .record(record)
        }
    }

    public var json: JSON {
        switch self {
        case .record(let record): return record.json
        case .deleted(let name, let zoneID):
            var object = JSONObject()
            object.set("recordName", name)
            object.set("zoneID", zoneID)
            object.set("deleted", true)
            return .object(object)
        case .failure(let error): return error.json
        }
    }

    public var recordName: String? {
        switch self {
        case .record(let record): return record.recordName
        case .deleted(let name, _): return name
        case .failure(let error): return error.recordName
        }
    }

    public var record: Record? {
        if case .record(let record) = self { return record }
        return nil
    }

    public var error: RecordError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
