import CloudKitWeb
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
import CSQLite
import SQLiteDB

/// Writes a change feed's record straight from the current row of a statement that selected
/// `StoredRecord.columns`: the bytes `StoredRecord(row:parsingFields: false).write(into:)` writes, read
/// from SQLite's column buffers without making a `StoredRecord` (eight strings, each validated, copied,
/// retained and released, then written out again). Profiles of records/changes pages computed per
/// request spent about a third of their time doing that.
///
/// Text is checked on the way: valid UTF-8 (all this server writes) is copied as it is; anything else
/// goes through `String(decoding:)`, which replaces invalid UTF-8 as `Row`'s `String` conversion does. One deliberate
/// difference: a name with a NUL character is written whole (escaped), where `Row`'s C-string conversion
/// would cut it at the NUL.
enum RowJSON {
    /// Column positions in `StoredRecord.columns`.
    enum Column {
        static let name: Int32 = 1, type: Int32 = 2, tag: Int32 = 3, fields: Int32 = 4
        static let createdTimestamp: Int32 = 5, modifiedTimestamp: Int32 = 8
        static let shortGUID: Int32 = 11, parent: Int32 = 12, share: Int32 = 13, deleted: Int32 = 14, seq: Int32 = 15
        static let hasAssets: Int32 = 16
    }

    /// The row's fields hold an uploaded asset (its answer needs download URLs added).
    static func hasAssets(_ statement: SQLiteStatement) -> Bool { sqlite3_column_int64(statement, Column.hasAssets) != 0 }

    static func seq(_ statement: SQLiteStatement) -> Int64 { sqlite3_column_int64(statement, Column.seq) }
    static func isDeleted(_ statement: SQLiteStatement) -> Bool { sqlite3_column_int64(statement, Column.deleted) != 0 }

    /// Whether the row's record type is `type` (compared where SQLite holds the text, no `String` made).
    static func typeIs(_ statement: SQLiteStatement, _ type: StaticString, column: Int32 = Column.type) -> Bool {
        guard let bytes = text(statement, column), bytes.count == type.utf8CodeUnitCount, let base = bytes.baseAddress else { return false }
        return memcmp(base, type.utf8Start, bytes.count) == 0
    }

    /// The record type, made a `String` (only a `desiredRecordTypes` filter needs it).
    static func type(_ statement: SQLiteStatement) -> String? {
        text(statement, Column.type).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The row's stored fields text where SQLite holds it, valid until the statement steps again (nil
    /// for NULL or text that is not valid UTF-8).
    static func fieldsText(_ statement: SQLiteStatement) -> UnsafeBufferPointer<UInt8>? {
        guard let bytes = text(statement, Column.fields), isValidUTF8(bytes) else { return nil }
        return bytes
    }

    /// `{"recordName":…,"deleted":true}` for a tombstone, else the record as `StoredRecord.write` writes
    /// it: recordName, recordType, recordChangeTag, fields, pluginFields, created, modified, deleted,
    /// shortGUID, parent, share, zoneID. `deleted`: the row's `deleted` column, when the caller has read
    /// it; `fields`: the fields text to write instead of the row's (download URLs added); `zoneID`: the
    /// encoded `zoneID` dictionary a query's records end with.
    static func writeRecord(
        _ statement: SQLiteStatement, deleted: Bool? = nil, fields replaced: [UInt8]? = nil, zoneID: [UInt8]? = nil, into writer: inout JSONWriter
    ) {
        writer.raw(#"{"recordName":"#)
        writeString(statement, Column.name, into: &writer)
        if deleted ?? isDeleted(statement) {
            return writer.raw(#","deleted":true}"#)
        }
        if let type = text(statement, Column.type) {
            writer.raw(#","recordType":"#)
            writeString(type, into: &writer)
        }
        if let tag = text(statement, Column.tag) {
            writer.raw(#","recordChangeTag":"#)
            writeString(tag, into: &writer)
        }
        writer.raw(#","fields":"#)
        if let replaced {
            writer.raw(replaced)
        } else if let fields = text(statement, Column.fields) {
            if isValidUTF8(fields) { writer.raw(fields) } else { writer.raw(String(decoding: fields, as: UTF8.self).utf8) }
        } else {
            writer.raw("{}")
        }
        writer.raw(#","pluginFields":{}"#)
        writeStamp(statement, at: Column.createdTimestamp, key: #","created":"#, into: &writer)
        writeStamp(statement, at: Column.modifiedTimestamp, key: #","modified":"#, into: &writer)
        writer.raw(#","deleted":false"#)
        if let guid = text(statement, Column.shortGUID) {
            writer.raw(#","shortGUID":"#)
            writeString(guid, into: &writer)
        }
        writeLink(statement, Column.parent, key: #","parent":{"recordName":"#, into: &writer)
        writeLink(statement, Column.share, key: #","share":{"recordName":"#, into: &writer)
        if let zoneID {
            writer.raw(#","zoneID":"#)
            writer.raw(zoneID)
        }
        writer.raw("}")
    }

    /// `{"recordName":…,"deleted":true}`, the name read from `nameColumn`: what `writeRecord` writes for a
    /// tombstone.
    static func writeTombstone(_ statement: SQLiteStatement, nameColumn: Int32, into writer: inout JSONWriter) {
        writer.raw(#"{"recordName":"#)
        writeString(statement, nameColumn, into: &writer)
        writer.raw(#","deleted":true}"#)
    }

    /// `RecordStamp.json`: `{"timestamp":…,"userRecordName":…,"deviceID":…}`, the user and device columns
    /// following the timestamp's.
    private static func writeStamp(_ statement: SQLiteStatement, at column: Int32, key: StaticString, into writer: inout JSONWriter) {
        guard hasValue(statement, column) else { return }
        writer.raw(key)
        writer.raw(#"{"timestamp":"#)
        writer.writeInt(sqlite3_column_int64(statement, column))
        if let user = text(statement, column + 1) {
            writer.raw(#","userRecordName":"#)
            writeString(user, into: &writer)
        }
        if let device = text(statement, column + 2) {
            writer.raw(#","deviceID":"#)
            writeString(device, into: &writer)
        }
        writer.raw("}")
    }

    private static func writeLink(_ statement: SQLiteStatement, _ column: Int32, key: StaticString, into writer: inout JSONWriter) {
        guard let link = text(statement, column) else { return }
        writer.raw(key)
        writeString(link, into: &writer)
        writer.raw("}")
    }

    private static func writeString(_ statement: SQLiteStatement, _ column: Int32, into writer: inout JSONWriter) {
        writeString(text(statement, column) ?? UnsafeBufferPointer(start: nil, count: 0), into: &writer)
    }

    private static func writeString(_ bytes: UnsafeBufferPointer<UInt8>, into writer: inout JSONWriter) {
        // Most names are plain ASCII: one pass checks that and that nothing needs escaping.
        if writer.writePlainASCIIString(bytes) { return }
        if isValidUTF8(bytes) { writer.writeString(utf8: bytes) } else { writer.writeString(String(decoding: bytes, as: UTF8.self)) }
    }

    private static func hasValue(_ statement: SQLiteStatement, _ column: Int32) -> Bool {
        sqlite3_column_type(statement, column) != SQLITE_NULL
    }

    /// The column's text, valid until the statement steps again; nil for NULL (`sqlite3_column_text`
    /// answers a null pointer for NULL and a pointer to an empty string for empty text, so the type
    /// need not be asked first).
    static func text(_ statement: SQLiteStatement, _ column: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard let start = sqlite3_column_text(statement, column) else { return nil }
        // sqlite3_column_bytes after sqlite3_column_text: the length of the text form (SQLite's rule).
        return UnsafeBufferPointer(start: start, count: Int(sqlite3_column_bytes(statement, column)))
    }

    /// Whether `bytes` are well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF),
    /// as Swift's `String(validating:)` decides, without making a string. ASCII runs go 32 bytes at a
    /// time.
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let count = bytes.count
        var i = 0
        let highs: UInt64 = 0x8080_8080_8080_8080
        while i < count {
            // ASCII runs: 32 bytes a time, then 8.
            if i + 32 <= count,
                (raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) | raw.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)
                    | raw.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self) | raw.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self)) & highs == 0
            {
                i += 32
                continue
            }
            if i + 8 <= count, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & highs == 0 {
                i += 8
                continue
            }
            let lead = bytes[i]
            if lead < 0x80 {
                i += 1
                continue
            }
            // The allowed range of the second byte narrows for E0, ED, F0 and F4 (Unicode table 3-7).
            let continuation: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: continuation = 1
            case 0xE0: continuation = 2; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: continuation = 2
            case 0xED: continuation = 2; high = 0x9F
            case 0xF0: continuation = 3; low = 0x90
            case 0xF1...0xF3: continuation = 3
            case 0xF4: continuation = 3; high = 0x8F
            default: return false
            }
            guard i + continuation < count, (low...high).contains(bytes[i + 1]) else { return false }
            var k = 2
            while k <= continuation {
                guard bytes[i + k] & 0xC0 == 0x80 else { return false }
                k += 1
            }
            i += continuation + 1
        }
        return true
    }
}
