/// The seven record operation types.
public struct RecordOperationType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let create: Self = "create"
    public static let update: Self = "update"
    public static let forceUpdate: Self = "forceUpdate"
    public static let replace: Self = "replace"
    public static let forceReplace: Self = "forceReplace"
    public static let delete: Self = "delete"
    public static let forceDelete: Self = "forceDelete"

    public static let all: [RecordOperationType] = [
        .create, .update, .forceUpdate, .replace, .forceReplace, .delete, .forceDelete,
    ]

    /// update, replace and delete carry the change tag the caller saw.
    public var needsChangeTag: Bool { self == .update || self == .replace || self == .delete }
    public var isDelete: Bool { self == .delete || self == .forceDelete }
}

/// Record Operation dictionary.
public struct RecordOperation: JSONConvertible, Hashable {
    public var operationType: RecordOperationType
    public var record: Record
    public var desiredKeys: [String]?

    public init(_ operationType: RecordOperationType, _ record: Record, desiredKeys: [String]? = nil) {
        self.operationType = operationType
        self.record = record
        self.desiredKeys = desiredKeys
    }

    public static func create(_ record: Record) -> Self { .init(.create, record) }
    public static func update(_ record: Record) -> Self { .init(.update, record) }
    public static func replace(_ record: Record) -> Self { .init(.replace, record) }
    /// A conditional delete: only the name and the change tag the caller saw go on the wire.
    public static func delete(recordName: String, recordChangeTag: String?) -> Self {
        .init(.delete, Record(recordName: recordName, recordChangeTag: recordChangeTag))
    }
    public static func forceDelete(recordName: String) -> Self { .init(.forceDelete, Record(recordName: recordName)) }

    public init(json: JSON) throws {
        let object = try json.object()
        operationType = try at("operationType") { try RecordOperationType(json: try object.required("operationType")) }
        record = try at("record") { try Record(json: try object.required("record")) }
        desiredKeys = try object.strings("desiredKeys")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("operationType", operationType)
        var recordJSON = record.json
        if operationType.isDelete, case .object(var dict) = recordJSON {
            dict["fields"] = nil  // a delete needs only the name (+ tag)
            recordJSON = .object(dict)
        }
        object.set("record", recordJSON)
        object.set("desiredKeys", desiredKeys)
        return .object(object)
    }
}

/// records/modify request body.
public struct ModifyRecordsRequest: JSONConvertible, Hashable {
    /// The service's limit on operations per request.
    public static let maximumOperations = 200

    public var operations: [RecordOperation]
    public var zoneID: ZoneID?
    /// Default true (the service's default); only meaningful in zones with atomic capability.
    public var atomic: Bool?
    public var desiredKeys: [String]?
    public var numbersAsStrings: Bool?

    public init(
        operations: [RecordOperation], zoneID: ZoneID? = nil, atomic: Bool? = nil, desiredKeys: [String]? = nil,
        numbersAsStrings: Bool? = nil
    ) {
        self.operations = operations
        self.zoneID = zoneID
        self.atomic = atomic
        self.desiredKeys = desiredKeys
        self.numbersAsStrings = numbersAsStrings
    }

    public init(json: JSON) throws {
        let object = try json.object()
        operations = try at("operations") { try object.required("operations").decodeArray { try RecordOperation(json: $0) } }
        zoneID = try object.decode("zoneID")
        atomic = try object.bool("atomic")
        desiredKeys = try object.strings("desiredKeys")
        numbersAsStrings = try object.bool("numbersAsStrings")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("operations", operations)
        object.set("zoneID", zoneID)
        object.set("atomic", atomic)
        object.set("desiredKeys", desiredKeys)
        object.set("numbersAsStrings", numbersAsStrings)
        return .object(object)
    }
}

/// `{ "records": [...] }`: the answer of records/modify, records/lookup (and the record part of others).
public struct RecordsResponse: JSONConvertible, Hashable {
    public var records: [RecordResult]

    public init(records: [RecordResult]) { self.records = records }

    public init(json: JSON) throws {
        let object = try json.object()
        records = try at("records") { try object.required("records").decodeArray { try RecordResult(json: $0) } }
    }

    public var json: JSON { .object(["records": .array(records.map(\.json))]) }
}

/// The answer of records/modify.
public struct ModifyRecordsResult: Sendable, Hashable {
    /// One result per operation, in request order.
    public var results: [RecordResult]
    /// The HTTP status: 200, or 400 when an atomic batch failed as a whole.
    public var httpStatus: Int

    public init(results: [RecordResult], httpStatus: Int) {
        self.results = results
        self.httpStatus = httpStatus
    }

    /// True when nothing was applied because an atomic batch failed (every item is an error, and at least
    /// one is ATOMIC_ERROR or the envelope was HTTP 400).
    public var isAtomicFailure: Bool {
        !results.isEmpty && results.allSatisfy { $0.error != nil }
            && (httpStatus == 400 || results.contains { $0.error?.serverErrorCode == .atomicError })
    }

    public var failures: [RecordError] { results.compactMap(\.error) }
    public var isCompleteSuccess: Bool { failures.isEmpty }
}

/// One entry of a records/lookup request.
public struct RecordLookup: JSONConvertible, Hashable {
    public var recordName: String
    public var desiredKeys: [String]?

    public init(recordName: String, desiredKeys: [String]? = nil) {
        self.recordName = recordName
        self.desiredKeys = desiredKeys
    }

    public init(json: JSON) throws {
        let object = try json.object()
        recordName = try at("recordName") { try object.required("recordName").string() }
        desiredKeys = try object.strings("desiredKeys")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("recordName", recordName)
        object.set("desiredKeys", desiredKeys)
        return .object(object)
    }
}

/// records/lookup request body.
public struct LookupRecordsRequest: JSONConvertible, Hashable {
    public var records: [RecordLookup]
    public var zoneID: ZoneID?
    public var desiredKeys: [String]?
    public var numbersAsStrings: Bool?

    public init(recordNames: [String], zoneID: ZoneID? = nil, desiredKeys: [String]? = nil, numbersAsStrings: Bool? = nil) {
        self.records = recordNames.map { RecordLookup(recordName: $0) }
        self.zoneID = zoneID
        self.desiredKeys = desiredKeys
        self.numbersAsStrings = numbersAsStrings
    }

    public init(json: JSON) throws {
        let object = try json.object()
        records = try at("records") { try object.required("records").decodeArray { try RecordLookup(json: $0) } }
        zoneID = try object.decode("zoneID")
        desiredKeys = try object.strings("desiredKeys")
        numbersAsStrings = try object.bool("numbersAsStrings")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("records", records)
        object.set("zoneID", zoneID)
        object.set("desiredKeys", desiredKeys)
        object.set("numbersAsStrings", numbersAsStrings)
        return .object(object)
    }
}

/// records/query request body.
public struct QueryRequest: JSONConvertible, Hashable {
    public var query: Query
    public var zoneID: ZoneID?
    public var zoneWide: Bool?
    public var resultsLimit: Int?
    public var continuationMarker: String?
    public var desiredKeys: [String]?
    public var numbersAsStrings: Bool?

    public init(
        query: Query, zoneID: ZoneID? = nil, zoneWide: Bool? = nil, resultsLimit: Int? = nil,
        continuationMarker: String? = nil, desiredKeys: [String]? = nil, numbersAsStrings: Bool? = nil
    ) {
        self.query = query
        self.zoneID = zoneID
        self.zoneWide = zoneWide
        self.resultsLimit = resultsLimit
        self.continuationMarker = continuationMarker
        self.desiredKeys = desiredKeys
        self.numbersAsStrings = numbersAsStrings
    }

    public init(json: JSON) throws {
        let object = try json.object()
        query = try at("query") { try Query(json: try object.required("query")) }
        zoneID = try object.decode("zoneID")
        zoneWide = try object.bool("zoneWide")
        resultsLimit = try object.int64("resultsLimit").map { Int(clamping: $0) }
        continuationMarker = try object.string("continuationMarker")
        desiredKeys = try object.strings("desiredKeys")
        numbersAsStrings = try object.bool("numbersAsStrings")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("query", query)
        object.set("zoneID", zoneID)
        object.set("zoneWide", zoneWide)
        object.set("resultsLimit", resultsLimit)
        object.set("continuationMarker", continuationMarker)
        object.set("desiredKeys", desiredKeys)
        object.set("numbersAsStrings", numbersAsStrings)
        return .object(object)
    }
}

/// records/query answer: one page.
public struct QueryResponse: JSONConvertible, Hashable {
    public var records: [RecordResult]
    /// Present only when more results exist.
    public var continuationMarker: String?

    public init(records: [RecordResult], continuationMarker: String? = nil) {
        self.records = records
        self.continuationMarker = continuationMarker
    }

    public init(json: JSON) throws {
        let object = try json.object()
        records = try at("records") { try object.required("records").decodeArray { try RecordResult(json: $0) } }
        continuationMarker = try object.string("continuationMarker")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("records", records)
        object.set("continuationMarker", continuationMarker)
        return .object(object)
    }
}

/// records/changes request body (custom zones only).
public struct RecordChangesRequest: JSONConvertible, Hashable {
    public var zoneID: ZoneID
    public var syncToken: String?
    public var resultsLimit: Int?
    public var desiredKeys: [String]?
    public var numbersAsStrings: Bool?

    public init(
        zoneID: ZoneID, syncToken: String? = nil, resultsLimit: Int? = nil, desiredKeys: [String]? = nil,
        numbersAsStrings: Bool? = nil
    ) {
        self.zoneID = zoneID
        self.syncToken = syncToken
        self.resultsLimit = resultsLimit
        self.desiredKeys = desiredKeys
        self.numbersAsStrings = numbersAsStrings
    }

    public init(json: JSON) throws {
        let object = try json.object()
        zoneID = try at("zoneID") { try ZoneID(json: try object.required("zoneID")) }
        syncToken = try object.string("syncToken")
        resultsLimit = try object.int64("resultsLimit").map { Int(clamping: $0) }
        desiredKeys = try object.strings("desiredKeys")
        numbersAsStrings = try object.bool("numbersAsStrings")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("zoneID", zoneID)
        object.set("syncToken", syncToken)
        object.set("resultsLimit", resultsLimit)
        object.set("desiredKeys", desiredKeys)
        object.set("numbersAsStrings", numbersAsStrings)
        return .object(object)
    }
}

/// One page of a change feed: the changed records (latest state, one per record) and tombstones.
public struct RecordChangesPage: JSONConvertible, Hashable {
    public var records: [RecordResult]
    public var syncToken: String
    public var moreComing: Bool
    public var reverse: Bool?
    /// Set on changes/zone pages.
    public var zoneID: ZoneID?

    public init(records: [RecordResult], syncToken: String, moreComing: Bool, reverse: Bool? = nil, zoneID: ZoneID? = nil) {
        self.records = records
        self.syncToken = syncToken
        self.moreComing = moreComing
        self.reverse = reverse
        self.zoneID = zoneID
    }

    public init(json: JSON) throws {
        let object = try json.object()
        zoneID = try object.decode("zoneID")
        records = try at("records") {
            try object.value("records").map { try $0.decodeArray { try RecordResult(json: $0) } } ?? []
        }
        syncToken = try at("syncToken") { try object.required("syncToken").string() }
        moreComing = try object.bool("moreComing") ?? false
        reverse = try object.bool("reverse")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("zoneID", zoneID)
        object.set("records", records)
        object.set("syncToken", syncToken)
        object.set("moreComing", moreComing)
        object.set("reverse", reverse)
        return .object(object)
    }
}
