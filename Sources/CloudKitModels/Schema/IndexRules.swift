/// What CloudKit refuses of a query for want of an index (`cloudkit-schema.md` §3). The local
/// server answers these as `BAD_REQUEST` with `reason`; the browser warns with the same words before
/// sending a query. The reasons are CloudKit's, verbatim where they were observed: clients match them.
public struct IndexViolation: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The type has no index at all.
        case typeNotIndexable
        /// The field named is not in the type.
        case unknownField
        /// The field lacks the index the query needs.
        case missingIndex(SchemaIndex)
    }

    public var kind: Kind
    /// The field as the query named it (`recordName` for the record ID).
    public var field: String?
    public var reason: String
    public var description: String { reason }
}

/// Index requirements of each part of a query.
public enum IndexRules {
    /// The index a filter's comparator needs: equality, prefix, list and NEAR tests need QUERYABLE
    /// (§3.1); range tests need SORTABLE (Apple defines SORTABLE as the range index; unconfirmed
    /// whether QUERYABLE alone suffices, the reference recommends SORTABLE); token tests SEARCHABLE.
    public static func index(for comparator: Comparator) -> SchemaIndex {
        switch comparator {
        case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals: return .sortable
        case .containsAllTokens, .containsAnyTokens: return .searchable
        default: return .queryable
        }
    }

    /// The first thing in `query` that `type`'s indexes do not allow, or nil when CloudKit would run it.
    /// Order of checks: a type without any index (`Type is not marked indexable`), then each filter
    /// (unknown field, then its index), the unfiltered case (`recordName` must be QUERYABLE), then each
    /// sort (SORTABLE). System fields other than the six of §1.5 (`share`, `parent`) are not checked:
    /// the schema language has no such fields (unconfirmed).
    public static func violation(of query: Query, in type: RecordTypeSchema) -> IndexViolation? {
        if !type.fields.contains(where: { !$0.indexes.isEmpty }) {
            return IndexViolation(kind: .typeNotIndexable, field: nil, reason: "Type is not marked indexable: \(type.name)")
        }
        for filter in query.filterBy ?? [] {
            if let problem = check(field: filter.fieldName, system: filter.systemFieldName, needs: index(for: filter.comparator), in: type) {
                return problem
            }
        }
        if (query.filterBy ?? []).isEmpty, type.field(SystemFieldName.recordName.indexName)?.indexes.contains(.queryable) != true {
            return missing(.queryable, "recordName")
        }
        for sort in query.sortBy ?? [] {
            // Sorting a LOCATION by distance uses its QUERYABLE (spatial) index (unconfirmed).
            let needs: SchemaIndex = sort.relativeLocation == nil ? .sortable : .queryable
            if let problem = check(field: sort.fieldName, system: sort.systemFieldName, needs: needs, in: type) { return problem }
        }
        return nil
    }

    static func check(field: String?, system: SystemFieldName?, needs: SchemaIndex, in type: RecordTypeSchema) -> IndexViolation? {
        guard let (named, schema) = namedField(field: field, system: system, in: type) else { return nil }
        guard let schema else {
            return IndexViolation(kind: .unknownField, field: named, reason: "Did not find field: '\(named)' in type: '\(type.name)'")
        }
        return schema.indexes.contains(needs) ? nil : missing(needs, named)
    }

    /// The field a filter or sort names, as a reason names it (`recordName` for `___recordID`), and its
    /// schema: the type's own, else the system field's (nil: the type has no such field). Nil for
    /// neither name, or a system field the schema language has no name for (`share`, `parent`).
    /// The index check and `FilterTypes` read fields this one way.
    static func namedField(field: String?, system: SystemFieldName?, in type: RecordTypeSchema) -> (named: String, schema: FieldSchema?)? {
        let named: String
        let schemaName: String
        if let system {
            guard CloudKitSchema.systemFields.contains(where: { $0.name == system.indexName }) else { return nil }
            named = system.rawValue
            schemaName = system.indexName
        } else if let field {
            named = field
            schemaName = field
        } else {
            return nil
        }
        return (named, type.field(schemaName) ?? CloudKitSchema.systemFields.first(where: { $0.name == schemaName }).map { FieldSchema(name: $0.name, type: $0.type) })
    }

    static func missing(_ index: SchemaIndex, _ field: String) -> IndexViolation {
        IndexViolation(kind: .missingIndex(index), field: field, reason: "Field '\(field)' is not marked \(index.rawValue.lowercased())")
    }
}

extension RecordTypeSchema {
    /// Whether holders of `roles` may do `permission` to records of this type in the public database.
    /// Rights add up across roles (§4.1). Grants govern only the public database.
    public func permits(_ permission: SchemaGrant.Permission, roles: Set<String>) -> Bool {
        grants.contains { roles.contains($0.role) && $0.permissions.contains(permission) }
    }

    /// The reason CloudKit gives a refused operation (§4.2: observed for CREATE; WRITE and READ by analogy).
    public static func refusal(_ permission: SchemaGrant.Permission) -> String { "\(permission.rawValue) operation not permitted" }
}

extension SchemaFieldType {
    /// The wire `type` of values of this field (§1.3): `ASSETID` for assets, `T_LIST` for lists; an
    /// encrypted field's values carry the base type; `NUMBER` is its preference, DOUBLE if none (§1.4).
    public var wireType: String {
        switch self {
        case .primitive(.asset): return "ASSETID"
        case .primitive(let p), .encrypted(let p): return p.rawValue
        case .list(let element): return element.wireType + "_LIST"
        case .number(let preferred): return (preferred ?? .double).rawValue
        }
    }
}

/// What CloudKit refuses when a schema replaces production's (deploy, or an import that would
/// remove what production has): §2.3 and §1.9. Index and grant changes are allowed (§2.3: not data
/// loss; unconfirmed whether CloudKit allows dropping them).
public enum SchemaCompatibility {
    /// One sentence per destructive change from `production` to `schema`, empty when there is none.
    public static func destructiveChanges(from production: CloudKitSchema, to schema: CloudKitSchema) -> [String] {
        var problems: [String] = []
        for type in production.recordTypes where type.name != "Users" {
            guard let replacement = schema.recordType(type.name) else {
                problems.append("record type '\(type.name)' is in production and cannot be removed")
                continue
            }
            for field in type.fields where !field.isSystem {
                guard let new = replacement.field(field.name) else {
                    problems.append("field '\(field.name)' of '\(type.name)' is in production and cannot be removed")
                    continue
                }
                if new.type != field.type {
                    problems.append("field '\(field.name)' of '\(type.name)' is \(field.type) in production and cannot become \(new.type)")
                }
            }
        }
        return problems
    }
}

extension IndexRules {
    /// The comparators a filter on a field of this type can use (by the type's values), keeping only
    /// those the field's indexes allow when `indexesKnown` (an inferred schema knows no indexes).
    public static func comparators(for field: FieldSchema, indexesKnown: Bool = true) -> [Comparator] {
        let equality: [Comparator] = [.equals, .notEquals, .in, .notIn]
        let ranges: [Comparator] = [.lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals]
        let lists: [Comparator] = [.listContains, .notListContains, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll]
        let byType: [Comparator]
        switch field.type {
        case .primitive(.string): byType = equality + ranges + [.beginsWith, .notBeginsWith, .containsAllTokens, .containsAnyTokens]
        case .primitive(.int64), .primitive(.double), .primitive(.timestamp), .number: byType = equality + ranges
        case .primitive(.reference): byType = equality
        case .primitive(.bytes): byType = [.equals, .notEquals]
        case .primitive(.location): byType = [.near]
        case .list(.primitive(.string)): byType = lists + [.listMemberBeginsWith, .notListMemberBeginsWith]
        case .list: byType = lists
        case .primitive(.asset), .encrypted: byType = []
        }
        guard indexesKnown else { return byType }
        return byType.filter { field.indexes.contains(index(for: $0)) }
    }

    /// The system fields a query names, as `FieldSchema` of the type (with the type's indexes on them).
    public static func systemFields(of type: RecordTypeSchema) -> [(name: SystemFieldName, field: FieldSchema)] {
        [SystemFieldName.recordName, .createdTimestamp, .modifiedTimestamp, .createdUserRecordName, .modifiedUserRecordName].compactMap { name in
            guard let system = CloudKitSchema.systemFields.first(where: { $0.name == name.indexName }) else { return nil }
            return (name, type.field(system.name) ?? FieldSchema(name: system.name, type: system.type))
        }
    }
}
