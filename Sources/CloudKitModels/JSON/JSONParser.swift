/// A fast, strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// It exists because Foundation's `JSONDecoder` decodes CloudKit change pages at roughly a sixth of
/// the speed of CPython's `json.loads`. It is strict where `JSONDecoder` is strict (no trailing commas,
/// no comments, no NaN, valid UTF-8, no lone surrogates), bounds nesting depth so hostile input cannot
/// overflow the stack, and is fuzzed and compared with `JSONDecoder` in the tests.
enum JSONParser {
    /// Deeper documents are refused; CloudKit dictionaries nest fewer than 10 levels.
    static let maximumDepth = 512

    static func parse<Bytes: Collection>(_ bytes: Bytes) throws -> JSON where Bytes.Element == UInt8 {
        if let result = try bytes.withContiguousStorageIfAvailable({ try parse(buffer: $0) }) {
            return result
        }
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { try parse(buffer: $0) }
    }

    static func parse(buffer: UnsafeBufferPointer<UInt8>) throws -> JSON {
        var cursor = Cursor(buffer: buffer)
        cursor.skipWhitespace()
        let value = try cursor.parseValue(depth: 0)
        cursor.skipWhitespace()
        if cursor.index != buffer.count {
            throw cursor.error("unexpected data after the top-level value")
        }
        return value
    }

    struct Cursor {
        let buffer: UnsafeBufferPointer<UInt8>
        var index = 0
        /// Scratch space for strings with escapes, reused across strings.
        var scratch: [UInt8] = []

        init(buffer: UnsafeBufferPointer<UInt8>) {
            self.buffer = buffer
            scratch.reserveCapacity(64)
        }

        func error(_ message: String, at offset: Int? = nil) -> JSONDecodingError {
            JSONDecodingError(offset: offset ?? index, message: message)
        }

        @inline(__always)
        mutating func skipWhitespace() {
            while index < buffer.count {
                switch buffer[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        mutating func parseValue(depth: Int) throws -> JSON {
            guard index < buffer.count else { throw error("unexpected end of input") }
            switch buffer[index] {
            case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
            case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
            case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
            case UInt8(ascii: "n"): try expectLiteral("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
            default: throw error("unexpected character")
            }
        }

        mutating func expectLiteral(_ literal: StaticString) throws {
            let count = literal.utf8CodeUnitCount
            guard buffer.count - index >= count else { throw error("unexpected end of input") }
            let start = literal.utf8Start
            for i in 0..<count where buffer[index + i] != start[i] {
                throw error("invalid literal")
            }
            index += count
        }

        mutating func parseObject(depth: Int) throws -> JSON {
            guard depth <= JSONParser.maximumDepth else { throw error("nesting deeper than \(JSONParser.maximumDepth)") }
            index += 1  // {
            var pairs: [(key: String, value: JSON)] = []
            skipWhitespace()
            if index < buffer.count, buffer[index] == UInt8(ascii: "}") {
                index += 1
                return .object(JSONObject(pairs: pairs))
            }
            pairs.reserveCapacity(4)
            while true {
                skipWhitespace()
                guard index < buffer.count else { throw error("unexpected end of input in an object") }
                guard buffer[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
                let key = try parseString()
                skipWhitespace()
                guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
                index += 1
                skipWhitespace()
                let value = try parseValue(depth: depth)
                pairs.append((key: key, value: value))
                skipWhitespace()
                guard index < buffer.count else { throw error("unexpected end of input in an object") }
                let byte = buffer[index]
                index += 1
                if byte == UInt8(ascii: ",") { continue }
                if byte == UInt8(ascii: "}") { return .object(JSONObject(pairs: pairs)) }
                throw error("expected ',' or '}'", at: index - 1)
            }
        }

        mutating func parseArray(depth: Int) throws -> JSON {
            guard depth <= JSONParser.maximumDepth else { throw error("nesting deeper than \(JSONParser.maximumDepth)") }
            index += 1  // [
            var elements: [JSON] = []
            skipWhitespace()
            if index < buffer.count, buffer[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try parseValue(depth: depth))
                skipWhitespace()
                guard index < buffer.count else { throw error("unexpected end of input in an array") }
                let byte = buffer[index]
                index += 1
                if byte == UInt8(ascii: ",") { continue }
                if byte == UInt8(ascii: "]") { return .array(elements) }
                throw error("expected ',' or ']'", at: index - 1)
            }
        }

        mutating func parseString() throws -> String {
            let start = index + 1
            var i = start
            var ascii = true
            // Fast path: no escapes. Scan to the closing quote.
            while i < buffer.count {
                let byte = buffer[i]
                if byte == UInt8(ascii: "\"") {
                    index = i + 1
                    let slice = UnsafeBufferPointer(rebasing: buffer[start..<i])
                    if ascii { return String(decoding: slice, as: UTF8.self) }
                    guard let string = String(validating: slice, as: UTF8.self) else {
                        throw error("invalid UTF-8 in a string", at: start)
                    }
                    return string
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw error("unescaped control character in a string", at: i) }
                if byte >= 0x80 { ascii = false }
                i += 1
            }
            guard i < buffer.count else { throw error("unterminated string", at: start - 1) }
            // Slow path: copy with escapes resolved.
            scratch.removeAll(keepingCapacity: true)
            scratch.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<i]))
            index = i
            while true {
                guard index < buffer.count else { throw error("unterminated string", at: start - 1) }
                let byte = buffer[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    guard let string = String(validating: scratch, as: UTF8.self) else {
                        throw error("invalid UTF-8 in a string", at: start)
                    }
                    return string
                }
                if byte < 0x20 { throw error("unescaped control character in a string") }
                if byte != UInt8(ascii: "\\") {
                    scratch.append(byte)
                    index += 1
                    continue
                }
                index += 1
                guard index < buffer.count else { throw error("unterminated escape") }
                let escape = buffer[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scratch.append(0x22)
                case UInt8(ascii: "\\"): scratch.append(0x5C)
                case UInt8(ascii: "/"): scratch.append(0x2F)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard buffer.count - index >= 6, buffer[index] == UInt8(ascii: "\\"),
                            buffer[index + 1] == UInt8(ascii: "u")
                        else { throw error("lone high surrogate in a \\u escape") }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid surrogate pair") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw error("lone low surrogate in a \\u escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                    scratch.append(contentsOf: UTF8.encode(unicode)!)
                default:
                    throw error("invalid escape character", at: index - 1)
                }
            }
        }

        mutating func parseHex4() throws -> UInt32 {
            guard buffer.count - index >= 4 else { throw error("truncated \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = buffer[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw error("invalid hex digit in a \\u escape")
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }

        mutating func parseNumber() throws -> JSON {
            let start = index
            var negative = false
            if buffer[index] == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid number", at: start) }
            if buffer[index] == UInt8(ascii: "0") {
                index += 1
                if index < buffer.count, isDigit(buffer[index]) { throw error("leading zero in a number", at: start) }
            } else {
                while index < buffer.count, isDigit(buffer[index]) { index += 1 }
            }
            var isInteger = true
            if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid fraction", at: start) }
                while index < buffer.count, isDigit(buffer[index]) { index += 1 }
            }
            if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
                isInteger = false
                index += 1
                if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid exponent", at: start) }
                while index < buffer.count, isDigit(buffer[index]) { index += 1 }
            }
            if isInteger {
                // Accumulate negatively so Int64.min parses; overflow falls through to Double.
                var value: Int64 = 0
                var overflow = false
                var i = negative ? start + 1 : start
                while i < index {
                    let digit = Int64(buffer[i] &- UInt8(ascii: "0"))
                    let (m, o1) = value.multipliedReportingOverflow(by: 10)
                    let (s, o2) = m.subtractingReportingOverflow(digit)
                    if o1 || o2 {
                        overflow = true
                        break
                    }
                    value = s
                    i += 1
                }
                if !overflow {
                    if negative { return .int(value) }
                    if value != Int64.min { return .int(-value) }
                }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
            guard let double = Double(text), double.isFinite else { throw error("number out of range", at: start) }
            return .double(double)
        }

        @inline(__always)
        func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
    }
}
