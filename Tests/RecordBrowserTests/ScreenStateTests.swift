import CloudKitWeb
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// Issue 30, the last part: the records, record-view and commit screens handle keys on their own state
/// (`onTop`), results reach them wherever they are (`withScreen`), and a screen written back never
/// replaces another of its kind put in its place.
@Suite struct ScreenStateTests {
    func list(generation: Int) -> RecordList {
        var list = RecordList(key: ListKey(zone: ZoneKey(scope: Harness().state.connection.scope, zoneID: ZoneID(zoneName: "Gallery"))), source: .changes)
        list.generation = generation
        return list
    }

    /// A handler that puts a new list in its screen's place (a query run again) keeps it: its own copy
    /// of the old screen is not written back over it. One that only changes its copy has it written back.
    @Test func onTopWritesBackOnlyTheScreenItHandedOut() {
        var state = Harness().state
        state.stack.push(.records(RecordsScreen(list: list(generation: 1))))
        guard case .records(let shown) = state.stack.top else { Issue.record("no records screen"); return }
        state.onTop(shown, Screen.records) { screen, state in
            screen.list.selection = 3
        }
        #expect(state.list?.selection == 3, "the handler's change is written back")
        guard case .records(let again) = state.stack.top else { Issue.record("no records screen"); return }
        let replacement = list(generation: 2)
        state.onTop(again, Screen.records) { screen, state in
            screen.list.selection = 7
            state.stack.replace(.records, with: .records(RecordsScreen(list: replacement)))
        }
        #expect(state.list?.generation == 2 && state.list?.selection == 0, "the new list stays")
    }

    /// Results for a zone's records set aside by `z` reach them there; the list shown again by Tab has them.
    @Test func pagesReachRecordsSetAside() {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.keys(.char("z"))
        #expect(h.state.pane == .zones && !h.state.stack.contains(.records))
        h.page(Harness.records(0..<5), token: "t", more: false)
        #expect(h.state.list?.total == 5 && h.state.pane == .zones)
        h.keys(.tab)
        #expect(h.state.pane == .records && h.state.list?.total == 5 && h.state.list?.row(0) != nil)
    }

    /// `r` on a query's list runs it again on a new list (a new generation), which is the one shown
    /// and the one its answer reaches.
    @Test func rOnAQueryShowsTheNewList() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<5), token: "t", more: false)
        h.keys(.char(":"))
        h.type("query Artwork")
        h.keys(.enter)
        let generation = try #require(h.state.list?.generation)
        h.send(.pageApplied(generation: generation, .success(PageOutcome(total: 0, syncToken: nil, continuationMarker: nil, moreComing: false, received: 0))))
        h.keys(.char("r"))
        let again = h.effects.compactMap { effect -> Int? in
            if case .runQuery(_, _, true, let generation) = effect { return generation } else { return nil }
        }
        #expect(again == [generation + 1] && h.state.list?.generation == generation + 1 && h.state.list?.loading == true)
        #expect(h.screen.line(0).contains(":query Artwork"))
    }
}
