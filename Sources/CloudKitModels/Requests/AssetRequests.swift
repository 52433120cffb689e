/// One field an upload URL is asked for (assets/upload's Asset Field Dictionary, §4.16).
public struct AssetUploadField: JSONConvertible, Hashable {
    /// The record the asset will be saved on; the service picks a random UUID when absent.
    public var recordName: String?
    public var recordType: String?
    public var fieldName: String

    public init(recordName: String? = nil, recordType: String?, fieldName: String) {
        self.recordName = recordName
        self.recordType = recordType
        self.fieldName = fieldName
    }

    public init(json: JSON) throws {
        let object = try json.object()
        recordName = try object.string("recordName")
        recordType = try object.string("recordType")
        fieldName = try at("fieldName") { try object.required("fieldName").string() }
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("recordName", recordName)
        object.set("recordType", recordType)
        object.set("fieldName", fieldName)
        return .object(object)
    }
}

/// assets/upload request body.
public struct AssetUploadRequest: JSONConvertible, Hashable {
    /// The default zone when absent.
    public var zoneID: ZoneID?
    /// At most 200.
    public var tokens: [AssetUploadField]

    public init(zoneID: ZoneID? = nil, tokens: [AssetUploadField]) {
        self.zoneID = zoneID
        self.tokens = tokens
    }

    public init(json: JSON) throws {
        let object = try json.object()
        zoneID = try object.decode("zoneID")
        tokens = try at("tokens") { try object.required("tokens").decodeArray { try AssetUploadField(json: $0) } }
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("zoneID", zoneID)
        object.set("tokens", tokens)
        return .object(object)
    }
}

/// One upload URL of an assets/upload answer.
public struct AssetUploadToken: JSONConvertible, Hashable {
    public var recordName: String
    public var fieldName: String
    /// Where to POST the file's bytes (valid 15 minutes). Not a credential of the account, but it
    /// lets anyone upload: not logged.
    public var url: String

    public init(recordName: String, fieldName: String, url: String) {
        self.recordName = recordName
        self.fieldName = fieldName
        self.url = url
    }

    public init(json: JSON) throws {
        let object = try json.object()
        recordName = try at("recordName") { try object.required("recordName").string() }
        fieldName = try at("fieldName") { try object.required("fieldName").string() }
        url = try at("url") { try object.required("url").string() }
    }

    public var json: JSON {
        ["recordName": .string(recordName), "fieldName": .string(fieldName), "url": .string(url)]
    }
}

/// A record field holding an asset (assets/rereference's Assets Field Dictionary, §4.18).
public struct AssetFieldID: JSONConvertible, Hashable {
    public var recordName: String
    public var fieldName: String

    public init(recordName: String, fieldName: String) {
        self.recordName = recordName
        self.fieldName = fieldName
    }

    public init(json: JSON) throws {
        let object = try json.object()
        recordName = try at("recordName") { try object.required("recordName").string() }
        fieldName = try at("fieldName") { try object.required("fieldName").string() }
    }

    public var json: JSON { ["recordName": .string(recordName), "fieldName": .string(fieldName)] }
}

/// assets/rereference request body.
public struct AssetRereferenceRequest: JSONConvertible, Hashable {
    public var zoneID: ZoneID?
    public var assets: [AssetFieldID]

    public init(zoneID: ZoneID? = nil, assets: [AssetFieldID]) {
        self.zoneID = zoneID
        self.assets = assets
    }

    public init(json: JSON) throws {
        let object = try json.object()
        zoneID = try object.decode("zoneID")
        assets = try at("assets") { try object.required("assets").decodeArray { try AssetFieldID(json: $0) } }
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("zoneID", zoneID)
        object.set("assets", assets)
        return .object(object)
    }
}
