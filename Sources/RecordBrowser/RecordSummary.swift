import CloudKitModels
import TerminalUI

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
    /// Field columns; nil: the ones remembered for the record type, else the STRING field most of its
    /// records hold (`labelField`; the cache answers which, and the list keeps them).
    public var columns: [String]?
    /// Order the loaded rows by a field (nil: as fetched).
    public var sort: ListSort?
    /// Without chosen columns: each record type's label field (`labelField`), as found so far
    /// (type → field, "" for none), shown in one column.
    public var labels: [String: String] = [:]

    public init(columns: [String]? = nil, sort: ListSort? = nil) {
        self.columns = columns
        self.sort = sort
    }
}

extension ListView {
    /// The label column of one record type: the STRING field that most of `records` (their `fields`
    /// dictionaries) hold a non-empty value in; a tie goes to the field the server put first. Nil when
    /// no STRING field is held by at least half of them: a mostly blank column tells rows apart no
    /// better than the system columns shown instead.
    public static func labelField(among records: [JSONObject]) -> String? {
        var counts: [String: Int] = [:]
        var order: [String] = []
        for fields in records {
            for (name, value) in fields.pairs {
                guard case .object(let field) = value, case .string(let text)? = field["value"] else { continue }
                guard field["type"]?.stringValue == "STRING" || field["type"] == nil, !text.isEmpty else { continue }
                if counts[name] == nil { order.append(name) }
                counts[name, default: 0] += 1
            }
        }
        var best: String?
        for name in order where best == nil || counts[name]! > counts[best!]! { best = name }
        guard let best, counts[best]! * 2 >= records.count else { return nil }
        return best
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

extension RecordSummary {
    /// Cells of the widest record name, of each of `columns` column values and of the record type
    /// among live rows (tombstones show no values): [name, column…, type].
    public static func contentWidths(_ rows: [RecordSummary], columns: Int) -> [Int] {
        var widths = Array(repeating: 0, count: columns + 2)
        for row in rows where !row.deleted {
            widths[0] = max(widths[0], TextWidth.width(row.recordName))
            for i in 0..<min(columns, row.columns.count) { widths[1 + i] = max(widths[1 + i], TextWidth.width(row.columns[i])) }
            widths[columns + 1] = max(widths[columns + 1], row.recordType.map(TextWidth.width) ?? 4)
        }
        return widths
    }
}
