import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

@Suite struct ReadingTests {
    /// Errors are kept in full for `!`; the status bar's short form goes when the user moves on, and a
    /// long message wraps instead of being cut.
    /// `:open NAME` on the zones screen opens the record in the zone selected there, as `:query` runs
    /// there (a new user was told ":open takes a record name" after giving one).
    @Test func openOnTheZonesScreenUsesTheSelectedZone() {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .char(":"))
        h.type("open artwork-0001")
        h.keys(.enter)
        #expect(h.state.input == nil)
        #expect(h.effects.contains { if case .lookupRecord(let key) = $0 { return key.recordName == "artwork-0001" && key.zone.zoneID.zoneName == "Gallery" } else { return false } })
        #expect(h.state.pane == .recordDetail)
    }

    @Test func errorsAreKeptInFullAndClearWhenTheUserMovesOn() {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char(":"))
        h.type("open")
        h.keys(.enter)
        // A refused command is not an error: the line stays open with the text and why.
        #expect(h.state.input?.text == "open" && h.state.input?.refusal == .openUsage && h.inputNote == ":open takes one record name (:open NAME)")
        #expect(h.state.lastError == nil && h.state.errorLog.isEmpty)
        h.keys(.escape)
        Browser.fail(&h.state, BrowserFailure(message: "zones/list: the network is down"))
        let failure = BrowserFailure(CloudKitError(
            kind: .server, operation: "records/query", httpStatus: 400, serverErrorCode: .badRequest,
            reason: "Field 'nope' is not marked queryable and the reason keeps going long enough to need a second and a third line on an 80-column screen",
            uuid: "5E1F-UUID"))
        h.send(.pageApplied(generation: 0, .failure(failure)))  // an old generation: ignored
        Browser.fail(&h.state, failure)
        h.keys(.char("!"))
        #expect(h.state.pane == .errors)
        let text = h.screen.snapshot
        #expect(text.contains("HTTP 400 · BAD_REQUEST") && text.contains("request uuid: 5E1F-UUID") && text.contains("80-column screen"))
        #expect(text.contains("2 errors, newest first"))
        h.keys(.char("!"))
        h.keys(.char("s"))
        #expect(h.state.lastError == nil, "moving to another screen clears the status bar's error")
        #expect(h.state.errorLog.count == 2, "it stays in !")
        h.state.say(.failed(BrowserFailure(message: String(repeating: "a long message that does not fit one row ", count: 4))))
        let rows = h.screen.snapshot.split(separator: "\n", omittingEmptySubsequences: false).suffix(5)
        #expect(rows.filter { $0.contains("a long message") }.count >= 2, "the message wraps over rows")
    }

    /// At 80 columns an open zone's status line has no room left for the last error: a mistyped
    /// command's error is then read on the hint line, in full, and the status line is unchanged.
    @Test func anErrorTheStatusLineCannotHoldIsShownOnTheHintLine() {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<200), token: "t", more: true)
        let statusBefore = h.screen.snapshot.split(separator: "\n", omittingEmptySubsequences: false).last.map(String.init)
        h.keys(.char(":"))
        h.type("query Artwork createdTimestamp")
        h.keys(.enter)
        // Refused: the line keeps the text, the reason stands above it.
        #expect(h.state.input?.text == "query Artwork createdTimestamp" && h.inputNote == "a filter is FIELD COMPARATOR VALUE")
        #expect(h.screen.snapshot.split(separator: "\n").suffix(3).contains { $0.contains("a filter is FIELD COMPARATOR VALUE") })
        h.keys(.escape)
        Browser.fail(&h.state, BrowserFailure(message: "a filter is FIELD COMPARATOR VALUE"))
        let rows = h.screen.snapshot.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let status = rows.last
        #expect(status == statusBefore, "the status line had no room: \(status ?? "")")
        #expect(rows.suffix(3).contains { $0.contains("a filter is FIELD COMPARATOR VALUE") }, "\(rows.suffix(3))")
        // Wider, the status line holds it and the hint line keeps its keys.
        var wide = Harness(width: 160, height: 30)
        wide.send(.zonesLoaded(.private, .success(Harness.zones)))
        wide.keys(.char("j"), .enter)
        wide.page(Harness.records(0..<200), token: "t", more: true)
        Browser.fail(&wide.state, BrowserFailure(message: "a filter is FIELD COMPARATOR VALUE"))
        let wideRows = wide.screen.snapshot.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).suffix(3)
        #expect(wideRows.contains { $0.contains("│ a filter is FIELD COMPARATOR VALUE") } && wideRows.contains { $0.contains("Enter open") }, "\(wideRows)")
    }

    @Test func aFailedQueryKeepsTheListThatWasShown() {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<30), token: "t", more: false)
        h.keys(.char(":"))
        h.type("query Artwork nope EQUALS 1")
        h.keys(.enter)
        guard case .runQuery(_, let key, true, let generation)? = h.effects.first else {
            Issue.record("expected a query: \(h.effects)")
            return
        }
        #expect(key.query != "")
        h.send(.pageApplied(generation: generation, .failure(BrowserFailure(message: "BAD_REQUEST: Field 'nope' is not queryable"))))
        #expect(h.state.list?.total == 30 && h.state.list?.source == .changes, "the 30 records that were shown are back")
        #expect(h.state.message?.contains("the query failed") == true)
        h.keys(.char(":"))
        h.type("query Artwork year LIKE 3")
        h.keys(.enter)
        #expect(h.inputNote?.contains("valid: EQUALS, NOT_EQUALS") == true && h.state.input?.text == "query Artwork year LIKE 3")
    }
}
