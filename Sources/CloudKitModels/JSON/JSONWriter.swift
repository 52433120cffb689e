/// Serialises `JSON` to UTF-8. Compact by default; keys are written in stored order. The local
/// server also writes already-encoded parts through it (`raw`), see `StoredRecord.write(into:)`.
package struct JSONWriter {
    package private(set) var bytes: [UInt8] = []
    private let indent: Int
    private var level = 0

    package init(indent: Int = 0, capacity: Int = 256) {
        self.indent = indent
        bytes.reserveCapacity(capacity)
    }

    /// Bytes that are already JSON (or punctuation), copied as they are. Contiguous bytes (a native
    /// string's UTF-8, an array) are copied at once: called from another module this function is not
    /// specialized, and appending a generic sequence goes element by element.
    package mutating func raw(_ encoded: some Sequence<UInt8>) {
        if encoded.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
            bytes.append(contentsOf: encoded)
        }
    }

    package mutating func raw(_ encoded: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: encoded)
    }

    /// A JSON integer, written without making a `String`.
    package mutating func writeInt(_ value: Int64) {
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    package mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    package mutating func write(_ value: JSON) {
        switch value {
        case .null: append("null")
        case .bool(let b): append(b ? "true" : "false")
        case .int(let i): writeInt(i)
        case .double(let d): writeDouble(d)
        case .string(let s): writeString(s)
        case .array(let elements):
            if elements.isEmpty { return append("[]") }
            bytes.append(UInt8(ascii: "["))
            level += 1
            for (i, element) in elements.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                newline()
                write(element)
            }
            level -= 1
            newline()
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            if object.isEmpty { return append("{}") }
            bytes.append(UInt8(ascii: "{"))
            level += 1
            for (i, pair) in object.pairs.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                newline()
                writeString(pair.key)
                bytes.append(UInt8(ascii: ":"))
                if indent > 0 { bytes.append(UInt8(ascii: " ")) }
                write(pair.value)
            }
            level -= 1
            newline()
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private mutating func newline() {
        guard indent > 0 else { return }
        bytes.append(0x0A)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: level * indent))
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Shortest text that reads back as the same Double; integral values keep a `.0` so an untyped
    /// value is still inferred as DOUBLE. Non-finite values have no JSON form and are written as null.
    private mutating func writeDouble(_ d: Double) {
        guard d.isFinite else { return append("null") }
        append(d.description)
    }

    package mutating func writeString(_ s: String) {
        var s = s
        s.withUTF8 { writeString(utf8: $0) }
    }

    /// A string given as UTF-8 bytes, which must be valid UTF-8 (they are copied as they are, escapes
    /// aside).
    package mutating func writeString(utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        writeStringContents(utf8: utf8)
        bytes.append(UInt8(ascii: "\""))
    }

    /// `writeString(utf8:)` without the quotes: a string written in pieces, each escaped as it comes
    /// (escaping goes byte by byte, so the pieces read as the string they make).
    package mutating func writeStringContents(utf8: UnsafeBufferPointer<UInt8>) {
        // Runs of bytes that need no escaping are copied at once; eight bytes are checked at a time
        // (a control character, '"' or '\\' among them?) until one needs a closer look.
        var start = 0
        var i = 0
        if let base = utf8.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= utf8.count, !Self.mayNeedEscape(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { i += 8 }
        }
        while i < utf8.count {
            defer { i += 1 }
            let byte = utf8[i]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if start < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i])) }
            writeEscape(byte)
            start = i + 1
        }
        if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...])) }
    }

    /// `writeStringContents(utf8:)` of a string's UTF-8.
    package mutating func writeStringContents(_ s: String) {
        var s = s
        s.withUTF8 { writeStringContents(utf8: $0) }
    }

    /// Writes `utf8` as a JSON string when every byte is printable ASCII other than '"' and '\\' (names,
    /// tags, record types: nothing to check further or escape), checked eight bytes at a time; answers
    /// false, having written nothing, otherwise.
    package mutating func writePlainASCIIString(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = utf8.count
        var i = 0
        if let base = utf8.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= count {
                let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if word & 0x8080_8080_8080_8080 != 0 || Self.mayNeedEscape(word) { return false }
                i += 8
            }
        }
        while i < count {
            let byte = utf8[i]
            if byte >= 0x80 || byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            i += 1
        }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: utf8)
        bytes.append(UInt8(ascii: "\""))
        return true
    }

    /// Whether any of eight bytes is below 0x20, '"' or '\\' (exact: the classic "has a zero byte" and
    /// "has a byte less than n" word tricks, whose answers as a whole have no false positives).
    @inline(__always)
    private static func mayNeedEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word & highs
        let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote & highs
        let hasBackslash = (backslash &- ones) & ~backslash & highs
        return control | hasQuote | hasBackslash != 0
    }

    private mutating func writeEscape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): append("\\\"")
        case UInt8(ascii: "\\"): append("\\\\")
        case 0x0A: append("\\n")
        case 0x0D: append("\\r")
        case 0x09: append("\\t")
        case 0x08: append("\\b")
        case 0x0C: append("\\f")
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }
}
