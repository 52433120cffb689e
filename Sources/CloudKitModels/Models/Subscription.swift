/// `query` or `zone` (and `database`, whose Web Services spelling is unconfirmed: natively created
/// database subscriptions do show up in subscriptions/list).
public struct SubscriptionType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let query: Self = "query"
    public static let zone: Self = "zone"
    public static let database: Self = "database"
}

/// `create`, `update`, `delete`.
public struct FiresOn: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let create: Self = "create"
    public static let update: Self = "update"
    public static let delete: Self = "delete"
}

/// Notification Info dictionary: every key of the reference and of CloudKit JS.
public struct NotificationInfo: JSONConvertible, Hashable {
    public var alertBody: String?
    public var alertLocalizationKey: String?
    /// Field names whose values fill the localized alert's arguments.
    public var alertLocalizationArgs: [String]?
    public var alertActionLocalizationKey: String?
    public var alertLaunchImage: String?
    public var soundName: String?
    public var shouldBadge: Bool?
    public var shouldSendContentAvailable: Bool?
    /// CloudKit JS: record fields to include in the push.
    public var additionalFields: [String]?
    /// CloudKit JS: the notification category.
    public var category: String?

    public init(
        alertBody: String? = nil, alertLocalizationKey: String? = nil, alertLocalizationArgs: [String]? = nil,
        alertActionLocalizationKey: String? = nil, alertLaunchImage: String? = nil, soundName: String? = nil,
        shouldBadge: Bool? = nil, shouldSendContentAvailable: Bool? = nil, additionalFields: [String]? = nil,
        category: String? = nil
    ) {
        self.alertBody = alertBody
        self.alertLocalizationKey = alertLocalizationKey
        self.alertLocalizationArgs = alertLocalizationArgs
        self.alertActionLocalizationKey = alertActionLocalizationKey
        self.alertLaunchImage = alertLaunchImage
        self.soundName = soundName
        self.shouldBadge = shouldBadge
        self.shouldSendContentAvailable = shouldSendContentAvailable
        self.additionalFields = additionalFields
        self.category = category
    }

    public init(json: JSON) throws {
        let object = try json.object()
        alertBody = try object.string("alertBody")
        alertLocalizationKey = try object.string("alertLocalizationKey")
        alertLocalizationArgs = try object.strings("alertLocalizationArgs")
        alertActionLocalizationKey = try object.string("alertActionLocalizationKey")
        alertLaunchImage = try object.string("alertLaunchImage")
        soundName = try object.string("soundName")
        shouldBadge = try object.bool("shouldBadge")
        shouldSendContentAvailable = try object.bool("shouldSendContentAvailable")
        additionalFields = try object.strings("additionalFields")
        category = try object.string("category")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("alertBody", alertBody)
        object.set("alertLocalizationKey", alertLocalizationKey)
        object.set("alertLocalizationArgs", alertLocalizationArgs)
        object.set("alertActionLocalizationKey", alertActionLocalizationKey)
        object.set("alertLaunchImage", alertLaunchImage)
        object.set("soundName", soundName)
        object.set("shouldBadge", shouldBadge)
        object.set("shouldSendContentAvailable", shouldSendContentAvailable)
        object.set("additionalFields", additionalFields)
        object.set("category", category)
        return .object(object)
    }
}

/// Subscription dictionary.
public struct Subscription: JSONConvertible, Hashable {
    public var subscriptionID: String?
    public var subscriptionType: SubscriptionType
    public var query: Query?
    public var zoneID: ZoneID?
    public var firesOn: [FiresOn]?
    public var firesOnce: Bool?
    /// Query subscriptions: all zones (true) or the default zone only; Apple: defaults to true on create.
    public var zoneWide: Bool?
    public var notificationInfo: NotificationInfo?

    public init(
        subscriptionID: String?, subscriptionType: SubscriptionType, query: Query? = nil, zoneID: ZoneID? = nil,
        firesOn: [FiresOn]? = nil, firesOnce: Bool? = nil, zoneWide: Bool? = nil,
        notificationInfo: NotificationInfo? = nil
    ) {
        self.subscriptionID = subscriptionID
        self.subscriptionType = subscriptionType
        self.query = query
        self.zoneID = zoneID
        self.firesOn = firesOn
        self.firesOnce = firesOnce
        self.zoneWide = zoneWide
        self.notificationInfo = notificationInfo
    }

    /// A query subscription.
    public static func query(
        _ id: String?, _ query: Query, firesOn: [FiresOn], firesOnce: Bool = false, zoneID: ZoneID? = nil,
        zoneWide: Bool? = nil, notificationInfo: NotificationInfo? = nil
    ) -> Subscription {
        Subscription(
            subscriptionID: id, subscriptionType: .query, query: query, zoneID: zoneID, firesOn: firesOn,
            firesOnce: firesOnce, zoneWide: zoneWide, notificationInfo: notificationInfo)
    }

    /// Another query subscription among `others` on the same record type and the same firesOn set. The
    /// live service keeps one query subscription per record type and firesOn set: creating a twin under
    /// another ID fails with INTERNAL_ERROR ("could not find subscription we just created"; the local
    /// server answers the same), so the browser's editor and `subscriptions create` say so first.
    public func queryTwin(among others: [Subscription]) -> Subscription? {
        guard subscriptionType == .query, let recordType = query?.recordType, let firesOn, !firesOn.isEmpty else { return nil }
        return others.first { other in
            other.subscriptionID != subscriptionID && other.subscriptionType == .query && other.query?.recordType == recordType
                && Set(other.firesOn ?? []) == Set(firesOn)
        }
    }

    /// The same subscription as `other`, with what the server fills in when it is left out (firesOn in
    /// any order, `firesOnce` false, a query subscription's `zoneWide` true) read as written, and the
    /// zone's owner not compared: it is the caller's own zone (a subscription copied from another
    /// server or container names that one's owner, and its ID names the same subscription here).
    public func sameDefinition(as other: Subscription) -> Bool {
        func normal(_ s: Subscription) -> Subscription {
            var s = s
            s.zoneID?.ownerRecordName = nil
            s.firesOn = s.firesOn.map { Array(Set($0)).sorted { $0.rawValue < $1.rawValue } }
            if s.firesOnce == nil { s.firesOnce = false }
            if s.subscriptionType == .query, s.zoneWide == nil { s.zoneWide = true }
            return s
        }
        return normal(self) == normal(other)
    }

    /// A zone subscription.
    public static func zone(_ id: String?, _ zoneID: ZoneID, notificationInfo: NotificationInfo? = nil) -> Subscription {
        Subscription(subscriptionID: id, subscriptionType: .zone, zoneID: zoneID, notificationInfo: notificationInfo)
    }

    public init(json: JSON) throws {
        let object = try json.object()
        subscriptionID = try object.string("subscriptionID")
        subscriptionType = try at("subscriptionType") { try SubscriptionType(json: try object.required("subscriptionType")) }
        query = try object.decode("query")
        zoneID = try object.decode("zoneID")
        firesOn = try object.decodeArray("firesOn")
        firesOnce = try object.bool("firesOnce")
        zoneWide = try object.bool("zoneWide")
        notificationInfo = try object.decode("notificationInfo")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("subscriptionID", subscriptionID)
        object.set("subscriptionType", subscriptionType)
        object.set("query", query)
        object.set("zoneID", zoneID)
        object.set("firesOn", firesOn)
        object.set("firesOnce", firesOnce)
        object.set("zoneWide", zoneWide)
        object.set("notificationInfo", notificationInfo)
        return .object(object)
    }
}

/// One item of a subscription result list.
public enum SubscriptionResult: JSONConvertible, Hashable {
    case subscription(Subscription)
    case failure(SubscriptionError)

    public init(json: JSON) throws {
        if json.isErrorItem {
            self = .failure(try SubscriptionError(json: json))
        } else if json["subscriptionType"] == nil, let id = json["subscriptionID"]?.stringValue {
            // A delete result is just `{ "subscriptionID": … }` (unconfirmed shape).
            self = .subscription(Subscription(subscriptionID: id, subscriptionType: ""))
        } else {
            self = .subscription(try Subscription(json: json))
        }
    }

    public var json: JSON {
        switch self {
        case .subscription(let s) where s.subscriptionType.rawValue.isEmpty: return ["subscriptionID": s.subscriptionID.map(JSON.string) ?? .null]
        case .subscription(let s): return s.json
        case .failure(let e): return e.json
        }
    }

    public var subscription: Subscription? {
        if case .subscription(let s) = self { return s }
        return nil
    }

    public var error: SubscriptionError? {
        if case .failure(let e) = self { return e }
        return nil
    }
}
