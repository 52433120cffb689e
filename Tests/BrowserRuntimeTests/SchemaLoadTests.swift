import BrowserRuntime
import CloudKitLocal
import CloudKitWeb
import Foundation
import RecordBrowser
import Testing

/// Where the browser's schema comes from: a local server's schema endpoint, a `.ckdb` file, or (a
/// server without the endpoint, as Apple's) the records in the local cache.
@Suite struct SchemaLoadTests {
    func runner(serverURL: String, service: LocalCloudKit, cache: RecordCache?) -> EffectRunner {
        let client = CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: serverURL, container: "iCloud.t"),
            credentials: .apiToken("t", webAuthToken: "w"), transport: InProcessTransport(service: service))
        return EffectRunner(client: client, cache: cache, account: testAccount())
    }

    func loaded(_ events: [BrowserEvent]) throws -> KnownSchema {
        guard case .schemaLoaded(let result)? = events.first else { throw BrowserFailure(message: "no schema event") }
        return try result.get()
    }

    @Test func fromTheServerFromAFileOrInferredFromTheCache() async throws {
        var configuration = LocalServerConfiguration()
        configuration.apiTokens = ["t"]
        configuration.users = [(name: "u", token: "w")]
        let service = try LocalCloudKit(store: try Store(directory: tempDirectory("srv")), configuration: configuration)
        let local = runner(serverURL: "http://in-process", service: service, cache: nil)
        let db = local.client.database(.private)
        _ = try await db.modifyZones([ZoneOperation(.create, ZoneID(zoneName: "Z"))])
        let saved = try await db.modifyRecords(ModifyRecordsRequest(operations: [
            .create(Record(recordName: "a", recordType: "Note", fields: ["title": .string("x"), "n": .int64(1), "tags": .stringList(["t"])])),
        ], zoneID: ZoneID(zoneName: "Z")))

        // The local server: its schema, with the indexes just-in-time creation gave.
        let fromServer = try loaded(await local.execute(.loadSchema))
        #expect(fromServer.origin == .server && fromServer.indexesKnown)
        #expect(fromServer.schema.recordType("Note")?.field("title")?.indexes == [.queryable, .searchable, .sortable])
        #expect(fromServer.production != nil && fromServer.production?.recordType("Note") == nil, "nothing deployed yet")
        try await service.deploySchema(container: "iCloud.t")
        #expect(try loaded(await local.execute(.loadSchema)).production?.recordType("Note") != nil, "production's schema comes along")

        // Apple's service is not asked: the cached records are read instead.
        let cache = try RecordCache(directory: tempDirectory("cache"), account: testAccount())
        let key = ListKey(zone: zoneKey(.private, ZoneID(zoneName: "Z")))
        _ = try cache.apply(key, records: saved.results, syncToken: "t", continuationMarker: nil, moreComing: false)
        let apple = runner(serverURL: "https://api.apple-cloudkit.com", service: service, cache: cache)
        let inferred = try loaded(await apple.execute(.loadSchema))
        #expect(inferred.origin == .inferred && !inferred.indexesKnown)
        #expect(inferred.schema.recordType("Note")?.fields.map(\.name) == ["n", "tags", "title"])
        #expect(inferred.schema.recordType("Note")?.field("tags")?.type == .list(.string))
        #expect(inferred.counts["Note"] == 1)

        // A .ckdb file; a broken one names its line and column.
        let file = tempDirectory("ckdb") + "/s.ckdb"
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try "DEFINE SCHEMA RECORD TYPE Note (title STRING QUERYABLE);".write(toFile: file, atomically: true, encoding: .utf8)
        let fromFile = try loaded(await apple.execute(.loadSchemaFile(file)))
        #expect(fromFile.origin == .file(file) && fromFile.schema.recordType("Note")?.field("title")?.indexes == [.queryable])
        try "DEFINE SCHEMA\nRECORD TYPE Note (title STRNG);".write(toFile: file, atomically: true, encoding: .utf8)
        guard case .schemaLoaded(.failure(let failure))? = await apple.execute(.loadSchemaFile(file)).first else { Issue.record("no failure"); return }
        #expect(failure.message.hasPrefix("\(file):2:"))
    }

    /// The terminal app holds the schema's load, which the zones' answer asks for, until the frame
    /// showing the zones is on screen; headless loops start it at once.
    @MainActor @Test func theAppStartsTheSchemaLoadOnceTheZonesAreOnScreen() async throws {
        var configuration = LocalServerConfiguration()
        configuration.apiTokens = ["t"]
        configuration.users = [(name: "u", token: "w")]
        let service = try LocalCloudKit(store: try Store(directory: tempDirectory("held")), configuration: configuration)
        let state = BrowserState(connection: ConnectionInfo(account: testAccount(), database: .private))
        for holds in [true, false] {
            let live = LiveLoop(BrowserLoop(state: state, runner: runner(serverURL: "http://in-process", service: service, cache: nil)), host: NoHost())
            live.holdsUntilFrame = holds
            var events: [BrowserEvent] = []
            live.onEvent = { event, _ in events.append(event); live.send(event) }
            live.start()
            func wait(_ what: String, until done: () -> Bool) async throws {
                for _ in 0..<500 where !done() { try await Task.sleep(nanoseconds: 10_000_000) }
                #expect(done(), "\(what) (holdsUntilFrame: \(holds))")
            }
            func schemaArrived() -> Bool { events.contains { if case .schemaLoaded = $0 { return true } else { return false } } }
            try await wait("the zones") { events.contains { if case .zonesLoaded = $0 { return true } else { return false } } }
            if holds {
                #expect(live.waitingForFrame == [.loadSchema], "asked for with the zones, held")
                try await Task.sleep(nanoseconds: 200_000_000)
                #expect(!schemaArrived(), "not started before a frame")
                live.framePresented()
                #expect(live.waitingForFrame.isEmpty)
            }
            try await wait("the schema", until: schemaArrived)
            #expect(live.state.schema?.origin == .server)
        }
    }
}

private struct NoHost: EffectHost {
    func copy(_ text: String) async {}
    func edit(_ edit: JSONEdit) async -> BrowserEvent? { nil }
    func quit() async {}
    func deliver(_ event: BrowserEvent) async {}
}
