import CloudKitModels
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why typed text is not a valid value for a field (shown in place; nothing is staged).
public struct FieldInputError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The inline editor's rules: the text form of each field type, and its validation.
///
/// | type | text |
/// |---|---|
/// | STRING | any text, newlines included |
/// | INT64 | an integer in INT64's range (`true`/`false` for 1/0: CloudKit has no boolean) |
/// | DOUBLE | a finite number |
/// | TIMESTAMP | ISO-8601 (`2024-03-01T12:00:00Z`, `…12:00:00.250+01:00`, `2024-03-01`) or epoch milliseconds |
/// | BYTES | base64, or hex with a `0x` or `hex:` prefix |
/// | REFERENCE | `recordName [NONE\|DELETE_SELF\|VALIDATE] [zone ZONE [owner OWNER]]` |
/// | LOCATION | `latitude, longitude [± accuracy] [alt metres [± accuracy]] [vacc metres] [course degrees] [speed m/s] [at TIME]` |
/// | *_LIST | a JSON array, or one element per line |
///
/// `text(of:)` writes every part a value has, so text left untouched parses back to the same value
/// (`parse(text(of: v), as: v.type, original: v) == v`): nothing is lost by opening the editor.
public enum FieldInput {
    /// `original`: the value being edited, for the parts the text form leaves implicit (a reference
    /// that had no action keeps none; a reference's zone keeps its owner and type).
    public static func parse(_ text: String, as type: FieldType, original: FieldValue? = nil) -> Result<FieldValue, FieldInputError> {
        do { return .success(try value(text, type, original: original)) } catch let error as FieldInputError { return .failure(error) } catch {
            return .failure(FieldInputError("\(error)"))
        }
    }

    static func value(_ raw: String, _ type: FieldType, original: FieldValue? = nil) throws -> FieldValue {
        if type.isList, let elementType = type.elementType { return try list(raw, elementType, type, original: original) }
        let text = type == .string ? raw : raw.trimmingWhitespace()
        switch type {
        case .string: return .string(text)
        case .int64:
            if text == "true" { return .int64(1) }
            if text == "false" { return .int64(0) }
            guard let value = Int64(text) else {
                if text.allSatisfy({ $0.isNumber || $0 == "-" || $0 == "+" }) && !text.isEmpty {
                    throw FieldInputError("\(text) is outside INT64's range (\(Int64.min) … \(Int64.max))")
                }
                throw FieldInputError("INT64 needs a whole number, e.g. 42 or -7")
            }
            return .int64(value)
        case .double:
            guard let value = Double(text), value.isFinite else { throw FieldInputError("DOUBLE needs a finite number, e.g. 3.25 or -1e-3") }
            return .double(value)
        case .timestamp: return .timestamp(try timestamp(text))
        case .bytes: return .bytes(try bytes(text))
        case .reference:
            if case .reference(let old)? = original { return .reference(try reference(text, original: old)) }
            return .reference(try reference(text, original: nil))
        case .location: return .location(try location(text))
        case .assetID, .asset: throw FieldInputError("assets are uploaded, not typed: this field cannot be edited here")
        default: throw FieldInputError("fields of type \(type.rawValue) cannot be edited here")
        }
    }

    static func list(_ text: String, _ elementType: FieldType, _ listType: FieldType, original: FieldValue? = nil) throws -> FieldValue {
        let originals = original?.isList == true ? original!.listElements : []
        var items: [String]
        let trimmed = text.trimmingWhitespace()
        if trimmed.hasPrefix("[") {
            guard case .array(let elements)? = try? JSON(parsing: trimmed) else { throw FieldInputError("the list is not a valid JSON array") }
            items = elements.map { element in
                if case .string(let s) = element { return s }
                return element.text
            }
        } else {
            items = trimmed.isEmpty ? [] : trimmed.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        }
        var values: [FieldValue] = []
        for (i, item) in items.enumerated() {
            do { values.append(try value(item, elementType, original: originals.indices.contains(i) ? originals[i] : nil)) } catch let error as FieldInputError {
                throw FieldInputError("element \(i): \(error.description)")
            }
        }
        switch elementType {
        case .string: return .stringList(values.compactMap { if case .string(let v) = $0 { return v } else { return nil } })
        case .int64: return .int64List(values.compactMap { if case .int64(let v) = $0 { return v } else { return nil } })
        case .double: return .doubleList(values.compactMap { if case .double(let v) = $0 { return v } else { return nil } })
        case .timestamp: return .timestampList(values.compactMap { if case .timestamp(let v) = $0 { return v } else { return nil } })
        case .bytes: return .bytesList(values.compactMap { if case .bytes(let v) = $0 { return v } else { return nil } })
        case .reference: return .referenceList(values.compactMap { if case .reference(let v) = $0 { return v } else { return nil } })
        case .location: return .locationList(values.compactMap { if case .location(let v) = $0 { return v } else { return nil } })
        default: throw FieldInputError("lists of \(elementType.rawValue) cannot be edited here")
        }
    }

    /// ISO-8601 date-time (fractional seconds to the millisecond, `Z` or an offset), a plain date (UTC
    /// midnight), or integral epoch milliseconds.
    static func timestamp(_ text: String) throws -> Int64 {
        if let ms = Int64(text) { return ms }
        let pattern = #/^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/#
        guard let m = text.wholeMatch(of: pattern) else {
            throw FieldInputError("TIMESTAMP needs ISO-8601 (2024-03-01T12:00:00Z) or epoch milliseconds (1709294400000)")
        }
        let year = Int64(m.1)!, month = Int64(m.2)!, day = Int64(m.3)!
        let hour = m.4.map { Int64($0)! } ?? 0, minute = m.5.map { Int64($0)! } ?? 0, second = m.6.map { Int64($0)! } ?? 0
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else {
            throw FieldInputError("\(text) is not a valid date and time")
        }
        var millis: Int64 = 0
        if let fraction = m.7 {
            let digits = String(fraction)
            if digits.count > 3 && digits.dropFirst(3).contains(where: { $0 != "0" }) {
                throw FieldInputError("TIMESTAMP keeps whole milliseconds; \(digits.count) fractional digits is too precise")
            }
            millis = Int64(String((digits + "00").prefix(3)))!
        }
        var offsetSeconds: Int64 = 0
        if let zone = m.8, zone != "Z" {
            let sign: Int64 = zone.hasPrefix("-") ? -1 : 1
            let digits = zone.dropFirst().filter(\.isNumber)
            offsetSeconds = sign * (Int64(digits.prefix(2))! * 3600 + Int64(digits.suffix(2))! * 60)
        } else if m.4 != nil && m.8 == nil {
            throw FieldInputError("add a time zone to the time (Z for UTC, or +01:00)")
        }
        let days = ISO8601.daysSinceEpoch(year: year, month: month, day: day)
        return (days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds) * 1000 + millis
    }

    static func bytes(_ text: String) throws -> Data {
        let lower = text.lowercased()
        if lower.hasPrefix("0x") || lower.hasPrefix("hex:") {
            let hex = lower.hasPrefix("0x") ? lower.dropFirst(2) : lower.dropFirst(4)
            let digits = hex.filter { !$0.isWhitespace }
            guard digits.count % 2 == 0, digits.allSatisfy(\.isHexDigit) else { throw FieldInputError("hex BYTES need an even number of hex digits") }
            var data = Data()
            var index = digits.startIndex
            while index < digits.endIndex {
                let next = digits.index(index, offsetBy: 2)
                data.append(UInt8(digits[index..<next], radix: 16)!)
                index = next
            }
            return data
        }
        guard let data = Data(base64Encoded: text) else { throw FieldInputError("BYTES need base64 (AAEC/w==) or hex with 0x (0x0001ff)") }
        return data
    }

    static let referenceUsage = "REFERENCE is: recordName [NONE|DELETE_SELF|VALIDATE] [zone ZONE [owner OWNER]]"

    /// `artist-1 VALIDATE`, `folder-1 DELETE_SELF zone Notes`. No action word: NONE, except that a
    /// reference which had no action keeps none. A zone named as the original's keeps its owner and type.
    /// Whether a REFERENCE as typed names its action (`NONE`, `DELETE_SELF`, `VALIDATE`).
    static func namesReferenceAction(_ text: String) -> Bool {
        text.split(whereSeparator: \.isWhitespace).dropFirst().contains { referenceActions.contains(ReferenceAction(rawValue: $0.uppercased())) }
    }

    /// The actions a REFERENCE takes when typed.
    static let referenceActions: [ReferenceAction] = [.noAction, .deleteSelf, .validate]

    static func reference(_ text: String, original: Reference?) throws -> Reference {
        var words = text.split(whereSeparator: \.isWhitespace).map(String.init)[...]
        guard let name = words.popFirst() else { throw FieldInputError(referenceUsage) }
        var reference = Reference(recordName: name, action: original != nil && original?.action == nil ? nil : .noAction)
        var sawAction = false
        while let word = words.popFirst() {
            switch word.lowercased() {
            case "zone":
                guard let zone = words.popFirst(), reference.zoneID == nil else { throw FieldInputError(referenceUsage) }
                reference.zoneID = original?.zoneID?.zoneName == zone ? original?.zoneID : ZoneID(zoneName: zone)
            case "owner":
                guard let owner = words.popFirst(), reference.zoneID != nil else { throw FieldInputError("owner comes after zone: \(referenceUsage)") }
                if reference.zoneID?.ownerRecordName != owner {
                    reference.zoneID = ZoneID(zoneName: reference.zoneID!.zoneName, ownerRecordName: owner, zoneType: original?.zoneID?.zoneType)
                }
            default:
                let action = ReferenceAction(rawValue: word.uppercased())
                guard !sawAction, referenceActions.contains(action) else {
                    throw FieldInputError(sawAction ? referenceUsage : "unknown reference action '\(word)': \(referenceUsage)")
                }
                sawAction = true
                reference.action = action
            }
        }
        return reference
    }

    static let locationUsage = "LOCATION is: latitude, longitude [± metres] [alt metres [± metres]] [course degrees] [speed m/s] [at TIME]"

    /// `48.8619, 2.3376 ± 5.0 alt 35.0 ± 2.0 course 90.0 speed 1.5 at 2024-03-01T11:06:40Z`: every part
    /// after the coordinates optional (`vacc N` is the vertical accuracy of a location without altitude).
    static func location(_ text: String) throws -> Location {
        var tokens = text.replacing("+/-", with: "±").replacing("±", with: " ± ").replacing(",", with: " , ")
            .split(whereSeparator: \.isWhitespace).map(String.init)[...]
        func number(_ what: String) throws -> Double {
            guard let token = tokens.popFirst() else { throw FieldInputError("\(what) is missing: \(locationUsage)") }
            var digits = Substring(token)
            for unit in ["m/s", "m", "°"] where digits.hasSuffix(unit) { digits = digits.dropLast(unit.count) }
            guard let value = Double(digits), value.isFinite else { throw FieldInputError("\(what) must be a number, not '\(token)': \(locationUsage)") }
            return value
        }
        let lat = try number("the latitude")
        if tokens.first == "," { tokens.removeFirst() }
        let lon = try number("the longitude")
        guard (-90...90).contains(lat), (-180...180).contains(lon) else { throw FieldInputError("latitude must be within ±90 and longitude within ±180") }
        var location = Location(latitude: lat, longitude: lon)
        func accuracy(_ what: String) throws -> Double {
            let value = try number(what)
            guard value >= 0 else { throw FieldInputError("\(what) is a distance: it cannot be negative") }
            return value
        }
        if tokens.first == "±" || tokens.first == "," {
            tokens.removeFirst()
            location.horizontalAccuracy = try accuracy("the accuracy")
        }
        var seen: Set<String> = []
        while let word = tokens.popFirst()?.lowercased() {
            let part = ["altitude": "alt", "time": "at"][word] ?? word
            guard seen.insert(part).inserted else { throw FieldInputError("'\(word)' is given twice") }
            switch part {
            case "alt":
                location.altitude = try number("the altitude")
                if tokens.first == "±" {
                    tokens.removeFirst()
                    guard location.verticalAccuracy == nil else { throw FieldInputError("the vertical accuracy is given twice") }
                    location.verticalAccuracy = try accuracy("the vertical accuracy")
                }
            case "vacc":
                guard location.verticalAccuracy == nil else { throw FieldInputError("the vertical accuracy is given twice") }
                location.verticalAccuracy = try accuracy("the vertical accuracy")
            case "course": location.course = try number("the course")
            case "speed": location.speed = try number("the speed")
            case "at":
                guard let time = tokens.popFirst() else { throw FieldInputError("the time is missing after 'at': ISO-8601 or epoch milliseconds") }
                location.timestamp = try timestamp(time)
            default: throw FieldInputError("'\(word)' is not part of a location: \(locationUsage)")
            }
        }
        return location
    }

    /// The editable text of a location: every part it has.
    static func text(of l: Location) -> String {
        var text = "\(l.latitude), \(l.longitude)"
        if let h = l.horizontalAccuracy { text += " ± \(h)" }
        if let a = l.altitude {
            text += " alt \(a)"
            if let v = l.verticalAccuracy { text += " ± \(v)" }
        } else if let v = l.verticalAccuracy {
            text += " vacc \(v)"
        }
        if let c = l.course { text += " course \(c)" }
        if let s = l.speed { text += " speed \(s)" }
        if let t = l.timestamp { text += " at \(ISO8601Milliseconds.string(t))" }
        return text
    }

    /// The editable text of a reference: name, action (none when it has none) and zone when it names one.
    static func text(of r: Reference) -> String {
        var text = r.recordName
        if let action = r.action { text += " " + action.rawValue }
        if let zone = r.zoneID {
            text += " zone " + zone.zoneName
            if let owner = zone.ownerRecordName { text += " owner " + owner }
        }
        return text
    }

    /// The editable text of a value (the inverse of `parse` for editable types).
    public static func text(of value: FieldValue) -> String {
        switch value {
        case .string(let s): return s
        case .int64(let i): return String(i)
        case .double(let d): return d.description
        case .timestamp(let t): return ISO8601Milliseconds.string(t)
        case .bytes(let d): return d.base64EncodedString()
        case .reference(let r): return text(of: r)
        case .location(let l): return text(of: l)
        case .null: return ""
        default:
            guard value.isList else { return value.wireValue.text }
            let texts = value.listElements.map(text(of:))
            // One element per line reads best; where lines would lose something (an empty element, a
            // line break or edge spaces in one, a first element that looks like JSON), a JSON array.
            let lossy = texts.contains { $0.isEmpty || $0.contains("\n") || $0.first?.isWhitespace == true || $0.last?.isWhitespace == true }
                || texts.first?.hasPrefix("[") == true
            guard lossy else { return texts.joined(separator: "\n") }
            return JSON.array(texts.map(JSON.string)).text
        }
    }
}

/// `2024-03-01T12:00:00.250Z` (milliseconds only when not zero).
enum ISO8601Milliseconds {
    static func string(_ ms: Int64) -> String {
        let seconds = Double(ms.floorDivided(by: 1000))
        let base = ISO8601.string(from: Date(timeIntervalSince1970: seconds))
        let rest = ms - ms.floorDivided(by: 1000) * 1000
        guard rest != 0 else { return base }
        let digits = String(rest)
        return String(base.dropLast()) + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }
}

extension Int64 {
    func floorDivided(by d: Int64) -> Int64 { self >= 0 ? self / d : -((-self + d - 1) / d) }
}
