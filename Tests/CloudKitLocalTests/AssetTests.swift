import CloudKitWeb
import Foundation
import Testing
@testable import CloudKitLocal
import SQLiteDB

/// A clock tests move forward.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var offset: TimeInterval = 0
    func advance(_ seconds: TimeInterval) { lock.withLock { offset += seconds } }
    var now: Date { lock.withLock { Date().addingTimeInterval(offset) } }
}

/// Assets end to end (§3.6, §4.16–4.18) over the real HTTP server: upload URL, bytes, receipt,
/// records/modify, downloadURL with `${f}`, the download, rereference, limits, and collection.
@Suite struct AssetTests {
    func bytes(_ count: Int, seed: UInt8 = 7) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) } }

    func temporaryFile() -> String { FileManager.default.temporaryDirectory.appendingPathComponent("asset-\(UUID().uuidString)").path }

    @Test func uploadSaveFetchAndDownload() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let client = server.client()
        let db = client.database(.private)
        try await db.createZone("Photos")
        let zone = ZoneID(zoneName: "Photos")
        let file = bytes(3_000_000)
        let (name, asset) = try await db.uploadAsset(file, recordType: "Photo", fieldName: "image", zoneID: zone)
        #expect(UUID(uuidString: name) != nil, "no recordName asked: the service picks a UUID")
        #expect(asset.size == 3_000_000 && asset.receipt != nil && asset.fileChecksum != nil)
        #expect(asset.wrappingKey != nil && asset.referenceChecksum != nil, "private database uploads carry a wrapping key")
        let saved = try await db.modify([.create(Record(recordName: name, recordType: "Photo", fields: ["image": .asset(asset), "title": .string("t")]))], zone: "Photos")
        let savedAsset = try #require(saved.results.first?.record?.fields["image"])
        guard case .asset(let answered) = savedAsset else { Issue.record("not an asset: \(savedAsset)"); return }
        #expect(answered.receipt == nil, "a saved asset does not echo its receipt")
        #expect(answered.downloadURL?.hasSuffix("/${f}") == true)

        // lookup, query and the change feed all carry the download URL.
        let fetched = try await db.lookup(name, zone: "Photos").record
        guard case .asset(let looked)? = fetched?.fields["image"] else { Issue.record("lookup lost the asset"); return }
        #expect(looked.size == 3_000_000 && looked.fileChecksum == asset.fileChecksum && looked.downloadURL?.contains("${f}") == true)
        let page = try await db.recordChanges(RecordChangesRequest(zoneID: zone))
        guard case .asset(let changed)? = page.records.first?.record?.fields["image"] else { Issue.record("changes lost the asset"); return }
        #expect(changed.downloadURL == looked.downloadURL)
        #expect(page.records.first?.record?.fields["title"] == .string("t"), "the other fields are copied as stored")
        try await server.service.addSystemIndexes(container: LiveServer.container, environment: .development)
        let queried = try await db.query(QueryRequest(query: Query(recordType: "Photo"), zoneID: zone))
        guard case .asset(let found)? = queried.records.first?.record?.fields["image"] else { Issue.record("query lost the asset"); return }
        #expect(found == looked)

        // The download: ${f} replaced by the name, streamed to a file with progress, size checked.
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let reports = ProgressLog()
        let written = try await client.downloadAsset(looked, to: path, fileName: "photo.bin") { done, total in reports.add(done, total) }
        #expect(written == 3_000_000)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(file))
        #expect(reports.last?.0 == 3_000_000 && reports.last?.1 == 3_000_000 && reports.count >= 2, "progress arrives while the body streams")
        let url = try #require(looked.downloadURL).replacingOccurrences(of: "${f}", with: "photo.bin")
        let head = try await AsyncHTTPTransport().send(HTTPRequest(method: .get, url: url))
        #expect(head.header("Content-Disposition") == #"attachment; filename="photo.bin"; filename*=UTF-8''photo.bin"#)
        // A tampered URL finds nothing.
        let tampered = url.replacingOccurrences(of: "/assets/1/", with: "/assets/1/x")
        #expect(try await AsyncHTTPTransport().send(HTTPRequest(method: .get, url: tampered)).status == 404)

        // Saving the fetched value back (no receipt, same file) keeps it; the other field changes.
        var again = try #require(fetched)
        again.fields["title"] = .string("t2")
        let resaved = try await db.modify([.update(again)], zone: "Photos")
        #expect(resaved.failures.isEmpty, "\(resaved.failures)")
    }

    /// Partial updates with values sent without a type, as CloudKit JS apps write them, are merged
    /// into the stored fields text without decoding it (as typed ones are): the other fields, an asset
    /// among them, stay as they were. An untyped value that the schema makes an asset is checked
    /// against the field's current asset, which needs the current fields after all: sending the
    /// current file back without its receipt keeps it.
    @Test func untypedPartialUpdatesKeepTheOtherFieldsAndTheCurrentAsset() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("Z")
        let zone = ZoneID(zoneName: "Z")
        let (_, asset) = try await db.uploadAsset(bytes(5000), recordType: "Photo", recordName: "p", fieldName: "image", zoneID: zone)
        let created = try await db.modify(
            [.create(Record(recordName: "p", recordType: "Photo", fields: ["image": .asset(asset), "title": .string("t"), "n": .int64(1), "tags": .stringList(["a", "b"])]))],
            zone: "Z")
        let tag = try #require(created.results.first?.record?.recordChangeTag)
        func update(_ tag: String, _ fields: String) async throws -> CloudKitWeb.HTTPResponse {
            try await server.raw(.post, server.path("private", "records/modify"), body: """
                {"zoneID":{"zoneName":"Z"},"operations":[{"operationType":"update","record":{"recordName":"p","recordChangeTag":"\(tag)","fields":{\(fields)}}}]}
                """)
        }
        let first = try await update(tag, #""title":{"value":"new"},"n":{"value":7},"fresh":{"value":2.5}"#)
        let answered = try #require(try RecordsResponse.decode(from: first.body).records.first?.record)
        let looked = try #require(try await db.lookup("p", zone: "Z").record)
        for record in [answered, looked] {
            #expect(record.fields["title"] == .string("new") && record.fields["n"] == .int64(7) && record.fields["fresh"] == .double(2.5))
            #expect(record.fields["tags"] == .stringList(["a", "b"]))
            guard case .asset(let kept)? = record.fields["image"] else { Issue.record("the asset was lost: \(record.fields)"); continue }
            #expect(kept.fileChecksum == asset.fileChecksum && kept.size == 5000 && kept.downloadURL?.hasSuffix("${f}") == true)
        }
        // The current file sent back untyped and without its receipt: accepted, as the typed value is.
        let checksum = try #require(asset.fileChecksum), wrappingKey = try #require(asset.wrappingKey), reference = try #require(asset.referenceChecksum)
        let second = try await update(
            try #require(looked.recordChangeTag),
            #""image":{"value":{"fileChecksum":"\#(checksum)","size":5000,"wrappingKey":"\#(wrappingKey)","referenceChecksum":"\#(reference)"}},"title":{"value":"again"}"#)
        let saved = try #require(try RecordsResponse.decode(from: second.body).records.first)
        #expect(saved.record?.fields["title"] == .string("again"), "\(saved)")
        guard case .asset(let resent)? = saved.record?.fields["image"] else { Issue.record("not an asset: \(saved)"); return }
        #expect(resent.fileChecksum == asset.fileChecksum && resent.downloadURL?.hasSuffix("${f}") == true)
        // Another file's checksum, untyped and without a receipt, is refused as the typed value is.
        let third = try await update(
            try #require(saved.record?.recordChangeTag),
            #""image":{"value":{"fileChecksum":"AAAA\#(checksum.dropFirst(4))","size":5000,"wrappingKey":"\#(wrappingKey)","referenceChecksum":"\#(reference)"}}"#)
        let refused = try #require(try RecordsResponse.decode(from: third.body).records.first)
        guard case .failure(let error) = refused else { Issue.record("another file was accepted: \(refused)"); return }
        #expect(error.serverErrorCode == .badRequest, "\(error)")
    }

    @Test func receiptsAreChecked() async throws {
        let clock = TestClock()
        let server = try await LiveServer.start(now: { clock.now })
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        let (name, asset) = try await db.uploadAsset(bytes(1000), recordType: "Photo", recordName: "p1", fieldName: "image")
        #expect(name == "p1")
        func save(_ value: Asset, _ record: String = "p1") async throws -> ModifyRecordsResult {
            try await db.modify([.create(Record(recordName: record, recordType: "Photo", fields: ["image": .asset(value)]))])
        }
        func reason(_ result: ModifyRecordsResult) -> String { result.failures.first?.reason ?? "" }
        var noReceipt = asset
        noReceipt.receipt = nil
        let refused = try await save(noReceipt)
        #expect(refused.failures.first?.serverErrorCode == .badRequest && reason(refused).contains("needs the receipt of its upload"))
        var wrongSize = asset
        wrongSize.size = 999
        #expect(reason(try await save(wrongSize)).contains("fileChecksum and size are not those of the uploaded file (1000 bytes)"))
        var forged = asset
        forged.receipt = "AAAA" + (asset.receipt ?? "")
        #expect(reason(try await save(forged)).contains("the receipt is not valid"))
        var keyless = asset
        keyless.wrappingKey = nil
        #expect(reason(try await save(keyless)).contains("wrappingKey and referenceChecksum are required"))
        var sizeless = asset
        sizeless.size = nil
        #expect(reason(try await save(sizeless)).contains("fileChecksum and size are required"))
        // An hour later the receipt has expired; 15 minutes after being asked for, an upload URL has.
        let late = try await db.requestAssetUploads([AssetUploadField(recordType: "Photo", fieldName: "image")])
        clock.advance(16 * 60)
        let expiredURL = try await AsyncHTTPTransport().send(HTTPRequest(method: .post, url: late[0].url, body: bytes(10)))
        let expiredBody = try JSON(parsing: expiredURL.body)
        #expect(expiredURL.status == 403 && expiredBody["serverErrorCode"] == "ACCESS_DENIED")
        clock.advance(60 * 60)
        #expect(reason(try await save(asset)).contains("the receipt expired"))
    }

    @Test func limitsAndBadUploads() async throws {
        let server = try await LiveServer.start(configure: { $0.maximumAssetBytes = 1 << 20 })
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        let tokens = try await db.requestAssetUploads([AssetUploadField(recordType: "Photo", fieldName: "image")])
        let transport = AsyncHTTPTransport()
        let tooLarge = try await transport.send(HTTPRequest(method: .post, url: tokens[0].url, body: bytes((1 << 20) + 1)))
        let tooLargeBody = try JSON(parsing: tooLarge.body)
        #expect(tooLarge.status == 400 && tooLargeBody["reason"]?.stringValue?.contains("exceeds the limit of 1048576 bytes") == true)
        let empty = try await transport.send(HTTPRequest(method: .post, url: tokens[0].url, body: []))
        #expect(empty.status == 400)
        let forged = try await transport.send(HTTPRequest(method: .post, url: tokens[0].url + "x", body: bytes(10)))
        #expect(forged.status == 403)
        let get = try await transport.send(HTTPRequest(method: .get, url: tokens[0].url))
        #expect(get.status == 405 && get.header("Allow") == "POST")
        // At most 200 tokens per request (§6), checked by the client and by the server.
        let many = (0..<201).map { _ in #"{"fieldName":"image"}"# }.joined(separator: ",")
        let refused = try await server.raw(.post, server.path("private", "assets/upload"), body: #"{"tokens":[\#(many)]}"#)
        #expect(refused.status == 400)
        let unknownZone = try await server.raw(.post, server.path("private", "assets/upload"), body: #"{"zoneID":{"zoneName":"Nope"},"tokens":[{"fieldName":"image"}]}"#)
        let unknownZoneBody = try JSON(parsing: unknownZone.body)
        #expect(unknownZone.status == 404 && unknownZoneBody["serverErrorCode"] == "ZONE_NOT_FOUND")
        // Exactly the reference's keys in a token.
        let one = try JSON(parsing: try await server.raw(.post, server.path("private", "assets/upload"), body: #"{"tokens":[{"recordName":"r","fieldName":"f"}]}"#).body)
        guard case .array(let list)? = one["tokens"], case .object(let token)? = list.first else { Issue.record("no tokens"); return }
        #expect(Set(token.pairs.map(\.key)) == ["recordName", "fieldName", "url"])
    }

    @Test func rereferenceReusesAFileOnAnotherRecord() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let client = server.client()
        let db = client.database(.public)
        let file = bytes(5000, seed: 3)
        let (_, asset) = try await db.uploadAsset(file, recordType: "Photo", recordName: "a", fieldName: "image")
        #expect(asset.wrappingKey == nil, "the public database does not encrypt")
        #expect(try await db.modify([.create(Record(recordName: "a", recordType: "Photo", fields: ["image": .asset(asset)]))]).failures.isEmpty)
        let entries = try await db.rereferenceAssets([AssetFieldID(recordName: "a", fieldName: "image"), AssetFieldID(recordName: "missing", fieldName: "image")])
        #expect(entries.count == 2 && entries[1].error?.serverErrorCode == .notFound)
        let reused = try #require(entries[0].asset)
        #expect(reused.receipt != nil && reused.fileChecksum == asset.fileChecksum)
        #expect(try await db.modify([.create(Record(recordName: "b", recordType: "Photo", fields: ["image": .asset(reused)]))]).failures.isEmpty)
        guard case .asset(let onB)? = try await db.lookup("b").record?.fields["image"] else { Issue.record("b has no asset"); return }
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await client.downloadAsset(onB, to: path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(file))
    }

    @Test func unusedFilesAreCollectedAndResetRemovesThem() async throws {
        let clock = TestClock()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ckl-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await LiveServer.start(directory: directory, now: { clock.now })
        let db = server.client().database(.private)
        let (_, kept) = try await db.uploadAsset(bytes(100, seed: 1), recordType: "Photo", recordName: "kept", fieldName: "image")
        let (_, dropped) = try await db.uploadAsset(bytes(100, seed: 2), recordType: "Photo", recordName: "dropped", fieldName: "image")
        _ = try await db.uploadAsset(bytes(100, seed: 3), recordType: "Photo", recordName: "never", fieldName: "image")
        _ = try await db.modify([
            .create(Record(recordName: "kept", recordType: "Photo", fields: ["image": .asset(kept)])),
            .create(Record(recordName: "dropped", recordType: "Photo", fields: ["image": .asset(dropped)])),
        ])
        _ = try await db.modify([.forceDelete(recordName: "dropped")])
        func blobs(_ service: LocalCloudKit) async throws -> Int {
            try await service.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM asset_blob") ?? 0 }
        }
        #expect(try await blobs(server.service) == 3)
        await server.stop()
        // Within the receipts' lifetime nothing goes; after it, what no record uses goes.
        let early = try await LiveServer.start(directory: directory, now: { clock.now })
        #expect(try await blobs(early.service) == 3)
        await early.stop()
        clock.advance(2 * 60 * 60)
        let later = try await LiveServer.start(directory: directory, now: { clock.now })
        #expect(try await blobs(later.service) == 1)
        guard case .asset(let stillThere)? = try await later.client().database(.private).lookup("kept").record?.fields["image"] else {
            Issue.record("kept lost its asset"); return
        }
        #expect(stillThere.downloadURL != nil)
        _ = try await later.service.reset(container: LiveServer.container, environment: .development)
        #expect(try await blobs(later.service) == 0)
        await later.stop()
    }
}

/// Download URLs spliced into stored fields text without decoding it.
@Suite struct AssetSpliceTests {
    /// `bytes` with `,"downloadURL":URL` before the closing brace of each asset dictionary whose
    /// checksum `url` knows (`downloadLinks`, then `writeLinked`, as `linkedFields` splices); nil
    /// when there was nothing to add.
    static func spliced(_ bytes: [UInt8], url: (String) -> String?) -> [UInt8]? {
        bytes.withUnsafeBufferPointer { bytes in
            guard let links = LocalCloudKit.downloadLinks(bytes, link: url) else { return nil }
            var writer = JSONWriter(capacity: bytes.count + 256)
            LocalCloudKit.writeLinked(bytes, upTo: bytes.count, links, into: &writer) { link, writer in writer.writeString(link) }
            return writer.bytes
        }
    }

    @Test func urlsGoWhereAssetJSONPutsThemAndStringsAreLeftAlone() throws {
        let fields: [String: FieldValue] = [
            "a": .asset(Asset(fileChecksum: "c1", size: 1, referenceChecksum: "r", wrappingKey: "k")),
            "l": .assetList([Asset(fileChecksum: "c2", size: 2), Asset(fileChecksum: "gone", size: 3)]),
            "s": .string(#"{"fileChecksum":"c1"} in a string"#),
        ]
        let text = Array(Record.encodeStoredFields(fields).utf8)
        let spliced = try #require(Self.spliced(text) { $0 == "gone" ? nil : "http://h/\($0)/${f}" })
        var expected = fields
        expected["a"] = .asset(Asset(fileChecksum: "c1", size: 1, referenceChecksum: "r", wrappingKey: "k", downloadURL: "http://h/c1/${f}"))
        expected["l"] = .assetList([Asset(fileChecksum: "c2", size: 2, downloadURL: "http://h/c2/${f}"), Asset(fileChecksum: "gone", size: 3)])
        #expect(spliced == Array(Record.encodeStoredFields(expected).utf8), "byte for byte what decoding, linking and encoding give")
        #expect(Self.spliced(Array(Record.encodeStoredFields(["s": .string("x")]).utf8)) { _ in "u" } == nil)
    }

    /// A rendering is linked straight into the answer (`writeLinked`, `DownloadLink.write`): the bytes
    /// of splicing a copy, written with a query's `zoneID` (`RecordWire.write`), URL pieces escaped one
    /// by one as the whole URL would be.
    @Test func renderingsAreLinkedInPlaceAsTheirCopyWouldBe() throws {
        let fields: [String: FieldValue] = [
            "a": .asset(Asset(fileChecksum: "c1", size: 1)), "l": .assetList([Asset(fileChecksum: "c2", size: 2), Asset(fileChecksum: "c3", size: 3)]),
            "t": .string("\u{1}\"\\ 京都"),
        ]
        var record = Record(recordName: "r1", recordType: "Photo", recordChangeTag: "7")
        record.fields = fields
        record.pluginFields = [:]
        let rendering = record.json.bytes
        let zoneID = ZoneID(zoneName: "Z").json.bytes
        for base in ["http://127.0.0.1:8080", "http://h/\"quoted\\\u{7}", "https://例え.jp"] {
            let links: (String) -> LocalCloudKit.DownloadLink? = { $0 == "c3" ? nil : LocalCloudKit.DownloadLink(base: base, token: "tok-" + $0) }
            let copy = try #require(Self.splicedAsBefore(rendering) { links($0)?.url })
            #expect(Self.spliced(rendering) { links($0)?.url } == copy)
            var expected = JSONWriter(capacity: 0)
            copy.withUnsafeBufferPointer { RecordWire.write($0, zoneID: zoneID, into: &expected) }
            var written = JSONWriter(capacity: 0)
            try rendering.withUnsafeBufferPointer { bytes in
                let found = try #require(LocalCloudKit.downloadLinks(bytes, link: links))
                #expect(found.count == 2)
                LocalCloudKit.writeLinked(bytes, upTo: bytes.count - 1, found, into: &written, write: LocalCloudKit.DownloadLink.write)
            }
            RecordWire.writeZoneIDEnd(zoneID, into: &written)
            #expect(written.bytes == expected.bytes, "base \(base)")
            var whole = JSONWriter(capacity: 0)
            whole.writeString(links("c1")!.url)
            var pieces = JSONWriter(capacity: 0)
            LocalCloudKit.DownloadLink.write(links("c1")!, into: &pieces)
            #expect(pieces.bytes == whole.bytes)
        }
    }

    /// The splice as it was before renderings were linked in place (kept as the oracle): a linked copy
    /// built as it scans, the URL written as one string.
    static func splicedAsBefore(_ bytes: [UInt8], url: (String) -> String?) -> [UInt8]? {
        let marker = Array(#"{"fileChecksum":""#.utf8)
        var out: [UInt8] = []
        var copied = 0, i = 0
        while let at = bytes[i...].firstIndex(of: UInt8(ascii: "{")) {
            guard bytes[at...].starts(with: marker) else {
                i = at + 1
                continue
            }
            let start = at + marker.count
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1 }
            guard end < bytes.count, let close = bytes.withUnsafeBufferPointer({ FieldsText.endOfValue($0, from: at) }), close > 0,
                bytes[close - 1] == UInt8(ascii: "}")
            else { return nil }
            if let link = url(String(decoding: bytes[start..<end], as: UTF8.self)) {
                out.append(contentsOf: bytes[copied..<(close - 1)])
                var writer = JSONWriter(capacity: 0)
                writer.raw(#","downloadURL":"#)
                writer.writeString(link)
                out.append(contentsOf: writer.bytes)
                copied = close - 1
            }
            i = close
        }
        guard copied > 0 else { return nil }
        out.append(contentsOf: bytes[copied...])
        return out
    }

    /// The start-up's garbage collection reads checksums without decoding: the same ones decoding
    /// finds, or nil (decode) when the word appears anywhere but as an asset's key.
    @Test func checksumsAreFoundWithoutDecoding() throws {
        let assets: [String: FieldValue] = [
            "a": .asset(Asset(fileChecksum: "c1+/=", size: 1, referenceChecksum: "r", wrappingKey: "k")),
            "l": .assetList([Asset(fileChecksum: "c2", size: 2), Asset(size: 3), Asset(fileChecksum: "c3", size: 4)]),
            "fileChecksum": .int64(5), "n": .string("plain"),
        ]
        #expect(LocalCloudKit.fileChecksums(Record.encodeStoredFields(assets))?.sorted() == ["c1+/=", "c2", "c3"])
        #expect(LocalCloudKit.fileChecksums(Record.encodeStoredFields(["n": .int64(1)])) == [])
        var tricky = assets
        tricky["s"] = .string(#"{"fileChecksum":"c9"} in a string"#)
        #expect(LocalCloudKit.fileChecksums(Record.encodeStoredFields(tricky)) == nil)
    }
}

/// Progress reports as they came.
final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var reports: [(Int64, Int64?)] = []
    func add(_ done: Int64, _ total: Int64?) { lock.withLock { reports.append((done, total)) } }
    var count: Int { lock.withLock { reports.count } }
    var last: (Int64, Int64?)? { lock.withLock { reports.last } }
}

/// records/query's two ways to a page give the same pages: SQLite sorting and cutting (no filter,
/// sorted by record times) and the matcher (a filter every record passes).
@Suite struct QueryPathTests {
    @Test func sortedBySQLiteOrByTheMatcherThePagesAreTheSame() async throws {
        let clock = TestClock()
        let server = try await LiveServer.start(now: { clock.now })
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("Z")
        for batch in 0..<5 {
            // Names out of time order, several records per millisecond: ties broken by name.
            _ = try await db.modify((0..<90).map { .create(record("n\((89 - $0) * 7 % 90)-\(batch)", "T", ["v": .int64(Int64($0))])) }, zone: "Z")
            clock.advance(batch % 2 == 0 ? 1 : 0)
        }
        try await server.service.addSystemIndexes(container: LiveServer.container, environment: .development)
        func pages(_ query: Query) async throws -> [String] {
            var names: [String] = []
            for try await page in db.queryPages(QueryRequest(query: query, zoneID: ZoneID(zoneName: "Z"), resultsLimit: 100)) {
                names += page.records.compactMap { $0.record?.recordName }
            }
            return names
        }
        let everyone = Filter(system: .recordName, .notEquals, .reference(Reference(recordName: "nobody")))
        for ascending in [true, false] {
            let sort = [SortDescriptor(system: .createdTimestamp, ascending: ascending)]
            let bySQLite = try await pages(Query(recordType: "T", sortBy: sort))
            let byMatcher = try await pages(Query(recordType: "T", filterBy: [everyone], sortBy: sort))
            #expect(bySQLite.count == 450 && bySQLite == byMatcher)
        }
        #expect(try await pages(Query(recordType: "T")) == (try await pages(Query(recordType: "T", filterBy: [everyone]))))
    }
}
