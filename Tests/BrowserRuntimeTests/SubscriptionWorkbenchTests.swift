import BrowserRuntime
import BrowserRuntimeTesting
import CloudKitLocal
import CloudKitWeb
import Foundation
import RecordBrowser
import Testing
import TerminalUI

/// Subscriptions built in the browser: `n` and `$EDITOR`, `E`, `d`, `u`, `R`, staged into the batch and
/// the journal and committed with subscriptions/modify, through the real core, runner, client and
/// local server (in-process transport).
@Suite struct SubscriptionWorkbenchTests {
    let zone = ZoneID(zoneName: "Z")

    func setUp() async throws -> (EffectRunner, CloudKitDatabase, StagingJournal) {
        let client = try CommitRoundTripTests.client()
        let db = client.database(.private)
        _ = try await db.modifyZones([ZoneOperation(.create, zone)])
        _ = try await db.modifyRecords(ModifyRecordsRequest(
            operations: [.create(Record(recordName: "r1", recordType: "T", fields: ["n": .int64(1)]))], zoneID: zone))
        let journal = try StagingJournal(directory: tempDirectory("journal"), account: testAccount())
        return (EffectRunner(client: client, cache: nil, journal: journal), db, journal)
    }

    func drive(_ state: inout BrowserState, _ runner: EffectRunner, host: HeadlessHost = HeadlessHost(), _ events: [BrowserEvent]) async {
        var runtime = BrowserLoop(state: state, runner: runner)
        await runtime.settle(events, host: host)
        state = runtime.state
    }

    func keys(_ text: String) -> [BrowserEvent] { text.map { .key(.char($0)) } }

    /// The editor plays a user who saves each of `answers` in turn (the last one again after that).
    final class Editor: @unchecked Sendable {
        private let lock = NSLock()
        private var answers: [String]
        init(_ answers: [String]) { self.answers = answers }
        func next(_ text: String) -> String? {
            lock.withLock { answers.count > 1 ? answers.removeFirst() : answers.first }
        }
    }

    func ids(_ db: CloudKitDatabase) async throws -> [String] {
        try await db.listSubscriptions().compactMap { $0.subscription?.subscriptionID }.sorted()
    }

    func state() -> BrowserState {
        var state = BrowserState(connection: ConnectionInfo(account: testAccount(), database: .private))
        state.size = (100, 30)
        return state
    }

    static let query = #"{"subscriptionID": "t-big", "subscriptionType": "query", "query": {"recordType": "T", "filterBy": [{"fieldName": "n", "comparator": "GREATER_THAN", "fieldValue": {"value": 5, "type": "INT64"}}]}, "zoneID": {"zoneName": "Z"}, "zoneWide": false, "firesOn": ["create", "update"], "notificationInfo": {"shouldSendContentAvailable": true}}"#

    @Test func aNewSubscriptionIsWrittenInTheEditorStagedJournaledAndCommitted() async throws {
        let (runner, db, journal) = try await setUp()
        var state = state()
        await drive(&state, runner, [.key(.char("s"))])
        #expect(state.pane == .subscriptions && state.known.subscriptions.loaded)
        // A bad comparator first: the editor opens again with the reason on top and the text kept.
        let bad = Self.query.replacingOccurrences(of: "GREATER_THAN", with: "BIGGER_THAN")
        let editor = Editor([bad, Self.query])
        let host = HeadlessHost { editor.next($0) }
        await drive(&state, runner, host: host, [.key(.char("n"))] + keys("T Z") + [.key(.enter)])
        let texts = host.editorTexts
        #expect(texts.count == 2, "the editor opened again after the refused text")
        #expect(texts.first?.contains("\"recordType\" : \"T\"") == true || texts.first?.contains("\"recordType\": \"T\"") == true, "the template names the type: \(texts.first ?? "")")
        #expect(texts.first?.contains("notificationInfo") == true && texts.first?.contains("firesOnce") == true)
        #expect(texts.last?.hasPrefix("// ERROR: filterBy[0]: unknown comparator 'BIGGER_THAN'") == true, "\(texts.last ?? "")")
        #expect(texts.last?.contains("BIGGER_THAN") == true, "the user's text is kept")
        #expect(state.staged.subscriptionOperations.map(\.subscriptionID) == ["t-big"])
        #expect(state.staged.subscriptionOperations.first?.kind == .create)
        #expect(try journal.load().subscriptionOperations == state.staged.subscriptionOperations, "the journal holds it")
        // The list shows it as new before anything is sent.
        #expect(Browser.subscriptionList(state).contains { if case .new(let op) = $0 { return op.subscriptionID == "t-big" } else { return false } })
        #expect(try await ids(db).isEmpty)

        // c previews subscriptions/modify, y sends it.
        await drive(&state, runner, [.key(.char("c"))])
        let preview = Browser.previewLines(state).map(\.text).joined(separator: "\n")
        #expect(preview.contains("POST /database/1/iCloud.t/development/private/subscriptions/modify"), "\(preview)")
        #expect(preview.contains("\"operationType\" : \"create\"") || preview.contains("\"operationType\": \"create\""))
        await drive(&state, runner, [.key(.char("y"))])
        #expect(state.staged.isEmpty, "\(state.commit?.outcome ?? [])")
        #expect(try await ids(db) == ["t-big"])
        #expect(state.commit?.outcome.contains { if case .subscriptions(_, let done, _, nil) = $0 { return done.count == 1 } else { return false } } == true)
        #expect(try journal.load().isEmpty)
    }

    @Test func editDeleteAndUnstageAListedSubscription() async throws {
        let (runner, db, _) = try await setUp()
        _ = try await db.modifySubscriptions([SubscriptionOperation(.create, try Subscription(json: JSON(parsing: Self.query)))])
        var state = state()
        await drive(&state, runner, [.key(.char("s"))])
        #expect(Browser.subscriptionList(state).count == 1)
        // E: firesOn changed in the editor; the batch shows old → new.
        let changed = Self.query.replacingOccurrences(of: #""firesOn": ["create", "update"]"#, with: #""firesOn": ["delete"]"#)
        await drive(&state, runner, host: HeadlessHost { _ in changed }, [.key(.char("E"))])
        let op = try #require(state.staged.subscriptionOperations.first)
        #expect(op.kind == .update)
        #expect(op.diff.contains { $0.key == "firesOn" && $0.old == #"["create","update"]"# && $0.new == #"["delete"]"# }, "\(op.diff)")
        // u unstages it; E again and commit.
        await drive(&state, runner, [.key(.char("u"))])
        #expect(state.staged.isEmpty)
        await drive(&state, runner, host: HeadlessHost { _ in changed }, [.key(.char("E"))])
        await drive(&state, runner, [.key(.char("c")), .key(.char("y"))])
        #expect(state.staged.isEmpty)
        #expect(try await db.lookupSubscriptions(["t-big"]).first?.subscription?.firesOn == [.delete])
        // d: staged deletion, then committed.
        await drive(&state, runner, [.key(.escape), .key(.char("s"))])
        await drive(&state, runner, [.key(.char("d"))])
        #expect(state.staged.subscriptionOperations.first?.kind == .delete)
        await drive(&state, runner, [.key(.char("c")), .key(.char("y"))])
        #expect(try await ids(db).isEmpty)
        #expect(state.known.firedOnce.isEmpty, "a subscription we deleted is not listed as fired")
    }

    @Test func aFiresOnceSubscriptionThatFiredIsRecreatedWithR() async throws {
        let (runner, db, _) = try await setUp()
        let once = Subscription.query("t-once", Query(recordType: "T"), firesOn: [.create], firesOnce: true, zoneID: zone, zoneWide: false,
                                      notificationInfo: NotificationInfo(shouldSendContentAvailable: true))
        _ = try await db.modifySubscriptions([SubscriptionOperation(.create, once)])
        var state = state()
        await drive(&state, runner, [.key(.char("s"))])
        #expect(Browser.subscriptionList(state).count == 1)
        // Another process creates a record: the subscription fires once and the server deletes it.
        _ = try await db.modifyRecords(ModifyRecordsRequest(operations: [.create(Record(recordName: "r2", recordType: "T", fields: ["n": .int64(2)]))], zoneID: zone))
        #expect(try await ids(db).isEmpty)
        await drive(&state, runner, [.key(.char("r"))])
        guard case .fired(let fired)? = Browser.subscriptionList(state).first else {
            Issue.record("the fired subscription is not listed: \(Browser.subscriptionList(state))")
            return
        }
        #expect(fired.subscriptionID == "t-once")
        await drive(&state, runner, [.key(.char("R"))])
        #expect(state.staged.subscriptionOperations.first?.recreatesFired == true)
        await drive(&state, runner, [.key(.char("c")), .key(.char("y"))])
        #expect(try await ids(db) == ["t-once"])
        #expect(state.known.firedOnce.isEmpty)
    }

    @Test func aRefusedSubscriptionStaysStagedWithItsReason() async throws {
        let (runner, db, _) = try await setUp()
        var state = state()
        await drive(&state, runner, [.key(.char("s"))])
        // A zone deleted behind the browser's back: the server refuses the subscription per item.
        var op = StagedSubscriptionOperation(kind: .create, scope: state.connection.scope,
                                             subscription: .zone("gone-zone", ZoneID(zoneName: "Gone")), base: nil)
        op.recreatesFired = false
        state.staged.stage(subscription: op)
        state.staged.stage(subscription: StagedSubscriptionOperation(kind: .create, scope: state.connection.scope,
                                                                     subscription: .zone("z-zone", zone), base: nil))
        await drive(&state, runner, [.key(.char("c")), .key(.char("y"))])
        #expect(try await ids(db) == ["z-zone"], "each operation on its own: the good one applied")
        let left = try #require(state.staged.subscriptionOperations.first)
        #expect(left.subscriptionID == "gone-zone" && left.failure?.code == .zoneNotFound, "\(left)")
        let detailLines = state.commit.map { _ in Browser.previewLines(state).map(\.text) } ?? []
        #expect(detailLines.contains { $0.contains("'gone-zone': not created: ZONE_NOT_FOUND") }, "\(detailLines)")
        #expect(state.message?.contains("1 failed") == true, "\(state.message ?? "")")
    }

    @Test func productionRefusesCreationBeforeAnythingIsSent() async throws {
        let (runner, _, _) = try await setUp()
        var state = BrowserState(connection: ConnectionInfo(account: testAccount(.production), database: .private))
        state.size = (100, 30)
        await drive(&state, runner, [.key(.char("s")), .key(.char("n"))])
        #expect(state.input == nil && state.message?.contains("development only") == true, "\(state.message ?? "")")
    }
}
