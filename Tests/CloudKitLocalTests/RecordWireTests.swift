import CloudKitWeb
import Foundation
import SQLiteDB
import Testing
@testable import CloudKitLocal

/// Each record's stored rendering (`RecordWire`, issue 33): what records/modify stores is exactly what
/// the row answers without it (`RowJSON`), pages answered from the renderings equal pages answered from
/// the rows, SQLite clears a rendering a write made stale, and a store from before the renderings
/// gets them when the server starts.
@Suite struct RecordWireTests {
    static let schema = """
        DEFINE SCHEMA
            RECORD TYPE Note (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___recordID"   REFERENCE QUERYABLE,
                n               INT64 QUERYABLE SORTABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world"
            );
        """

    /// Names and values that exercise escaping and UTF-8: quotes, backslashes, control characters,
    /// combining marks, CJK, emoji, and text past eight bytes (the writers check eight at a time).
    static let texts = [
        "plain", "with \"quotes\"", "back\\slash", "tab\there", "new\nline", "bell\u{07}", "é", "e\u{301}", "日本語のテキスト", "👩‍👩‍👧 family",
        "a long plain ascii text past sixteen bytes", "mixed ascii then ü after eight", "\u{1F}unit", "/slash/", "",
    ]

    static func fields(_ i: Int) -> [String: FieldValue] {
        var fields: [String: FieldValue] = [
            "n": .int64(Int64(i)), "title": .string(texts[i % texts.count]), "ratio": .double(Double(i) / 7),
            "when": .timestamp(1_700_000_000_000 + Int64(i)), "tags": .stringList([texts[(i + 3) % texts.count], "x\(i)"]),
        ]
        if i % 4 == 0 { fields["place"] = .location(Location(latitude: 48.85 + Double(i) / 100, longitude: 2.35)) }
        if i % 5 == 0 { fields["blob"] = .bytes(Data([0, 1, 2, UInt8(i)])) }
        return fields
    }

    /// For every live row: its stored rendering, and what `RowJSON` writes from the row.
    static func renderings(_ server: LiveServer) async throws -> [(name: String, stored: [UInt8]?, fromRow: [UInt8])] {
        try await server.service.store.pool.read { db in
            let statement = try db.makeStatement(sql: "SELECT \(StoredRecord.columns) FROM record WHERE deleted = 0 ORDER BY name")
            let rows = try Row.fetchCursor(statement)
            var found: [(String, [UInt8]?, [UInt8])] = []
            while let row = try rows.next() {
                var writer = JSONWriter(capacity: 1024)
                RowJSON.writeRecord(statement.sqliteStatement, deleted: false, into: &writer)
                found.append((row[1], RecordWire.bytes(statement.sqliteStatement).map(Array.init), writer.bytes))
            }
            return found
        }
    }

    /// A records/changes page and a records/query page of zone Z, as bytes.
    static func pages(_ server: LiveServer) async throws -> [[UInt8]] {
        var pages: [[UInt8]] = []
        for (operation, body) in [
            ("records/changes", #"{"zoneID":{"zoneName":"Z"},"resultsLimit":200}"#),
            ("records/query", #"{"zoneID":{"zoneName":"Z"},"query":{"recordType":"Note","sortBy":[{"fieldName":"n","ascending":false}]},"resultsLimit":200}"#),
            ("records/query", #"{"zoneID":{"zoneName":"Z"},"query":{"recordType":"Note","sortBy":[{"systemFieldName":"createdTimestamp"}]},"resultsLimit":200}"#),
        ] {
            let answer = try await server.raw(.post, server.path("private", operation), body: body)
            #expect(answer.status == 200, "\(operation): \(String(decoding: answer.body, as: UTF8.self).prefix(300))")
            pages.append(answer.body)
        }
        return pages
    }

    @Test func whatIsStoredIsWhatTheRowAnswers() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        _ = try await server.service.importSchema(try SchemaLanguage.parse(Self.schema), container: LiveServer.container)
        let db = server.client().database(.private)
        _ = try await db.createZone("Z")
        // Record names may not hold control characters (the server refuses them).
        let names = Self.texts.indices.map { i in "rec-\(i)-" + String(String.UnicodeScalarView(Self.texts[i].unicodeScalars.filter { $0.value >= 0x20 })) }
        var ops = names.indices.map { RecordOperation.create(record(names[$0], "Note", Self.fields($0))) }
        ops[3].record.parent = RecordLink(recordName: names[2])
        // A short GUID is written after the stamps, before the parent link.
        ops[3].record.createShortGUID = true
        // Two records holding an uploaded file: their answers carry download URLs.
        for (i, name) in ["with-asset", "with-assets"].enumerated() {
            let field = i == 0 ? "image" : "images"
            let (_, asset) = try await db.uploadAsset((0..<100).map { UInt8(($0 * 31 + i) & 0xFF) }, recordType: "Note", recordName: name, fieldName: field, zoneID: ZoneID(zoneName: "Z"))
            var fields = Self.fields(i)
            fields[field] = i == 0 ? .asset(asset) : .assetList([asset, asset])
            ops.append(.create(record(name, "Note", fields)))
        }
        let created = try await db.modify(ops, zone: "Z")
        #expect(created.isCompleteSuccess, "\(created.failures)")
        // Updates (new tags, changed fields) and deletes (tombstones) among them.
        var updates: [RecordOperation] = []
        for i in [1, 4, 7] {
            let current = try #require(try await db.lookup(names[i], zone: "Z").record)
            var changed = current
            changed.fields["title"] = .string("changed \(Self.texts[(i + 5) % Self.texts.count])")
            changed.fields["ratio"] = nil
            updates.append(.update(changed))
        }
        updates.append(.forceDelete(recordName: names[9]))
        #expect(try await db.modify(updates, zone: "Z").isCompleteSuccess)

        let rows = try await Self.renderings(server)
        #expect(rows.count == names.count - 1 + 2)
        for row in rows {
            #expect(row.stored != nil, "\(row.name) has no stored rendering")
            #expect(row.stored == row.fromRow, "\(row.name): \(String(decoding: row.stored ?? [], as: UTF8.self)) vs \(String(decoding: row.fromRow, as: UTF8.self))")
        }
        // The same pages, answered from the renderings and from the rows.
        let fromRenderings = try await Self.pages(server)
        _ = try await server.service.store.pool.write { db in try db.execute(sql: "UPDATE record SET wire = NULL") }
        let fromRows = try await Self.pages(server)
        #expect(fromRenderings == fromRows)
        #expect(fromRenderings.allSatisfy { String(decoding: $0, as: UTF8.self).contains("日本語のテキスト") })
        #expect(fromRenderings.allSatisfy { String(decoding: $0, as: UTF8.self).contains(#""downloadURL":"#) })
    }

    @Test func aWriteThatLeavesTheRenderingStaleClearsIt() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        _ = try await db.createZone("Z")
        #expect(try await db.modify([.create(record("a", "Note", ["n": .int64(1)])), .create(record("b", "Note", ["n": .int64(2)]))], zone: "Z").isCompleteSuccess)
        let (a, b): (Bool, Bool) = try await server.service.store.pool.write { db in
            // Any column the rendering shows, written without a new rendering: cleared.
            try db.execute(sql: #"UPDATE record SET fields = '{"n":{"value":9,"type":"INT64"}}' WHERE name = 'a'"#)
            // With a new rendering: kept.
            try db.execute(sql: "UPDATE record SET tag = 'x', wire = X'7B7D' WHERE name = 'b'")
            return (try Bool.fetchOne(db, sql: "SELECT wire IS NULL FROM record WHERE name = 'a'")!, try Bool.fetchOne(db, sql: "SELECT wire = X'7B7D' FROM record WHERE name = 'b'")!)
        }
        #expect(a && b)
        let answer = try await db.lookup("a", zone: "Z")
        #expect(answer.record?.fields["n"] == .int64(9))
        let page = try await server.raw(.post, server.path("private", "records/changes"), body: #"{"zoneID":{"zoneName":"Z"}}"#)
        #expect(String(decoding: page.body, as: UTF8.self).contains(#""n":{"value":9,"type":"INT64"}"#))
    }

    /// A data directory the previous release wrote (migrations up to v10, rows as its records/modify
    /// wrote them, without renderings) gets them when the server starts, and answers as before.
    @Test func aStoreFromTheLastReleaseGetsItsRenderingsOnStart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ckl-v10-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: (directory as NSString).appendingPathComponent("cloudkit.sqlite"))
        try Store.migrator.migrate(queue, upTo: "v10-field-index")
        let owner = LocalCloudKit.userRecordName(for: LiveServer.alice.name)
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO ckdb (id, container, environment, scope, owner, seq) VALUES (1, ?, 'development', 'private', ?, 100)",
                           arguments: [LiveServer.container, owner])
            try db.execute(sql: "INSERT INTO zone (db, name, owner, incarnation, seq) VALUES (1, '_defaultZone', ?, 0, 0), (1, 'Z', ?, 1, 100)", arguments: [owner, owner])
            for (field, type, indexes) in [("", "", ""), ("___recordID", "REFERENCE", "QUERYABLE"), ("___createTime", "TIMESTAMP", "QUERYABLE SORTABLE"),
                                           ("n", "INT64", "QUERYABLE SORTABLE")] {
                try db.execute(
                    sql: "INSERT INTO field_schema (container, environment, record_type, field, type, indexes) VALUES (?, 'development', 'Note', ?, ?, ?)",
                    arguments: [LiveServer.container, field, type, indexes])
            }
            try db.execute(sql: "INSERT INTO schema_origin (container, environment, origin) VALUES (?, 'development', 'imported')", arguments: [LiveServer.container])
            for i in 0..<40 {
                try db.execute(
                    sql: """
                        INSERT INTO record (db, zone, name, type, tag, fields, created_ts, created_user, created_device, modified_ts, modified_user,
                          modified_device, short_guid, parent, deleted, seq) VALUES (1, 'Z', ?, 'Note', ?, ?, ?, ?, 'dev', ?, ?, NULL, ?, ?, ?, ?)
                        """,
                    arguments: [String(format: "old-%02d ", i) + Self.texts[i % Self.texts.count], "t\(i)", i % 10 == 9 ? nil : Record.encodeStoredFields(Self.fields(i)),
                                1_700_000_000_000 + Int64(i), owner, 1_700_000_000_000 + Int64(i), i % 3 == 0 ? owner : nil, i % 7 == 0 ? "guid\(i)" : nil,
                                i % 6 == 1 ? "old-00 plain" : nil, i % 10 == 9 ? 1 : 0, i + 1])
            }
            let spec = try FieldIndex.spec(db, container: LiveServer.container, environment: "development", type: "Note")
            try FieldIndex.rebuild(db, container: LiveServer.container, environment: "development", type: "Note", spec: spec)
        }
        try queue.close()
        let server = try await LiveServer.start(directory: directory)
        defer { Task { await server.stop() } }
        let rows = try await Self.renderings(server)
        #expect(rows.count == 36)
        #expect(rows.allSatisfy { $0.stored != nil && $0.stored == $0.fromRow })
        let fromRenderings = try await Self.pages(server)
        _ = try await server.service.store.pool.write { db in try db.execute(sql: "UPDATE record SET wire = NULL") }
        let fromRows = try await Self.pages(server)
        #expect(fromRenderings == fromRows)
        #expect(String(decoding: fromRenderings[0], as: UTF8.self).contains(#","deleted":true}"#))
    }
}
