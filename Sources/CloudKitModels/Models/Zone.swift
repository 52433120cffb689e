/// `REGULAR_CUSTOM_ZONE` or `DEFAULT_ZONE` (live responses only; not in Apple's docs).
public struct ZoneType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let regularCustomZone: Self = "REGULAR_CUSTOM_ZONE"
    public static let defaultZone: Self = "DEFAULT_ZONE"
}

/// Zone ID dictionary.
public struct ZoneID: JSONConvertible, Hashable {
    public static let defaultZoneName = "_defaultZone"
    public static let `default` = ZoneID(zoneName: defaultZoneName)

    public var zoneName: String
    /// Owner's user record name; defaults to the caller. The public default zone reports `_defaultOwner`.
    public var ownerRecordName: String?
    public var zoneType: ZoneType?

    public init(zoneName: String, ownerRecordName: String? = nil, zoneType: ZoneType? = nil) {
        self.zoneName = zoneName
        self.ownerRecordName = ownerRecordName
        self.zoneType = zoneType
    }

    public var isDefaultZone: Bool { zoneName == Self.defaultZoneName }

    public init(json: JSON) throws {
        let object = try json.object()
        zoneName = try at("zoneName") { try object.required("zoneName").string() }
        ownerRecordName = try object.string("ownerRecordName")
        zoneType = try object.decode("zoneType")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("zoneName", zoneName)
        object.set("ownerRecordName", ownerRecordName)
        object.set("zoneType", zoneType)
        return .object(object)
    }
}

/// Zone dictionary.
public struct Zone: JSONConvertible, Hashable {
    public var zoneID: ZoneID
    public var syncToken: String?
    /// The zone supports atomic batches.
    public var atomic: Bool?
    /// True on tombstones in change feeds and zones/modify delete results.
    public var deleted: Bool?

    public init(zoneID: ZoneID, syncToken: String? = nil, atomic: Bool? = nil, deleted: Bool? = nil) {
        self.zoneID = zoneID
        self.syncToken = syncToken
        self.atomic = atomic
        self.deleted = deleted
    }

    public init(json: JSON) throws {
        let object = try json.object()
        zoneID = try at("zoneID") { try ZoneID(json: try object.required("zoneID")) }
        syncToken = try object.string("syncToken")
        atomic = try object.bool("atomic")
        deleted = try object.bool("deleted")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("zoneID", zoneID)
        object.set("syncToken", syncToken)
        object.set("atomic", atomic)
        object.set("deleted", deleted)
        return .object(object)
    }
}

/// One item of a zone result list: a zone, or the error for that zone.
public enum ZoneResult: JSONConvertible, Hashable {
    case zone(Zone)
    case failure(ZoneError)

    public init(json: JSON) throws {
        self = json.isErrorItem ? .failure(try ZoneError(json: json)) : .zone(try Zone(json: json))
    }

    public var json: JSON {
        switch self {
        case .zone(let zone): return zone.json
        case .failure(let error): return error.json
        }
    }

    public var zone: Zone? {
        if case .zone(let zone) = self { return zone }
        return nil
    }

    public var error: ZoneError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
