import Foundation
import CloudKitWeb
import SQLiteDB
import Testing

@testable import CloudKitLocal

/// `AnswerCache` on its own: the size bound, eviction order, and stamps that only move forward.
@Suite struct AnswerCacheUnitTests {
    static func key(_ n: Int) -> AnswerCache.Key {
        AnswerCache.Key(
            endpoint: "records/changes",
            database: DatabaseKey(container: "c", environment: .development, scope: .private, owner: "_u"),
            reader: "_u",
            body: Array("{\"n\":\(n)}".utf8))
    }

    /// The change stamp is read on the event loops (`ChangeStampReader`): a lock it cannot take gives
    /// nil at once (every caller then takes the full path), instead of the 10 s the store's own
    /// connections wait. A WAL reader meets a lock only in recovery, which a test cannot hold open, so
    /// the lock here is a rollback-journal database's exclusive lock, which blocks every reader.
    @Test func theChangeStampNeverWaitsForALock() throws {
        let directory = QueryIndexTests.temporaryDirectory("stamp")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/locked.sqlite"
        let holder = try DatabaseQueue(path: path)
        try holder.writeWithoutTransaction { db in try db.execute(sql: "CREATE TABLE t (x)") }
        let reader = try ChangeStampReader(path: path)
        let before = try #require(reader.read())
        try holder.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN EXCLUSIVE")
            try db.execute(sql: "INSERT INTO t VALUES (1)")
        }
        let started = Date()
        #expect(reader.read() == nil)
        // Not a speed figure: with the store's 10 s busy timeout the reader waited all of it here.
        #expect(Date().timeIntervalSince(started) < 5)
        try holder.writeWithoutTransaction { db in try db.execute(sql: "COMMIT") }
        #expect(try #require(reader.read()) != before, "the holder's commit moved the stamp")
        try holder.close()
    }

    @Test func staysWithinItsLimitDroppingTheOldestFirst() {
        let cache = AnswerCache(limit: 10_000)
        for n in 0..<20 { cache.store([UInt8](repeating: UInt8(n), count: 1_000), for: Self.key(n), at: 7) }
        let kept = (0..<20).filter { cache.answer(Self.key($0), at: 7) != nil }
        // Each entry is 1,000 bytes of answer plus its key's body: nine fit in 10,000.
        #expect(kept == Array(11..<20))
        #expect(cache.counters.stored == 20 && cache.counters.evicted == 11)
        #expect(cache.answer(Self.key(19), at: 7) == [UInt8](repeating: 19, count: 1_000))
    }

    @Test func oneAnswerTakesAtMostAQuarter() {
        let cache = AnswerCache(limit: 4_000)
        cache.store([UInt8](repeating: 1, count: 1_100), for: Self.key(1), at: 1)
        cache.store([UInt8](repeating: 2, count: 900), for: Self.key(2), at: 1)
        #expect(cache.answer(Self.key(1), at: 1) == nil)
        #expect(cache.answer(Self.key(2), at: 1) != nil)
    }

    @Test func aNewStampEmptiesItAndAnOlderOneChangesNothing() {
        let cache = AnswerCache(limit: 1 << 20)
        cache.store([1], for: Self.key(1), at: 5)
        #expect(cache.answer(Self.key(1), at: 5) == [1])
        // A request that read an older stamp neither hits nor throws the current entries away.
        #expect(cache.answer(Self.key(1), at: 4) == nil)
        cache.store([9], for: Self.key(2), at: 4)
        #expect(cache.answer(Self.key(1), at: 5) == [1] && cache.answer(Self.key(2), at: 5) == nil)
        // A commit: nothing from before is answered or trusted.
        #expect(cache.answer(Self.key(1), at: 6) == nil)
        #expect(cache.answer(Self.key(1), at: 5) == nil, "stamps only move forward")
    }

    @Test func offMeansOff() {
        let cache = AnswerCache(limit: 0)
        cache.store([1], for: Self.key(1), at: 1)
        #expect(!cache.isEnabled && cache.answer(Self.key(1), at: 1) == nil)
    }

    @Test func base64URLRoundTripsEveryLengthAndReadsOldTokens() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
        // Tokens minted before (Foundation's base64 with + / and padding) still decode.
        #expect(Base64URL.decode("+/8=") == [0xFB, 0xFF])
        #expect(Base64URL.decode("a") == nil && Base64URL.decode("ab!c") == nil)
        #expect(OpaqueToken.decode(OpaqueToken.encode(["z1", "Zone é", "3", "17"])) == ["z1", "Zone é", "3", "17"])
    }
}

/// `FieldsText.merge` against the decoding path it stands in for.
@Suite struct FieldsTextTests {
    static func fixtureFields() throws -> [String: FieldValue] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CloudKitWebTests/Fixtures/record-all-types.json")
        var fields = try Record.decode(from: Array(Data(contentsOf: url))).fields
        fields["enc"] = nil
        fields["ul"] = nil
        fields["ünïcode name"] = .string("quote \" backslash \\ tab \t")
        fields["r"] = .reference(Reference(recordName: "folder-1", action: .noAction))
        return fields
    }

    @Test func mergingTheTextGivesTheBytesDecodingAndEncodingGive() throws {
        let fields = try Self.fixtureFields()
        let stored = Record.encodeStoredFields(fields)
        let updateSets: [[String: FieldValue]] = [
            [:],
            ["s": .string("changed")],
            ["i": .null, "d": .double(-0.25)],
            ["aaa first": .int64(1), "zzz last": .stringList(["a", "b"]), "m middle": .timestamp(1_709_294_400_000)],
            ["missing": .null],
            Dictionary(uniqueKeysWithValues: fields.keys.map { ($0, FieldValue.null) }),
        ]
        for updates in updateSets {
            var expected = fields
            for (name, value) in updates { if case .null = value { expected[name] = nil } else { expected[name] = value } }
            let merged = try #require(FieldsText.merge(stored, updates))
            #expect(merged == Record.encodeStoredFields(expected), "updates \(updates.keys.sorted())")
            #expect(try Record.decodeStoredFields(merged) == expected)
        }
    }

    /// 500 seeded random records and updates drawn from every field type of the fixture, with names
    /// that sort in different places (non-ASCII too) and values full of escapes.
    @Test func randomRecordsAndUpdatesMergeAsTheDecoderWould() throws {
        var rng = SplitMix64(seed: 20261123)
        let pool = Array(try Self.fixtureFields().values)
        let characters = Array("a\"\\\n\t/é🇯🇵<>&\u{7F}")
        let names = ["a", "B", "z", "é", "東京", "tab\tname", "_x", "n1", "n10", "n2", "Z9", "ümlaut", "space name"]
        func randomValue() -> FieldValue {
            switch rng.next() % 4 {
            case 0: return .string(String((0..<Int(rng.next() % 12)).map { _ in characters[Int(rng.next() % UInt64(characters.count))] }))
            case 1: return .int64(Int64(bitPattern: rng.next()))
            case 2: return .double(Double(Int64(bitPattern: rng.next() % 1_000_000)) / 7)
            default: return pool[Int(rng.next() % UInt64(pool.count))]
            }
        }
        for _ in 0..<500 {
            var fields: [String: FieldValue] = [:]
            for name in names where rng.next() % 2 == 0 { fields[name] = randomValue() }
            var updates: [String: FieldValue] = [:]
            for name in names where rng.next() % 3 == 0 { updates[name] = rng.next() % 3 == 0 ? .null : randomValue() }
            var expected = fields
            for (name, value) in updates { if case .null = value { expected[name] = nil } else { expected[name] = value } }
            let stored = Record.encodeStoredFields(fields)
            let merged = FieldsText.merge(stored, updates)
            if fields.keys.contains(where: { $0.contains("\t") }) {
                // A name the writer escapes: left to the decoder.
                #expect(merged == nil)
            } else {
                #expect(merged == Record.encodeStoredFields(expected))
            }
        }
    }

    /// The same with the names CloudKit allows (ASCII), many more records of them: names that are
    /// prefixes of others, capitals before small letters, digits and underscores; every fifth record
    /// with one non-ASCII name among them.
    @Test func asciiNamesMergeAsTheDecoderWould() throws {
        var rng = SplitMix64(seed: 20261206)
        let pool = Array(try Self.fixtureFields().values)
        let names = ["a", "A", "aa", "a_", "a0", "B", "b", "n1", "n10", "n2", "n", "Z9", "_x", "_", "zz", "space name", "a.b"]
        for round in 0..<600 {
            var fields: [String: FieldValue] = [:]
            for name in names where rng.next() % 2 == 0 { fields[name] = pool[Int(rng.next() % UInt64(pool.count))] }
            if round % 5 == 0 { fields["é"] = .int64(5) }
            var updates: [String: FieldValue] = [:]
            for name in names where rng.next() % 3 == 0 {
                updates[name] = rng.next() % 3 == 0 ? .null : pool[Int(rng.next() % UInt64(pool.count))]
            }
            var expected = fields
            for (name, value) in updates { if case .null = value { expected[name] = nil } else { expected[name] = value } }
            #expect(FieldsText.merge(Record.encodeStoredFields(fields), updates) == Record.encodeStoredFields(expected))
        }
    }

    @Test func textItCannotReadIsLeftToTheDecoder() {
        #expect(FieldsText.merge(#"{"a\"b":{"value":1,"type":"INT64"}}"#, [:]) == nil)
        #expect(FieldsText.merge(#"{"a":{"value":1"#, [:]) == nil)
        #expect(FieldsText.merge("[]", [:]) == nil)
        // Names out of order, or twice: not this server's writing (its decoder takes over).
        #expect(FieldsText.merge(#"{"b":{"value":1,"type":"INT64"},"a":{"value":2,"type":"INT64"}}"#, ["c": .int64(3)]) == nil)
        #expect(FieldsText.merge(#"{"a":{"value":1,"type":"INT64"},"a":{"value":2,"type":"INT64"}}"#, [:]) == nil)
        #expect(FieldsText.merge("{}", ["x": .int64(2)]) == #"{"x":{"value":2,"type":"INT64"}}"#)
    }

    /// The word-at-a-time search for a string's closing quote, against the byte loop it replaced, on
    /// random text of quotes, backslashes, escapes and bytes that differ from them in one bit, at
    /// every start and length (so every alignment and every tail shorter than a word).
    @Test func theClosingQuoteIsWhereTheByteLoopFindsIt() {
        func byteLoop(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
            var i = start
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
            return min(i, bytes.count)
        }
        let alphabet: [UInt8] = [0x22, 0x5C, 0x23, 0x5D, 0x02, 0xA2, 0xDC, 0x61, 0x75, 0x00, 0xFF, 0x21]
        var random = SplitMix64(seed: 7)
        var compared = 0
        for _ in 0..<400 {
            // Quotes and backslashes from dense to rare, so runs of several clean words come up too.
            let count = Int(random.next() % 60), oneIn = [2, 8, 40][Int(random.next() % 3)]
            let text = (0..<count).map { _ in
                random.next() % UInt64(oneIn) == 0 ? alphabet[Int(random.next() % 2)] : alphabet[2 + Int(random.next() % UInt64(alphabet.count - 2))]
            }
            text.withUnsafeBufferPointer { buffer in
                for start in 0...count {
                    #expect(FieldsText.closingQuote(buffer, from: start) == byteLoop(buffer, from: start), "\(text) from \(start)")
                    compared += 1
                }
            }
        }
        #expect(compared > 10_000)
    }
}

/// `RowJSON` against `StoredRecord.write`, the path it stands in for on change pages (which
/// `changePagesSayWhatLookupSays` holds to records/lookup's answer).
@Suite struct RowJSONTests {
    /// Every row is written from the statement's columns and, for comparison, through a
    /// `StoredRecord`, on a real SQLite file.
    static func bothWays(_ store: Store, _ where: String = "1") throws -> [(rowJSON: [UInt8], stored: [UInt8])] {
        try store.pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT \(StoredRecord.columns) FROM record WHERE \(`where`) ORDER BY seq")
            let rows = try Row.fetchCursor(statement)
            var pairs: [(rowJSON: [UInt8], stored: [UInt8])] = []
            while let row = try rows.next() {
                var a = JSONWriter(), b = JSONWriter()
                RowJSON.writeRecord(statement.sqliteStatement, into: &a)
                let record = try StoredRecord(row: row, parsingFields: false)
                if record.deleted { b.write(record.wire(zoneID: nil, desiredKeys: nil, numbersAsStrings: false)) } else { record.write(into: &b) }
                pairs.append((a.bytes, b.bytes))
            }
            return pairs
        }
    }

    /// 400 seeded random rows: names and values with escapes and non-ASCII text, every optional column
    /// present or NULL, tombstones.
    @Test func writesWhatAStoredRecordWrites() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rowjson-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        var rng = SplitMix64(seed: 20261124)
        let pool = Array(try FieldsTextTests.fixtureFields().values)
        let texts = ["plain", "quote \" and \\ back", "tab\tnew\nline", "漢字 🙂", "é", "\u{1}ctl", "_x", "a/b<c>&"]
        func pick() -> String { texts[Int(rng.next() % UInt64(texts.count))] }
        func maybe(_ text: @autoclosure () -> String) -> String? { rng.next() % 3 == 0 ? nil : text() }
        try store.pool.write { db in
            for i in 0..<400 {
                var record = StoredRecord(zone: "Z", name: "\(pick())-\(i)", type: maybe(pick()))
                record.tag = maybe(String(rng.next() % 100_000, radix: 36))
                for name in ["a", "ünï", "s p"] where rng.next() % 2 == 0 { record.fields[name] = pool[Int(rng.next() % UInt64(pool.count))] }
                if rng.next() % 2 == 0 { record.fields["t"] = .string(pick()) }
                if rng.next() % 4 != 0 { record.created = RecordStamp(timestamp: Int64(rng.next() % 2_000_000_000_000), userRecordName: maybe(pick()), deviceID: maybe(pick())) }
                if rng.next() % 4 != 0 { record.modified = RecordStamp(timestamp: Int64(rng.next() % 2_000_000_000_000), userRecordName: maybe(pick()), deviceID: maybe(pick())) }
                record.shortGUID = maybe(pick())
                record.parent = maybe(pick())
                record.share = maybe(pick())
                record.deleted = rng.next() % 7 == 0
                record.seq = Int64(i + 1)
                try record.save(db, dbID: 1, over: nil)
            }
        }
        let pairs = try Self.bothWays(store)
        #expect(pairs.count == 400)
        for (i, pair) in pairs.enumerated() {
            #expect(pair.rowJSON == pair.stored, "row \(i): \(String(decoding: pair.rowJSON, as: UTF8.self))")
            #expect((try? JSON(parsing: pair.rowJSON)) != nil)
        }
    }

    /// The validator agrees with Swift's own on 20,000 seeded byte strings weighted towards lead and
    /// continuation bytes, and on the edges of each range.
    @Test func validatesUTF8AsSwiftDoes() {
        var rng = SplitMix64(seed: 7)
        let interesting: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
        var cases: [[UInt8]] = [[], Array("plain ascii, more than eight bytes".utf8), Array("漢字 🙂 é".utf8)]
        for a in interesting { for b in interesting { cases.append([a, b]); cases.append([a, b, 0x80, 0x80]); cases.append([0x41, a, b, 0xBF]) } }
        for _ in 0..<20_000 {
            let count = Int(rng.next() % 24)
            cases.append((0..<count).map { _ in rng.next() % 3 == 0 ? UInt8(truncatingIfNeeded: rng.next() % 128) : interesting[Int(rng.next() % UInt64(interesting.count))] })
        }
        for bytes in cases {
            let swift = String(validating: bytes, as: UTF8.self) != nil
            let ours = bytes.withUnsafeBufferPointer { RowJSON.isValidUTF8($0) }
            #expect(ours == swift, "\(bytes.map { String($0, radix: 16) })")
        }
    }

    /// Strings are escaped as a byte-by-byte escaper would, whatever the position of a control
    /// character, quote, backslash or non-ASCII byte within the eight-byte words checked at once; the
    /// plain-ASCII path takes exactly the strings that need nothing.
    @Test func stringsAreEscapedWhereverTheByteFalls() throws {
        var rng = SplitMix64(seed: 21)
        let alphabet = Array("abcXYZ09 ~/".utf8) + [0x00, 0x01, 0x08, 0x09, 0x0A, 0x1F, 0x20, 0x22, 0x5C, 0x7F] + Array("é漢🙂".utf8)
        for _ in 0..<5_000 {
            let text = String(decoding: (0..<Int(rng.next() % 40)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }, as: UTF8.self)
            let bytes = Array(text.utf8)
            var expected: [UInt8] = [0x22]
            for byte in bytes {
                switch byte {
                case 0x22: expected += Array(#"\""#.utf8)
                case 0x5C: expected += Array(#"\\"#.utf8)
                case 0x0A: expected += Array(#"\n"#.utf8)
                case 0x0D: expected += Array(#"\r"#.utf8)
                case 0x09: expected += Array(#"\t"#.utf8)
                case 0x08: expected += Array(#"\b"#.utf8)
                case 0x0C: expected += Array(#"\f"#.utf8)
                case ..<0x20: expected += Array(String(format: "\\u%04x", byte).utf8)
                default: expected.append(byte)
                }
            }
            expected.append(0x22)
            var escaped = JSONWriter(), plain = JSONWriter()
            bytes.withUnsafeBufferPointer { escaped.writeString(utf8: $0) }
            #expect(escaped.bytes == expected, "\(bytes)")
            #expect(try JSON(parsing: escaped.bytes).stringValue == text)
            let isPlain = bytes.allSatisfy { $0 >= 0x20 && $0 < 0x80 && $0 != 0x22 && $0 != 0x5C }
            #expect(bytes.withUnsafeBufferPointer { plain.writePlainASCIIString($0) } == isPlain, "\(bytes)")
            #expect(plain.bytes == (isPlain ? expected : []))
        }
    }

    /// Text another program stored that is not valid UTF-8 is repaired as `Row`'s `String` conversion repairs it,
    /// so the answer is still valid JSON; a NULL fields column is an empty dictionary.
    @Test func invalidUTF8IsRepairedAndNullFieldsAreEmpty() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rowjson-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        try store.pool.write { db in
            try db.execute(sql: """
                INSERT INTO record (db, zone, name, type, tag, fields, created_ts, created_user, deleted, seq)
                VALUES (1, 'Z', CAST(X'6E616D65FF' AS TEXT), 'T', CAST(X'74C3' AS TEXT),
                        CAST(X'7B2273223A7B2276616C7565223A2261FE62222C2274797065223A22535452494E47227D7D' AS TEXT),
                        5, CAST(X'75E2' AS TEXT), 0, 1);
                INSERT INTO record (db, zone, name, type, fields, deleted, seq) VALUES (1, 'Z', 'empty', 'T', NULL, 0, 2);
                """)
        }
        let pairs = try Self.bothWays(store)
        #expect(pairs.count == 2)
        let repaired = try JSON(parsing: pairs[0].rowJSON)
        #expect(repaired["recordName"]?.stringValue == "name\u{FFFD}")
        #expect(repaired["recordChangeTag"]?.stringValue == "t\u{FFFD}")
        #expect(repaired["fields"]?["s"]?["value"]?.stringValue == "a\u{FFFD}b")
        #expect(pairs[0].rowJSON == pairs[0].stored)
        #expect(try JSON(parsing: pairs[1].rowJSON)["fields"] == .object(JSONObject()))
        #expect(pairs[1].rowJSON == pairs[1].stored)
    }
}
