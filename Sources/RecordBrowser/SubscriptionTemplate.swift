import CloudKitModels
import TerminalUI

/// The `$EDITOR` form of a subscription: a `//` header naming every key the reference allows (and
/// the record types and fields the schema offers), then the subscription as the wire's JSON. The
/// problems a server would answer with are found here first, so the editor reopens with them on top.
public enum SubscriptionTemplate {
    /// What the checks know of the database the subscription goes to.
    public struct Context: Sendable, Hashable {
        public var database: DatabaseScope
        public var environment: CloudKitEnvironment
        /// The schema, when known (nil: record types and fields are not checked).
        public var schema: KnownSchema?
        /// Zones of the database, when listed (empty: zone names are not checked).
        public var zones: [String]
        /// The database's other subscriptions as they will be (listed, with what is staged): a query
        /// subscription's twin among them is refused before it is sent.
        public var others: [Subscription]

        public init(database: DatabaseScope, environment: CloudKitEnvironment, schema: KnownSchema?, zones: [String], others: [Subscription] = []) {
            self.database = database
            self.environment = environment
            self.schema = schema
            self.zones = zones
            self.others = others
        }
    }

    /// The keys the reference allows (§3.9; `additionalFields` and `category` from CloudKit JS).
    static let subscriptionKeys = ["subscriptionID", "subscriptionType", "query", "zoneID", "zoneWide", "firesOn", "firesOnce", "notificationInfo"]
    static let queryKeys = ["recordType", "filterBy", "sortBy"]
    static let notificationKeys = ["alertBody", "alertLocalizationKey", "alertLocalizationArgs", "alertActionLocalizationKey", "alertLaunchImage",
                                   "soundName", "shouldBadge", "shouldSendContentAvailable", "additionalFields", "category"]
    static let filterKeys = ["fieldName", "systemFieldName", "comparator", "fieldValue", "distance"]

    /// A new subscription's starting definition: `query TYPE [ZONE]`, `zone ZONE` or `database`.
    public static func starting(kind: SubscriptionType, target: String?, zone: String?, id: String, context: Context) -> Subscription {
        switch kind {
        case .zone:
            return .zone(id, ZoneID(zoneName: target ?? zone ?? ZoneID.defaultZoneName), notificationInfo: NotificationInfo(shouldSendContentAvailable: true))
        case .database:
            return Subscription(subscriptionID: id, subscriptionType: .database, notificationInfo: NotificationInfo(shouldSendContentAvailable: true))
        default:
            var info = NotificationInfo(shouldSendContentAvailable: true)
            info.alertBody = "\(target ?? "A record") changed"
            return .query(id, Query(recordType: target ?? "", filterBy: []), firesOn: [.create, .update, .delete], firesOnce: false,
                          zoneID: zone.map { ZoneID(zoneName: $0) }, zoneWide: zone == nil, notificationInfo: info)
        }
    }

    /// The file handed to the editor. `error` (from the previous attempt) goes at the top.
    public static func text(_ subscription: Subscription, isNew: Bool, context: Context, error: String?) -> String {
        header(subscription, isNew: isNew, context: context, error: error) + body(subscription) + "\n"
    }

    /// The same text with a new header (the user's JSON kept exactly).
    public static func reopen(_ text: String, _ subscription: Subscription?, isNew: Bool, context: Context, error: String) -> String {
        let shown = subscription ?? Subscription(subscriptionID: nil, subscriptionType: .query)
        return header(shown, isNew: isNew, context: context, error: error) + FieldsJSON.body(of: text)
    }

    /// Every key in the reference's order, those unset as their defaults, so each can be seen and changed.
    static func body(_ s: Subscription) -> String {
        var object = JSONObject()
        object.set("subscriptionID", s.subscriptionID)
        object.set("subscriptionType", s.subscriptionType)
        if s.subscriptionType == .query {
            var query = JSONObject()
            query.set("recordType", s.query?.recordType ?? "")
            query.set("filterBy", JSON.array((s.query?.filterBy ?? []).map(\.json)))
            query.set("sortBy", JSON.array((s.query?.sortBy ?? []).map(\.json)))
            object.set("query", JSON.object(query))
        }
        if s.subscriptionType != .database { object.set("zoneID", s.zoneID) }
        if s.subscriptionType == .query {
            object.set("zoneWide", s.zoneWide ?? (s.zoneID == nil))
            object.set("firesOn", s.firesOn ?? [.create, .update, .delete])
            object.set("firesOnce", s.firesOnce ?? false)
        }
        object.set("notificationInfo", s.notificationInfo ?? NotificationInfo())
        return TerminalText.json(JSON.object(object).prettyPrinted())
    }

    static func header(_ s: Subscription, isNew: Bool, context: Context, error: String?) -> String {
        var lines: [String] = []
        if let error {
            lines += ["// ERROR: " + error.replacing("\n", with: " "), "// Fix it and save again; quit without saving (or empty the file) to cancel.", "//"]
        }
        let what = isNew ? "a new \(s.subscriptionType.rawValue) subscription" : "subscription '\(s.subscriptionID ?? "?")'"
        lines += [
            "// ckbrowse: \(what) in the \(context.database.rawValue) database (\(context.environment.rawValue)).",
            "// Save and quit to stage it (b reviews the batch, c commits); lines starting with // are ignored.",
            "// The keys (CloudKit Web Services, Subscription dictionary):",
            "//   subscriptionID    your name for it (letters, digits, - and _)" + (isNew ? "" : "; keep it to change this one"),
            "//   subscriptionType  \"query\" (records matching a query), \"zone\" (any change in a zone) or \"database\"",
            "//   query             recordType; filterBy: [{fieldName, comparator, fieldValue: {value, type}}]; sortBy: [{fieldName, ascending}]",
            "//   zoneID            {\"zoneName\": …}: the zone a zone subscription watches (a query subscription with zoneWide false)",
            "//   zoneWide          query: true watches every zone (the default), false the zoneID only",
            "//   firesOn           query: any of \"create\", \"update\", \"delete\"",
            "//   firesOnce         query: true: the server deletes it after it fires once",
            "//   notificationInfo  alertBody, alertLocalizationKey, alertLocalizationArgs, alertActionLocalizationKey,",
            "//                     alertLaunchImage, soundName, shouldBadge, shouldSendContentAvailable,",
            "//                     additionalFields (the record fields the push carries: native desiredKeys), category",
            "// Comparators: " + Comparator.all.map(\.rawValue).joined(separator: " "),
        ]
        if let known = context.schema {
            let types = known.schema.recordTypes.map(\.name).filter { $0 != "Users" }.sorted()
            lines.append("// Record types (\(known.source)): " + types.joined(separator: ", "))
            if let recordType = s.query?.recordType, let type = known.schema.recordType(recordType) {
                lines.append("// Fields of \(recordType) (indexes" + (known.indexesKnown ? ")" : " unknown)") + ":")
                for field in type.fields where !field.isSystem {
                    let indexes = known.indexesKnown ? (field.indexes.isEmpty ? "no index" : field.indexes.sorted().map(\.rawValue).joined(separator: " ")) : ""
                    lines.append("//   \(field.name) \(field.type.wireType)" + (indexes.isEmpty ? "" : " · \(indexes)"))
                }
            }
        }
        if !context.zones.isEmpty { lines.append("// Zones: " + context.zones.joined(separator: ", ")) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The subscription the edited text holds, or nil when the user emptied the file (cancel).
    /// Throws the first problem: invalid JSON, a key the reference does not know, an unknown
    /// comparator, type or field, a filter the schema's indexes refuse, a zone that does not exist,
    /// or a kind of subscription the database does not take.
    public static func parse(_ text: String, context: Context) throws(FieldInputError) -> Subscription? {
        let body = FieldsJSON.body(of: text)
        guard !body.allSatisfy(\.isWhitespace) else { return nil }
        let json: JSON
        do { json = try JSON(parsing: body) } catch let error as JSONDecodingError {
            if let offset = error.offset {
                let (line, column) = FieldsJSON.position(of: offset, in: body)
                let headerLines = text.split(separator: "\n", omittingEmptySubsequences: false).count - body.split(separator: "\n", omittingEmptySubsequences: false).count
                throw FieldInputError("invalid JSON at line \(line + headerLines), column \(column): \(error.message)")
            }
            throw FieldInputError("invalid JSON: \(error)")
        } catch { throw FieldInputError("invalid JSON: \(error)") }
        guard case .object(let object) = json else { throw FieldInputError("the file must hold one subscription (a JSON object), not \(json.kindName)") }
        try unknownKeys(object, allowed: subscriptionKeys, in: "the subscription")
        if case .object(let query)? = object["query"] {
            try unknownKeys(query, allowed: queryKeys, in: "query")
            if case .array(let filters)? = query["filterBy"] {
                for (i, filter) in filters.enumerated() {
                    if case .object(let f) = filter { try unknownKeys(f, allowed: filterKeys, in: "filterBy[\(i)]") }
                }
            }
        }
        if case .object(let info)? = object["notificationInfo"] { try unknownKeys(info, allowed: notificationKeys, in: "notificationInfo") }
        var subscription: Subscription
        do { subscription = try Subscription(json: json) } catch { throw FieldInputError("\(error)") }
        // Empty parts of the template are left out, as a client would send them.
        if subscription.query?.filterBy?.isEmpty == true { subscription.query?.filterBy = nil }
        if subscription.query?.sortBy?.isEmpty == true { subscription.query?.sortBy = nil }
        if let problem = problem(subscription, context: context) { throw FieldInputError(problem) }
        return subscription
    }

    static func unknownKeys(_ object: JSONObject, allowed: [String], in place: String) throws(FieldInputError) {
        if let key = object.pairs.map(\.0).first(where: { !allowed.contains($0) }) {
            throw FieldInputError("\(place) has no key '\(key)' (it takes \(allowed.joined(separator: ", ")))")
        }
    }

    /// What CloudKit would refuse in `s`, checked before anything is sent; nil when nothing is seen.
    public static func problem(_ s: Subscription, context: Context) -> String? {
        guard let id = s.subscriptionID, !id.isEmpty else { return "subscriptionID is required (a name of your choosing, as in \"artwork-changes\")" }
        if id.contains(where: { !($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }) {
            return "subscriptionID '\(id)' may hold letters, digits, '-', '_' and '.' only"
        }
        switch s.subscriptionType {
        case .query:
            if context.database == .shared { return "the shared database takes no query subscriptions (use a database subscription)" }
            guard let query = s.query, !query.recordType.isEmpty else { return "a query subscription needs query.recordType" }
            guard let firesOn = s.firesOn, !firesOn.isEmpty else { return "a query subscription needs firesOn: any of \"create\", \"update\", \"delete\"" }
            if let bad = firesOn.first(where: { ![FiresOn.create, .update, .delete].contains($0) }) {
                return "firesOn takes \"create\", \"update\" and \"delete\", not \"\(bad.rawValue)\""
            }
            if Set(firesOn).count < firesOn.count { return "firesOn names \"\(firesOn.first { f in firesOn.filter { $0 == f }.count > 1 }!.rawValue)\" twice" }
            // A twin would fail with INTERNAL_ERROR (`queryTwin`): said here, before it is sent.
            if let twin = s.queryTwin(among: context.others) {
                let fires = firesOn.map(\.rawValue).sorted().joined(separator: ", ")
                return "'\(twin.subscriptionID ?? "?")' already watches \(query.recordType) on \(fires): CloudKit keeps one query subscription per record type and firesOn set and refuses a twin (INTERNAL_ERROR); change firesOn, or edit '\(twin.subscriptionID ?? "?")'"
            }
            for (i, filter) in (query.filterBy ?? []).enumerated() where !Comparator.all.contains(filter.comparator) {
                return "filterBy[\(i)]: unknown comparator '\(filter.comparator.rawValue)' (one of \(Comparator.all.map(\.rawValue).joined(separator: ", ")))"
            }
            if let zone = s.zoneID, s.zoneWide != true, !context.zones.isEmpty, !context.zones.contains(zone.zoneName) {
                return "zone '\(zone.zoneName)' does not exist in the \(context.database.rawValue) database (zones: \(context.zones.joined(separator: ", ")))"
            }
            if let known = context.schema {
                guard let type = known.schema.recordType(query.recordType) else {
                    let types = known.schema.recordTypes.map(\.name).filter { $0 != "Users" }.sorted()
                    return "record type '\(query.recordType)' is not in the schema (\(types.joined(separator: ", ")))"
                }
                for (i, filter) in (query.filterBy ?? []).enumerated() {
                    guard let name = filter.fieldName else { continue }
                    if type.field(name) == nil {
                        return "filterBy[\(i)]: \(query.recordType) has no field '\(name)' (fields: \(type.fields.filter { !$0.isSystem }.map(\.name).joined(separator: ", ")))"
                    }
                }
                if known.indexesKnown, !(query.filterBy ?? []).isEmpty,
                    let violation = IndexRules.violation(of: Query(recordType: query.recordType, filterBy: query.filterBy), in: type) {
                    return "\(violation.reason): the subscription's filter needs that index in \(known.environment.rawValue) (schema \(known.source))"
                }
                if let mismatch = FilterTypes.problem(of: Query(recordType: query.recordType, filterBy: query.filterBy), in: type) {
                    return "\(mismatch) (schema \(known.source))"
                }
            }
        case .zone:
            if context.database == .public { return "the public database takes no zone subscriptions (a query subscription watches its records)" }
            guard let zone = s.zoneID else { return "a zone subscription needs zoneID: {\"zoneName\": …}" }
            if s.query != nil || s.firesOn != nil || s.firesOnce != nil { return "a zone subscription takes no query, firesOn or firesOnce (remove them)" }
            if !context.zones.isEmpty, !context.zones.contains(zone.zoneName) {
                return "zone '\(zone.zoneName)' does not exist in the \(context.database.rawValue) database (zones: \(context.zones.joined(separator: ", ")))"
            }
        case .database:
            if context.database == .public { return "the public database takes no database subscriptions" }
            if s.query != nil || s.firesOn != nil || s.firesOnce != nil || s.zoneID != nil { return "a database subscription takes no query, zoneID, firesOn or firesOnce (remove them)" }
        default:
            return "subscriptionType is \"query\", \"zone\" or \"database\", not \"\(s.subscriptionType.rawValue)\""
        }
        return nil
    }
}
