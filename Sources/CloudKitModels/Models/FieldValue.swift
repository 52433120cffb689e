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

/// The `type` tag of a Record Field dictionary. Open-ended: an unknown tag decodes as `.other`.
public struct FieldType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let string: Self = "STRING"
    public static let int64: Self = "INT64"
    public static let double: Self = "DOUBLE"
    public static let timestamp: Self = "TIMESTAMP"
    public static let bytes: Self = "BYTES"
    public static let encryptedBytes: Self = "ENCRYPTED_BYTES"
    public static let reference: Self = "REFERENCE"
    public static let assetID: Self = "ASSETID"
    /// Seen on some services in place of ASSETID; decoded as an asset, re-encoded as ASSETID.
    public static let asset: Self = "ASSET"
    public static let location: Self = "LOCATION"
    public static let stringList: Self = "STRING_LIST"
    public static let int64List: Self = "INT64_LIST"
    public static let doubleList: Self = "DOUBLE_LIST"
    public static let timestampList: Self = "TIMESTAMP_LIST"
    public static let bytesList: Self = "BYTES_LIST"
    public static let referenceList: Self = "REFERENCE_LIST"
    public static let assetIDList: Self = "ASSETID_LIST"
    public static let locationList: Self = "LOCATION_LIST"
    /// Observed for some empty lists.
    public static let unknownList: Self = "UNKNOWN_LIST"

    /// The scalar types and their list forms, in the reference's order.
    public static let scalars: [FieldType] = [.string, .int64, .double, .timestamp, .bytes, .reference, .assetID, .location]
    public static let lists: [FieldType] = [
        .stringList, .int64List, .doubleList, .timestampList, .bytesList, .referenceList, .assetIDList, .locationList,
    ]

    public var isList: Bool { rawValue.hasSuffix("_LIST") }

    /// `STRING` → `STRING_LIST`.
    public var listType: FieldType { isList ? self : FieldType(rawValue: rawValue + "_LIST") }

    /// `STRING_LIST` → `STRING`.
    public var elementType: FieldType? {
        guard isList, self != .unknownList else { return nil }
        return FieldType(rawValue: String(rawValue.dropLast(5)))
    }
}

/// A record field's value, one case per wire type.
public enum FieldValue: Sendable, Hashable {
    case string(String)
    case int64(Int64)
    case double(Double)
    /// Milliseconds since 1970-01-01T00:00Z.
    case timestamp(Int64)
    case bytes(Data)
    case encryptedBytes(Data)
    case reference(Reference)
    case asset(Asset)
    case location(Location)
    case stringList([String])
    case int64List([Int64])
    case doubleList([Double])
    case timestampList([Int64])
    case bytesList([Data])
    case referenceList([Reference])
    case assetList([Asset])
    case locationList([Location])
    /// `UNKNOWN_LIST`: a list whose element type the server did not say (usually empty).
    case unknownList([JSON])
    /// A type this client does not know, kept as sent.
    case other(type: String, value: JSON)
    /// No value: clears the field when written.
    case null

    /// The wire type tag.
    public var type: FieldType {
        switch self {
        case .string: return .string
        case .int64: return .int64
        case .double: return .double
        case .timestamp: return .timestamp
        case .bytes: return .bytes
        case .encryptedBytes: return .encryptedBytes
        case .reference: return .reference
        case .asset: return .assetID
        case .location: return .location
        case .stringList: return .stringList
        case .int64List: return .int64List
        case .doubleList: return .doubleList
        case .timestampList: return .timestampList
        case .bytesList: return .bytesList
        case .referenceList: return .referenceList
        case .assetList: return .assetIDList
        case .locationList: return .locationList
        case .unknownList: return .unknownList
        case .other(let type, _): return FieldType(rawValue: type)
        case .null: return FieldType(rawValue: "NULL")
        }
    }

    /// A TIMESTAMP from a `Date`, rounded to whole milliseconds (fractional ms are rejected by the service).
    public static func timestamp(_ date: Date) -> FieldValue {
        .timestamp(Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    /// Booleans are INT64 0/1 on the wire: CloudKit has no boolean type.
    public static func bool(_ value: Bool) -> FieldValue { .int64(value ? 1 : 0) }

    public var isList: Bool { type.isList }

    /// Number of elements for lists, nil for scalars.
    public var listCount: Int? {
        switch self {
        case .stringList(let v): return v.count
        case .int64List(let v): return v.count
        case .doubleList(let v): return v.count
        case .timestampList(let v): return v.count
        case .bytesList(let v): return v.count
        case .referenceList(let v): return v.count
        case .assetList(let v): return v.count
        case .locationList(let v): return v.count
        case .unknownList(let v): return v.count
        default: return nil
        }
    }

    /// The elements of a list as scalar values (empty for scalars).
    public var listElements: [FieldValue] {
        switch self {
        case .stringList(let v): return v.map(FieldValue.string)
        case .int64List(let v): return v.map(FieldValue.int64)
        case .doubleList(let v): return v.map(FieldValue.double)
        case .timestampList(let v): return v.map(FieldValue.timestamp)
        case .bytesList(let v): return v.map(FieldValue.bytes)
        case .referenceList(let v): return v.map(FieldValue.reference)
        case .assetList(let v): return v.map(FieldValue.asset)
        case .locationList(let v): return v.map(FieldValue.location)
        case .unknownList(let v): return v.map { FieldValue.other(type: "UNKNOWN", value: $0) }
        default: return []
        }
    }
}

// MARK: - Wire form

extension FieldValue: JSONConvertible {
    /// Decodes a Record Field dictionary `{ "value": …, "type": … }`. A missing `type` is inferred as the
    /// reference says: string → STRING, integer → INT64, other number → DOUBLE, object with `recordName`
    /// → REFERENCE, with `latitude`+`longitude` → LOCATION, with `fileChecksum`/`receipt` → ASSETID, array
    /// → the list of its first element's type. JSON `null` (or a null `value`) is `.null`.
    public init(json: JSON) throws {
        guard case .object(let object) = json else {
            if json.isNull {
                self = .null
                return
            }
            throw JSONDecodingError(message: "expected a field dictionary, found \(json.kindName)")
        }
        var value: JSON?
        var typeName: String?
        for pair in object.pairs {
            switch pair.key {
            case "value": value = pair.value
            case "type":
                guard case .string(let s) = pair.value else {
                    throw JSONDecodingError(path: ["type"], message: "expected a string, found \(pair.value.kindName)")
                }
                typeName = s
            default: break
            }
        }
        guard let value, !value.isNull else {
            self = .null
            return
        }
        let type = typeName.map(FieldType.init(rawValue:)) ?? Self.inferType(of: value)
        self = try at("value") { try Self.decode(value, as: type) }
    }

    /// The type the reference's inference rules give an untyped value.
    public static func inferType(of value: JSON) -> FieldType {
        switch value {
        case .string: return .string
        case .int, .bool: return .int64
        case .double: return .double
        case .object(let object):
            if object["recordName"] != nil { return .reference }
            if object["latitude"] != nil && object["longitude"] != nil { return .location }
            if object["fileChecksum"] != nil || object["receipt"] != nil { return .assetID }
            return FieldType(rawValue: "UNKNOWN")
        case .array(let elements):
            guard let first = elements.first else { return .unknownList }
            return inferType(of: first).listType
        case .null: return FieldType(rawValue: "UNKNOWN")
        }
    }

    /// Decodes a bare `value` given its type tag.
    public static func decode(_ value: JSON, as type: FieldType) throws -> FieldValue {
        switch type {
        case .string: return .string(try value.string())
        case .int64:
            if case .bool(let b) = value { return .int64(b ? 1 : 0) }
            return .int64(try value.int64())
        case .double: return .double(try value.double())
        case .timestamp: return .timestamp(try timestampValue(value))
        case .bytes: return .bytes(try base64(value))
        case .encryptedBytes: return .encryptedBytes(try base64(value))
        case .reference: return .reference(try Reference(json: value))
        case .assetID, .asset: return .asset(try Asset(json: value))
        case .location: return .location(try Location(json: value))
        case .stringList: return .stringList(try value.decodeArray { try $0.string() })
        case .int64List: return .int64List(try value.decodeArray { try $0.int64() })
        case .doubleList: return .doubleList(try value.decodeArray { try $0.double() })
        case .timestampList: return .timestampList(try value.decodeArray { try timestampValue($0) })
        case .bytesList: return .bytesList(try value.decodeArray { try base64($0) })
        case .referenceList: return .referenceList(try value.decodeArray { try Reference(json: $0) })
        case .assetIDList, "ASSET_LIST": return .assetList(try value.decodeArray { try Asset(json: $0) })
        case .locationList: return .locationList(try value.decodeArray { try Location(json: $0) })
        case .unknownList: return .unknownList(try value.array())
        default: return .other(type: type.rawValue, value: value)
        }
    }

    private static func timestampValue(_ value: JSON) throws -> Int64 {
        if case .double(let d) = value, d.rounded() != d {
            throw JSONDecodingError(message: "expected integral milliseconds for a TIMESTAMP")
        }
        return try value.int64()
    }

    private static func base64(_ value: JSON) throws -> Data {
        guard let data = Data(base64Encoded: try value.string()) else {
            throw JSONDecodingError(message: "expected base64 data")
        }
        return data
    }

    /// The bare `value` as it goes on the wire.
    public var wireValue: JSON {
        switch self {
        case .string(let s): return .string(s)
        case .int64(let i), .timestamp(let i): return .int(i)
        case .double(let d): return .double(d)
        case .bytes(let d), .encryptedBytes(let d): return .string(d.base64EncodedString())
        case .reference(let r): return r.json
        case .asset(let a): return a.json
        case .location(let l): return l.json
        case .stringList(let v): return .array(v.map(JSON.string))
        case .int64List(let v), .timestampList(let v): return .array(v.map(JSON.int))
        case .doubleList(let v): return .array(v.map(JSON.double))
        case .bytesList(let v): return .array(v.map { .string($0.base64EncodedString()) })
        case .referenceList(let v): return .array(v.map(\.json))
        case .assetList(let v): return .array(v.map(\.json))
        case .locationList(let v): return .array(v.map(\.json))
        case .unknownList(let v): return .array(v)
        case .other(_, let value): return value
        case .null: return .null
        }
    }

    /// The Record Field dictionary, always with `type` (the reference: always send `type` on writes).
    /// `.null` encodes as JSON `null`, which clears the field.
    public var json: JSON {
        if case .null = self { return .null }
        return .object(JSONObject(pairs: [(key: "value", value: wireValue), (key: "type", value: .string(type.rawValue))]))
    }
}

// MARK: - Nested dictionaries

/// `NONE`, `DELETE_SELF` or `VALIDATE`.
public struct ReferenceAction: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `NONE`. (Not named `none`: `action: .none` would silently mean a missing action.)
    public static let noAction: Self = "NONE"
    public static let deleteSelf: Self = "DELETE_SELF"
    public static let validate: Self = "VALIDATE"
}

/// Reference dictionary.
public struct Reference: JSONConvertible, Hashable {
    public var recordName: String
    /// Target zone; defaults to the referencing record's zone.
    public var zoneID: ZoneID?
    /// Required except inside query filters.
    public var action: ReferenceAction?

    public init(recordName: String, zoneID: ZoneID? = nil, action: ReferenceAction? = .noAction) {
        self.recordName = recordName
        self.zoneID = zoneID
        self.action = action
    }

    public init(json: JSON) throws {
        let object = try json.object()
        recordName = try at("recordName") { try object.required("recordName").string() }
        zoneID = try object.decode("zoneID")
        action = try object.decode("action")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("recordName", recordName)
        object.set("zoneID", zoneID)
        object.set("action", action)
        return .object(object)
    }
}

/// Asset dictionary.
public struct Asset: JSONConvertible, Hashable {
    public var fileChecksum: String?
    public var size: Int64?
    public var referenceChecksum: String?
    /// A secret key; never shown or logged.
    public var wrappingKey: String?
    public var receipt: String?
    /// Only in fetch responses; may hold a literal `${f}` placeholder for the file name.
    public var downloadURL: String?

    public init(
        fileChecksum: String? = nil, size: Int64? = nil, referenceChecksum: String? = nil, wrappingKey: String? = nil,
        receipt: String? = nil, downloadURL: String? = nil
    ) {
        self.fileChecksum = fileChecksum
        self.size = size
        self.referenceChecksum = referenceChecksum
        self.wrappingKey = wrappingKey
        self.receipt = receipt
        self.downloadURL = downloadURL
    }

    public init(json: JSON) throws {
        let object = try json.object()
        fileChecksum = try object.string("fileChecksum")
        size = try object.int64("size")
        referenceChecksum = try object.string("referenceChecksum")
        wrappingKey = try object.string("wrappingKey")
        receipt = try object.string("receipt")
        downloadURL = try object.string("downloadURL")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("fileChecksum", fileChecksum)
        object.set("size", size)
        object.set("referenceChecksum", referenceChecksum)
        object.set("wrappingKey", wrappingKey)
        object.set("receipt", receipt)
        object.set("downloadURL", downloadURL)
        return .object(object)
    }
}

/// Location dictionary.
public struct Location: JSONConvertible, Hashable {
    public var latitude: Double
    public var longitude: Double
    public var horizontalAccuracy: Double?
    public var verticalAccuracy: Double?
    public var altitude: Double?
    public var speed: Double?
    public var course: Double?
    /// Milliseconds since epoch (integral).
    public var timestamp: Int64?

    public init(
        latitude: Double, longitude: Double, horizontalAccuracy: Double? = nil, verticalAccuracy: Double? = nil,
        altitude: Double? = nil, speed: Double? = nil, course: Double? = nil, timestamp: Int64? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.timestamp = timestamp
    }

    public init(json: JSON) throws {
        let object = try json.object()
        latitude = try at("latitude") { try object.required("latitude").double() }
        longitude = try at("longitude") { try object.required("longitude").double() }
        horizontalAccuracy = try object.double("horizontalAccuracy")
        verticalAccuracy = try object.double("verticalAccuracy")
        altitude = try object.double("altitude")
        speed = try object.double("speed")
        course = try object.double("course")
        timestamp = try object.int64("timestamp")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("latitude", latitude)
        object.set("longitude", longitude)
        object.set("horizontalAccuracy", horizontalAccuracy)
        object.set("verticalAccuracy", verticalAccuracy)
        object.set("altitude", altitude)
        object.set("speed", speed)
        object.set("course", course)
        object.set("timestamp", timestamp)
        return .object(object)
    }

    /// Great-circle distance in metres (haversine, mean Earth radius).
    public func distance(to other: Location) -> Double {
        let r = 6_371_008.8
        let φ1 = latitude * .pi / 180, φ2 = other.latitude * .pi / 180
        let dφ = (other.latitude - latitude) * .pi / 180
        let dλ = (other.longitude - longitude) * .pi / 180
        let a = sin(dφ / 2) * sin(dφ / 2) + cos(φ1) * cos(φ2) * sin(dλ / 2) * sin(dλ / 2)
        return 2 * r * atan2(a.squareRoot(), (1 - a).squareRoot())
    }
}
