import BrowserRuntime
import BrowserRuntimeTesting
import CloudKitLocal
import CloudKitWeb
import Foundation
import SQLiteDB
import RecordBrowser
import Testing
import TerminalUI

/// Answers every records/modify with each operation's record saved, and records what was sent.
final class RecordingModifyTransport: HTTPTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var sent: [HTTPRequest] = []

    /// The records/modify requests (the commit preview also lists the subscriptions).
    var requests: [HTTPRequest] { lock.withLock { sent } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if request.url.contains("/subscriptions/list") {
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(#"{"subscriptions":[]}"#.utf8))
        }
        lock.withLock { sent.append(request) }
        let body = try JSON(parsing: String(decoding: request.body ?? [], as: UTF8.self))
        let modify = try ModifyRecordsRequest(json: body)
        var records: [JSON] = []
        for (i, operation) in modify.operations.enumerated() {
            var saved = operation.record
            saved.recordChangeTag = "new\(i)"
            saved.zoneID = modify.zoneID
            records.append(saved.json)
        }
        var answer = JSONObject()
        answer.set("records", JSON.array(records))
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(JSON.object(answer).text.utf8))
    }
}

@Suite struct IdentityTests {
    @Test func serverURLsAreNormalizedAndTheDemoIsAServerOfItsOwn() {
        #expect(ServerID.url(normalizing: "HTTPS://API.Apple-CloudKit.com:443/") == .appleDefault)
        #expect(ServerID.url(normalizing: "https://api.apple-cloudkit.com").isAppleDefault)
        #expect(ServerID.url(normalizing: "http://127.0.0.1:80") == ServerID.url(normalizing: "http://127.0.0.1"))
        #expect(ServerID.url(normalizing: "http://127.0.0.1:8080") != ServerID.url(normalizing: "http://127.0.0.1:8081"))
        #expect(ServerID.url(normalizing: "http://127.0.0.1:8080/").displayName == "127.0.0.1:8080")
        let demo = ServerID.embeddedDemo(dataDirectory: "/home/u/.local/share/ckbrowse/demo")
        #expect(!demo.isAppleDefault && demo != ServerID.url(normalizing: "http://in-process"))
    }

    @Test func zoneOwnersCountOnlyInTheSharedDatabase() {
        let account = testAccount()
        let shared = Scope(account: account, database: .shared), privateDB = Scope(account: account, database: .private)
        let a = ZoneKey(scope: shared, zoneID: ZoneID(zoneName: "Notes", ownerRecordName: "_alice"))
        let b = ZoneKey(scope: shared, zoneID: ZoneID(zoneName: "Notes", ownerRecordName: "_bob"))
        #expect(a != b && a.zoneID.ownerRecordName == "_alice")
        // In the private database every zone is the caller's, spelled out or not.
        #expect(ZoneKey(scope: privateDB, zoneID: ZoneID(zoneName: "Notes", ownerRecordName: "_me")) == ZoneKey(scope: privateDB, zoneID: ZoneID(zoneName: "Notes")))
        #expect(ZoneKey(scope: privateDB, zoneID: ZoneID(zoneName: "Notes")) != ZoneKey(scope: Scope(account: testAccount(.production), database: .private), zoneID: ZoneID(zoneName: "Notes")))
    }

    /// Two owners share a zone called Notes: staged edits of each go out in a request addressed to
    /// that owner's zone, never grouped by the name alone.
    @Test func aSharedDatabaseCommitAddressesEachOwnersZone() async throws {
        let transport = RecordingModifyTransport()
        let client = CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: "http://scripted", container: "iCloud.t"),
            credentials: .apiToken("t", webAuthToken: "w"), transport: transport)
        let account = Account(server: .url(normalizing: "http://scripted"), container: "iCloud.t", environment: .development, identity: .user(recordName: "_me"))
        let runner = EffectRunner(client: client, cache: nil, account: account)
        var state = BrowserState(connection: ConnectionInfo(account: account, database: .shared))
        state.size = (100, 30)
        let scope = Scope(account: account, database: .shared)
        let alice = ZoneKey(scope: scope, zoneID: ZoneID(zoneName: "Notes", ownerRecordName: "_alice"))
        let bob = ZoneKey(scope: scope, zoneID: ZoneID(zoneName: "Notes", ownerRecordName: "_bob"))
        state.staged.stage(StagedOperation(kind: .update, zone: alice, base: Record(recordName: "n1", recordType: "Note", recordChangeTag: "a1", fields: ["t": .string("x")]), changes: ["t": .string("alice's")]))
        state.staged.stage(StagedOperation(kind: .update, zone: bob, base: Record(recordName: "n1", recordType: "Note", recordChangeTag: "b1", fields: ["t": .string("y")]), changes: ["t": .string("bob's")]))
        #expect(state.staged.operations.count == 2, "the same record name in two owners' zones is two records")

        var loop = BrowserLoop(state: state, runner: runner)
        await loop.settle([.key(.char("c")), .key(.char("y"))], host: HeadlessHost())
        state = loop.state
        let sent = try transport.requests.map { try ModifyRecordsRequest(json: JSON(parsing: String(decoding: $0.body ?? [], as: UTF8.self))) }
        #expect(sent.count == 2)
        #expect(transport.requests.allSatisfy { $0.url.contains("/shared/records/modify") })
        let byOwner = Dictionary(uniqueKeysWithValues: sent.map { ($0.zoneID?.ownerRecordName ?? "", $0) })
        #expect(byOwner["_alice"]?.zoneID?.zoneName == "Notes" && byOwner["_bob"]?.zoneID?.zoneName == "Notes")
        #expect(byOwner["_alice"]?.operations.map { $0.record.fields["t"] } == [.string("alice's")])
        #expect(byOwner["_bob"]?.operations.map { $0.record.fields["t"] } == [.string("bob's")])
        #expect(byOwner["_alice"]?.operations.first?.record.recordChangeTag == "a1" && byOwner["_bob"]?.operations.first?.record.recordChangeTag == "b1")
        #expect(state.staged.isEmpty && state.commit?.phase == .done, "both applied: \(state.commit?.outcome ?? [])")
    }

    /// The same container on two servers (the demo and a local serve), or as two users, has two
    /// caches and two journals: nothing of one shows in the other.
    @Test func cachesAndJournalsAreKeptPerAccount() throws {
        let cacheDirectory = tempDirectory("cache-accounts"), journalDirectory = tempDirectory("journal-accounts")
        let demo = Account(server: .embeddedDemo(dataDirectory: "/data/demo"), container: "iCloud.t", environment: .development, identity: .user(recordName: "_u"))
        let local = Account(server: .url(normalizing: "http://127.0.0.1:8080"), container: "iCloud.t", environment: .development, identity: .user(recordName: "_u"))
        let otherUser = Account(server: demo.server, container: "iCloud.t", environment: .development, identity: .user(recordName: "_v"))
        func key(_ account: Account) -> ListKey { ListKey(zone: ZoneKey(scope: Scope(account: account, database: .private), owner: "", zoneName: "Z")) }

        let demoCache = try RecordCache(directory: cacheDirectory, account: demo)
        try demoCache.apply(key(demo), records: [.record(Record(recordName: "a", recordType: "T"))], syncToken: "t", continuationMarker: nil, moreComing: false)
        for account in [local, otherUser] {
            let cache = try RecordCache(directory: cacheDirectory, account: account)
            #expect(cache.path != demoCache.path)
            #expect(try cache.open(key(account)).count == 0, "\(account.identity) on \(account.server) sees none of the demo's records")
            #expect(try cache.cachedZones(Scope(account: account, database: .private)).isEmpty)
        }
        #expect(try RecordCache(directory: cacheDirectory, account: demo).open(key(demo)).count == 1)

        let demoJournal = try StagingJournal(directory: journalDirectory, account: demo)
        var batch = StagedBatch()
        batch.stage(StagedOperation(kind: .delete, zone: key(demo).zone, base: Record(recordName: "a", recordType: "T", recordChangeTag: "1")))
        try demoJournal.save(batch)
        #expect(try StagingJournal(directory: journalDirectory, account: local).load().isEmpty)
        #expect(try StagingJournal(directory: journalDirectory, account: otherUser).load().isEmpty)
        let restored = try StagingJournal(directory: journalDirectory, account: demo).load()
        #expect(restored == batch && restored.operations[0].zone.scope.account == demo)
    }

    /// Files of the earlier layout: the cache is dropped (with a notice); journal entries are shown
    /// and kept only when the user says so.
    @Test func earlierLayoutFilesAreDroppedOrPutToTheUser() throws {
        let cacheDirectory = tempDirectory("cache-legacy"), journalDirectory = tempDirectory("journal-legacy")
        let account = testAccount()
        try FileManager.default.createDirectory(atPath: cacheDirectory, withIntermediateDirectories: true)
        let oldCache = cacheDirectory + "/iCloud.t-development.sqlite"
        #expect(FileManager.default.createFile(atPath: oldCache, contents: Data("old".utf8)))
        let cache = try RecordCache(directory: cacheDirectory, account: account)
        #expect(cache.droppedLegacyFile == oldCache && !FileManager.default.fileExists(atPath: oldCache))

        // An old journal: entries with a zoneID dictionary, no server recorded.
        try FileManager.default.createDirectory(atPath: journalDirectory, withIntermediateDirectories: true)
        let oldJournal = journalDirectory + "/journal-iCloud.t-development.sqlite"
        try DatabaseQueue(path: oldJournal).write { db in
            try db.execute(sql: "CREATE TABLE staged (position INTEGER PRIMARY KEY, operation TEXT NOT NULL)")
            try db.execute(sql: "CREATE TABLE inflight (position INTEGER PRIMARY KEY, database TEXT NOT NULL, body TEXT NOT NULL, sent_at INTEGER NOT NULL)")
            try db.execute(sql: #"INSERT INTO staged VALUES (0, '{"kind":"delete","database":"private","zoneID":{"zoneName":"Z"},"recordName":"f-150","recordType":"T","baseTag":"9","baseFields":{},"changes":{}}')"#)
        }
        let legacy = try #require(StagingJournal.legacy(directory: journalDirectory, account: account))
        #expect(legacy.batch.operations.map(\.recordName) == ["f-150"] && legacy.unreadable == nil && !legacy.isEmpty)
        #expect(try StagingJournal(directory: journalDirectory, account: account).load().isEmpty, "never restored silently")

        var state = BrowserState(connection: ConnectionInfo(account: account, database: .private))
        state.size = (100, 30)
        _ = Browser.update(&state, .legacyJournalFound(legacy))
        #expect(Browser.render(state).snapshot.contains("keep them for in-process"))
        // Other keys do nothing; Esc leaves it for later; k keeps them here.
        _ = Browser.update(&state, .key(.char("d")))
        #expect(state.legacyJournal != nil && state.staged.isEmpty)
        let effects = Browser.update(&state, .key(.char("k")))
        #expect(state.legacyJournal == nil && state.staged.operations.map(\.key) == [recordKey(.private, ZoneID(zoneName: "Z"), "f-150")])
        #expect(effects == [.removeLegacyJournal(path: oldJournal)])

        var discarding = BrowserState(connection: ConnectionInfo(account: account, database: .private))
        _ = Browser.update(&discarding, .legacyJournalFound(legacy))
        #expect(Browser.update(&discarding, .key(.char("D"))) == [.removeLegacyJournal(path: oldJournal)] && discarding.staged.isEmpty)
        StagingJournal.removeLegacy(path: oldJournal)
        #expect(StagingJournal.legacy(directory: journalDirectory, account: account) == nil)
    }
}

/// A transport that looks at the journal when a commit's request reaches it.
final class JournalCheckingTransport: HTTPTransport, @unchecked Sendable {
    let inner = RecordingModifyTransport()
    let journal: StagingJournal
    private let lock = NSLock()
    private var seen: [Int] = []
    var inflightAtSend: [Int] { lock.withLock { seen } }

    init(journal: StagingJournal) { self.journal = journal }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let count = (try? journal.inflight().count) ?? -1
        lock.withLock { seen.append(count) }
        return try await inner.send(request)
    }
}

@Suite struct RuntimeTests {
    /// The one loop journals a commit before its request leaves, and clears it with the batch once
    /// the answer is read.
    @Test func aCommitIsInTheJournalWhileItsRequestIsOut() async throws {
        let account = Account(server: .url(normalizing: "http://scripted"), container: "iCloud.t", environment: .development, identity: .none)
        let journal = try StagingJournal(directory: tempDirectory("journal-runtime"), account: account)
        let transport = JournalCheckingTransport(journal: journal)
        let client = CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: "http://scripted", container: "iCloud.t"),
            credentials: .apiToken("t", webAuthToken: nil), transport: transport)
        var state = BrowserState(connection: ConnectionInfo(account: account, database: .private))
        state.size = (100, 30)
        var runtime = BrowserLoop(state: state, runner: EffectRunner(client: client, cache: nil, journal: journal, account: account))
        let zone = ZoneKey(scope: Scope(account: account, database: .private), owner: "", zoneName: "Z")
        runtime.state.staged.stage(StagedOperation(kind: .delete, zone: zone, base: Record(recordName: "r", recordType: "T", recordChangeTag: "1")))
        await runtime.settle([.key(.char("c")), .key(.char("y"))], host: HeadlessHost())
        // The preview's subscriptions/list goes first, with nothing in flight; the commit's request after.
        #expect(transport.inflightAtSend.last == 1 && transport.inflightAtSend.dropLast().allSatisfy { $0 == 0 }, "the request was in the journal when it was sent: \(transport.inflightAtSend)")
        #expect(try journal.inflight().isEmpty && journal.load().isEmpty && runtime.state.staged.isEmpty)
    }
}

@Suite struct TombstoneCountTests {
    /// A first load counts tombstones among its rows and says so; a reopen drops them: both counts
    /// say what they are.
    @Test func tombstonesAreCountedUntilTheListIsReopened() throws {
        let cache = try RecordCache(directory: tempDirectory("cache-tomb"), account: testAccount())
        let key = ListKey(zone: zoneKey(.private, ZoneID(zoneName: "T")))
        var state = try cache.apply(key, records: [.record(Record(recordName: "a", recordType: "T")), .record(Record(recordName: "b", recordType: "T"))],
                                    syncToken: "1", continuationMarker: nil, moreComing: true)
        #expect(state.count == 2 && state.deleted == 0)
        state = try cache.apply(key, records: [.deleted(recordName: "a", zoneID: nil), .deleted(recordName: "c", zoneID: nil)], syncToken: "2", continuationMarker: nil, moreComing: true)
        #expect(state.count == 3 && state.deleted == 2, "a and c are tombstones")
        state = try cache.apply(key, records: [.deleted(recordName: "a", zoneID: nil), .record(Record(recordName: "c", recordType: "T"))], syncToken: "3", continuationMarker: nil, moreComing: false)
        #expect(state.deleted == 1, "a stays deleted once, c came back")
        let reopened = try cache.open(key)
        #expect(reopened.count == 2 && reopened.deleted == 0)
    }
}

@Suite struct ZoneStagingTests {
    /// A zone made on the zones screen and a record staged in it go out in one commit: zones/modify
    /// first, then records/modify; the journal keeps the zone operation across a restart.
    @Test func aNewZoneAndARecordInItAreCommittedTogether() async throws {
        let service = try LocalCloudKit(store: try Store(directory: tempDirectory("srv-zones")), configuration: {
            var c = LocalServerConfiguration()
            c.apiTokens = ["t"]
            c.users = [(name: "u", token: "w")]
            return c
        }())
        let client = CloudKitClient(configuration: CloudKitConfiguration(serverURL: "http://in-process", container: "iCloud.t"),
                                    credentials: .apiToken("t", webAuthToken: "w"), transport: InProcessTransport(service: service))
        let journal = try StagingJournal(directory: tempDirectory("journal-zones"), account: testAccount())
        var state = BrowserState(connection: ConnectionInfo(account: testAccount(), database: .private))
        state.size = (100, 30)
        var runtime = BrowserLoop(state: state, runner: EffectRunner(client: client, cache: nil, journal: journal, account: testAccount()))
        let host = HeadlessHost()
        await runtime.start(host: host)
        await runtime.settle([.key(.char("n"))] + "Projects".map { .key(.char($0)) } + [.key(.enter)], host: host)
        #expect(runtime.state.staged.zoneOperations.map(\.zone.zoneName) == ["Projects"])
        let zone = zoneKey(.private, ZoneID(zoneName: "Projects"))
        runtime.state.staged.stage(StagedOperation.newRecord(zone: zone, recordType: "Task", recordName: "t1"))
        runtime.state.staged.stage(StagedOperation(kind: .update, zone: zone, base: Record(recordName: "t1", recordType: "Task"), changes: ["title": .string("first")]))
        _ = runtime.apply(.notice(.refreshing))  // the journal is written after every event
        try journal.save(runtime.state.staged)
        #expect(try journal.load().zoneOperations.count == 1, "the zone operation survives a restart")
        await runtime.settle([.key(.char("c"))], host: host)
        #expect(Browser.previewLines(runtime.state).map(\.text).contains { $0.contains("/private/zones/modify") })
        await runtime.settle([.key(.char("y"))], host: host)
        #expect(runtime.state.staged.isEmpty, "\(runtime.state.commit?.outcome ?? [])")
        let zones = try await client.database(.private).listZones().compactMap(\.zone).map(\.zoneID.zoneName)
        #expect(zones.contains("Projects"))
        let record = try await client.database(.private).lookupRecords(["t1"], zoneID: ZoneID(zoneName: "Projects")).first?.record
        #expect(record?.fields["title"] == .string("first"))
        #expect(Browser.previewLines(runtime.state).map(\.text).contains { $0.contains("zone Projects: created") })
        // Deleting it: the name must be typed.
        runtime.state.setSelection(.zones, runtime.state.zones.firstIndex { $0.zone?.zoneID.zoneName == "Projects" } ?? 0)
        runtime.state.stack.jumpToZones()
        runtime.state.commit = nil
        await runtime.settle([.key(.char("d"))] + "Project".map { .key(.char($0)) } + [.key(.enter)], host: host)
        // Refused: the line stays open with what was typed and why; the name completed, it is staged.
        #expect(runtime.state.staged.zoneOperations.isEmpty && runtime.state.input?.refusal == .zoneNameMismatch("Projects") && runtime.state.input?.text == "Project")
        await runtime.settle([.key(.char("s")), .key(.enter), .key(.char("c")), .key(.char("y"))], host: host)
        let after = try await client.database(.private).listZones().compactMap(\.zone).map(\.zoneID.zoneName)
        #expect(!after.contains("Projects"))
    }
}
