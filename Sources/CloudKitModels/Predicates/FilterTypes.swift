/// Whether a filter's value can be compared with the field it names, by the field's schema type.
///
/// `FilterPredicate` orders every number before every text, so `n LESS_THAN "abc"` on an INT64 field
/// held for every record, and `title EQUALS 5` for none, with no word of why. CloudKit refuses a
/// type mismatch as `BAD_REQUEST` (reference §7: "unknown record types/fields and type mismatches");
/// its words for a filter's mismatch are unrecorded, so these are ours.
///
/// What compares with what follows `FilterPredicate.scalar`: numbers (INT64, DOUBLE, TIMESTAMP,
/// NUMBER) with numbers; text and references (by record name) with each other; a location, bytes or an
/// asset only with their own kind. A list field compares element by element (`LIST_CONTAINS`, …), and
/// a list value (`IN`, `LIST_CONTAINS_ANY`, …) by its elements; an empty list compares with anything.
/// Fields the schema does not know, encrypted fields and values of a type this client does not know
/// are left to the other checks.
public enum FilterTypes {
    enum Kind: Hashable {
        case number, text, location, bytes, asset
    }

    /// The first filter of `query` whose value cannot be compared with its field in `type`, and why.
    public static func problem(of query: Query, in type: RecordTypeSchema) -> String? {
        for filter in query.filterBy ?? [] {
            if let problem = problem(filter, in: type) { return problem }
        }
        return nil
    }

    /// Why `filter`'s value cannot be compared with its field in `type` (nil: it can, or the schema
    /// cannot tell).
    public static func problem(_ filter: Filter, in type: RecordTypeSchema) -> String? {
        guard let (named, schema) = IndexRules.namedField(field: filter.fieldName, system: filter.systemFieldName, in: type), let schema else { return nil }
        let fieldType = schema.type
        guard let field = kind(of: fieldType), let given = kinds(of: filter.fieldValue), given.contains(where: { $0 != field }) else {
            return nil
        }
        return "Field '\(named)' is \(fieldType.wireType): \(filter.comparator.rawValue) cannot compare it with a value of type \(filter.fieldValue.type.rawValue)"
    }

    /// The kind of a field's values (a list's: its elements'); nil for an encrypted field.
    static func kind(of type: SchemaFieldType) -> Kind? {
        switch type {
        case .primitive(let primitive): return kind(of: primitive)
        case .number: return .number
        case .list(let element): return kind(of: element)
        case .encrypted: return nil
        }
    }

    static func kind(of primitive: SchemaFieldType.Primitive) -> Kind {
        switch primitive {
        case .int64, .double, .timestamp: return .number
        case .string, .reference: return .text
        case .location: return .location
        case .bytes: return .bytes
        case .asset: return .asset
        }
    }

    /// The kinds of a value (a list's: its elements'; none for an empty list); nil for a value whose
    /// type is not known here.
    static func kinds(of value: FieldValue) -> Set<Kind>? {
        switch value {
        case .string, .reference, .stringList, .referenceList: return value.isEmptyList ? [] : [.text]
        case .int64, .double, .timestamp, .int64List, .doubleList, .timestampList: return value.isEmptyList ? [] : [.number]
        case .location, .locationList: return value.isEmptyList ? [] : [.location]
        case .bytes, .encryptedBytes, .bytesList: return value.isEmptyList ? [] : [.bytes]
        case .asset, .assetList: return value.isEmptyList ? [] : [.asset]
        case .unknownList(let elements):
            var kinds = Set<Kind>()
            for element in elements {
                switch FieldValue.inferType(of: element) {
                case .string, .reference: kinds.insert(.text)
                case .int64, .double, .timestamp: kinds.insert(.number)
                case .location: kinds.insert(.location)
                default: return nil
                }
            }
            return kinds
        case .other, .null: return nil
        }
    }
}

extension FieldValue {
    /// A list with no element.
    fileprivate var isEmptyList: Bool { isList && listElements.isEmpty }
}
