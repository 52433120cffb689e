import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

@Suite struct TypeAheadTests {
    /// `/f-150`, Enter, `d` in one burst (a paste, a script) while the filter's rows are still being
    /// read from the cache: the delete is staged for f-150, the record the filter leaves, never for
    /// the first row that was on screen before.
    @Test func aBurstActsOnTheRowsTheEarlierKeysAskedFor() throws {
        var h = Harness(width: 100, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        let records: [RecordResult] = (1...199).map { i in
            var r = Record(recordName: String(format: "f-%03d", i), recordType: "Note", recordChangeTag: "t\(i)")
            r.fields = ["text": .string("note \(i)")]
            return .record(r)
        }
        h.page(records, token: "t", more: false)
        #expect(h.state.list?.row(0)?.recordName == "f-001")
        // The burst: no effect is answered until every key is in.
        var pending: [BrowserEffect] = []
        for key in [Key.char("/")] + "f-150".map { Key.char($0) } + [.enter, .char("d")] {
            pending += Browser.update(&h.state, .key(key))
        }
        #expect(h.state.staged.isEmpty, "nothing is staged before the filter's rows are known")
        // The cache answers, in order; only the answer for the filter as typed is shown.
        var deleteRead: String?
        while !pending.isEmpty {
            switch pending.removeFirst() {
            case .loadWindow(let key, let filter, let start, let count, let generation, let request, let view):
                for event in EffectRunner.window(h.cache, key, filter: filter, start: start, count: count, generation: generation, request: request, view: view) {
                    pending += Browser.update(&h.state, event)
                }
            case .loadRecordToDelete(let key, let name):
                deleteRead = name
                pending += Browser.update(&h.state, .recordToDelete(RecordKey(zone: key.zone, recordName: name), try h.cache.record(key, name: name)))
            default: break
            }
        }
        #expect(deleteRead == "f-150")
        #expect(h.state.staged.operations.map(\.recordName) == ["f-150"])
        #expect(h.state.list?.matching == 1, "the count is the filter's as typed, not a shorter one's")
    }

    /// q quits at once even behind waiting keys.
    @Test func quitDoesNotWait() {
        var h = Harness()
        _ = Browser.update(&h.state, .key(.char("j")))
        #expect(h.state.waitingKeys == [.char("j")], "zones are still loading: j waits")
        #expect(Browser.update(&h.state, .key(.char("q"))) == [.quit] && h.state.waitingKeys.isEmpty)
    }

    /// `j:query Artwork` typed before the zones came: the q is text for the command line the `:`
    /// waiting before it opens, not quit (it quit the browser).
    @Test func aQBehindAWaitingColonIsText() {
        var h = Harness()
        for key in [Key.char("j"), .char(":")] + "query Artwork".map({ Key.char($0) }) {
            #expect(Browser.update(&h.state, .key(key)).isEmpty)
        }
        #expect(!h.state.quitRequested && h.state.waitingKeys.count == 15)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        #expect(h.state.input?.text == "query Artwork" && h.state.waitingKeys.isEmpty)
        #expect(h.state.position(.zones).selection == 1, "the j moved first")
    }

    /// `:query Artw`, Tab, Enter typed in one burst at start, before the zones and the schema came:
    /// Tab waits for the schema and then completes, Enter waits behind it and then runs the query in
    /// the zone selected, as the same keys typed a moment later do (before, Tab said the schema was
    /// loading and Enter that no zone was known). Esc drops what waits.
    @Test func theCommandLineWaitsForTheZonesAndTheSchemaItReads() {
        var h = Harness(width: 100, height: 30)
        h.type(":query Artw")
        h.keys(.tab, .enter)
        #expect(h.state.input?.text == "query Artw")
        #expect(h.state.waitingKeys == [.tab, .enter], "the zones are still coming")
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        #expect(h.state.waitingKeys == [.tab, .enter], "Tab waits for the schema, Enter behind it")
        h.send(.schemaLoaded(.success(SchemaScreenTests.known())))
        #expect(h.state.waitingKeys.isEmpty)
        let ran = h.effects.contains { effect in
            guard case .runQuery(let request, let key, _, _) = effect else { return false }
            return request.query.recordType == "Artwork" && key.zone.zoneID.zoneName == "_defaultZone"
        }
        #expect(ran && h.state.input == nil, "\(h.effects) \(String(describing: h.state.input))")

        var later = Harness()
        later.type(":query Artw")
        later.keys(.tab, .char("x"), .escape)
        #expect(later.state.waitingKeys.isEmpty && later.state.input == nil, "Esc closes the line and drops what waited")
        later.send(.zonesLoaded(.private, .success(Harness.zones)))
        #expect(later.state.input == nil)
    }
}
