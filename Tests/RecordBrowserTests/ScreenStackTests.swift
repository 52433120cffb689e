import CloudKitWeb
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// Issue 30: screens are values on the stack, and `:query` knows where it runs and where it came from.
@Suite struct ScreenStackTests {
    func schemaOpen() -> Harness {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.send(.schemaLoaded(.success(SchemaScreenTests.known(.inferred))))
        h.keys(.char(":"))
        h.type("schema")
        h.keys(.enter)
        #expect(h.state.pane == .schema)
        return h
    }

    func sentQuery(_ h: Harness) -> (QueryRequest, ListKey, Int)? {
        for effect in h.effects {
            if case .runQuery(let request, let key, _, let generation) = effect { return (request, key, generation) }
        }
        return nil
    }

    /// From the schema no zone is open: the query asks which (offering the zones seen), shows itself in
    /// the title, and Esc goes back to the schema.
    @Test func aQueryFromTheSchemaAsksForItsZoneAndGoesBackThere() throws {
        var h = schemaOpen()
        h.keys(.char(":"))
        h.type("query Artwork year LESS_THAN 1900")
        h.keys(.enter)
        guard case .queryZone(let command, let zones)? = h.state.input?.mode else {
            Issue.record("no zone asked: \(String(describing: h.state.input))")
            return
        }
        #expect(command == "query Artwork year LESS_THAN 1900" && zones.contains("Gallery"))
        #expect(sentQuery(h) == nil, "nothing runs before the zone is named")
        #expect(h.screen.allText.contains("run the query in which zone? (_defaultZone, Gallery"))
        // A zone that is not there is refused, the text kept.
        h.type("Nowhere")
        h.keys(.enter)
        #expect(h.state.input?.text == "Nowhere" && h.state.input?.refusal == .unknownZone("Nowhere", .private))
        h.keys(.ctrl("u"))
        h.type("Gallery")
        h.keys(.enter)
        let (request, key, _) = try #require(sentQuery(h))
        #expect(request.zoneID?.zoneName == "Gallery" && key.zone.zoneID.zoneName == "Gallery")
        #expect(h.state.pane == .records)
        #expect(h.screen.line(0).contains("Gallery › :query Artwork year LESS_THAN 1900"), "\(h.screen.line(0))")
        h.keys(.escape)
        #expect(h.state.pane == .schema, "back to where the query was typed")
    }

    /// A query sent anyway (`y` on CloudKit's refusal) that fails goes back to the screen it was typed
    /// on, not to a zone visited earlier.
    @Test func aFailedQueryGoesBackToTheScreenItWasTypedOn() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        // A zone visited first: its list must not come back in the schema's place.
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<5), token: "t", more: false)
        h.keys(.escape)
        h.send(.schemaLoaded(.success(SchemaScreenTests.known())))
        h.keys(.char(":"))
        h.type("schema")
        h.keys(.enter)
        h.keys(.char(":"))
        h.type("query Artwork year EQUALS 1900")
        h.keys(.enter)
        h.type("Gallery")
        h.keys(.enter)
        guard case .refusedQuery(_, let zone, _)? = h.state.confirmation else {
            Issue.record("not questioned: \(String(describing: h.state.confirmation))")
            return
        }
        #expect(zone.zoneName == "Gallery")
        h.keys(.char("y"))
        let (_, _, generation) = try #require(sentQuery(h))
        h.send(.pageApplied(generation: generation, .failure(BrowserFailure(message: "BAD_REQUEST: Field 'year' is not marked queryable"))))
        #expect(h.state.pane == .schema, "back to the schema, not to the zone visited before")
        #expect(h.state.message?.contains("the query failed") == true)
    }

    /// On the zones screen the query runs in the selected zone; on a zone's records, in that zone.
    @Test func aQueryRunsInTheZoneOnScreen() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .char("j"))
        h.keys(.char(":"))
        h.type("query Artwork")
        h.keys(.enter)
        var sent = try #require(sentQuery(h))
        #expect(sent.0.zoneID?.zoneName == "ギャラリー 🎨")
        h.keys(.char("z"), .char("k"), .enter)
        h.page(Harness.records(0..<5), token: "t", more: false)
        h.keys(.char(":"))
        h.type("query Artist")
        h.keys(.enter)
        sent = try #require(sentQuery(h))
        #expect(sent.0.zoneID?.zoneName == "Gallery")
    }

    /// Esc from a query typed over a zone's list goes back to that list (and its title), not to the
    /// zones; one typed over another query goes back to that query (a new user landed on the zones).
    @Test func escFromAQueryShowsTheListItReplaced() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<5), token: "t", more: false)
        for text in ["query Artwork", "query Artist"] {
            h.keys(.char(":"))
            h.type(text)
            h.keys(.enter)
            let (_, _, generation) = try #require(sentQuery(h))
            h.send(.pageApplied(generation: generation, .success(PageOutcome(total: 3, syncToken: nil, continuationMarker: nil, moreComing: false, received: 3))))
        }
        #expect(h.screen.line(0).contains(":query Artist"))
        h.keys(.escape)
        #expect(h.state.pane == .records && h.screen.line(0).contains(":query Artwork"), "\(h.screen.line(0))")
        h.keys(.escape)
        #expect(h.state.pane == .records && h.state.list?.source == .changes && !h.screen.line(0).contains(":query"), "\(h.screen.line(0))")
        #expect(h.state.list?.total == 5, "the zone's list as it was")
        h.keys(.escape)
        #expect(h.state.pane == .zones)
    }

    /// `j Enter :query …` in one burst: the query replaces the zone's list before it opened; Esc opens
    /// the zone then (it showed "loading…" forever).
    @Test func escFromAQueryTypedBeforeTheZoneOpenedOpensIt() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.state.list?.opened = false  // as before the cache's answer
        h.keys(.char(":"))
        h.type("query Artwork")
        h.keys(.enter)
        h.keys(.escape)
        #expect(h.state.pane == .records && h.state.list?.source == .changes)
        #expect(h.state.list?.opened == true && h.state.list?.total == 0, "opened again from the cache (empty here)")
        #expect(!h.screen.line(0).contains(":query"))
    }

    /// The stack's invariants: the zones stay at the bottom, a record's screen carries its record, the
    /// commit's screen its session, and Esc from a zone's records keeps them for Tab and `:open`.
    @Test func screensCarryTheirState() {
        var stack = ScreenStack()
        stack.pop()
        #expect(stack.panes == [.zones], "the zones are never taken off")
        let list = RecordList(key: ListKey(zone: ZoneKey(scope: Harness().state.connection.scope, zoneID: ZoneID(zoneName: "Gallery"))), source: .changes)
        stack.push(.records(RecordsScreen(list: list)))
        stack.push(.detail(DetailScreen(RecordDetail(key: RecordKey(zone: list.zone, recordName: "a")))))
        #expect(stack.panes == [.zones, .records, .recordDetail])
        stack.push(.detail(DetailScreen(RecordDetail(key: RecordKey(zone: list.zone, recordName: "b")))))
        #expect(stack.panes == [.zones, .records, .recordDetail], "one record screen: the newer replaces it")
        if case .detail(let screen)? = stack.find(.recordDetail) { #expect(screen.detail.recordName == "b") }
        stack.pop()
        stack.pop()
        #expect(stack.panes == [.zones])
        if case .records(let screen)? = stack.find(.records) { #expect(screen.list.zoneID.zoneName == "Gallery") } else { Issue.record("the records were forgotten") }
        stack.open(.records)
        #expect(stack.panes == [.zones, .records], "found again")
    }
}
