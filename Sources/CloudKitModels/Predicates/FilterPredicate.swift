/// CloudKit's predicates, evaluated once for everyone: the local server's queries and subscriptions
/// (`QueryMatcher`, `LocalCloudKit.fires`) and the browser's "what will fire" read this one
/// implementation, so they cannot disagree (issue 31).
///
/// Filters are ANDed, as `records/query` evaluates them. Choices where the reference is silent (see
/// SERVER.md): a filter on a field the record lacks does not match (also for the `NOT_*`
/// comparators); `BEGINS_WITH` is case-sensitive; `CONTAINS_*_TOKENS` lower-cases and splits on
/// anything not a letter or digit; numbers compare with numbers, text with text; REFERENCE values
/// compare by record name.
public enum FilterPredicate {
    /// A comparator that cannot apply to the value it was given (`BEGINS_WITH` on a number): the
    /// server answers BAD_REQUEST with `reason`.
    public struct Refusal: Error, Sendable, Hashable {
        public var reason: String
    }

    /// A comparable view of a scalar value.
    public enum Scalar: Comparable, Sendable, Hashable {
        case number(Double)
        case text(String)

        public static func < (a: Scalar, b: Scalar) -> Bool {
            switch (a, b) {
            case (.number(let x), .number(let y)): return x < y
            case (.text(let x), .text(let y)): return x < y
            case (.number, .text): return true
            case (.text, .number): return false
            }
        }
    }

    public static func scalar(_ value: FieldValue) -> Scalar? {
        switch value {
        case .string(let s): return .text(s)
        case .int64(let i), .timestamp(let i): return .number(Double(i))
        case .double(let d): return .number(d)
        case .reference(let r): return .text(r.recordName)
        default: return nil
        }
    }

    /// The words `CONTAINS_*_TOKENS` compares.
    public static func tokens(_ s: String) -> Set<String> {
        if let tokens = asciiTokens(s) { return tokens }
        return Set(s.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init))
    }

    /// `tokens` of ASCII text, from its bytes: in ASCII the letters are A–Z and a–z, the numbers 0–9,
    /// and lowercasing maps A–Z alone (Character's properties cost a SEARCHABLE field's index ~9 k
    /// instructions a short title). Nil for text with any other byte.
    static func asciiTokens(_ s: String) -> Set<String>? {
        var tokens = Set<String>()
        var token: [UInt8] = []
        func end() {
            if !token.isEmpty { tokens.insert(String(decoding: token, as: UTF8.self)) }
            token.removeAll(keepingCapacity: true)
        }
        for byte in s.utf8 {
            switch byte {
            case 0x80...: return nil
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): token.append(byte | 0x20)
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): token.append(byte)
            default: end()
            }
        }
        end()
        return tokens
    }

    /// Whether `value` (the record's value of the filter's field; nil: the record lacks it) passes.
    public static func matches(_ filter: Filter, value: FieldValue?) throws(Refusal) -> Bool {
        guard let value else { return false }
        let given = filter.fieldValue
        let name = filter.comparator.rawValue
        switch filter.comparator {
        case .equals, .notEquals, .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals:
            guard let a = scalar(value), let b = scalar(given) else {
                if filter.comparator == .equals { return value == given }
                if filter.comparator == .notEquals { return value != given }
                throw Refusal(reason: "\(name) cannot compare a \(value.type.rawValue) field")
            }
            switch filter.comparator {
            case .equals: return a == b
            case .notEquals: return a != b
            case .lessThan: return a < b
            case .lessThanOrEquals: return a <= b
            case .greaterThan: return a > b
            default: return a >= b
            }
        case .beginsWith, .notBeginsWith:
            guard case .string(let s) = value, case .string(let prefix) = given else { throw Refusal(reason: "\(name) applies to STRING fields") }
            return s.hasPrefix(prefix) == (filter.comparator == .beginsWith)
        case .containsAllTokens, .containsAnyTokens:
            guard case .string(let s) = value, case .string(let wanted) = given else { throw Refusal(reason: "\(name) applies to STRING fields") }
            let have = tokens(s), want = tokens(wanted)
            return filter.comparator == .containsAllTokens ? want.isSubset(of: have) : !want.isDisjoint(with: have)
        case .in, .notIn:
            let list = given.listElements.compactMap(scalar)
            guard given.isList, let a = scalar(value) else { throw Refusal(reason: "\(name) needs a list value (type *_LIST)") }
            return list.contains(a) == (filter.comparator == .in)
        case .listContains, .notListContains:
            guard value.isList, let b = scalar(given) else { throw Refusal(reason: "\(name) applies to list fields with a scalar value") }
            return value.listElements.compactMap(scalar).contains(b) == (filter.comparator == .listContains)
        case .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll:
            guard value.isList, given.isList else { throw Refusal(reason: "\(name) applies to list fields with a list value") }
            let have = value.listElements.compactMap(scalar), want = given.listElements.compactMap(scalar)
            switch filter.comparator {
            case .listContainsAny: return want.contains(where: have.contains)
            case .notListContainsAny: return !want.contains(where: have.contains)
            case .listContainsAll: return want.allSatisfy(have.contains)
            default: return !want.allSatisfy(have.contains)
            }
        case .listMemberBeginsWith, .notListMemberBeginsWith:
            guard case .stringList(let list) = value, case .string(let prefix) = given else { throw Refusal(reason: "\(name) applies to STRING_LIST fields") }
            return list.contains { $0.hasPrefix(prefix) } == (filter.comparator == .listMemberBeginsWith)
        case .near:
            guard case .location(let here) = value, case .location(let center) = given, let distance = filter.distance else {
                throw Refusal(reason: "NEAR needs a LOCATION field, a LOCATION value and a distance")
            }
            return here.distance(to: center) <= distance
        default:
            throw Refusal(reason: "unknown comparator '\(name)'")
        }
    }

    // MARK: - Subscriptions

    /// A record as a subscription sees it, before or after a change.
    public struct RecordState: Sendable {
        public var recordType: String?
        /// The zone's name.
        public var zone: String
        /// A filter's value: a field, or a system field (`recordName`, `createdTimestamp`, …).
        public var value: @Sendable (_ field: String?, _ system: SystemFieldName?) -> FieldValue?

        public init(recordType: String?, zone: String, value: @escaping @Sendable (String?, SystemFieldName?) -> FieldValue?) {
            self.recordType = recordType
            self.zone = zone
            self.value = value
        }

        /// A wire record (what the browser holds).
        public init(_ record: Record, zone: String) {
            let fields = record.fields
            let name = record.recordName ?? ""
            let created = record.created, modified = record.modified
            let parent = record.parent?.recordName, share = record.share?.recordName
            self.init(recordType: record.recordType, zone: zone) { field, system in
                if let system {
                    func ref(_ n: String?) -> FieldValue? { n.map { .reference(Reference(recordName: $0, action: nil)) } }
                    switch system {
                    case .recordName: return ref(name)
                    case .createdTimestamp: return created.map { .timestamp($0.timestamp) }
                    case .modifiedTimestamp: return modified.map { .timestamp($0.timestamp) }
                    case .createdUserRecordName: return ref(created?.userRecordName)
                    case .modifiedUserRecordName: return ref(modified?.userRecordName)
                    case .parent: return ref(parent)
                    case .share: return ref(share)
                    default: return nil
                    }
                }
                return field.flatMap { fields[$0] }
            }
        }

        /// Whether every filter passes (a refused filter does not).
        public func passes(_ filters: [Filter]) -> Bool { firstFailing(filters) == nil }

        /// The first filter that does not pass, with why (nil: all pass).
        public func firstFailing(_ filters: [Filter]) -> (filter: Filter, reason: String)? {
            for filter in filters {
                do {
                    if try !FilterPredicate.matches(filter, value: value(filter.fieldName, filter.systemFieldName)) {
                        let field = filter.fieldName ?? filter.systemFieldName?.rawValue ?? "?"
                        let have = value(filter.fieldName, filter.systemFieldName)
                        return (filter, have == nil ? "the record has no \(field)" : "\(field) \(filter.comparator.rawValue) does not hold")
                    }
                } catch {
                    return (filter, error.reason)
                }
            }
            return nil
        }
    }

    /// What happened to a record.
    public enum Change: String, Sendable, Hashable {
        case created, updated, deleted
    }

    /// Whether a subscription fires for a change, as the local server fires it (cloudkit-notifications.md):
    /// query subscriptions by type, zone (`zoneWide`), `firesOn` and filters (a create or update fires
    /// when the record matches after it, a delete when it matched before; `beforeOrAfter` lets an
    /// update out of the predicate fire too); zone subscriptions on any change in their zone; database
    /// subscriptions on any change in a custom zone.
    public enum Verdict: Sendable, Hashable {
        case fires
        /// Why not, in words ("firesOn has no update", "year LESS_THAN does not hold").
        case doesNotFire(String)

        public var fires: Bool { self == .fires }
    }

    public static func evaluate(
        _ subscription: Subscription, _ change: Change, before: RecordState?, after: RecordState?, beforeOrAfter: Bool = false
    ) -> Verdict {
        guard let record = after ?? before else { return .doesNotFire("no record") }
        switch subscription.subscriptionType {
        case .query:
            guard let query = subscription.query else { return .doesNotFire("the subscription has no query") }
            guard record.recordType == query.recordType else { return .doesNotFire("it watches \(query.recordType), not \(record.recordType ?? "?")") }
            if let zoneID = subscription.zoneID {
                guard zoneID.zoneName == record.zone else { return .doesNotFire("it watches zone \(zoneID.zoneName)") }
            } else if subscription.zoneWide == false {
                guard record.zone == ZoneID.defaultZoneName else { return .doesNotFire("it watches the default zone only (zoneWide false)") }
            }
            let firesOn = Set((subscription.firesOn ?? []).map(\.rawValue))
            let wanted: String = change == .created ? "create" : change == .updated ? "update" : "delete"
            guard firesOn.contains(wanted) else { return .doesNotFire("firesOn has no \(wanted)") }
            let filters = query.systemFieldsByName.filterBy ?? []
            switch change {
            case .created, .updated:
                if let after, let failing = after.firstFailing(filters) {
                    if change == .updated, beforeOrAfter, let before, before.passes(filters) { return .fires }
                    return .doesNotFire(failing.reason)
                }
                return after == nil ? .doesNotFire("no record after the change") : .fires
            case .deleted:
                guard let before else { return .doesNotFire("no record before the delete") }
                if let failing = before.firstFailing(filters) { return .doesNotFire(failing.reason) }
                return .fires
            }
        case .zone:
            return subscription.zoneID?.zoneName == record.zone ? .fires : .doesNotFire("it watches zone \(subscription.zoneID?.zoneName ?? "?")")
        case .database:
            return record.zone != ZoneID.defaultZoneName ? .fires : .doesNotFire("database subscriptions ignore the default zone")
        default:
            return .doesNotFire("unknown subscription type \(subscription.subscriptionType.rawValue)")
        }
    }
}
