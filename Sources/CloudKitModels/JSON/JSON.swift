/// A JSON value as it travels on the wire.
///
/// Objects keep their keys in the order they arrived (a list of pairs, not a dictionary), so a record
/// can be shown "exactly as the server sent it" and re-encoded byte-stably. Integers that fit in
/// `Int64` stay integers, so INT64 values beyond 2^53 round-trip exactly.
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    /// Parses UTF-8 JSON bytes with the fast parser. Throws `JSONDecodingError` on malformed input.
    public init<Bytes: Collection>(parsing bytes: Bytes) throws where Bytes.Element == UInt8 {
        self = try JSONParser.parse(bytes)
    }

    /// Parses a JSON text.
    public init(parsing text: String) throws {
        self = try JSONParser.parse(Array(text.utf8))
    }

    /// The compact UTF-8 encoding (keys in stored order).
    public var bytes: [UInt8] {
        var writer = JSONWriter()
        writer.write(self)
        return writer.bytes
    }

    /// Pretty-printed text with two-space indentation, for display.
    public func prettyPrinted() -> String {
        var writer = JSONWriter(indent: 2)
        writer.write(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The compact text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public subscript(key: String) -> JSON? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The name of this value's JSON kind, for error messages (never the value itself).
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// Structural equality that ignores object key order and treats `1` and `1.0` as equal.
    public func isEquivalent(to other: JSON) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): return Double(a) == b && b.rounded() == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isEquivalent(to: $1) }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            for (key, value) in a.pairs {
                guard let other = b[key], value.isEquivalent(to: other) else { return false }
            }
            return true
        default: return false
        }
    }
}

/// An ordered JSON object. Lookups are linear, which is faster than hashing for the small objects
/// CloudKit sends (a record has a dozen keys); large objects are walked once when decoded.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public var pairs: [(key: String, value: JSON)]

    public init() { pairs = [] }
    public init(pairs: [(key: String, value: JSON)]) { self.pairs = pairs }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        pairs = elements.map { (key: $0.0, value: $0.1) }
    }

    public var count: Int { pairs.count }
    public var isEmpty: Bool { pairs.isEmpty }
    public var keys: [String] { pairs.map(\.key) }

    /// The last value stored under `key` (JSON's usual "last duplicate wins").
    public subscript(key: String) -> JSON? {
        get {
            var i = pairs.count - 1
            while i >= 0 {
                if pairs[i].key == key { return pairs[i].value }
                i -= 1
            }
            return nil
        }
        set {
            if let index = pairs.lastIndex(where: { $0.key == key }) {
                if let newValue { pairs[index].value = newValue } else { pairs.remove(at: index) }
            } else if let newValue {
                pairs.append((key: key, value: newValue))
            }
        }
    }

    /// Appends a pair when the value is present; keeps builders short.
    public mutating func set(_ key: String, _ value: JSON?) {
        if let value { pairs.append((key: key, value: value)) }
    }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSON)]> { pairs.makeIterator() }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.pairs.count == rhs.pairs.count
            && zip(lhs.pairs, rhs.pairs).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(pairs.count)
        for pair in pairs {
            hasher.combine(pair.key)
            hasher.combine(pair.value)
        }
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(JSONObject(pairs: elements.map { (key: $0.0, value: $0.1) }))
    }
    public init(nilLiteral: ()) { self = .null }
}
