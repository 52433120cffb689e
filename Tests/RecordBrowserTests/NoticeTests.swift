import CloudKitWeb
import Testing
@testable import RecordBrowser
import TerminalUI

/// The hint line holds typed reports: what a key did is a value (read here), and its words come from
/// one place (the screen shows them).
@Suite struct NoticeTests {
    @Test func whatAKeyStagedIsAValueAndTheScreenShowsItsWords() {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.select(field: "year")
        h.keys(.char("e"), .ctrl("u"))
        h.type("1999")
        h.keys(.enter)
        let name = Harness.detailRecord.recordName
        #expect(h.state.report.notice == .staged(.field("year", record: name), total: 1))
        #expect(h.state.messageKind == .plain)
        #expect(h.screen.snapshot.contains("staged: 'year' of '\(name)' · 1 staged (b batch, c commit)"))
        // Esc in the editor: nothing staged, and why.
        h.keys(.char("e"), .escape)
        #expect(h.state.report.notice == .nothingStaged(.editCancelled))
    }

    @Test func aRefusedLineKeepsItsTextAndATypedReason() {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char(":"))
        h.type("frobnicate now")
        h.keys(.enter)
        #expect(h.state.input?.text == "frobnicate now")
        #expect(h.state.input?.refusal == .unknownCommand("frobnicate"))
        #expect(h.screen.snapshot.contains("unknown command ':frobnicate'"))
        // An edit takes the reason away; Tab's candidates take its place.
        h.keys(.backspace)
        #expect(h.state.input?.refusal == nil)
    }

    @Test func aReportsKindDecidesHowLongItStays() {
        #expect(Notice.committed(saved: 1, deleted: 0, subscriptions: 0, failed: 0).kind == .outcome)
        #expect(Notice.loadingToEnd(loaded: 5, forExport: false).kind == .progress(.loadingToEnd))
        #expect(Notice.downloading("'image' of a", to: "/tmp/a").kind == .progress(.download("'image' of a")))
        #expect(Notice.firedOnceDeleted("s", fromPush: true).kind == .subscriptionFiredOnce)
        #expect(Notice.refused(.dbUsage).kind == .refusal)
        #expect(Notice.noMoreMatches.kind == .plain)
        // A commit's outcome outlives one screen change (as a plain report), then goes with a move.
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("s"))
        h.state.say(.committed(saved: 2, deleted: 1, subscriptions: 0, failed: 0))
        h.keys(.escape)
        #expect(h.state.report.notice == .committed(saved: 2, deleted: 1, subscriptions: 0, failed: 0) && h.state.messageKind == .plain)
        #expect(h.state.message == "committed 3 operations (2 saved, 1 deleted)")
        h.keys(.char("j"))
        #expect(h.state.report.notice == nil)
    }

    /// "refreshing…" is true until the page comes in, not after (a new user saw it stay).
    @Test func aFetchReportGoesWhenItsPageComesIn() {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page([.record(Harness.detailRecord)], token: "t", more: false)
        h.keys(.char("r"))
        #expect(h.state.report.notice == .refreshing && h.state.messageKind == .progress(.fetching))
        h.page([], token: "t2", more: false)
        #expect(h.state.report.notice == nil)
        // What was said of one database goes with a switch to another.
        h.keys(.char("z"))
        h.state.say(.defaultZoneUndeletable)
        h.keys(.char("1"))
        #expect(h.state.report.notice == nil)
    }

    /// `d c y` typed in one burst on a list: the c waits for the d's record, the y for what the
    /// delete takes with it; what is sent is what the preview showed (a new user's burst sent less).
    @Test func aBurstOfDeleteCommitSendSendsWhatThePreviewShows() throws {
        var h = Harness(width: 100, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<5), token: "t", more: false)
        h.keys(.char("d"))
        let read = try #require(h.effects.compactMap { if case .loadRecordToDelete(let key, let name) = $0 { return (key, name) } else { return nil } }.first)
        h.keys(.char("c"), .char("y"))
        #expect(h.state.pane == .records && h.state.waitingKeys == [.char("c"), .char("y")], "c and y wait for the record")
        let record = Record(recordName: read.1, recordType: "Artwork", recordChangeTag: "t")
        h.send(.recordToDelete(RecordKey(zone: read.0.zone, recordName: read.1), record))
        let plan = try #require(h.commitPlans.first, "sent once the record and its impact were known")
        #expect(plan.requests.flatMap(\.body.operations).count == 1)
        #expect(h.state.staged.operations.map(\.recordName) == [read.1])
    }
}
