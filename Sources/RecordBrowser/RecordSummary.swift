import CloudKitModels

/// What a list row needs of a record; the full record stays in the cache.
public struct RecordSummary: Sendable, Hashable {
    public var recordName: String
    public var recordType: String?
    public var modified: Int64?
    public var modifiedBy: String?
    public var changeTag: String?
    public var deleted: Bool
    /// The values of the list's chosen field columns, as shown.
    public var columns: [String] = []

    public init(recordName: String, recordType: String?, modified: Int64?, modifiedBy: String?, changeTag: String?, deleted: Bool) {
        self.recordName = recordName
        self.recordType = recordType
        self.modified = modified
        self.modifiedBy = modifiedBy
        self.changeTag = changeTag
        self.deleted = deleted
    }

    public init(_ record: Record) {
        self.init(
            recordName: record.recordName, recordType: record.recordType, modified: record.modified?.timestamp,
            modifiedBy: record.modified?.userRecordName, changeTag: record.recordChangeTag, deleted: record.isDeleted)
    }
}

/// Identifies a list of records in the local cache: a zone's change feed, or the results of a query.
/// The cache file belongs to one account (server, container, environment, identity); inside it a list
/// is keyed by database, zone owner, zone and query.
public struct ListKey: Sendable, Hashable, CustomStringConvertible {
    public var zone: ZoneKey
    /// Empty for the change feed; the query's canonical JSON for query results.
    public var query: String

    public init(zone: ZoneKey, query: String = "") {
        self.zone = zone
        self.query = query
    }

    public var description: String { zone.description + "\u{1F}" + query }
}

/// What a records list shows besides its system columns, and how it is ordered.
public struct ListView: Sendable, Hashable {
    /// Field columns; nil: the ones remembered for the record type, else its first STRING field (the
    /// cache answers which, and the list keeps them).
    public var columns: [String]?
    /// Order the loaded rows by a field (nil: as fetched).
    public var sort: ListSort?
    /// Without chosen columns: each record type's first STRING field, as found so far (type → field),
    /// shown in one column.
    public var labels: [String: String] = [:]

    public init(columns: [String]? = nil, sort: ListSort? = nil) {
        self.columns = columns
        self.sort = sort
    }
}

public struct ListSort: Sendable, Hashable {
    public var field: String
    public var descending: Bool

    public init(field: String, descending: Bool) {
        self.field = field
        self.descending = descending
    }
}

