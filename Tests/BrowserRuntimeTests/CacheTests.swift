import BrowserRuntime
import CloudKitLocal
import CloudKitWeb
import Foundation
import RecordBrowser
import Testing

func tempDirectory(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)").path
}

let key = ListKey(zone: zoneKey(.private, ZoneID(zoneName: "Z")))

@Suite struct RecordCacheTests {
    @Test func pagesReplaceInPlaceAppendAndTombstone() throws {
        let cache = try RecordCache(directory: tempDirectory("cache"), account: testAccount())
        try cache.apply(key, records: [.record(Record(recordName: "a", recordType: "T", recordChangeTag: "1")), .record(Record(recordName: "b", recordType: "T"))], syncToken: "t1", continuationMarker: nil, moreComing: true)
        let state = try cache.apply(key, records: [.record(Record(recordName: "a", recordType: "T", recordChangeTag: "2")), .deleted(recordName: "b", zoneID: nil), .record(Record(recordName: "c", recordType: "T"))], syncToken: "t2", continuationMarker: nil, moreComing: false)
        #expect(state.count == 3 && state.syncToken == "t2" && !state.moreComing)
        let window = try cache.window(key, filter: nil, start: 0, count: 10)
        #expect(window.rows.map(\.recordName) == ["a", "b", "c"] && window.rows[0].changeTag == "2" && window.rows[1].deleted)
        #expect(window.rows[1].recordType == "T", "a tombstone keeps the type it had")
        #expect(try cache.record(key, name: "a")?.recordChangeTag == "2")
        // Reopening drops tombstones: deleted records leave the cache.
        #expect(try cache.open(key).count == 2)
        #expect(try cache.window(key, filter: nil, start: 0, count: 10).rows.map(\.recordName) == ["a", "c"], "positions are dense again")
        #expect(try cache.window(key, filter: nil, start: 1, count: 1).rows.map(\.recordName) == ["c"])
        try cache.apply(key, records: [.record(Record(recordName: "d", recordType: "T"))], syncToken: "t3", continuationMarker: nil, moreComing: false)
        #expect(try cache.window(key, filter: nil, start: 0, count: 10) .rows.map(\.recordName) == ["a", "c", "d"])
        #expect(try cache.window(key, filter: "C", start: 0, count: 10).rows.map(\.recordName) == ["c"])
        #expect(try cache.cachedZones(Scope(account: testAccount(), database: .private)) == [zoneKey(.private, ZoneID(zoneName: "Z"))])
        try cache.reset(key)
        let reopened = try cache.open(key)
        #expect(reopened.count == 0 && reopened.syncToken == nil && reopened.moreComing)
    }

    @Test func theCacheFileIsOwnerOnly() throws {
        let directory = tempDirectory("cache-perm")
        let cache = try RecordCache(directory: directory, account: testAccount(.production))
        let mode = try FileManager.default.attributesOfItem(atPath: cache.path)[.posixPermissions] as? NSNumber
        #expect(mode.map { $0.intValue & 0o077 } == 0)
        let dirMode = try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? NSNumber
        #expect(dirMode.map { $0.intValue & 0o077 } == 0)
    }
}

/// A local server in this process (real SQLite in a temporary directory) with API token `t` and user
/// `u` (web token `w`), and a client of it.
func inProcessServer(_ name: String = "srv") throws -> (LocalCloudKit, CloudKitClient) {
    var configuration = LocalServerConfiguration()
    configuration.apiTokens = ["t"]
    configuration.users = [(name: "u", token: "w")]
    let service = try LocalCloudKit(store: try Store(directory: tempDirectory(name)), configuration: configuration)
    let client = CloudKitClient(
        configuration: CloudKitConfiguration(serverURL: "http://in-process", container: "iCloud.t"),
        credentials: .apiToken("t", webAuthToken: "w"), transport: InProcessTransport(service: service))
    return (service, client)
}

/// The effect runner against the local server in-process: real client, real server, real SQLite.
@Suite struct EffectRunnerTests {
    func setUp() async throws -> (EffectRunner, CloudKitDatabase, LocalCloudKit) {
        let (service, client) = try inProcessServer()
        let db = client.database(.private)
        _ = try await db.modifyZones([ZoneOperation(.create, ZoneID(zoneName: "Z"))])
        _ = try await db.modifyRecords(ModifyRecordsRequest(operations: (0..<450).map { .create(Record(recordName: "r\($0)", recordType: "T")) }.prefix(200).map { $0 }, zoneID: ZoneID(zoneName: "Z")))
        _ = try await db.modifyRecords(ModifyRecordsRequest(operations: (200..<450).map { .create(Record(recordName: "r\($0)", recordType: "T")) }.prefix(200).map { $0 }, zoneID: ZoneID(zoneName: "Z")))
        let cache = try RecordCache(directory: tempDirectory("cache"), account: testAccount())
        return (EffectRunner(client: client, cache: cache, account: testAccount()), db, service)
    }

    func page(_ runner: EffectRunner, token: String?) async throws -> PageOutcome {
        let events = await runner.execute(.loadChanges(key, syncToken: token, generation: 1))
        guard case .pageApplied(1, let result)? = events.first else { throw BrowserFailure(message: "no page event") }
        return try result.get()
    }

    @Test func pagesGoToTheCacheAndAReopenFetchesOnlyChanges() async throws {
        let (runner, db, _) = try await setUp()
        var outcome = try await page(runner, token: nil)
        var token = outcome.syncToken
        while outcome.moreComing {
            outcome = try await page(runner, token: token)
            token = outcome.syncToken
        }
        #expect(outcome.total == 400)
        _ = try await db.modifyRecords(ModifyRecordsRequest(operations: [RecordOperation(.forceUpdate, Record(recordName: "r5", fields: ["x": .int64(1)])), .forceDelete(recordName: "r6")], zoneID: ZoneID(zoneName: "Z")))
        let opened = await runner.execute(.openList(key, generation: 2))
        guard case .listOpened(2, 400, let saved, _)? = opened.first else {
            Issue.record("expected the cached list: \(opened)")
            return
        }
        let changes = try await page(runner, token: saved)
        #expect(changes.received == 2 && changes.total == 400 && !changes.tokenRefused, "only the two changes are fetched")
    }

    @Test func aRefusedTokenStartsACleanFetch() async throws {
        let (runner, db, _) = try await setUp()
        let first = try await page(runner, token: nil)
        // Deleting and recreating the zone makes the saved token unknown to the server.
        _ = try await db.modifyZones([ZoneOperation(.delete, ZoneID(zoneName: "Z"))])
        _ = try await db.modifyZones([ZoneOperation(.create, ZoneID(zoneName: "Z"))])
        _ = try await db.modifyRecords(ModifyRecordsRequest(operations: [.create(Record(recordName: "only", recordType: "T"))], zoneID: ZoneID(zoneName: "Z")))
        let outcome = try await page(runner, token: first.syncToken)
        #expect(outcome.tokenRefused && outcome.total == 1)
        let window = await runner.execute(.loadWindow(key, filter: nil, start: 0, count: 10, generation: 1, request: 7))
        guard case .windowLoaded(_, 7, 0, let rows, 1, _, _)? = window.first else {
            Issue.record("\(window)")
            return
        }
        #expect(rows.map(\.recordName) == ["only"])
    }
}

@Suite struct StagingJournalTests {
    @Test func stagedOperationsAndInflightCommitsSurviveAReopen() throws {
        let directory = tempDirectory("journal")
        let journal = try StagingJournal(directory: directory, account: testAccount())
        var batch = StagedBatch()
        let base = Record(recordName: "a", recordType: "T", recordChangeTag: "t1", fields: ["n": .int64(9_007_199_254_740_993), "s": .string("東京")])
        batch.stage(StagedOperation(kind: .update, database: .private, zoneID: ZoneID(zoneName: "Z"), base: base, changes: ["n": .int64(1), "s": .null]))
        batch.stage(StagedOperation(kind: .delete, database: .private, zoneID: ZoneID(zoneName: "Z"), base: Record(recordName: "b", recordType: "T", recordChangeTag: "t9")))
        try journal.save(batch)
        try journal.beginCommit(try CommitPlan.make(batch), at: 1)
        // A new process (a crash, kill -9) opens the same journal.
        let reopened = try StagingJournal(directory: directory, account: testAccount())
        #expect(try reopened.load() == batch)
        let inflight = try reopened.inflight()
        #expect(inflight.count == 1 && inflight[0].body.operations.count == 2 && inflight[0].atomic)
        try reopened.endCommit()
        #expect(try reopened.inflight().isEmpty)
        let mode = try FileManager.default.attributesOfItem(atPath: reopened.path)[.posixPermissions] as? NSNumber
        #expect(mode.map { $0.intValue & 0o077 } == 0, "the journal is owner-only")
    }
}
