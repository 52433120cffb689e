import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CSQLite
import SQLiteDB

extension LocalCloudKit {
    /// records/query. Filters are ANDed; records lacking a filtered field do not match. Queries here are
    /// strongly consistent (the live service's index lag is not emulated). Filters and sorts need the
    /// indexes CloudKit needs (`IndexRules`); in the public database, records the caller may not READ
    /// are left out (§4.2: unconfirmed whether CloudKit filters or fails; the reference recommends filtering).
    func queryRecords(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> Reply {
        let request = try decodeBody(QueryRequest.self, body)
        let limit = try checkLimit(request.resultsLimit)
        let query = request.query.systemFieldsByName
        for filter in query.filterBy ?? [] where !Comparator.all.contains(filter.comparator) {
            throw ServiceError.badRequest("unknown comparator '\(filter.comparator.rawValue)'")
        }
        guard let type = try recordType(query.recordType, db, context) else { throw ServiceError.badRequest("Did not find record type: \(query.recordType)") }
        // System types (cloudkit.share) are the service's: their indexes are not the user's to set,
        // so they are not checked (unconfirmed what CloudKit requires there).
        if configuration.enforcesIndexes, !SchemaTables.isSystemType(type.name), let violation = IndexRules.violation(of: query, in: type) {
            throw ServiceError.badRequest(violation.reason)
        }
        // A value of another kind than its field (`n LESS_THAN "abc"` on an INT64) is a type mismatch:
        // compared as `FilterPredicate` orders kinds, it held for every record or for none.
        if let mismatch = FilterTypes.problem(of: query, in: type) { throw ServiceError.badRequest(mismatch) }
        let reading = try readAccess(type, db, context)

        // Each zone with the context it is read in (in the shared database, its owner's database).
        let zones: [(ZoneRow, RequestContext)]
        if request.zoneID == nil && request.zoneWide == true {
            if context.scope == .shared {
                zones = try sharedZones(db, context).map { try zoneAndContext(db, context, ZoneID(zoneName: $0.zone.name, ownerRecordName: $0.owner)) }
            } else {
                zones = try ZoneRow.all(db, context.dbID).map { ($0, context) }
            }
        } else {
            zones = [try zoneAndContext(db, context, request.zoneID)]
        }
        // The fields filters and sorts name (a candidate decodes only these).
        let named = Set((query.filterBy ?? []).filter { $0.systemFieldName == nil }.compactMap(\.fieldName)
            + (query.sortBy ?? []).filter { $0.systemFieldName == nil }.compactMap(\.fieldName))
        let queryHash = Self.pagingHash(query, zoneWide: request.zoneID == nil && request.zoneWide == true, in: context.dbID, zones: zones)
        let descriptors = query.sortBy ?? []
        var position: QueryPosition?
        if let marker = request.continuationMarker {
            guard let after = OpaqueToken.queryPosition(marker, queryHash: queryHash, keys: descriptors.count) else {
                throw ServiceError.badRequest("continuationMarker does not belong to this query")
            }
            position = after
        }
        let reshape = request.desiredKeys != nil || request.numbersAsStrings == true
        let shapes = zones.map { zone, context in
            RowShape(desiredKeys: request.desiredKeys, numbersAsStrings: request.numbersAsStrings ?? false, zoneID: context.zoneID(zone.name))
        }
        var writer = JSONWriter(capacity: (reshape ? 1024 : 1280) * limit + 128)
        writer.raw(#"{"records":["#)
        // Whether more are coming, and where the page ended.
        var more = false
        var last: QueryPosition?
        if configuration.usesQueryIndexes, zones.count == 1,
            let plan = try IndexedQuery.plan(query, spec: FieldIndex.Spec(type), db, dbID: zones[0].1.dbID, zone: zones[0].0.name)
        {
            // One zone, every filter and the sort answerable from the query index: SQLite walks the
            // records in order from where the last page ended (`IndexedQuery`).
            let (zone, zoneContext) = zones[0]
            let everyRow = plan.exact && (zoneContext.access?.isWholeZone ?? true) && reading == .all
            // On the event loop only what costs a page: each row SQLite gives is in the answer.
            if context.boundedOnly && !everyRow { throw NotBoundedWork() }
            (more, last) = try writeIndexedPage(
                plan, query: query, zone: zone, zoneContext, shape: shapes[0], named: named, reading: reading, everyRow: everyRow,
                after: position, limit: limit, db, into: &writer)
        } else {
            if context.boundedOnly { throw NotBoundedWork() }
            // Two steps, so a page costs a pass over light rows plus the page itself: first every
            // candidate with only what filters, sorts and access need (its system fields, and the
            // fields the query names, decoded from the stored text one by one); then the page's rows
            // whole, written as stored. A match is kept small (its row, zone, name and sort keys):
            // sorting moves it around.
            var matches: [QueryCandidate] = []
            for (zoneIndex, (zone, context)) in zones.enumerated() {
                let rows = try Row.fetchCursor(
                    db.cachedStatement(sql: named.isEmpty ? QueryCandidate.lightSQL : QueryCandidate.withFieldsSQL),
                    arguments: [context.dbID, zone.name, query.recordType])
                while let row = try rows.next() {
                    let record = try QueryCandidate.record(row, zone: zone.name, type: query.recordType, fields: named)
                    if let access = context.access, access.permission(record.name) == nil { continue }
                    if !reading.permits(record) { continue }
                    if try (query.filterBy ?? []).allSatisfy({ try QueryMatcher.matches(record, $0) }) {
                        matches.append(QueryCandidate(rowID: row[0], zone: zoneIndex, name: record.name, keys: descriptors.map { QueryMatcher.key(record, $0) }))
                    }
                }
            }
            let zoneNames = zones.map(\.0.name)
            QueryMatcher.sort(&matches, by: descriptors, zones: zoneNames)
            // The page starts after the position the last page ended at.
            let start = position.map { p in
                matches.firstIndex { QueryOrder.precedes((p.keys, p.name, p.zone), ($0.keys, $0.name, zoneNames[$0.zone]), by: descriptors) } ?? matches.count
            } ?? 0
            let page = Array(matches[start...].prefix(limit))
            more = start + page.count < matches.count
            try writeQueryPage(page, zones: zones, shapes: shapes, db, into: &writer)
            last = page.last.map { QueryPosition(keys: $0.keys, name: $0.name, zone: zoneNames[$0.zone]) }
        }
        writer.raw("]")
        if more, let last {
            writer.raw(#","continuationMarker":"#)
            writer.writeString(OpaqueToken.continuationMarker(after: last, queryHash: queryHash))
        }
        writer.raw("}")
        return .encoded(writer.bytes)
    }
}

extension LocalCloudKit {
    /// What ties a continuation marker to its query: what decides which records the query selects and
    /// in which order, with absent keys and their explicit defaults the same thing. CloudKit JS asks
    /// for page 2 with `"zoneID":{"zoneName":"_defaultZone"},"zoneWide":false,"numbersAsStrings":false`
    /// that page 1 did not send (reference §11.1). So: the zone as resolved (its database and name; a
    /// missing `zoneID` is the default zone, `ownerRecordName` absent is the caller), or `zoneWide` when
    /// it applies (no `zoneID`); `filterBy` and `sortBy` empty or absent alike, `ascending` absent is
    /// true. Left out because they change only the answer's shape, never its positions:
    /// `resultsLimit` (a client may change its page size between pages), `desiredKeys` and
    /// `numbersAsStrings`.
    static func pagingHash(_ query: Query, zoneWide: Bool, in dbID: Int64, zones: [(ZoneRow, RequestContext)]) -> String {
        var normalized = query
        if normalized.filterBy?.isEmpty == true { normalized.filterBy = nil }
        if var sorts = normalized.sortBy, !sorts.isEmpty {
            for i in sorts.indices { sorts[i].ascending = sorts[i].isAscending }
            normalized.sortBy = sorts
        } else {
            normalized.sortBy = nil
        }
        let scope = zoneWide ? "zoneWide \(dbID)" : zones.map { zone, context in "\(context.dbID)/\(zone.name)" }.joined(separator: ",")
        return OpaqueToken.hash(normalized.json.bytes + [0x1F] + Array(scope.utf8))
    }

    /// Writes a page of an indexed query (`IndexedQuery`) as SQLite steps its rows: each row is
    /// checked as the evaluator checks it (share access, READ grants, every filter on the fields the
    /// query names) unless `everyRow` says each row SQLite gives is in the answer. Answers whether more
    /// are coming, and the last one's position.
    func writeIndexedPage(
        _ plan: IndexedQuery, query: Query, zone: ZoneRow, _ context: RequestContext, shape: RowShape, named: Set<String>,
        reading: ReadAccess, everyRow: Bool, after position: QueryPosition?, limit: Int, _ db: Database, into writer: inout JSONWriter
    ) throws -> (Bool, QueryPosition?) {
        let descriptors = query.sortBy ?? []
        let filters = query.filterBy ?? []
        // Rows are decoded only where a check or a sort key needs it.
        let decodes = !everyRow || !filters.isEmpty || descriptors.contains { $0.fieldName != nil }
        // Every row SQLite gives is in the answer and nothing is checked: a row would be decoded for
        // its sort keys alone, which only the page's last row needs (its position, when more are
        // coming). Only the row that fills the page is decoded; the others are written as stored.
        let keysOfLastOnly = decodes && everyRow && filters.isEmpty
        // Nothing decoded or reshaped: SQLite is asked only for what `writeLeanRow` reads.
        let lean = !decodes && !shape.reshapes
        var written = 0
        var last: QueryPosition?
        for part in plan.statements(dbID: context.dbID, zone: zone.name, type: query.recordType, after: position, lean: lean) {
            // Without filters the statements are few and reused (cached, cut by LIMIT); with them
            // the text varies with the request, so it is prepared for this request only.
            let statement: Statement
            var arguments = part.arguments
            if plan.conditions.isEmpty && everyRow {
                statement = try db.cachedStatement(sql: part.sql + " LIMIT ?")
                arguments.append((limit + 1 - written).databaseValue)
            } else {
                statement = try db.makeStatement(sql: part.sql)
            }
            let rows = try Row.fetchCursor(statement, arguments: StatementArguments(arguments))
            while let row = try rows.next() {
                // Only the row that fills the page has its position taken (the continuation marker,
                // written when more are coming): the other rows' sort keys and names are not read.
                let fills = written == limit - 1
                var keys: [FilterPredicate.Scalar?] = []
                if lean {
                    if fills {
                        keys = descriptors.map { descriptor in
                            let column = descriptor.systemFieldName == .modifiedTimestamp ? IndexedQuery.LeanColumn.modified : IndexedQuery.LeanColumn.created
                            return StatementRow(statement: statement.sqliteStatement).integer(column).map { .number(Double($0)) }
                        }
                    }
                    if written == limit { return (true, last) }
                    if written > 0 { writer.raw(",") }
                    try writeLeanRow(statement.sqliteStatement, zone: zone, db, context, shape: shape, into: &writer)
                    written += 1
                    if fills {
                        let name = RowJSON.text(statement.sqliteStatement, IndexedQuery.LeanColumn.name).map { String(decoding: $0, as: UTF8.self) } ?? ""
                        last = QueryPosition(keys: keys, name: name, zone: zone.name)
                    }
                    continue
                }
                if keysOfLastOnly && !fills {
                    // Not the page's last row: nothing is checked, and its keys are not needed.
                } else if decodes {
                    var record = try StoredRecord(row: row, parsingFields: false)
                    record.fields = try FieldIndex.decodeFields(record.storedFieldsText, named)
                    if let access = context.access, access.permission(record.name) == nil { continue }
                    if !reading.permits(record) { continue }
                    if try !filters.allSatisfy({ try QueryMatcher.matches(record, $0) }) { continue }
                    if fills { keys = descriptors.map { QueryMatcher.key(record, $0) } }
                } else if fills {
                    keys = descriptors.map { descriptor in
                        let ts: Int64? = descriptor.systemFieldName == .modifiedTimestamp ? row[8] : row[5]
                        return ts.map { .number(Double($0)) }
                    }
                }
                if written == limit {
                    return (true, last)
                }
                if written > 0 { writer.raw(",") }
                try writeRow(row, statement.sqliteStatement, db, context, shape: shape, into: &writer)
                written += 1
                if fills { last = QueryPosition(keys: keys, name: row[1], zone: zone.name) }
            }
        }
        return (false, last)
    }

    /// Writes the record of a row read with `IndexedQuery.leanSelect`: its rendering, as `writeRow`
    /// writes it; a share record or a row without a rendering is read again whole, by its key, and
    /// written by `writeRow`.
    private func writeLeanRow(
        _ statement: SQLiteStatement, zone: ZoneRow, _ db: Database, _ context: RequestContext, shape: RowShape, into writer: inout JSONWriter
    ) throws {
        let name = { RowJSON.text(statement, IndexedQuery.LeanColumn.name).map { String(decoding: $0, as: UTF8.self) } ?? "" }
        if sqlite3_column_int64(statement, IndexedQuery.LeanColumn.deleted) == 0,
            !RowJSON.typeIs(statement, Self.shareRecordTypeText, column: IndexedQuery.LeanColumn.type),
            let wire = RecordWire.bytes(statement, column: IndexedQuery.LeanColumn.wire)
        {
            let hasAssets = sqlite3_column_int64(statement, IndexedQuery.LeanColumn.hasAssets) != 0
            return try writeRendering(wire, hasAssets: hasAssets, record: name(), zone: zone.name, db, context, zoneID: shape.zoneIDBytes, into: &writer)
        }
        try writeWholeRecord(named: name(), zone: zone.name, db, context, shape: shape, into: &writer)
    }

    /// Writes the records of a query's page, in the page's order, from one read of their rows (by
    /// row id).
    func writeQueryPage(_ page: [QueryCandidate], zones: [(ZoneRow, RequestContext)], shapes: [RowShape], _ db: Database, into writer: inout JSONWriter) throws {
        guard !page.isEmpty else { return }
        let zoneOf = Dictionary(page.map { ($0.rowID, $0.zone) }, uniquingKeysWith: { first, _ in first })
        let statement = try db.cachedStatement(
            sql: "SELECT \(StoredRecord.columns), rowid FROM record WHERE rowid IN (\(Array(repeating: "?", count: page.count).joined(separator: ",")))")
        let rows = try Row.fetchCursor(statement, arguments: StatementArguments(page.map(\.rowID)))
        // Rows come in the table's order: each is written aside, then copied in the page's.
        var scratch = JSONWriter(capacity: writer.bytes.capacity)
        var written: [Int64: Range<Int>] = [:]
        while let row = try rows.next() {
            let rowID: Int64 = row[18]
            guard let zone = zoneOf[rowID] else { continue }
            let start = scratch.bytes.count
            try writeRow(row, statement.sqliteStatement, db, zones[zone].1, shape: shapes[zone], into: &scratch)
            written[rowID] = start..<scratch.bytes.count
        }
        var count = 0
        for candidate in page {
            guard let range = written[candidate.rowID] else { continue }
            if count > 0 { writer.raw(",") }
            writer.raw(scratch.bytes[range])
            count += 1
        }
    }
}

/// What identifies a record type's schema: its container, environment and name.
struct TypeKey: Hashable, Sendable {
    var container: String
    var environment: CloudKitEnvironment
    var name: String
}

/// A record a query answers: its row, its zone (an index into the query's zones), its name and its
/// sort keys. `record(_:…)` reads a candidate row into a `StoredRecord` with its system fields and
/// only the fields the query names, for filters and sort keys.
struct QueryCandidate {
    var rowID: Int64
    var zone: Int
    var name: String
    var keys: [QueryMatcher.Scalar?]

    static let lightSQL = """
        SELECT rowid, name, created_ts, created_user, modified_ts, modified_user, parent, share FROM record
        WHERE db = ? AND zone = ? AND type = ? AND deleted = 0
        """
    static let withFieldsSQL = """
        SELECT rowid, name, created_ts, created_user, modified_ts, modified_user, parent, share, fields FROM record
        WHERE db = ? AND zone = ? AND type = ? AND deleted = 0
        """

    static func record(_ row: Row, zone: String, type: String, fields names: Set<String>) throws -> StoredRecord {
        var record = StoredRecord(zone: zone, name: row[1], type: type)
        if let ts: Int64 = row[2] { record.created = RecordStamp(timestamp: ts, userRecordName: row[3], deviceID: nil) }
        if let ts: Int64 = row[4] { record.modified = RecordStamp(timestamp: ts, userRecordName: row[5], deviceID: nil) }
        record.parent = row[6]
        record.share = row[7]
        guard !names.isEmpty, let text: String = row[8] else { return record }
        // Only the named fields are decoded; text this server did not write is decoded whole.
        guard let entries = FieldsText.entries(of: Array(text.utf8)) else {
            record.fields = try Record.decodeStoredFields(text).filter { names.contains($0.key) }
            return record
        }
        for name in names {
            guard let bytes = entries[name] else { continue }
            record.fields[name] = try Record.decodeFields(JSON(parsing: Array(#"{"x":"#.utf8) + bytes + [UInt8(ascii: "}")])).0["x"]
        }
        return record
    }
}

extension LocalCloudKit {
    /// The schema of the record type `name` in the request's container and environment, kept per
    /// change stamp (nil: no such type).
    func recordType(_ name: String, _ db: Database, _ context: RequestContext) throws -> RecordTypeSchema? {
        // Kept while the schema tables are unchanged: in a write too, and across writes of data.
        try typeSchemas.value(at: try SchemaTables.version(db), TypeKey(container: context.container, environment: context.environment, name: name)) {
            try SchemaTables.type(db, container: context.container, environment: context.environment, name: name)
        }
    }

    /// What of `type` the caller may READ: everything outside the public database; there, what the
    /// type's grants allow the caller's roles (`_creator`: the records the caller created).
    func readAccess(_ type: RecordTypeSchema, _ db: Database, _ context: RequestContext) throws -> ReadAccess {
        guard context.scope == .public, !SchemaTables.isSystemType(type.name) else { return .all }
        let roles = try SchemaTables.roles(db, container: context.container, environment: context.environment, user: context.caller.actingRecordName)
        if type.permits(.read, roles: roles) { return .all }
        guard let caller = context.caller.actingRecordName, type.permits(.read, roles: roles.union(["_creator"])) else { return .none }
        return .createdBy(caller)
    }
}

extension LocalCloudKit {
    /// Whether the caller may READ one record: through a share, the share must reach it; in the
    /// public database, its type's grants must allow the caller (as records/lookup decides).
    func mayRead(_ record: StoredRecord, _ db: Database, _ context: RequestContext) throws -> Bool {
        if let access = context.access, access.permission(record.name) == nil { return false }
        guard context.scope == .public, let typeName = record.type else { return true }
        let type = try recordType(typeName, db, context) ?? RecordTypeSchema(name: typeName, grants: RecordTypeSchema.defaultGrants)
        return try readAccess(type, db, context).permits(record)
    }
}

/// Which records of a type a caller may READ (`LocalCloudKit.readAccess`).
enum ReadAccess: Equatable {
    case all
    case createdBy(String)
    case none

    func permits(_ record: StoredRecord) -> Bool {
        switch self {
        case .all: return true
        case .createdBy(let caller): return record.created?.userRecordName == caller
        case .none: return false
        }
    }
}

/// Evaluates filters and sorts over stored records.
enum QueryMatcher {
    /// A comparable view of a scalar value (the shared evaluator's).
    typealias Scalar = FilterPredicate.Scalar

    static func scalar(_ value: FieldValue) -> Scalar? { FilterPredicate.scalar(value) }

    /// The record's value for a filter or sort: a field, or a system field.
    static func value(of record: StoredRecord, field: String?, system: SystemFieldName?) -> FieldValue? {
        if let system {
            switch system {
            case .recordName: return .reference(Reference(recordName: record.name, action: nil))
            case .createdTimestamp: return record.created.map { .timestamp($0.timestamp) }
            case .modifiedTimestamp: return record.modified.map { .timestamp($0.timestamp) }
            case .createdUserRecordName: return record.created?.userRecordName.map { .reference(Reference(recordName: $0, action: nil)) }
            case .modifiedUserRecordName: return record.modified?.userRecordName.map { .reference(Reference(recordName: $0, action: nil)) }
            case .parent: return record.parent.map { .reference(Reference(recordName: $0, action: nil)) }
            case .share: return record.share.map { .reference(Reference(recordName: $0, action: nil)) }
            default: return nil
            }
        }
        return field.flatMap { record.fields[$0] }
    }

    /// A filter on a stored record, by the one evaluator the browser uses too (`FilterPredicate`).
    static func matches(_ record: StoredRecord, _ filter: Filter) throws -> Bool {
        do {
            return try FilterPredicate.matches(filter, value: value(of: record, field: filter.fieldName, system: filter.systemFieldName))
        } catch {
            throw ServiceError.badRequest(error.reason)
        }
    }

    /// Sorts candidates by their precomputed keys in descriptor order (missing values last; LOCATION
    /// with `relativeLocation` by distance, see `key`), ties by record name, then zone (`QueryOrder`).
    static func sort(_ items: inout [QueryCandidate], by descriptors: [SortDescriptor], zones: [String]) {
        items.sort { a, b in QueryOrder.precedes((a.keys, a.name, zones[a.zone]), (b.keys, b.name, zones[b.zone]), by: descriptors) }
    }

    static func key(_ record: StoredRecord, _ descriptor: SortDescriptor) -> Scalar? {
        guard let value = value(of: record, field: descriptor.fieldName, system: descriptor.systemFieldName) else { return nil }
        if case .location(let location) = value {
            guard let origin = descriptor.relativeLocation else { return nil }
            return .number(location.distance(to: origin))
        }
        return scalar(value)
    }
}
