import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SQLiteDB

/// Where a query's page ended: the last record's sort keys, name and zone. The next page starts
/// after it in the query's order (keyset paging), so a continuation page costs what the first one
/// costs, and records written between pages neither shift nor repeat the ones that follow.
struct QueryPosition: Equatable {
    var keys: [FilterPredicate.Scalar?]
    var name: String
    var zone: String
}

/// A query's order, the one both ways of answering a query follow: the sort keys by descriptor
/// (a record without a key comes after those with one, in either direction), then the record name
/// by code points (SQLite's order), then the zone's name (zone-wide queries).
enum QueryOrder {
    static func precedes(
        _ a: (keys: [FilterPredicate.Scalar?], name: String, zone: String),
        _ b: (keys: [FilterPredicate.Scalar?], name: String, zone: String),
        by descriptors: [SortDescriptor]
    ) -> Bool {
        for (i, descriptor) in descriptors.enumerated() where i < a.keys.count && i < b.keys.count {
            let va = a.keys[i], vb = b.keys[i]
            if va == vb { continue }
            guard let va else { return false }
            guard let vb else { return true }
            return descriptor.isAscending ? va < vb : va > vb
        }
        if a.name != b.name { return a.name.utf8.lexicographicallyPrecedes(b.name.utf8) }
        return a.zone.utf8.lexicographicallyPrecedes(b.zone.utf8)
    }
}

/// SQL text with its arguments.
struct SQLPart {
    var sql: String
    var arguments: [DatabaseValue] = []

    static func + (a: SQLPart, b: SQLPart) -> SQLPart { SQLPart(sql: a.sql + b.sql, arguments: a.arguments + b.arguments) }
}

/// A records/query in one zone answered from the query index (`FieldIndex`, issue 33): SQLite walks
/// the records in the query's order from where the last page ended, each filter a condition on the
/// record's index rows, and the Swift evaluator (`FilterPredicate`) checks every row SQLite gives, so
/// where SQL only narrows (prefixes, NEAR's bounding box) the answer is still the evaluator's. The
/// work is the page's, not the type's, except where SQLite cannot walk the order and filter at once:
/// see `source`.
///
/// `plan` answers nil when some part cannot be answered from the index (a filter the evaluator would
/// refuse for some values, a field without index, several sort descriptors, a sort by distance or by
/// a field that is not a scalar): the caller then reads every candidate, as before.
struct IndexedQuery {
    /// Where the rows come from, in the query's order.
    enum Source {
        /// The type's records by name (`record_type_name`).
        case names
        /// Index rows of one field equal to one value: in name order.
        case equal(field: String, kind: FieldIndex.Kind, value: DatabaseValue)
        /// Index rows of one field's values in a range, few enough (`smallRange`) to be put in name order.
        case range(field: String, condition: SQLPart)
        /// A record time (`created_ts`, `modified_ts`), by the `record_type_created|modified` indexes.
        case time(column: String, ascending: Bool)
        /// A field's values in order (NULL rows: records lacking it, last), within `bounds`.
        case field(field: String, ascending: Bool, bounds: [SQLPart], missing: Bool)
    }

    var source: Source
    /// One condition per filter, on the record `r`.
    var conditions: [SQLPart]
    /// Every condition is exactly its filter: each row SQLite gives is in the answer (when the caller
    /// may read it), so the page costs the page.
    var exact: Bool

    /// A range source is used when it holds at most this many rows: sorting them by name costs less
    /// than walking the type by name and testing each record (which then finds at least one match in
    /// every N / smallRange records).
    static let smallRange = 2_000

    // MARK: Planning

    static func plan(_ query: Query, spec: FieldIndex.Spec, _ db: Database, dbID: Int64, zone: String) throws -> IndexedQuery? {
        let descriptors = query.sortBy ?? []
        guard descriptors.count <= 1 else { return nil }
        var translated: [Translated] = []
        for filter in query.filterBy ?? [] {
            guard let t = try translate(filter, spec: spec, db, dbID: dbID, zone: zone, type: query.recordType) else { return nil }
            translated.append(t)
        }
        let conditions = translated.map(\.condition)
        let exact = translated.allSatisfy(\.exact)
        if let descriptor = descriptors.first {
            guard descriptor.relativeLocation == nil else { return nil }
            if let system = descriptor.systemFieldName {
                guard descriptor.fieldName == nil else { return nil }
                switch system {
                case .createdTimestamp: return IndexedQuery(source: .time(column: "created_ts", ascending: descriptor.isAscending), conditions: conditions, exact: exact)
                case .modifiedTimestamp: return IndexedQuery(source: .time(column: "modified_ts", ascending: descriptor.isAscending), conditions: conditions, exact: exact)
                default: return nil
                }
            }
            guard let name = descriptor.fieldName, let field = spec.fields[name], field.walksMissing else { return nil }
            let bounds = translated.filter { $0.field == name }.compactMap(\.range)
            let missing = !translated.contains { $0.field == name }
            return IndexedQuery(source: .field(field: name, ascending: descriptor.isAscending, bounds: bounds, missing: missing), conditions: conditions, exact: exact)
        }
        if let equal = translated.first(where: { $0.equality != nil }), let (kind, value) = equal.equality, let field = equal.field {
            return IndexedQuery(source: .equal(field: field, kind: kind, value: value), conditions: conditions, exact: exact)
        }
        // The smallest range of few rows, if any.
        var best: (field: String, condition: SQLPart, count: Int)?
        for t in translated {
            guard let field = t.field, let range = t.range else { continue }
            let count = try Int.fetchOne(
                db, sql: "SELECT count(*) FROM (SELECT 1 FROM field_index s WHERE s.db = ? AND s.zone = ? AND s.type = ? AND s.field = ? AND s.kind = 0 AND \(range.sql) LIMIT ?)",
                arguments: StatementArguments([dbID.databaseValue, zone.databaseValue, query.recordType.databaseValue, field.databaseValue] + range.arguments + [(smallRange + 1).databaseValue])) ?? 0
            if count <= smallRange, count < best?.count ?? .max { best = (field, range, count) }
        }
        if let best { return IndexedQuery(source: .range(field: best.field, condition: best.condition), conditions: conditions, exact: exact) }
        return IndexedQuery(source: .names, conditions: conditions, exact: exact)
    }

    /// A filter as SQL.
    struct Translated {
        /// True for the records the filter passes (or, when not `exact`, for more of them), on `r`.
        var condition: SQLPart
        var exact: Bool
        /// The user field filtered.
        var field: String?
        /// The filter is "the field's rows of `kind` hold this value": a source in name order.
        var equality: (FieldIndex.Kind, DatabaseValue)?
        /// The filter holds on records whose one `value` row (`s`) is in this range (a superset when
        /// not exact): a source, or bounds of a walk by the same field.
        var range: SQLPart?
    }

    static let probe = "EXISTS (SELECT 1 FROM field_index f WHERE f.db = r.db AND f.zone = r.zone AND f.name = r.name AND f.field = ? AND "

    static func translate(_ filter: Filter, spec: FieldIndex.Spec, _ db: Database, dbID: Int64, zone: String, type: String) throws -> Translated? {
        let given = filter.fieldValue
        let g = FilterPredicate.scalar(given)
        if let system = filter.systemFieldName {
            guard filter.fieldName == nil else { return nil }
            return translateSystem(filter.comparator, system, given: given, g)
        }
        guard let name = filter.fieldName, let field = spec.fields[name] else { return nil }
        let wire = field.wireType
        let nameArg = name.databaseValue

        func on(_ kind: FieldIndex.Kind, _ condition: String, _ arguments: [DatabaseValue] = []) -> SQLPart {
            SQLPart(sql: probe + "f.kind = \(kind.rawValue)" + (condition.isEmpty ? "" : " AND " + condition) + ")", arguments: [nameArg] + arguments)
        }
        let presentValue = on(.value, "f.v IS NOT NULL")
        let presentList = on(.present, "")
        let never = SQLPart(sql: "0")
        func result(_ condition: SQLPart, exact: Bool = true, equality: (FieldIndex.Kind, DatabaseValue)? = nil, range: SQLPart? = nil) -> Translated {
            Translated(condition: condition, exact: exact, field: name, equality: equality, range: range)
        }
        func placeholders(_ n: Int) -> String { Array(repeating: "?", count: n).joined(separator: ", ") }
        let scalarField = FieldIndex.isScalarType(wire)
        let listField = wire.hasSuffix("_LIST")

        switch filter.comparator {
        case .equals, .notEquals:
            let equals = filter.comparator == .equals
            if scalarField {
                guard let g else { return result(equals ? never : presentValue) }
                let v = FieldIndex.value(g)
                return equals
                    ? result(on(.value, "f.v = ?", [v]), equality: (.value, v), range: SQLPart(sql: "s.v = ?", arguments: [v]))
                    : result(on(.value, "f.v <> ?", [v]))
            }
            if wire == FieldType.bytes.rawValue {
                guard case .bytes(let data) = given else { return result(equals ? never : presentValue) }
                let v = data.databaseValue
                return equals ? result(on(.value, "f.v = ?", [v]), equality: (.value, v)) : result(on(.value, "f.v <> ?", [v]))
            }
            return nil
        case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals:
            guard scalarField, let g else { return nil }
            let op = rangeOperator(filter.comparator)
            let v = FieldIndex.value(g)
            return result(on(.value, "f.v \(op) ?", [v]), range: SQLPart(sql: "s.v \(op) ?", arguments: [v]))
        case .beginsWith, .notBeginsWith:
            guard wire == FieldType.string.rawValue, case .string(let prefix) = given else { return nil }
            guard filter.comparator == .beginsWith else { return result(presentValue, exact: false) }
            guard !prefix.isEmpty else { return result(presentValue) }
            // Every text starting with the prefix is in [prefix, prefix + U+10FFFF): SQLite narrows,
            // the evaluator decides (Swift's prefixes are whole characters).
            let low = FieldIndex.text(prefix)
            let range = [low.databaseValue, (low + "\u{10FFFF}").databaseValue]
            return result(on(.value, "f.v >= ? AND f.v < ?", range), exact: false, range: SQLPart(sql: "s.v >= ? AND s.v < ?", arguments: range))
        case .containsAllTokens, .containsAnyTokens:
            guard wire == FieldType.string.rawValue, field.searchable, case .string(let words) = given else { return nil }
            let tokens = Set(FilterPredicate.tokens(words).map(FieldIndex.text)).sorted()
            if filter.comparator == .containsAllTokens {
                guard let first = tokens.first else { return result(presentValue) }
                let all = tokens.map { on(.token, "f.v = ?", [$0.databaseValue]) }
                return result(all.dropFirst().reduce(all[0]) { $0 + SQLPart(sql: " AND ") + $1 }.parenthesized, equality: (.token, first.databaseValue))
            }
            guard !tokens.isEmpty else { return result(never) }
            return result(on(.token, "f.v IN (\(placeholders(tokens.count)))", tokens.map(\.databaseValue)),
                          equality: tokens.count == 1 ? (.token, tokens[0].databaseValue) : nil)
        case .in, .notIn:
            guard scalarField, given.isList else { return nil }
            let values = Array(Set(given.listElements.compactMap(FilterPredicate.scalar).map(FieldIndex.value)))
            if filter.comparator == .in {
                guard !values.isEmpty else { return result(never) }
                let list = "(\(placeholders(values.count)))"
                return result(on(.value, "f.v IN \(list)", values), range: SQLPart(sql: "s.v IN \(list)", arguments: values))
            }
            guard !values.isEmpty else { return result(presentValue) }
            return result(on(.value, "f.v IS NOT NULL AND f.v NOT IN (\(placeholders(values.count)))", values))
        case .listContains, .notListContains:
            guard listField, let g else { return nil }
            let v = FieldIndex.value(g)
            let contains = on(.element, "f.v = ?", [v])
            return filter.comparator == .listContains ? result(contains, equality: (.element, v)) : result(presentList + SQLPart(sql: " AND NOT ") + contains)
        case .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll:
            guard listField, given.isList else { return nil }
            let values = Array(Set(given.listElements.compactMap(FilterPredicate.scalar).map(FieldIndex.value)))
            let any = on(.element, "f.v IN (\(placeholders(values.count)))", values)
            let all = values.map { on(.element, "f.v = ?", [$0]) }.reduce(presentList) { $0 + SQLPart(sql: " AND ") + $1 }.parenthesized
            switch filter.comparator {
            case .listContainsAny: return result(values.isEmpty ? never : any)
            case .notListContainsAny: return result(values.isEmpty ? presentList : (presentList + SQLPart(sql: " AND NOT ") + any).parenthesized)
            case .listContainsAll: return result(all)
            default: return result(values.isEmpty ? never : (presentList + SQLPart(sql: " AND NOT ") + all).parenthesized)
            }
        case .listMemberBeginsWith, .notListMemberBeginsWith:
            guard wire == FieldType.stringList.rawValue, case .string(let prefix) = given else { return nil }
            // An untyped empty list in the field makes the evaluator refuse the filter: it decides.
            if try Bool.fetchOne(
                db, sql: "SELECT 1 FROM field_index WHERE db = ? AND zone = ? AND type = ? AND field = ? AND kind = 3 AND v = 'unknown' LIMIT 1",
                arguments: [dbID, zone, type, name]) == true
            {
                return nil
            }
            guard filter.comparator == .listMemberBeginsWith, !prefix.isEmpty else { return result(presentList, exact: false) }
            let low = FieldIndex.text(prefix)
            return result(on(.element, "f.v >= ? AND f.v < ?", [low.databaseValue, (low + "\u{10FFFF}").databaseValue]), exact: false)
        case .near:
            guard wire == FieldType.location.rawValue, case .location(let center) = given, let distance = filter.distance else { return nil }
            let offGlobe = on(.present, "f.v = 'location'")
            guard let box = boundingBox(center, distance) else { return result((presentValue + SQLPart(sql: " OR ") + offGlobe).parenthesized, exact: false) }
            let lat = [box.latitude.lowerBound.databaseValue, box.latitude.upperBound.databaseValue]
            var condition = on(.value, "f.v BETWEEN ? AND ?" + box.longitudeSQL("f.w"), lat + box.longitudeArguments)
            condition = (condition + SQLPart(sql: " OR ") + offGlobe).parenthesized
            let hasOffGlobe = try Bool.fetchOne(
                db, sql: "SELECT 1 FROM field_index WHERE db = ? AND zone = ? AND type = ? AND field = ? AND kind = 3 AND v = 'location' LIMIT 1",
                arguments: [dbID, zone, type, name]) == true
            return result(condition, exact: false, range: hasOffGlobe ? nil : SQLPart(sql: "s.v BETWEEN ? AND ?" + box.longitudeSQL("s.w"), arguments: lat + box.longitudeArguments))
        default:
            return nil
        }
    }

    /// Filters on the record's own columns: the record times (numbers), and the names (record, creator,
    /// modifier, parent, share) by equality (SQLite compares them by code points).
    static func translateSystem(_ comparator: CloudKitWeb.Comparator, _ system: SystemFieldName, given: FieldValue, _ g: FilterPredicate.Scalar?) -> Translated? {
        let column: String
        let numeric: Bool
        switch system {
        case .createdTimestamp: (column, numeric) = ("r.created_ts", true)
        case .modifiedTimestamp: (column, numeric) = ("r.modified_ts", true)
        case .recordName: (column, numeric) = ("r.name", false)
        case .createdUserRecordName: (column, numeric) = ("r.created_user", false)
        case .modifiedUserRecordName: (column, numeric) = ("r.modified_user", false)
        case .parent: (column, numeric) = ("r.parent", false)
        case .share: (column, numeric) = ("r.share", false)
        default: return nil
        }
        // A scalar as the column compares: numbers as REAL (the evaluator's Double), names as given.
        func bind(_ s: FilterPredicate.Scalar) -> DatabaseValue {
            switch s {
            case .number(let d): return d.databaseValue
            case .text(let t): return t.databaseValue
            }
        }
        func exact(_ sql: String, _ arguments: [DatabaseValue] = []) -> Translated {
            Translated(condition: SQLPart(sql: "(" + sql + ")", arguments: arguments), exact: true, field: nil, equality: nil, range: nil)
        }
        switch comparator {
        case .equals, .notEquals:
            guard let g else { return comparator == .equals ? exact("0") : exact("\(column) IS NOT NULL") }
            return exact("\(column) \(comparator == .equals ? "=" : "<>") ?", [bind(g)])
        case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals:
            guard numeric, let g else { return nil }
            let op = rangeOperator(comparator)
            return exact("\(column) \(op) ?", [bind(g)])
        case .in, .notIn:
            guard given.isList else { return nil }
            let values = given.listElements.compactMap(FilterPredicate.scalar).map(bind)
            let list = Array(repeating: "?", count: values.count).joined(separator: ", ")
            if comparator == .in { return values.isEmpty ? exact("0") : exact("\(column) IN (\(list))", values) }
            return values.isEmpty ? exact("\(column) IS NOT NULL") : exact("\(column) NOT IN (\(list))", values)
        default:
            return nil
        }
    }

    static func rangeOperator(_ comparator: CloudKitWeb.Comparator) -> String {
        switch comparator {
        case .lessThan: return "<"
        case .lessThanOrEquals: return "<="
        case .greaterThan: return ">"
        default: return ">="
        }
    }

    /// NEAR's bounding box (degrees), a superset of the points within `distance` metres of `center` on
    /// `Location.distance`'s sphere, or nil when it would bound nothing (a center off the globe).
    static func boundingBox(_ center: Location, _ distance: Double) -> BoundingBox? {
        guard (-90...90).contains(center.latitude), (-180...180).contains(center.longitude), !distance.isNaN else { return nil }
        let radius = 6_371_008.8
        let angle = max(distance, 0) / radius
        let slack = 1e-9
        let dLat = angle * 180 / .pi * 1.000001 + slack
        let latitude = (center.latitude - dLat)...(center.latitude + dLat)
        // Longitude is bounded only when no pole is within reach (Matuschek's bounding coordinates).
        var longitude: ClosedRange<Double>?
        if distance < 0 {
            longitude = nil
        } else if latitude.lowerBound > -90, latitude.upperBound < 90, angle < .pi / 2 {
            let ratio = sin(angle) / cos(center.latitude * .pi / 180)
            if ratio < 1 {
                let dLon = asin(ratio) * 180 / .pi * 1.000001 + slack
                longitude = (center.longitude - dLon)...(center.longitude + dLon)
            }
        }
        return BoundingBox(latitude: latitude, longitude: longitude)
    }

    struct BoundingBox {
        var latitude: ClosedRange<Double>
        var longitude: ClosedRange<Double>?

        /// ` AND <column> …` bounding the longitude (wrapping at ±180), or nothing.
        func longitudeSQL(_ column: String) -> String {
            guard let longitude else { return "" }
            if longitude.lowerBound < -180 || longitude.upperBound > 180 { return " AND (\(column) >= ? OR \(column) <= ?)" }
            return " AND \(column) BETWEEN ? AND ?"
        }

        var longitudeArguments: [DatabaseValue] {
            guard let longitude else { return [] }
            if longitude.lowerBound < -180 { return [(longitude.lowerBound + 360).databaseValue, longitude.upperBound.databaseValue] }
            if longitude.upperBound > 180 { return [longitude.lowerBound.databaseValue, (longitude.upperBound - 360).databaseValue] }
            return [longitude.lowerBound.databaseValue, longitude.upperBound.databaseValue]
        }
    }

    // MARK: SQL

    /// The statements that give the query's rows after `position` (nil: from the start), in order:
    /// one, or two for a walk by a value (those with it, then those without). Each selects
    /// `StoredRecord.columns` of `r`, then its rowid.
    /// `lean`: the rows' `LeanColumn`s instead of `StoredRecord.columns` and the rowid.
    func statements(dbID: Int64, zone: String, type: String, after position: QueryPosition?, lean: Bool = false) -> [SQLPart] {
        let select = lean ? Self.leanSelect : Self.select
        let base: [DatabaseValue] = [dbID.databaseValue, zone.databaseValue, type.databaseValue]
        let joined = "field_index s CROSS JOIN record r ON r.db = s.db AND r.zone = s.zone AND r.name = s.name"
        let filters = conditions.reduce(SQLPart(sql: "")) { $0 + SQLPart(sql: " AND ") + $1 }
        switch source {
        case .names:
            let after = position.map { SQLPart(sql: " AND r.name > ?", arguments: [$0.name.databaseValue]) } ?? SQLPart(sql: "")
            return [SQLPart(sql: select + "record r WHERE r.db = ? AND r.zone = ? AND r.type = ? AND r.deleted = 0", arguments: base) + after + filters + SQLPart(sql: " ORDER BY r.name")]
        case .equal(let field, let kind, let value):
            let after = position.map { SQLPart(sql: " AND s.name > ?", arguments: [$0.name.databaseValue]) } ?? SQLPart(sql: "")
            return [SQLPart(sql: select + joined + " WHERE s.db = ? AND s.zone = ? AND s.type = ? AND s.field = ? AND s.kind = \(kind.rawValue) AND s.v = ?",
                            arguments: base + [field.databaseValue, value])
                    + after + SQLPart(sql: " AND r.deleted = 0") + filters + SQLPart(sql: " ORDER BY s.name")]
        case .range(let field, let condition):
            let after = position.map { SQLPart(sql: " AND s.name > ?", arguments: [$0.name.databaseValue]) } ?? SQLPart(sql: "")
            return [SQLPart(sql: select + joined + " WHERE s.db = ? AND s.zone = ? AND s.type = ? AND s.field = ? AND s.kind = 0 AND ", arguments: base + [field.databaseValue])
                    + condition + after + SQLPart(sql: " AND r.deleted = 0") + filters + SQLPart(sql: " ORDER BY s.name")]
        case .time(let column, let ascending):
            let key = "r." + column
            let head = SQLPart(sql: select + "record r WHERE r.db = ? AND r.zone = ? AND r.type = ? AND r.deleted = 0", arguments: base)
            var parts: [SQLPart] = []
            if position.map({ $0.keys.first != nil && $0.keys.first! != nil }) ?? true {
                let after = position.map { Self.keyset(key, "r.name", ascending, $0) } ?? SQLPart(sql: "")
                parts.append(head + SQLPart(sql: " AND \(key) IS NOT NULL") + after + filters + SQLPart(sql: " ORDER BY \(key) \(ascending ? "ASC" : "DESC"), r.name"))
            }
            let afterName = position.flatMap { $0.keys.first! == nil ? SQLPart(sql: " AND r.name > ?", arguments: [$0.name.databaseValue]) : nil } ?? SQLPart(sql: "")
            parts.append(head + SQLPart(sql: " AND \(key) IS NULL") + afterName + filters + SQLPart(sql: " ORDER BY r.name"))
            return parts
        case .field(let field, let ascending, let bounds, let missing):
            let head = SQLPart(sql: select + joined + " WHERE s.db = ? AND s.zone = ? AND s.type = ? AND s.field = ? AND s.kind = 0", arguments: base + [field.databaseValue])
            var parts: [SQLPart] = []
            if position.map({ $0.keys.first != nil && $0.keys.first! != nil }) ?? true {
                let after = position.map { Self.keyset("s.v", "s.name", ascending, $0) } ?? SQLPart(sql: "")
                let bounded = bounds.reduce(SQLPart(sql: " AND s.v IS NOT NULL")) { $0 + SQLPart(sql: " AND ") + $1 }
                parts.append(head + bounded + after + SQLPart(sql: " AND r.deleted = 0") + filters + SQLPart(sql: " ORDER BY s.v \(ascending ? "ASC" : "DESC"), s.name"))
            }
            if missing {
                let afterName = position.flatMap { $0.keys.first! == nil ? SQLPart(sql: " AND s.name > ?", arguments: [$0.name.databaseValue]) : nil } ?? SQLPart(sql: "")
                parts.append(head + SQLPart(sql: " AND s.v IS NULL") + afterName + SQLPart(sql: " AND r.deleted = 0") + filters + SQLPart(sql: " ORDER BY s.name"))
            }
            return parts
        }
    }

    /// `SELECT` and `StoredRecord.columns` of `r`, then its rowid (made once: trimming each column name
    /// with Foundation was a third of a small query's page).
    static let select = "SELECT "
        + StoredRecord.columns.split(separator: ",").map { "r." + $0.trimmingWhitespace() }.joined(separator: ", ")
        + ", r.rowid FROM "

    /// What a page whose rows are neither checked nor reshaped reads of each: what decides how it is
    /// written, its rendering and its record times (the last row's position). Each column a
    /// statement names is decoded from every row it steps: all nineteen were 44 % of SQLite's work
    /// on the Gallery's first Artwork page by creation time (a C harness on the demo store: 968 k
    /// instructions a page's steps, 581 k with these).
    enum LeanColumn {
        static let name: Int32 = 0, type: Int32 = 1, deleted: Int32 = 2, hasAssets: Int32 = 3, wire: Int32 = 4, created: Int32 = 5, modified: Int32 = 6
    }
    static let leanSelect = "SELECT r.name, r.type, r.deleted, r.has_assets, r.wire, r.created_ts, r.modified_ts FROM "

    /// Rows after `position` in (key, name) order, ties by name ascending whichever way the key goes.
    static func keyset(_ key: String, _ name: String, _ ascending: Bool, _ position: QueryPosition) -> SQLPart {
        guard let first = position.keys.first, let scalar = first else { return SQLPart(sql: "") }
        let v: DatabaseValue
        switch scalar {
        case .number(let d): v = d.databaseValue
        case .text(let t): v = FieldIndex.text(t).databaseValue
        }
        let n = position.name.databaseValue
        if ascending { return SQLPart(sql: " AND \(key) >= ? AND (\(key) > ? OR \(name) > ?)", arguments: [v, v, n]) }
        return SQLPart(sql: " AND \(key) <= ? AND (\(key) < ? OR \(name) > ?)", arguments: [v, v, n])
    }
}

extension SQLPart {
    var parenthesized: SQLPart { SQLPart(sql: "(" + sql + ")", arguments: arguments) }
}
