/// A filter comparator. All 21 spellings of the reference are constants; unknown ones still decode.
public struct Comparator: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let equals: Self = "EQUALS"
    public static let notEquals: Self = "NOT_EQUALS"
    public static let lessThan: Self = "LESS_THAN"
    public static let lessThanOrEquals: Self = "LESS_THAN_OR_EQUALS"
    public static let greaterThan: Self = "GREATER_THAN"
    public static let greaterThanOrEquals: Self = "GREATER_THAN_OR_EQUALS"
    public static let near: Self = "NEAR"
    public static let containsAllTokens: Self = "CONTAINS_ALL_TOKENS"
    public static let containsAnyTokens: Self = "CONTAINS_ANY_TOKENS"
    public static let `in`: Self = "IN"
    public static let notIn: Self = "NOT_IN"
    public static let beginsWith: Self = "BEGINS_WITH"
    public static let notBeginsWith: Self = "NOT_BEGINS_WITH"
    public static let listContains: Self = "LIST_CONTAINS"
    public static let notListContains: Self = "NOT_LIST_CONTAINS"
    public static let listContainsAny: Self = "LIST_CONTAINS_ANY"
    public static let notListContainsAny: Self = "NOT_LIST_CONTAINS_ANY"
    public static let listContainsAll: Self = "LIST_CONTAINS_ALL"
    public static let notListContainsAll: Self = "NOT_LIST_CONTAINS_ALL"
    public static let listMemberBeginsWith: Self = "LIST_MEMBER_BEGINS_WITH"
    public static let notListMemberBeginsWith: Self = "NOT_LIST_MEMBER_BEGINS_WITH"

    public static let all: [Comparator] = [
        .equals, .notEquals, .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals, .near,
        .containsAllTokens, .containsAnyTokens, .in, .notIn, .beginsWith, .notBeginsWith, .listContains,
        .notListContains, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll,
        .listMemberBeginsWith, .notListMemberBeginsWith,
    ]

    /// The comparators whose `fieldValue` is a list (`type` must be a `*_LIST` tag).
    public var takesListValue: Bool {
        [.in, .notIn, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll].contains(self)
    }
}

/// A system field usable in filters and sorts via `systemFieldName`.
public struct SystemFieldName: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let recordName: Self = "recordName"
    public static let share: Self = "share"
    public static let parent: Self = "parent"
    public static let createdUserRecordName: Self = "createdUserRecordName"
    public static let createdTimestamp: Self = "createdTimestamp"
    public static let modifiedTimestamp: Self = "modifiedTimestamp"
    public static let modifiedUserRecordName: Self = "modifiedUserRecordName"

    public static let all: [SystemFieldName] = [
        .recordName, .share, .parent, .createdUserRecordName, .createdTimestamp, .modifiedTimestamp,
        .modifiedUserRecordName,
    ]

    /// The system field `name` names: its `systemFieldName` (`recordName`) or its schema name
    /// (`___recordID`, as the index check and CloudKit JS apps spell it).
    public init?(named name: String) {
        guard let found = Self.all.first(where: { $0.rawValue == name || $0.indexName == name }) else { return nil }
        self = found
    }

    /// The index/schema name (`___recordID`, `___createTime`, …).
    public var indexName: String {
        switch self {
        case .recordName: return "___recordID"
        case .share: return "___share"
        case .parent: return "___parent"
        case .createdUserRecordName: return "___createdBy"
        case .createdTimestamp: return "___createTime"
        case .modifiedTimestamp: return "___modTime"
        case .modifiedUserRecordName: return "___modifiedBy"
        default: return rawValue
        }
    }
}

/// Filter dictionary.
public struct Filter: JSONConvertible, Hashable {
    public var comparator: Comparator
    public var fieldName: String?
    public var systemFieldName: SystemFieldName?
    public var fieldValue: FieldValue
    /// Metres; only for NEAR on a LOCATION field.
    public var distance: Double?

    public init(_ fieldName: String, _ comparator: Comparator, _ value: FieldValue, distance: Double? = nil) {
        self.comparator = comparator
        self.fieldName = fieldName
        self.fieldValue = value
        self.distance = distance
    }

    public init(system: SystemFieldName, _ comparator: Comparator, _ value: FieldValue) {
        self.comparator = comparator
        self.systemFieldName = system
        self.fieldValue = value
    }

    public init(json: JSON) throws {
        let object = try json.object()
        comparator = try at("comparator") { try Comparator(json: try object.required("comparator")) }
        fieldName = try object.string("fieldName")
        systemFieldName = try object.decode("systemFieldName")
        fieldValue = try at("fieldValue") { try FieldValue(json: try object.required("fieldValue")) }
        distance = try object.double("distance")
        if fieldName == nil && systemFieldName == nil {
            throw JSONDecodingError(message: "a filter needs 'fieldName' or 'systemFieldName'")
        }
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("comparator", comparator)
        object.set("fieldName", fieldName)
        object.set("systemFieldName", systemFieldName)
        object.set("fieldValue", fieldValue.json)
        object.set("distance", distance)
        return .object(object)
    }
}

/// Sort descriptor dictionary.
public struct SortDescriptor: JSONConvertible, Hashable {
    public var fieldName: String?
    public var systemFieldName: SystemFieldName?
    /// Default true.
    public var ascending: Bool?
    /// Sort by distance from this LOCATION (LOCATION fields only).
    public var relativeLocation: Location?

    public init(_ fieldName: String, ascending: Bool = true, relativeLocation: Location? = nil) {
        self.fieldName = fieldName
        self.ascending = ascending
        self.relativeLocation = relativeLocation
    }

    public init(system: SystemFieldName, ascending: Bool = true) {
        self.systemFieldName = system
        self.ascending = ascending
    }

    public var isAscending: Bool { ascending ?? true }

    public init(json: JSON) throws {
        let object = try json.object()
        fieldName = try object.string("fieldName")
        systemFieldName = try object.decode("systemFieldName")
        ascending = try object.bool("ascending")
        relativeLocation = try object.value("relativeLocation").map { value in
            try at("relativeLocation") {
                // A LOCATION field dictionary; tolerate a bare location too.
                if case .location(let location) = try FieldValue(json: value) { return location }
                throw JSONDecodingError(message: "expected a LOCATION field dictionary")
            }
        }
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("fieldName", fieldName)
        object.set("systemFieldName", systemFieldName)
        object.set("ascending", ascending)
        object.set("relativeLocation", relativeLocation.map { FieldValue.location($0).json })
        return .object(object)
    }
}

/// Query dictionary.
public struct Query: JSONConvertible, Hashable {
    public var recordType: String
    /// ANDed together (there is no OR construct).
    public var filterBy: [Filter]?
    public var sortBy: [SortDescriptor]?

    public init(recordType: String, filterBy: [Filter]? = nil, sortBy: [SortDescriptor]? = nil) {
        self.recordType = recordType
        self.filterBy = filterBy
        self.sortBy = sortBy
    }

    /// The query with each filter and sort that names a system field by its schema name (`fieldName:
    /// "___recordID"`, which the index check accepts and CloudKit JS apps write) naming it by
    /// `systemFieldName`, the one form queries and subscriptions are run in. Such a filter passed the
    /// index check and then matched nothing: its field was looked for among the record's own.
    /// A query without such a name (nearly every one: subscriptions are evaluated on every write) is
    /// returned as it is, nothing copied.
    public var systemFieldsByName: Query {
        let filters = filterBy ?? [], sorts = sortBy ?? []
        guard filters.contains(where: { Self.schemaNamed($0.fieldName, $0.systemFieldName) != nil })
            || sorts.contains(where: { Self.schemaNamed($0.fieldName, $0.systemFieldName) != nil })
        else { return self }
        var query = self
        query.filterBy = filterBy?.map { filter in
            var named = filter
            if let system = Self.schemaNamed(filter.fieldName, filter.systemFieldName) { (named.fieldName, named.systemFieldName) = (nil, system) }
            return named
        }
        query.sortBy = sortBy?.map { sort in
            var named = sort
            if let system = Self.schemaNamed(sort.fieldName, sort.systemFieldName) { (named.fieldName, named.systemFieldName) = (nil, system) }
            return named
        }
        return query
    }

    /// The system field a filter's or sort's `fieldName` names by its schema name, if it does.
    private static func schemaNamed(_ fieldName: String?, _ system: SystemFieldName?) -> SystemFieldName? {
        guard system == nil, let name = fieldName, name.hasPrefix("___") else { return nil }
        return SystemFieldName(named: name)
    }

    public init(json: JSON) throws {
        let object = try json.object()
        recordType = try at("recordType") { try object.required("recordType").string() }
        filterBy = try object.decodeArray("filterBy")
        sortBy = try object.decodeArray("sortBy")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("recordType", recordType)
        object.set("filterBy", filterBy)
        object.set("sortBy", sortBy)
        return .object(object)
    }
}
