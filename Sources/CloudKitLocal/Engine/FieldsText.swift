import CloudKitWeb

/// A record's stored `fields` text (`{"name":{…},…}`, names sorted, as `Record.encodeStoredFields`
/// writes it) changed without decoding it: a partial update (`update`/`forceUpdate`) sets or removes a
/// few fields of a record that may hold many, and parsing every stored value into a `FieldValue` and
/// encoding them all again was two fifths of what a batch paid per operation.
enum FieldsText {
    /// The stored text with `updates` applied (a `.null` value removes its field), byte for byte what
    /// decoding, merging and `Record.encodeStoredFields` would give; nil when the text is not in the
    /// shape this server writes (the caller then takes the decoding path).
    ///
    /// One pass over the stored entries, which are sorted: each is copied as it is unless an update
    /// names it, and the updates (sorted, a few) go in where they sort. A text whose names are not
    /// strictly ascending was not written by this server, and is left to the decoder.
    static func merge(_ stored: String, _ updates: [String: FieldValue]) -> String? {
        let pending = updates.keys.sorted()
        var next = 0
        var stored = stored
        var writer = JSONWriter(capacity: stored.utf8.count + updates.count * 64 + 2)
        var first = true
        func writeEntry(_ name: String, _ write: (inout JSONWriter) -> Void) {
            if !first { writer.raw(",") }
            first = false
            writer.writeString(name)
            writer.raw(":")
            write(&writer)
        }
        func writeUpdate(_ name: String) {
            let value = updates[name]!
            if case .null = value { return }
            writeEntry(name) { $0.raw(value.json.bytes) }
        }
        writer.raw("{")
        let complete = stored.withUTF8 { bytes -> Bool in
            var previous: String?
            return forEachEntry(bytes) { nameRange, valueRange in
                let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[nameRange]), as: UTF8.self)
                if let previous, !(previous < name) { return false }
                previous = name
                while next < pending.count, pending[next] < name {
                    writeUpdate(pending[next])
                    next += 1
                }
                if next < pending.count, pending[next] == name {
                    writeUpdate(name)
                    next += 1
                } else {
                    writeEntry(name) { $0.raw(UnsafeBufferPointer(rebasing: bytes[valueRange])) }
                }
                return true
            }
        }
        guard complete else { return nil }
        while next < pending.count {
            writeUpdate(pending[next])
            next += 1
        }
        writer.raw("}")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Calls `body` with the byte ranges of each top-level name (without its quotes) and value, in
    /// order; false when the text is not an object in the shape this server writes (names with
    /// escapes included), or when `body` answers false.
    static func forEachEntry(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>, Range<Int>) -> Bool) -> Bool {
        var i = 0
        func skipSpace() { while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 } }
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return false }
        i += 1
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { return true }
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "\"") else { return false }
            let nameStart = i + 1
            i = nameStart
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
                if bytes[i] == UInt8(ascii: "\\") { return false }
                i += 1
            }
            guard i < bytes.count else { return false }
            let nameEnd = i
            i += 1
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return false }
            i += 1
            skipSpace()
            let valueStart = i
            guard let valueEnd = endOfValue(bytes, from: i) else { return false }
            guard body(nameStart..<nameEnd, valueStart..<valueEnd) else { return false }
            i = valueEnd
            skipSpace()
            guard i < bytes.count else { return false }
            if bytes[i] == UInt8(ascii: "}") { return true }
            guard bytes[i] == UInt8(ascii: ",") else { return false }
            i += 1
            skipSpace()
        }
        return false
    }

    /// The top-level names and the bytes of their values. Names with escapes are left to the decoder.
    static func entries(of bytes: [UInt8]) -> [String: ArraySlice<UInt8>]? {
        var entries: [String: ArraySlice<UInt8>] = [:]
        let complete = bytes.withUnsafeBufferPointer { buffer in
            forEachEntry(buffer) { name, value in
                entries[String(decoding: bytes[name], as: UTF8.self)] = bytes[value]
                return true
            }
        }
        return complete ? entries : nil
    }

    /// Where the JSON value starting at `start` ends: after its closing bracket for objects and
    /// arrays (strings inside skipped with their escapes), at the next `,` `}` `]` or space otherwise.
    static func endOfValue(_ bytes: [UInt8], from start: Int) -> Int? {
        bytes.withUnsafeBufferPointer { endOfValue($0, from: start) }
    }

    static func endOfValue(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        var depth = 0
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\""):
                i = closingQuote(bytes, from: i + 1)
                guard i < bytes.count else { return nil }
                if depth == 0 { return i + 1 }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return i }
                depth -= 1
                if depth == 0 { return i + 1 }
            case UInt8(ascii: ","), 0x20, 0x0A, 0x0D, 0x09:
                if depth == 0 { return i }
            default:
                break
            }
            i += 1
        }
        return depth == 0 && i > start ? i : nil
    }

    /// The index of the quote that ends a string whose text starts at `start` (escapes skipped), or
    /// `bytes.count` when none does. Eight bytes are checked at a time until one may be a quote or a
    /// backslash: the text of checksums, keys and names has neither (an asset dictionary's are most of
    /// what the download links read through, `LocalCloudKit.downloadLinks`).
    static func closingQuote(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let count = bytes.count
        guard let base = bytes.baseAddress else { return count }
        let raw = UnsafeRawPointer(base)
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        var i = start
        while i < count {
            while i + 8 <= count {
                let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
                // The classic "has a zero byte" test on each: exact as a whole.
                guard ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash) & highs == 0 else { break }
                i += 8
            }
            while i < count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\") { i += 1 }
            guard i < count else { return count }
            if bytes[i] == UInt8(ascii: "\"") { return i }
            i += 2
        }
        return count
    }
}
