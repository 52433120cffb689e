import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// Compares a frame with `Snapshots/NAME.txt`. Missing snapshots are written only when
/// RECORD_SNAPSHOTS=1, and the run still fails: recording is explicit and never silent.
func assertSnapshot(_ screen: CellGrid, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots/\(name).txt")
    let text = screen.snapshot + "\n"
    guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
        if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1" {
            try text.write(to: url, atomically: true, encoding: .utf8)
            Issue.record("recorded snapshot \(name); run again", sourceLocation: sourceLocation)
        } else {
            Issue.record("missing snapshot \(name) (record with RECORD_SNAPSHOTS=1)", sourceLocation: sourceLocation)
        }
        return
    }
    if !text.utf8.elementsEqual(expected.utf8) {
        let actual = url.deletingPathExtension().appendingPathExtension("actual.txt")
        try? text.write(to: actual, atomically: true, encoding: .utf8)
        Issue.record("snapshot \(name) differs; actual frame written to \(actual.path)", sourceLocation: sourceLocation)
    }
}

/// A browser driven by events with fixture data and no terminal: cache effects are answered by a real
/// `RecordCache` in a temp directory; network effects stay in `effects` for the test to answer.
struct Harness {
    var state: BrowserState
    var effects: [BrowserEffect] = []
    let cache: RecordCache

    init(width: Int = 80, height: Int = 24, environment: CloudKitEnvironment = .development, cacheDirectory: String? = nil) {
        Format.localTimeZone = .utc
        state = BrowserState(connection: ConnectionInfo(account: testAccount(environment), database: .private))
        state.size = (width, height)
        cache = try! RecordCache(
            directory: cacheDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("ckb-cache-\(UUID().uuidString)").path,
            account: testAccount(environment))
        effects = Browser.start(&state)
    }

    /// Whether `drain` answers a delete impact's cache search (tests of that search answer it themselves).
    var answersReferrers = true

    mutating func send(_ event: BrowserEvent) {
        effects = Browser.update(&state, event)
        drain()
    }

    /// Answers cache effects at once, as the app's runner does.
    mutating func drain() {
        var pending = effects
        var remaining: [BrowserEffect] = []
        while !pending.isEmpty {
            let effect = pending.removeFirst()
            switch effect {
            case .openList(let key, let generation):
                let s = try! cache.open(key)
                pending += Browser.update(&state, .listOpened(generation: generation, total: s.count, syncToken: s.syncToken, moreComing: s.moreComing))
            case .loadWindow(let key, let filter, let start, let count, let generation, let request, let view):
                // As the app's runner reads it (field columns included).
                for event in EffectRunner.window(cache, key, filter: filter, start: start, count: count, generation: generation, request: request, view: view) {
                    pending += Browser.update(&state, event)
                }
            case .rememberColumns(let type, let columns):
                try! cache.setColumns(columns, for: type)
            case .findReferencedBy(let key):
                pending += Browser.update(&state, .referencedByFound(key, try! cache.referencedBy(key)))
            case .findReferrers(let keys) where answersReferrers:
                // The cache's part of a delete's impact, as the runner reads it (a commit waits for it).
                var impacts: [RecordKey: DeleteImpact] = [:]
                for key in keys { impacts[key] = (try? cache.deleteImpact(of: key)) ?? DeleteImpact(referrers: []) }
                pending += Browser.update(&state, .referrersFound(impacts))
            default:
                remaining.append(effect)
            }
        }
        effects = remaining
    }

    /// Answers the pending change-feed (or query) request with a page, writing it to the cache first.
    mutating func page(_ records: [RecordResult], token: String, more: Bool) {
        guard let list = state.list else { return }
        let s = try! cache.apply(list.key, records: records, syncToken: token, continuationMarker: nil, moreComing: more)
        send(.pageApplied(generation: list.generation, .success(PageOutcome(total: s.count, syncToken: token, continuationMarker: nil, moreComing: more, received: records.count))))
    }

    var loadChangesTokens: [String?] {
        effects.compactMap { if case .loadChanges(_, let token, _) = $0 { return token } else { return nil } }
    }
    mutating func keys(_ keys: Key...) { for key in keys { send(.key(key)) } }
    mutating func type(_ text: String) { for c in text { send(.key(.char(c))) } }
    var screen: CellGrid { Browser.render(state) }

    static let owner = "_2a97516c354b68848cdbd8f54a226a0a"
    static let zones: [ZoneResult] = [
        .zone(Zone(zoneID: ZoneID(zoneName: "_defaultZone", ownerRecordName: owner, zoneType: .defaultZone), atomic: true)),
        .zone(Zone(zoneID: ZoneID(zoneName: "Gallery", ownerRecordName: owner, zoneType: .regularCustomZone), atomic: true)),
        .zone(Zone(zoneID: ZoneID(zoneName: "ギャラリー 🎨", ownerRecordName: owner, zoneType: .regularCustomZone), atomic: true)),
    ]

    static func records(_ range: Range<Int>) -> [RecordResult] {
        range.map { i in
            if i % 10 == 9 { return .deleted(recordName: "gone-\(i)", zoneID: nil) }
            var r = Record(recordName: i % 4 == 0 ? "作品-\(i)-東京" : "artwork-\(i)", recordType: i % 3 == 0 ? "Artist" : "Artwork", recordChangeTag: String(i, radix: 36))
            r.modified = RecordStamp(timestamp: 1_709_294_400_000 + Int64(i) * 60_000, userRecordName: owner, deviceID: "2")
            return .record(r)
        }
    }

    static var detailRecord: Record {
        var r = Record(recordName: "artwork-7", recordType: "Artwork", recordChangeTag: "4trx")
        r.fields = [
            "title": .string("Great Wave 🌊 神奈川沖浪裏\nsecond line of the title"),
            "year": .int64(1831), "price": .double(1234.5), "acquired": .timestamp(1_709_294_400_000),
            "thumbnail": .bytes(Data([0, 1, 2, 255])), "artist": .reference(Reference(recordName: "artist-hokusai", action: .deleteSelf)),
            "place": .location(Location(latitude: 35.3606, longitude: 138.7274, horizontalAccuracy: 5)),
            "tags": .stringList(["ukiyo-e", "wave"]), "image": .asset(Asset(fileChecksum: "AXa", size: 123_456, downloadURL: "https://x/${f}")),
        ]
        r.created = RecordStamp(timestamp: 1_709_290_000_000, userRecordName: owner, deviceID: "2")
        r.modified = RecordStamp(timestamp: 1_709_294_500_000, userRecordName: owner, deviceID: "2")
        return r
    }

    static let subscriptions: [SubscriptionResult] = [
        .subscription(.query("artwork-changes", Query(recordType: "Artwork", filterBy: [Filter("year", .greaterThan, .int64(1800))]), firesOn: [.create, .update, .delete], zoneID: ZoneID(zoneName: "Gallery"),
                             notificationInfo: NotificationInfo(alertBody: "An artwork changed", shouldBadge: true))),
        .subscription(.zone("gallery-zone", ZoneID(zoneName: "Gallery"))),
        .failure(SubscriptionError(subscriptionID: "broken", info: ServerErrorInfo(serverErrorCode: .badRequest, reason: "bad filter"))),
    ]
}

@Suite(.serialized) struct BrowserTests {
    @Test func startsByLoadingZonesAndShowsThem() throws {
        var h = Harness()
        // The zones alone first: the schema waits for their answer, so the first frame does not.
        #expect(h.effects == [.loadZones(.private)])
        #expect(h.state.schemaLoading, "the schema is expected")
        try assertSnapshot(h.screen, "zones-loading-80x24")
        h.effects = Browser.update(&h.state, .zonesLoaded(.private, .success(Harness.zones)))
        #expect(h.effects == [.loadSchema], "the zones' answer asks for the schema")
        try assertSnapshot(h.screen, "zones-80x24")
        h.effects = Browser.update(&h.state, .zonesLoaded(.private, .success(Harness.zones)))
        #expect(h.effects.isEmpty, "once")
        // Every row is exactly the screen's width, CJK and emoji included.
        for y in 0..<24 { #expect(TextWidth.width(h.screen.line(y)) == 80, "row \(y)") }
    }

    @Test func theSchemaComesAfterTheZonesEvenWhenTheyFail() {
        var h = Harness()
        h.effects = Browser.update(&h.state, .zonesLoaded(.private, .failure(BrowserFailure(message: "offline"))))
        #expect(h.effects == [.loadSchema])
        // An answer for a database no longer shown is dropped, and asks for nothing; the shown one's does.
        var other = Harness()
        other.effects = Browser.update(&other.state, .zonesLoaded(.public, .success(Harness.zones)))
        #expect(other.effects.isEmpty && other.state.schemaLoading)
        other.effects = Browser.update(&other.state, .zonesLoaded(.private, .success(Harness.zones)))
        #expect(other.effects == [.loadSchema])
        // A schema file asked for before the zones answered is not replaced by the server's.
        var file = Harness()
        file.send(.key(.char(":")))
        for c in "schema load /tmp/app.ckdb" { file.send(.key(.char(c))) }
        file.send(.key(.enter))
        #expect(file.effects.contains(.loadSchemaFile("/tmp/app.ckdb")))
        file.effects = Browser.update(&file.state, .zonesLoaded(.private, .success(Harness.zones)))
        #expect(!file.effects.contains(.loadSchema))
    }

    @Test func openingAZoneFetchesItsChangeFeedAndPrefetches() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        let generation = try #require(h.state.list?.generation)
        #expect(h.loadChangesTokens == [nil], "a zone never opened starts from the beginning")
        h.page(Harness.records(0..<600), token: "t1", more: true)
        #expect(h.effects.isEmpty, "no prefetch while far from the end")
        try assertSnapshot(h.screen, "records-80x24")
        #expect(h.state.list!.window.count <= 60, "only a window of rows is in memory")
        // Within two pages of the end of what is loaded, the next page is requested before the user
        // reaches it.
        h.keys(.pageDown, .pageDown, .pageDown, .pageDown, .pageDown, .pageDown, .pageDown, .pageDown, .pageDown, .pageDown)
        #expect(h.loadChangesTokens == ["t1"])
        // A late answer for an older list is ignored.
        h.send(.pageApplied(generation: generation - 1, .success(PageOutcome(total: 999, syncToken: "x", continuationMarker: nil, moreComing: false, received: 1))))
        #expect(h.state.list?.total == 600)
        h.page(Harness.records(600..<650), token: "t2", more: false)
        #expect(h.state.list?.total == 650 && h.state.list?.moreComing == false)
        #expect(h.screen.line(23).contains("650 loaded") && !h.screen.line(23).contains("more coming"))
    }

    /// The default zone has no change feed: its screen says how to list its records, once, and never
    /// that it holds none (a new user read "no records in this zone" over a zone of 40).
    @Test func theDefaultZoneSaysHowToListItsRecords() {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.enter)
        #expect(h.state.list?.source == .awaitingQuery)
        let text = h.screen.allText
        #expect(!text.contains("no records in this zone"))
        let words = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("the default zone has no change feed: :query TYPE [FIELD COMPARATOR VALUE] lists its records (n makes one)"))
        #expect(words.components(separatedBy: ":query TYPE").count == 3, "the note and the hint line, not a third copy under the note")
    }

    /// A title too long for the bar ends with an ellipsis, so a cut query does not look whole.
    @Test func aLongTitleEndsWithAnEllipsis() {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<5), token: "t", more: false)
        h.type(":query Artwork year LESS_THAN 1900 and title BEGINS_WITH Wavelength and year GREATER_THAN 1800")
        h.keys(.enter)
        let title = h.screen.line(0)
        #expect(title.contains(":query Artwork year LESS_THAN 1900") && title.contains("…  ") && title.hasSuffix("? help  q quit "), "\(title)")
        h.keys(.escape)
        #expect(!h.screen.line(0).contains("…"), "a title that fits has none: \(h.screen.line(0))")
    }

    @Test func theSelectionBarCoversTheRowsTextNotTheBlankRest() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<30), token: "t1", more: false)
        h.keys(.char("j"))
        let screen = h.screen
        let y = try #require((2..<22).first { screen[1, $0].style.reverse }, "one row is selected")
        let end = screen.contentWidth(y: y)
        #expect(end > 10 && end < screen.width - 1)
        #expect((0...end).allSatisfy { screen[$0, y].style.reverse }, "the text and one cell after it")
        #expect((end + 1..<screen.width).allSatisfy { !screen[$0, y].style.reverse }, "not the blank rest of the line")
        #expect((2..<22).filter { screen[1, $0].style.reverse } == [y], "only the selected row")
    }

    @Test func loadToEndCanBeCancelledWithEscape() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<600), token: "t1", more: true)
        h.keys(.char("G"))
        #expect(h.state.list?.loadingToEnd == true && h.loadChangesTokens == ["t1"])
        h.page(Harness.records(600..<800), token: "t2", more: true)
        #expect(h.loadChangesTokens == ["t2"], "keeps loading")
        h.keys(.escape)
        #expect(h.state.list?.loadingToEnd == false && h.state.pane == .records && h.state.message?.contains("stopped") == true)
    }

    @Test func refreshMergesChangesSinceTheTokenAndReopeningUsesTheCache() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ckb-cache-\(UUID().uuidString)").path
        var h = Harness(cacheDirectory: directory)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<5), token: "t1", more: false)
        h.keys(.char("r"))
        #expect(h.loadChangesTokens == ["t1"])
        var changed = Record(recordName: "artwork-1", recordType: "Artwork", recordChangeTag: "new")
        changed.fields = ["x": .int64(1)]
        h.page([.record(changed), .deleted(recordName: "artwork-2", zoneID: nil), .record(Record(recordName: "brand-new", recordType: "T"))], token: "t2", more: false)
        let list = try #require(h.state.list)
        #expect(list.window.map(\.recordName) == ["作品-0-東京", "artwork-1", "artwork-2", "artwork-3", "作品-4-東京", "brand-new"])
        #expect(list.window[1].changeTag == "new" && list.window[2].deleted && list.syncToken == "t2")
        // A new session: the zone shows its cached records at once (without the tombstone) and asks only
        // for the changes since the saved token.
        var again = Harness(cacheDirectory: directory)
        again.send(.zonesLoaded(.private, .success(Harness.zones)))
        again.keys(.char("j"), .enter)
        #expect(again.loadChangesTokens == ["t2"])
        #expect(again.state.list?.window.map(\.recordName) == ["作品-0-東京", "artwork-1", "artwork-3", "作品-4-東京", "brand-new"])
        #expect(again.screen.line(22).contains("cached records"))
    }

    @Test func aRefusedTokenIsSaidAndTheZoneFetchedAgain() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        let g = h.state.list!.generation
        h.send(.pageApplied(generation: g, .success(PageOutcome(total: 3, syncToken: "fresh", continuationMarker: nil, moreComing: false, received: 3, tokenRefused: true))))
        #expect(h.state.message?.contains("refused the cached sync token") == true)
    }

    @Test func filteringReadsMatchesFromTheCache() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<40), token: "t", more: false)
        h.keys(.char("/"))
        h.type("東京")
        #expect(h.state.list?.matching == 10 && h.state.list?.window.allSatisfy { $0.recordName.contains("東京") } == true)
        h.keys(.enter)
        #expect(h.screen.line(23).contains("40 loaded · 10 match"))
        h.keys(.escape)
        #expect(h.state.filter == nil && h.state.list?.matching == 40)
    }

    @Test func recordDetailShowsEveryTypeAndFollowsReferences() throws {
        var h = Harness(width: 120, height: 40)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page([.record(Harness.detailRecord)], token: "t", more: false)
        h.keys(.enter)
        #expect(h.effects.first == .lookupRecord(RecordKey(zone: h.state.list!.zone, recordName: "artwork-7")))
        h.send(.recordLoaded(RecordKey(zone: h.state.list!.zone, recordName: "artwork-7"), .success((.record(Harness.detailRecord), Harness.detailRecord.json))))
        try assertSnapshot(h.screen, "detail-120x40")
        // Select the REFERENCE line and follow it.
        let lines = Browser.detailLines(h.state.detail!)
        let index = try #require(lines.firstIndex { $0.reference != nil })
        #expect(h.state.detail?.selection == 1 && lines[0].isHeading, "a record opens on its first field, not on the FIELDS header")
        while h.state.detail!.selection < index { h.keys(.char("j")) }
        h.keys(.enter)
        #expect(h.effects == [.lookupRecord(RecordKey(zone: h.state.list!.zone, recordName: "artist-hokusai"))])
        h.keys(.escape)
        #expect(h.state.detail?.recordName == "artwork-7", "Esc returns to the record the reference came from")
        h.keys(.char("v"))
        try assertSnapshot(h.screen, "detail-raw-80x24-as-120x40")
        h.keys(.char("y"))
        #expect(h.effects.first.map { if case .copy(let text) = $0 { return text.contains("\"recordName\": \"artwork-7\"") } else { return false } } == true)
    }

    @Test func subscriptionsListAndDetail() throws {
        var h = Harness()
        h.keys(.char("s"))
        #expect(h.effects == [.loadSubscriptions(.private)])
        h.send(.subscriptionsLoaded(.private, .success(Harness.subscriptions)))
        try assertSnapshot(h.screen, "subscriptions-80x24")
        h.keys(.enter)
        try assertSnapshot(h.screen, "subscription-detail-80x24")
    }

    @Test func helpFilterCommandAndTinyTerminal() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("?"))
        try assertSnapshot(h.screen, "help-zones-80x24")
        h.keys(.char("x"))
        #expect(!h.state.showHelp)
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<40), token: "t", more: false)
        h.keys(.char("/"))
        h.type("東京")
        h.keys(.enter)
        #expect(h.state.list?.matching == 10 && h.state.filter == "東京")
        h.keys(.char(":"))
        h.type("query Artist firstName BEGINS_WITH Me")
        h.keys(.enter)
        guard case .runQuery(let request, let key, true, _)? = h.effects.first, key.zone.database == .private else {
            Issue.record("expected a query effect")
            return
        }
        #expect(request.query == Query(recordType: "Artist", filterBy: [Filter("firstName", .beginsWith, .string("Me"))]))
        h.send(.resized(width: 60, height: 15))
        try assertSnapshot(h.screen, "too-small-60x15")
    }

    @Test func authenticationRequiredShowsTheSignInURLThenContinuesInPublic() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .failure(BrowserFailure(message: "zones/list: AUTHENTICATION_REQUIRED (HTTP 421)", redirectURL: "https://idmsa.apple.com/signin", isAuthenticationRequired: true))))
        try assertSnapshot(h.screen, "sign-in-80x24")
        h.keys(.char("x"))
        #expect(h.state.connection.database == .public && h.effects == [.loadZones(.public)])
    }

    @Test func productionIsMarkedInTheStatusBar() {
        let h = Harness(environment: .production)
        let screen = h.screen
        let x = screen.line(23).firstRange(of: "production").map { screen.line(23).distance(from: screen.line(23).startIndex, to: $0.lowerBound) }
        #expect(x != nil)
        if let x { #expect(screen[x, 23].style.background == .red) }
    }

    @Test func queryParserTypesValues() throws {
        #expect(try Browser.parseQuery(["Item", "n", "GREATER_THAN", "5"]).filterBy == [Filter("n", .greaterThan, .int64(5))])
        #expect(try Browser.parseQuery(["Item", "p", "LESS_THAN", "2.5"]).filterBy == [Filter("p", .lessThan, .double(2.5))])
        #expect(try Browser.parseQuery(["Item", "s", "IN", "a,b"]).filterBy == [Filter("s", .in, .stringList(["a", "b"]))])
        #expect(try Browser.parseQuery(["Item", "title", "EQUALS", "Great", "Wave"]).filterBy == [Filter("title", .equals, .string("Great Wave"))])
        #expect(try Browser.parseQuery(["Item", "recordName", "EQUALS", "x"]).filterBy == [Filter(system: .recordName, .equals, .reference(Reference(recordName: "x", action: nil)))])
        #expect(throws: BrowserFailure.self) { try Browser.parseQuery(["Item", "n", "BIGGER", "5"]) }
    }
}

extension Harness {
    /// What stands above the input line: why its text was refused (in the words drawn), else Tab's note.
    var inputNote: String? { state.input.flatMap { input in input.refusal.map(Browser.words) ?? input.hint } }
}

extension CellGrid {
    /// The text of the cursor's row up to the cursor: what stands before the caret while typing.
    var beforeCursor: String {
        guard let cursor else { return "" }
        var text = ""
        for x in 0..<min(cursor.x, width) where !self[x, cursor.y].isContinuation { text += self[x, cursor.y].text }
        return text
    }
}
