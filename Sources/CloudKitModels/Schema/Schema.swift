/// A CloudKit schema as the CloudKit Schema Language (`.ckdb`) writes it: custom roles and record
/// types with their fields, index options and grants (`../shared/cloudkit-schema.md` §1).
public struct CloudKitSchema: Sendable, Hashable {
    public var roles: [String]
    public var recordTypes: [RecordTypeSchema]

    public init(roles: [String] = [], recordTypes: [RecordTypeSchema] = []) {
        self.roles = roles
        self.recordTypes = recordTypes
    }

    public func recordType(_ name: String) -> RecordTypeSchema? { recordTypes.first { $0.name == name } }

    /// The built-in roles: everyone, any signed-in user, the record's creator.
    public static let builtInRoles = ["_creator", "_icloud", "_world"]
    /// The six system fields every record type has, with their types (§1.5).
    public static let systemFields: [(name: String, type: SchemaFieldType)] = [
        ("___createTime", .timestamp), ("___createdBy", .reference), ("___etag", .string),
        ("___modTime", .timestamp), ("___modifiedBy", .reference), ("___recordID", .reference),
    ]
}

public struct RecordTypeSchema: Sendable, Hashable {
    public var name: String
    public var fields: [FieldSchema]
    public var grants: [SchemaGrant]

    public init(name: String, fields: [FieldSchema] = [], grants: [SchemaGrant] = []) {
        self.name = name
        self.fields = fields
        self.grants = grants
    }

    public func field(_ name: String) -> FieldSchema? { fields.first { $0.name == name } }

    /// What just-in-time creation grants a new type (§1.6): creator writes, signed-in users create,
    /// everyone reads.
    public static let defaultGrants = [SchemaGrant([.write], to: "_creator"), SchemaGrant([.create], to: "_icloud"), SchemaGrant([.read], to: "_world")]
}

public struct FieldSchema: Sendable, Hashable {
    public var name: String
    public var type: SchemaFieldType
    public var indexes: Set<SchemaIndex>

    public init(name: String, type: SchemaFieldType, indexes: Set<SchemaIndex> = []) {
        self.name = name
        self.type = type
        self.indexes = indexes
    }

    public var isSystem: Bool { name.hasPrefix("___") }
}

/// `QUERYABLE` (equality), `SORTABLE` (order and ranges), `SEARCHABLE` (text tokens).
public enum SchemaIndex: String, Sendable, Hashable, CaseIterable, Comparable {
    case queryable = "QUERYABLE"
    case searchable = "SEARCHABLE"
    case sortable = "SORTABLE"

    public static func < (a: SchemaIndex, b: SchemaIndex) -> Bool { a.rawValue < b.rawValue }
}

/// `GRANT READ, CREATE, WRITE TO role`.
public struct SchemaGrant: Sendable, Hashable {
    public enum Permission: String, Sendable, Hashable, CaseIterable {
        case read = "READ", create = "CREATE", write = "WRITE"
    }

    public var permissions: Set<Permission>
    public var role: String

    public init(_ permissions: Set<Permission>, to role: String) {
        self.permissions = permissions
        self.role = role
    }
}

/// A field's data type: a primitive, a list of one, an encrypted primitive, or the legacy NUMBER.
public enum SchemaFieldType: Sendable, Hashable, CustomStringConvertible {
    case primitive(Primitive)
    indirect case list(SchemaFieldType)
    case encrypted(Primitive)
    /// `NUMBER [PREFERRED AS INT64|DOUBLE]`.
    case number(preferred: Primitive?)

    public enum Primitive: String, Sendable, Hashable, CaseIterable {
        case asset = "ASSET", bytes = "BYTES", double = "DOUBLE", int64 = "INT64", location = "LOCATION"
        case reference = "REFERENCE", string = "STRING", timestamp = "TIMESTAMP"
    }

    public static let string = SchemaFieldType.primitive(.string)
    public static let int64 = SchemaFieldType.primitive(.int64)
    public static let double = SchemaFieldType.primitive(.double)
    public static let timestamp = SchemaFieldType.primitive(.timestamp)
    public static let reference = SchemaFieldType.primitive(.reference)

    public var description: String {
        switch self {
        case .primitive(let p): return p.rawValue
        case .list(let element): return "LIST<\(element)>"
        case .encrypted(let p): return "ENCRYPTED \(p.rawValue)"
        case .number(let preferred): return "NUMBER" + (preferred.map { " PREFERRED AS \($0.rawValue)" } ?? "")
        }
    }

    /// The type of a field value on the wire (`FieldValue.type`): `STRING`, `INT64_LIST`, `ASSETID`…
    public init?(wireType: String) {
        if wireType.hasSuffix("_LIST") {
            guard let element = SchemaFieldType(wireType: String(wireType.dropLast(5))), case .primitive = element else { return nil }
            self = .list(element)
        } else if wireType == "ASSETID" {
            self = .primitive(.asset)
        } else if let p = Primitive(rawValue: wireType) {
            self = .primitive(p)
        } else {
            return nil
        }
    }

    /// The indexes just-in-time creation gives a field of this type in development (§2.1: observed for
    /// STRING, numbers, TIMESTAMP, BYTES, LIST<STRING>; REFERENCE, LOCATION and other lists QUERYABLE,
    /// ASSET none, as the reference recommends where it was not observed).
    public var justInTimeIndexes: Set<SchemaIndex> {
        switch self {
        case .primitive(.asset), .list(.primitive(.asset)): return []
        case .primitive(.string), .list(.primitive(.string)): return [.queryable, .searchable, .sortable]
        case .primitive(.int64), .primitive(.double), .primitive(.timestamp), .primitive(.bytes): return [.queryable, .sortable]
        case .primitive(.reference), .primitive(.location), .list: return [.queryable]
        default: return []
        }
    }

    /// Which index options the type may carry (§1.3, §1.9): SEARCHABLE only on strings; none on assets
    /// and encrypted fields.
    public var allowedIndexes: Set<SchemaIndex> {
        switch self {
        case .primitive(.asset), .list(.primitive(.asset)), .encrypted: return []
        case .primitive(.string), .list(.primitive(.string)): return Set(SchemaIndex.allCases)
        default: return [.queryable, .sortable]
        }
    }
}
