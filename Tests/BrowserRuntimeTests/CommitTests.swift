import BrowserRuntime
import BrowserRuntimeTesting
import CloudKitLocal
import CloudKitWeb
import Foundation
import RecordBrowser
import Testing
import TerminalUI

/// Commits through the real core, runner, client, local server and journal (in-process transport).
@Suite struct CommitRoundTripTests {
    let zone = ZoneID(zoneName: "Z")

    /// A local server in-process and a client of it; `losing`: zones/modify answers are lost.
    static func client(losing: Bool = false) throws -> CloudKitClient {
        var configuration = LocalServerConfiguration()
        configuration.apiTokens = ["t"]
        configuration.users = [(name: "u", token: "w")]
        let service = try LocalCloudKit(store: try Store(directory: tempDirectory("srv")), configuration: configuration)
        let transport: any HTTPTransport = losing ? LosingTransport(inner: InProcessTransport(service: service)) : InProcessTransport(service: service)
        return CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: "http://in-process", container: "iCloud.t"),
            credentials: .apiToken("t", webAuthToken: "w"), transport: transport)
    }

    func setUp() async throws -> (EffectRunner, CloudKitDatabase, StagingJournal) {
        let client = try Self.client()
        let db = client.database(.private)
        _ = try await db.modifyZones([ZoneOperation(.create, zone)])
        _ = try await db.modifyRecords(ModifyRecordsRequest(
            operations: (1...3).map { .create(Record(recordName: "r\($0)", recordType: "T", fields: ["n": .int64(Int64($0)), "s": .string("v\($0)")])) }, zoneID: zone))
        let journal = try StagingJournal(directory: tempDirectory("journal"), account: testAccount())
        return (EffectRunner(client: client, cache: nil, journal: journal), db, journal)
    }

    /// Feeds events through the app's own loop (core, journal, runner) until no effect is left.
    func drive(_ state: inout BrowserState, _ runner: EffectRunner, _ events: BrowserEvent...) async {
        var runtime = BrowserLoop(state: state, runner: runner)
        await runtime.settle(events, host: HeadlessHost())
        state = runtime.state
    }

    func record(_ db: CloudKitDatabase, _ name: String) async throws -> Record? {
        try await db.lookupRecords([name], zoneID: zone).first?.record
    }

    @Test func aConflictIsResolvedAndTheBatchCommittedAgainAtomically() async throws {
        let (runner, db, journal) = try await setUp()
        let r1 = try #require(try await record(db, "r1")), r2 = try #require(try await record(db, "r2"))
        var state = BrowserState(connection: ConnectionInfo(account: testAccount(), database: .private))
        state.size = (100, 30)
        state.staged.stage(StagedOperation(kind: .update, database: .private, zoneID: zone, base: r1, changes: ["s": .string("mine")]))
        state.staged.stage(StagedOperation(kind: .delete, database: .private, zoneID: zone, base: r2))
        // Another writer changes r1 after the user read it.
        _ = try await db.modifyRecords(ModifyRecordsRequest(operations: [.update(Record(recordName: "r1", recordChangeTag: r1.recordChangeTag, fields: ["n": .int64(100)]))], zoneID: zone))
        await drive(&state, runner, .key(.char("c")), .key(.char("y")))
        #expect(state.pane == .conflict)
        #expect(try await record(db, "r2") != nil, "the atomic batch applied nothing: r2 still exists")
        #expect(state.commit?.innocent == [recordKey(.private, zone, "r2")])
        guard case .record(let server)? = state.commit?.conflicts.first?.server else {
            Issue.record("the server's version was not fetched: \(String(describing: state.commit?.conflicts))")
            return
        }
        #expect(server.fields["n"] == .int64(100))
        // The loop journaled the commit before sending it and, the answer read, cleared it together
        // with the batch that is still staged (a crash now restores the batch, nothing in flight).
        #expect(try journal.inflight().isEmpty && journal.load() == state.staged)
        // Keep mine, re-based on the server's tag; then confirm the new preview.
        await drive(&state, runner, .key(.char("m")))
        #expect(state.pane == .commit && state.staged.operations[0].baseTag == server.recordChangeTag)
        await drive(&state, runner, .key(.char("y")))
        #expect(state.staged.isEmpty && state.commit?.phase == .done, "\(state.commit?.outcome ?? [])")
        let after = try #require(try await record(db, "r1"))
        #expect(after.fields["s"] == .string("mine") && after.fields["n"] == .int64(100), "my field and the other writer's both kept")
        #expect(try await record(db, "r2") == nil)
    }

    @Test func aLostAnswerIsJudgedByLookingTheRecordsUp() async throws {
        let (runner, db, _) = try await setUp()
        let r3 = try #require(try await record(db, "r3"))
        var batch = StagedBatch()
        batch.stage(StagedOperation(kind: .update, database: .private, zoneID: zone, base: r3, changes: ["s": .string("new"), "n": .null]))
        let plan = try CommitPlan.make(batch)
        guard case .commitVerified(let before, nil) = await runner.verify(plan.requests) else { Issue.record("lookup failed"); return }
        #expect(before.map(\.applied) == [.no], "not sent yet: not applied")
        _ = try await db.modifyRecords(plan.requests[0].body)
        guard case .commitVerified(let after, nil) = await runner.verify(plan.requests) else { Issue.record("lookup failed"); return }
        #expect(after.map(\.applied) == [.yes], "\(after)")
    }

    /// zones/modify reaches the server, then the connection drops: the runner looks the zones up
    /// instead of reporting "unknown", so an applied create is done and the records follow.
    @Test func aLostZonesAnswerIsJudgedByLookingTheZonesUp() async throws {
        let client = try Self.client(losing: true)
        let db = client.database(.private)
        _ = try await db.modifyZones([ZoneOperation(.create, ZoneID(zoneName: "Old"))])
        let runner = EffectRunner(client: client, cache: nil)
        var batch = StagedBatch()
        let account = testAccount()
        let scope = Scope(account: account, database: .private)
        batch.stage(zone: StagedZoneOperation(kind: .create, zone: ZoneKey(scope: scope, zoneID: ZoneID(zoneName: "New"))))
        batch.stage(zone: StagedZoneOperation(kind: .delete, zone: ZoneKey(scope: scope, zoneID: ZoneID(zoneName: "Old"))))
        batch.stage(zone: StagedZoneOperation(kind: .delete, zone: ZoneKey(scope: scope, zoneID: ZoneID(zoneName: "Never"))))
        let plan = try CommitPlan.make(batch)
        let outcomes = await runner.commitZones(plan)
        guard case .answered(let results)? = outcomes.first?.answer else {
            Issue.record("the lost answer was not looked up: \(outcomes)")
            return
        }
        let zones = try await db.listZones().compactMap(\.zone).map(\.zoneID.zoneName)
        #expect(zones.contains("New") && !zones.contains("Old"), "the request was applied: \(zones)")
        #expect(results.count == 3)
        if case .zone(let z) = results[0] { #expect(z.zoneID.zoneName == "New") } else { Issue.record("New: \(results[0])") }
        if case .zone(let z) = results[1] { #expect(z.deleted == true) } else { Issue.record("Old: \(results[1])") }
        // A zone that never existed: "deleted" by the lookup's reckoning too (it is absent).
        if case .zone = results[2] {} else { Issue.record("Never: \(results[2])") }
    }
}

/// A share's staged participants and public permission survive a restart, as field edits do.
@Suite struct ShareJournalTests {
    @Test func aStagedShareEditIsJournaled() throws {
        let journal = try StagingJournal(directory: tempDirectory("journal"), account: testAccount())
        var share = Record.share(of: nil)
        share.recordChangeTag = "s1"
        var op = StagedOperation(kind: .update, database: .private, zoneID: ZoneID(zoneName: "Z"), base: share)
        var edit = ShareEdit(of: share)
        edit.participants = [.invite(UserLookupInfo(emailAddress: "bob@example.com"), permission: .readWrite)]
        edit.publicPermission = .readOnly
        op.share = edit
        var batch = StagedBatch()
        batch.stage(op)
        try journal.save(batch)
        let restored = try journal.load()
        #expect(restored == batch)
        #expect(restored.operations.first?.recordOperation.record.participants?.first?.permission == .readWrite)
    }
}

/// Sends zones/modify through, then throws as a dropped connection does (no HTTP status).
struct LosingTransport: HTTPTransport {
    let inner: InProcessTransport
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response = try await inner.send(request)
        if request.url.contains("/zones/modify"), let body = request.body, String(decoding: body, as: UTF8.self).contains("\"New\"") {
            throw CloudKitError(kind: .transport, operation: "zones/modify", reason: "connection reset after the request was sent")
        }
        return response
    }
}
