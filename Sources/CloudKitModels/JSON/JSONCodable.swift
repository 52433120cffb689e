#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A CloudKit dictionary that converts to and from `JSON`.
///
/// Every conforming type is also `Codable`, through `JSON`, so it works with `JSONDecoder` and
/// `JSONEncoder` as any Swift model does; the fast path (`decode(_:from:)`) skips Foundation.
public protocol JSONConvertible: Codable, Sendable {
    init(json: JSON) throws
    var json: JSON { get }
}

extension JSONConvertible {
    public init(from decoder: any Decoder) throws {
        let json = try JSON(from: decoder)
        do {
            try self.init(json: json)
        } catch let error as JSONDecodingError {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }

    /// Decodes from UTF-8 JSON bytes with the fast parser.
    public static func decode<Bytes: Collection>(from bytes: Bytes) throws -> Self where Bytes.Element == UInt8 {
        try Self(json: JSON(parsing: bytes))
    }

    /// Compact UTF-8 JSON.
    public var jsonBytes: [UInt8] { json.bytes }
}

extension JSON: Codable {
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSON] = []
            while !array.isAtEnd { elements.append(try array.decode(JSON.self)) }
            self = .array(elements)
            return
        }
        if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
            var object = JSONObject()
            // Sorted so the result does not depend on Foundation's dictionary order.
            for key in keyed.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                object.pairs.append((key: key.stringValue, value: try keyed.decode(JSON.self, forKey: key)))
            }
            self = .object(object)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let b = try? single.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? single.decode(Int64.self) {
            self = .int(i)
        } else if let d = try? single.decode(Double.self) {
            self = .double(d)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .bool(let b):
            var c = encoder.singleValueContainer()
            try c.encode(b)
        case .int(let i):
            var c = encoder.singleValueContainer()
            try c.encode(i)
        case .double(let d):
            var c = encoder.singleValueContainer()
            try c.encode(d)
        case .string(let s):
            var c = encoder.singleValueContainer()
            try c.encode(s)
        case .array(let elements):
            var c = encoder.unkeyedContainer()
            for element in elements { try c.encode(element) }
        case .object(let object):
            var c = encoder.container(keyedBy: AnyKey.self)
            for pair in object.pairs { try c.encode(pair.value, forKey: AnyKey(pair.key)) }
        }
    }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

// MARK: - Reading helpers used by the wire models

extension JSON {
    package func object() throws -> JSONObject {
        guard case .object(let object) = self else { throw JSONDecodingError(message: "expected an object, found \(kindName)") }
        return object
    }

    package func array() throws -> [JSON] {
        guard case .array(let array) = self else { throw JSONDecodingError(message: "expected an array, found \(kindName)") }
        return array
    }

    package func string() throws -> String {
        guard case .string(let s) = self else { throw JSONDecodingError(message: "expected a string, found \(kindName)") }
        return s
    }

    package func bool() throws -> Bool {
        switch self {
        case .bool(let b): return b
        // CloudKit has no boolean type; some servers send 0/1 for flags.
        case .int(0): return false
        case .int(1): return true
        default: throw JSONDecodingError(message: "expected a boolean, found \(kindName)")
        }
    }

    package func int64() throws -> Int64 {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        case .string(let s):  // numbersAsStrings
            if let i = Int64(s) { return i }
            // A string is taken when it holds an integer (numbersAsStrings); any other is not one. Its
            // text is not quoted: a decoding error never carries a value (it may be a secret).
            throw JSONDecodingError(message: "expected an integer, found a string that is not one")
        default: throw JSONDecodingError(message: "expected an integer, found \(kindName)")
        }
    }

    package func double() throws -> Double {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .string(let s):  // numbersAsStrings
            if let d = Double(s), d.isFinite { return d }
            throw JSONDecodingError(message: "expected a numeric string")
        default: throw JSONDecodingError(message: "expected a number, found \(kindName)")
        }
    }

    package func stringArray() throws -> [String] {
        try array().enumerated().map { i, element in try at("[\(i)]") { try element.string() } }
    }

    package func decodeArray<T>(_ transform: (JSON) throws -> T) throws -> [T] {
        var result: [T] = []
        let elements = try array()
        result.reserveCapacity(elements.count)
        for (i, element) in elements.enumerated() {
            result.append(try at("[\(i)]") { try transform(element) })
        }
        return result
    }
}

extension JSONObject {
    /// A key's value, treating JSON null as absent.
    @inline(__always)
    package func value(_ key: String) -> JSON? {
        guard let v = self[key], !v.isNull else { return nil }
        return v
    }

    package func required(_ key: String) throws -> JSON {
        guard let v = value(key) else { throw JSONDecodingError(message: "missing required key '\(key)'") }
        return v
    }

    package func string(_ key: String) throws -> String? { try value(key).map { v in try at(key) { try v.string() } } }
    package func bool(_ key: String) throws -> Bool? { try value(key).map { v in try at(key) { try v.bool() } } }
    package func int64(_ key: String) throws -> Int64? { try value(key).map { v in try at(key) { try v.int64() } } }
    package func double(_ key: String) throws -> Double? { try value(key).map { v in try at(key) { try v.double() } } }
    package func strings(_ key: String) throws -> [String]? { try value(key).map { v in try at(key) { try v.stringArray() } } }

    package func decode<T: JSONConvertible>(_ key: String, as type: T.Type = T.self) throws -> T? {
        try value(key).map { v in try at(key) { try T(json: v) } }
    }

    package func decodeArray<T: JSONConvertible>(_ key: String, as type: T.Type = T.self) throws -> [T]? {
        try value(key).map { v in try at(key) { try v.decodeArray { try T(json: $0) } } }
    }
}

extension JSONObject {
    package mutating func set(_ key: String, _ value: String?) { set(key, value.map(JSON.string)) }
    package mutating func set(_ key: String, _ value: Bool?) { set(key, value.map(JSON.bool)) }
    package mutating func set(_ key: String, _ value: Int64?) { set(key, value.map(JSON.int)) }
    package mutating func set(_ key: String, _ value: Int?) { set(key, value.map { JSON.int(Int64($0)) }) }
    package mutating func set(_ key: String, _ value: Double?) { set(key, value.map(JSON.double)) }
    package mutating func set(_ key: String, _ value: [String]?) { set(key, value.map { JSON.array($0.map(JSON.string)) }) }
    package mutating func set<T: JSONConvertible>(_ key: String, _ value: T?) { set(key, value.map(\.json)) }
    package mutating func set<T: JSONConvertible>(_ key: String, _ value: [T]?) { set(key, value.map { JSON.array($0.map(\.json)) }) }
}

/// A string-backed value with named constants that still accepts values a newer server invents
/// (the GRDB `ResultCode` pattern): `switch` with `case .conflict:` works, unknown values survive.
public protocol OpenStringEnum: RawRepresentable, Hashable, Sendable, JSONConvertible, CustomStringConvertible,
    ExpressibleByStringLiteral where RawValue == String
{
    init(rawValue: String)
}

extension OpenStringEnum {
    public init(json: JSON) throws { self.init(rawValue: try json.string()) }
    public var json: JSON { .string(rawValue) }
    public var description: String { rawValue }
    public init(stringLiteral value: String) { self.init(rawValue: value) }
}
