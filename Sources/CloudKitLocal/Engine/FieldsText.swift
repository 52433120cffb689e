import CloudKitWeb

/// A record's stored `fields` text (`{"name":{…},…}`, names sorted, as `Record.encodeStoredFields`
/// writes it) changed without decoding it: a partial update (`update`/`forceUpdate`) sets or removes a
/// few fields of a record that may hold many, and parsing every stored value into a `FieldValue` and
/// encoding them all again was two fifths of what a batch paid per operation.
enum FieldsText {
    /// The stored text with `updates` applied (a `.null` value removes its field), byte for byte what
    /// decoding, merging and `Record.encodeStoredFields` would give; nil when the text is not in the
    /// shape this server writes (the caller then takes the decoding path).
    static func merge(_ stored: String, _ updates: [String: FieldValue]) -> String? {
        guard var entries = entries(of: Array(stored.utf8)) else { return nil }
        for (name, value) in updates {
            if case .null = value { entries[name] = nil } else { entries[name] = value.json.bytes[...] }
        }
        var writer = JSONWriter(capacity: entries.values.reduce(2) { $0 + $1.count + 16 })
        writer.raw("{")
        for (index, name) in entries.keys.sorted().enumerated() {
            if index > 0 { writer.raw(",") }
            writer.writeString(name)
            writer.raw(":")
            writer.raw(entries[name]!)
        }
        writer.raw("}")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The top-level names and the bytes of their values. Names with escapes are left to the decoder.
    static func entries(of bytes: [UInt8]) -> [String: ArraySlice<UInt8>]? {
        var entries: [String: ArraySlice<UInt8>] = [:]
        var i = 0
        func skipSpace() { while i < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[i]) { i += 1 } }
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { return entries }
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "\"") else { return nil }
            let nameStart = i + 1
            i = nameStart
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
                if bytes[i] == UInt8(ascii: "\\") { return nil }
                i += 1
            }
            guard i < bytes.count else { return nil }
            let name = String(decoding: bytes[nameStart..<i], as: UTF8.self)
            i += 1
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            skipSpace()
            let valueStart = i
            guard let valueEnd = endOfValue(bytes, from: i) else { return nil }
            entries[name] = bytes[valueStart..<valueEnd]
            i = valueEnd
            skipSpace()
            guard i < bytes.count else { return nil }
            if bytes[i] == UInt8(ascii: "}") { return entries }
            guard bytes[i] == UInt8(ascii: ",") else { return nil }
            i += 1
            skipSpace()
        }
        return nil
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
                i += 1
                while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
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
}
