/// Per-zone entry of a changes/zone request; its keys override the top-level ones for that zone.
public struct ZoneChangesEntry: JSONConvertible, Hashable {
    public var zoneID: ZoneID
    public var syncToken: String?
    public var resultsLimit: Int?
    public var desiredKeys: [String]?
    public var desiredRecordTypes: [String]?
    public var reverse: Bool?

    public init(
        zoneID: ZoneID, syncToken: String? = nil, resultsLimit: Int? = nil, desiredKeys: [String]? = nil,
        desiredRecordTypes: [String]? = nil, reverse: Bool? = nil
    ) {
        self.zoneID = zoneID
        self.syncToken = syncToken
        self.resultsLimit = resultsLimit
        self.desiredKeys = desiredKeys
        self.desiredRecordTypes = desiredRecordTypes
        self.reverse = reverse
    }

    public init(json: JSON) throws {
        let object = try json.object()
        zoneID = try at("zoneID") { try ZoneID(json: try object.required("zoneID")) }
        syncToken = try object.string("syncToken")
        resultsLimit = try object.int64("resultsLimit").map { Int(clamping: $0) }
        desiredKeys = try object.strings("desiredKeys")
        desiredRecordTypes = try object.strings("desiredRecordTypes")
        reverse = try object.bool("reverse")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("zoneID", zoneID)
        object.set("syncToken", syncToken)
        object.set("resultsLimit", resultsLimit)
        object.set("desiredKeys", desiredKeys)
        object.set("desiredRecordTypes", desiredRecordTypes)
        object.set("reverse", reverse)
        return .object(object)
    }
}

/// changes/zone request body.
public struct ZoneChangesRequest: JSONConvertible, Hashable {
    public var zones: [ZoneChangesEntry]
    public var reverse: Bool?
    public var desiredKeys: [String]?
    public var desiredRecordTypes: [String]?
    public var resultsLimit: Int?
    public var numbersAsStrings: Bool?

    public init(
        zones: [ZoneChangesEntry], reverse: Bool? = nil, desiredKeys: [String]? = nil,
        desiredRecordTypes: [String]? = nil, resultsLimit: Int? = nil, numbersAsStrings: Bool? = nil
    ) {
        self.zones = zones
        self.reverse = reverse
        self.desiredKeys = desiredKeys
        self.desiredRecordTypes = desiredRecordTypes
        self.resultsLimit = resultsLimit
        self.numbersAsStrings = numbersAsStrings
    }

    public init(json: JSON) throws {
        let object = try json.object()
        zones = try at("zones") { try object.required("zones").decodeArray { try ZoneChangesEntry(json: $0) } }
        reverse = try object.bool("reverse")
        desiredKeys = try object.strings("desiredKeys")
        desiredRecordTypes = try object.strings("desiredRecordTypes")
        resultsLimit = try object.int64("resultsLimit").map { Int(clamping: $0) }
        // The reference's changes/zone page spells it `numberAsStrings`; accept both.
        numbersAsStrings = try object.bool("numbersAsStrings") ?? object.bool("numberAsStrings")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("zones", zones)
        object.set("reverse", reverse)
        object.set("desiredKeys", desiredKeys)
        object.set("desiredRecordTypes", desiredRecordTypes)
        object.set("resultsLimit", resultsLimit)
        object.set("numbersAsStrings", numbersAsStrings)
        return .object(object)
    }
}

/// One zone's answer in changes/zone: a page, or the error for that zone.
public enum ZoneChangesResult: JSONConvertible, Hashable {
    case page(RecordChangesPage)
    case failure(ZoneError)

    public init(json: JSON) throws {
        self = json.isErrorItem ? .failure(try ZoneError(json: json)) : .page(try RecordChangesPage(json: json))
    }

    public var json: JSON {
        switch self {
        case .page(let page): return page.json
        case .failure(let error): return error.json
        }
    }
}

/// changes/zone answer.
public struct ZoneChangesResponse: JSONConvertible, Hashable {
    public var zones: [ZoneChangesResult]

    public init(zones: [ZoneChangesResult]) { self.zones = zones }

    public init(json: JSON) throws {
        let object = try json.object()
        zones = try at("zones") { try object.required("zones").decodeArray { try ZoneChangesResult(json: $0) } }
    }

    public var json: JSON { .object(["zones": .array(zones.map(\.json))]) }
}

/// changes/database request body.
public struct DatabaseChangesRequest: JSONConvertible, Hashable {
    public var syncToken: String?
    public var resultsLimit: Int?

    public init(syncToken: String? = nil, resultsLimit: Int? = nil) {
        self.syncToken = syncToken
        self.resultsLimit = resultsLimit
    }

    public init(json: JSON) throws {
        let object = try json.object()
        syncToken = try object.string("syncToken")
        resultsLimit = try object.int64("resultsLimit").map { Int(clamping: $0) }
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("syncToken", syncToken)
        object.set("resultsLimit", resultsLimit)
        return .object(object)
    }
}

/// changes/database answer: which zones changed (deleted zones carry `deleted: true`).
public struct DatabaseChangesResponse: JSONConvertible, Hashable {
    public var zones: [Zone]
    public var syncToken: String
    public var moreComing: Bool

    public init(zones: [Zone], syncToken: String, moreComing: Bool) {
        self.zones = zones
        self.syncToken = syncToken
        self.moreComing = moreComing
    }

    public init(json: JSON) throws {
        let object = try json.object()
        zones = try object.decodeArray("zones") ?? []
        syncToken = try at("syncToken") { try object.required("syncToken").string() }
        moreComing = try object.bool("moreComing") ?? false
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("zones", zones)
        object.set("syncToken", syncToken)
        object.set("moreComing", moreComing)
        return .object(object)
    }
}

/// `{ "zones": [...] }`: zones/list, zones/lookup and zones/modify answers.
public struct ZonesResponse: JSONConvertible, Hashable {
    public var zones: [ZoneResult]

    public init(zones: [ZoneResult]) { self.zones = zones }

    public init(json: JSON) throws {
        let object = try json.object()
        zones = try at("zones") { try object.required("zones").decodeArray { try ZoneResult(json: $0) } }
    }

    public var json: JSON { .object(["zones": .array(zones.map(\.json))]) }
}

/// zones/lookup request body.
public struct LookupZonesRequest: JSONConvertible, Hashable {
    public var zones: [ZoneID]

    public init(zones: [ZoneID]) { self.zones = zones }

    public init(json: JSON) throws {
        let object = try json.object()
        zones = try at("zones") { try object.required("zones").decodeArray { try ZoneID(json: $0) } }
    }

    public var json: JSON { .object(["zones": .array(zones.map(\.json))]) }
}

/// `create` or `delete`.
public struct ZoneOperationType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let create: Self = "create"
    public static let delete: Self = "delete"
}

/// One zones/modify operation.
public struct ZoneOperation: JSONConvertible, Hashable {
    public var operationType: ZoneOperationType
    public var zoneID: ZoneID

    public init(_ operationType: ZoneOperationType, _ zoneID: ZoneID) {
        self.operationType = operationType
        self.zoneID = zoneID
    }

    public init(json: JSON) throws {
        let object = try json.object()
        operationType = try at("operationType") { try ZoneOperationType(json: try object.required("operationType")) }
        let zone = try at("zone") { try object.required("zone").object() }
        zoneID = try at("zone") { try at("zoneID") { try ZoneID(json: try zone.required("zoneID")) } }
    }

    public var json: JSON {
        .object(["operationType": operationType.json, "zone": .object(["zoneID": zoneID.json])])
    }
}

/// zones/modify request body (no `atomic` key exists here).
public struct ModifyZonesRequest: JSONConvertible, Hashable {
    public var operations: [ZoneOperation]

    public init(operations: [ZoneOperation]) { self.operations = operations }

    public init(json: JSON) throws {
        let object = try json.object()
        operations = try at("operations") { try object.required("operations").decodeArray { try ZoneOperation(json: $0) } }
    }

    public var json: JSON { .object(["operations": .array(operations.map(\.json))]) }
}

/// `{ "subscriptions": [...] }`: list, lookup and modify answers.
public struct SubscriptionsResponse: JSONConvertible, Hashable {
    public var subscriptions: [SubscriptionResult]

    public init(subscriptions: [SubscriptionResult]) { self.subscriptions = subscriptions }

    public init(json: JSON) throws {
        let object = try json.object()
        subscriptions = try at("subscriptions") {
            try object.required("subscriptions").decodeArray { try SubscriptionResult(json: $0) }
        }
    }

    public var json: JSON { .object(["subscriptions": .array(subscriptions.map(\.json))]) }
}

/// subscriptions/lookup request body.
public struct LookupSubscriptionsRequest: JSONConvertible, Hashable {
    public var subscriptionIDs: [String]

    public init(subscriptionIDs: [String]) { self.subscriptionIDs = subscriptionIDs }

    public init(json: JSON) throws {
        let object = try json.object()
        subscriptionIDs = try at("subscriptions") {
            try object.required("subscriptions").decodeArray { item in
                try at("subscriptionID") { try item.object().required("subscriptionID").string() }
            }
        }
    }

    public var json: JSON {
        .object(["subscriptions": .array(subscriptionIDs.map { .object(["subscriptionID": .string($0)]) })])
    }
}

/// `create`, `update` or `delete`.
public struct SubscriptionOperationType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let create: Self = "create"
    public static let update: Self = "update"
    public static let delete: Self = "delete"
}

/// One subscriptions/modify operation.
public struct SubscriptionOperation: JSONConvertible, Hashable {
    public var operationType: SubscriptionOperationType
    public var subscription: Subscription

    public init(_ operationType: SubscriptionOperationType, _ subscription: Subscription) {
        self.operationType = operationType
        self.subscription = subscription
    }

    /// A delete needs only the ID.
    public static func delete(_ subscriptionID: String) -> Self {
        .init(.delete, Subscription(subscriptionID: subscriptionID, subscriptionType: ""))
    }

    public init(json: JSON) throws {
        let object = try json.object()
        operationType = try at("operationType") {
            try SubscriptionOperationType(json: try object.required("operationType"))
        }
        let subscriptionJSON = try at("subscription") { try object.required("subscription") }
        if operationType == .delete, subscriptionJSON["subscriptionType"] == nil {
            let id = try at("subscription") { try subscriptionJSON.object().string("subscriptionID") }
            subscription = Subscription(subscriptionID: id, subscriptionType: "")
        } else {
            subscription = try at("subscription") { try Subscription(json: subscriptionJSON) }
        }
    }

    public var json: JSON {
        var subscriptionJSON = subscription.json
        if subscription.subscriptionType.rawValue.isEmpty {
            subscriptionJSON = .object(["subscriptionID": subscription.subscriptionID.map(JSON.string) ?? .null])
        }
        return .object(["operationType": operationType.json, "subscription": subscriptionJSON])
    }
}

/// subscriptions/modify request body.
public struct ModifySubscriptionsRequest: JSONConvertible, Hashable {
    public var operations: [SubscriptionOperation]

    public init(operations: [SubscriptionOperation]) { self.operations = operations }

    public init(json: JSON) throws {
        let object = try json.object()
        operations = try at("operations") {
            try object.required("operations").decodeArray { try SubscriptionOperation(json: $0) }
        }
    }

    public var json: JSON { .object(["operations": .array(operations.map(\.json))]) }
}

/// tokens/create and tokens/register bodies and the tokens/create answer.
public struct APNsToken: JSONConvertible, Hashable {
    /// `development` or `production`.
    public var apnsEnvironment: String
    public var apnsToken: String?
    /// Long-poll this to receive pushes (tokens/create answer only).
    public var webcourierURL: String?

    public init(apnsEnvironment: String, apnsToken: String? = nil, webcourierURL: String? = nil) {
        self.apnsEnvironment = apnsEnvironment
        self.apnsToken = apnsToken
        self.webcourierURL = webcourierURL
    }

    public init(json: JSON) throws {
        let object = try json.object()
        apnsEnvironment = try at("apnsEnvironment") { try object.required("apnsEnvironment").string() }
        apnsToken = try object.string("apnsToken")
        webcourierURL = try object.string("webcourierURL")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("apnsEnvironment", apnsEnvironment)
        object.set("apnsToken", apnsToken)
        object.set("webcourierURL", webcourierURL)
        return .object(object)
    }
}
