import BrowserCache
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// The frame with a `▶` before every body row drawn in reverse video (the selection bar), so a
/// snapshot shows where the selection is.
func selectionSnapshot(_ screen: Screen) -> Screen {
    var marked = Screen(width: screen.width + 1, height: screen.height)
    let layout = Layout(width: screen.width, height: screen.height)
    for y in 0..<screen.height {
        let selected = layout.body.contains(y) && (0..<screen.width).contains { screen[$0, y].style.reverse }
        marked.put(selected ? "▶" : " ", x: 0, y: y)
        for x in 0..<screen.width where !screen[x, y].isContinuation { marked.put(screen[x, y].text, x: x + 1, y: y) }
    }
    return marked
}

@Suite struct DetailLayoutTests {
    /// A record longer than any screen: 30 fields, some of them wrapping over several rows.
    static var longRecord: Record {
        var record = Record(recordName: "artwork-0010", recordType: "Artwork", recordChangeTag: "7q")
        for i in 0..<30 {
            let name = String(format: "field%02d", i)
            record.fields[name] = i % 7 == 3
                ? .string("A long description that wraps over several rows of the value column, number \(i): " + String(repeating: "wave ", count: 30))
                : .int64(Int64(i))
        }
        record.modified = RecordStamp(timestamp: 1_709_294_400_000, userRecordName: "_2a97516c354b", deviceID: "2")
        return record
    }

    func open(width: Int, height: Int) -> Harness {
        var h = Harness(width: width, height: height)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page([.record(Self.longRecord)], token: "t", more: false)
        h.keys(.enter)
        h.send(.recordLoaded(RecordKey(zone: h.state.list!.zone, recordName: "artwork-0010"), .success((.record(Self.longRecord), Self.longRecord.json))))
        return h
    }

    /// Rows of the body drawn as the selection.
    func selectedRows(_ h: Harness) -> [Int] {
        let screen = h.screen
        return Layout(h.state).body.filter { y in (0..<screen.width).contains { screen[$0, y].style.reverse } }
    }

    @Test(arguments: [(80, 24), (100, 30)])
    func theSelectionStaysVisibleThroughARecordLongerThanTheScreen(width: Int, height: Int) throws {
        var h = open(width: width, height: height)
        let page = try #require(Browser.detailPage(h.state))
        #expect(h.state.detail?.selection == page.firstSelectable && !page.lines[page.firstSelectable].isHeading,
                "the record opens on its first field")
        try assertSnapshot(selectionSnapshot(h.screen), "detail-long-open-\(width)x\(height)")
        var seen = Set<Int>()
        // Down through every line, then back up: the whole selected line is always on screen.
        for key in Array(repeating: Key.char("j"), count: page.lines.count) + Array(repeating: Key.char("k"), count: page.lines.count) {
            h.keys(key)
            let selection = h.state.detail!.selection
            seen.insert(selection)
            #expect(!page.lines[selection].isHeading, "the selection never rests on a section header")
            #expect(selectedRows(h).count == page.rows[selection], "line \(selection): all \(page.rows[selection]) rows of the selected line are drawn selected")
            if selectedRows(h).count != page.rows[selection] { break }
        }
        #expect(seen.count == page.lines.indices.filter(page.isSelectable).count, "every field can be reached")
        h.keys(.char("j"), .char("j"), .char("j"), .char("j"), .char("j"), .char("j"), .char("j"), .char("j"), .char("j"), .char("j"), .char("j"), .char("j"), .char("j"), .char("j"))
        try assertSnapshot(selectionSnapshot(h.screen), "detail-long-down14-\(width)x\(height)")
        h.keys(.char("G"))
        #expect(h.state.detail?.selection == page.lastSelectable, "G reaches the last field")
        #expect(selectedRows(h).count == page.rows[page.lastSelectable])
        try assertSnapshot(selectionSnapshot(h.screen), "detail-long-G-\(width)x\(height)")
        h.keys(.char("g"))
        #expect(h.state.detail?.selection == page.firstSelectable && h.state.detail?.scroll == 0, "g goes back to the first field, its header shown")
    }

    @Test func aResizeKeepsTheSelectionInView() {
        var h = open(width: 100, height: 30)
        h.keys(.char("G"))
        h.send(.resized(width: 80, height: 24))
        #expect(selectedRows(h).count == Browser.detailPage(h.state)!.rows[h.state.detail!.selection])
    }
}


@Suite struct ModalTests {
    /// A sign-in notice raised while the user types on the `:` line waits: the typed text stays, and
    /// the notice opens when the line closes.
    @Test func aNoticeRaisedWhileTypingWaitsItsTurn() {
        var h = Harness()
        h.keys(.char(":"))
        h.type("db pub")
        h.send(.zonesLoaded(.private, .failure(BrowserFailure(message: "AUTHENTICATION_REQUIRED", isAuthenticationRequired: true))))
        #expect(h.state.input?.text == "db pub" && h.state.signInNotice == nil && h.state.queuedModals.count == 1)
        h.keys(.escape)
        #expect(h.state.input == nil && h.state.signInNotice != nil, "the notice opens once the line is closed")
        h.keys(.char("x"))
        #expect(h.state.modal == nil && h.state.connection.database == .public)
    }

    /// Zones scrolled down and back up keep the scroll the keys set: the renderer draws what the keys kept.
    @Test func aLongZoneListScrollsAsTheKeysSay() {
        var h = Harness(width: 80, height: 24)
        let zones: [ZoneResult] = (0..<60).map { .zone(Zone(zoneID: ZoneID(zoneName: "zone-\($0)"))) }
        h.send(.zonesLoaded(.private, .success(zones)))
        for _ in 0..<40 { h.keys(.char("j")) }
        let scrolled = h.state.zoneScroll
        #expect(scrolled > 0 && h.screen.snapshot.contains("zone-40"))
        h.keys(.char("k"))
        #expect(h.state.zoneScroll == scrolled && h.screen.snapshot.contains("zone-\(scrolled)"), "one row up does not jump the list")
    }
}

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
}

@Suite struct LineEditingTests {
    /// The `:` line takes readline's keys, and Home (which tmux sends as ESC [ 1 ~ under
    /// TERM=xterm-256color, decoded by KeyDecoder) moves the cursor instead of cancelling.
    @Test func theCommandLineEditsLikeReadline() {
        var h = Harness()
        h.keys(.char(":"))
        h.type("open artwork-7")
        h.keys(.home)
        #expect(h.state.input?.cursor == 0 && h.state.input?.text == "open artwork-7", "Home moves; nothing is lost")
        h.keys(.alt("f"), .right)
        #expect(h.state.input?.cursor == 5)
        h.keys(.ctrl("k"))
        #expect(h.state.input?.text == "open ")
        h.type("artwork-8 extra")
        h.keys(.ctrl("w"))
        #expect(h.state.input?.text == "open artwork-8 ")
        h.keys(.alt("b"), .alt("b"))
        #expect(h.state.input?.cursor == 5)
        h.keys(.ctrl("a"), .delete, .delete, .delete, .delete, .delete)
        #expect(h.state.input?.text == "artwork-8 ")
        h.keys(.ctrl("e"), .ctrl("u"))
        #expect(h.state.input?.text == "" && h.state.input != nil)
        h.keys(.backspace)
        #expect(h.state.input == nil, "Backspace on an empty line closes it")
    }

    @Test func theInlineEditorTakesTheSameKeys() {
        var editor = FieldEditor(field: "title", type: .string, original: nil, text: "Great Wave\nsecond")
        for key in [Key.up, .home, .alt("f"), .ctrl("k")] { let handled = editor.edit(key); #expect(handled) }
        #expect(editor.string == "Great\nsecond")
        for key in [Key.end, .ctrl("w")] { let handled = editor.edit(key); #expect(handled) }
        #expect(editor.string == "\nsecond")
    }
}

@Suite struct ReadingTests {
    /// Errors are kept in full for `!`; the status bar's short form goes when the user moves on, and a
    /// long message wraps instead of being cut.
    @Test func errorsAreKeptInFullAndClearWhenTheUserMovesOn() {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char(":"))
        h.type("open x")
        h.keys(.enter)
        #expect(h.state.lastError?.message == ":open takes a record name (open a zone first)" || h.state.lastError != nil)
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
        h.state.message = String(repeating: "a long message that does not fit one row ", count: 4)
        let rows = h.screen.snapshot.split(separator: "\n", omittingEmptySubsequences: false).suffix(5)
        #expect(rows.filter { $0.contains("a long message") }.count >= 2, "the message wraps over rows")
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
        #expect(h.state.lastError?.message.contains("valid: EQUALS, NOT_EQUALS") == true)
    }
}

@Suite struct EndOfListTests {
    /// `G` on a freshly opened zone loads to the end and leaves the selection on the last record;
    /// no frame on the way draws a placeholder row.
    @Test func gLoadsToTheEndAndSelectsTheLastRecord() {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<200), token: "t1", more: true)
        h.keys(.char("G"))
        var pages = 1
        func noPlaceholder() -> Bool { !h.screen.snapshot.split(separator: "\n").contains { $0.hasPrefix("   …") } }
        #expect(noPlaceholder())
        while h.loadChangesTokens.count == 1, pages < 10 {
            let start = pages * 200
            h.page(Harness.records(start..<(start + 200)), token: "t\(pages + 1)", more: pages < 4)
            pages += 1
            #expect(noPlaceholder(), "page \(pages)")
            #expect(h.state.list!.selection == h.state.list!.matching - 1, "the selection follows the end (page \(pages))")
        }
        #expect(h.state.list?.total == 1000 && h.state.list?.moreComing == false)
        #expect(h.state.list?.selection == 999 && h.state.list?.row(999) != nil)
        // g goes back to the top, again without placeholders.
        h.keys(.char("g"))
        #expect(h.state.list?.selection == 0 && noPlaceholder())
    }

    @Test func aSubscriptionShowsItsRawJSON() {
        var h = Harness()
        h.keys(.char("s"))
        h.send(.subscriptionsLoaded(.private, .success(Harness.subscriptions)))
        h.keys(.enter, .char("v"))
        #expect(h.screen.snapshot.contains("RAW JSON as received") && h.screen.snapshot.contains("\"subscriptionID\""))
        h.keys(.char("v"))
        #expect(!h.screen.snapshot.contains("RAW JSON"))
    }
}

@Suite struct FindingTests {
    /// `/` matches field values held in the cache, not only names and types.
    @Test func theRecordsFilterMatchesFieldValues() {
        var h = Harness(width: 100, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        let records: [RecordResult] = (1...30).map { i in
            var r = Record(recordName: String(format: "artwork-%04d", i), recordType: "Artwork", recordChangeTag: "t\(i)")
            r.fields = ["title": .string(i == 17 ? "Wave No. 1" : "Sunrise No. \(i)"), "tags": .stringList(["room-\(i)"])]
            return .record(r)
        }
        h.page(records, token: "t", more: false)
        h.keys(.char("/"))
        h.type("Wave No")
        #expect(h.state.list?.matching == 1 && h.state.list?.row(0)?.recordName == "artwork-0017")
        h.keys(.enter)
        #expect(h.screen.snapshot.contains("1 match") && !h.screen.snapshot.contains("1 matches"))
        h.keys(.escape)
        h.keys(.char("/"))
        h.type("ROOM-2")  // a list element, case-insensitively: room-2, room-20 … room-29
        #expect(h.state.list?.matching == 11)
    }

    /// Zones, subscriptions and a record's fields filter in memory; matches are marked; Esc clears.
    @Test func everyScreenFilters() throws {
        var h = Harness(width: 100, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        let total = h.state.zones.count
        h.keys(.char("/"))
        h.type("gal")
        h.keys(.enter)
        let visible = Browser.visibleZones(h.state)
        #expect(!visible.isEmpty && visible.count < total)
        #expect(h.state.zoneSelection == visible[0])
        let row = try #require(h.screen.snapshot.split(separator: "\n").firstIndex { $0.contains("Gallery") })
        let x = try #require(h.screen.line(row).range(of: "Gal")).lowerBound
        let column = TextWidth.width(String(h.screen.line(row)[..<x]))
        #expect(h.screen[column, row].style.underline, "the match is marked")
        #expect(h.screen.snapshot.contains("\(visible.count) of \(total) zones"))
        h.keys(.escape)
        #expect(Browser.visibleZones(h.state).count == total)
        // A record's fields.
        h.keys(.char("j"), .enter)
        h.page([.record(Harness.detailRecord)], token: "t", more: false)
        h.keys(.enter)
        h.send(.recordLoaded(RecordKey(zone: h.state.list!.zone, recordName: "artwork-7"), .success((.record(Harness.detailRecord), Harness.detailRecord.json))))
        h.keys(.char("/"))
        h.type("year")
        h.keys(.enter)
        let lines = Browser.detailPage(h.state)!.lines
        #expect(lines.filter { !$0.isHeading }.allSatisfy { $0.field == "year" || $0.owner == "year" })
        #expect(lines[h.state.detail!.selection].field == "year", "the selection is on the match")
        h.keys(.char("e"))
        #expect(h.state.editor?.field == "year", "e edits the field shown, not the one at that index unfiltered")
    }
}

@Suite struct ElementEditingTests {
    func open() -> Harness {
        var h = Harness(width: 100, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page([.record(Harness.detailRecord)], token: "t", more: false)
        h.keys(.enter)
        h.send(.recordLoaded(RecordKey(zone: h.state.list!.zone, recordName: "artwork-7"), .success((.record(Harness.detailRecord), Harness.detailRecord.json))))
        return h
    }

    mutating func select(_ h: inout Harness, element: Int, of field: String) {
        let lines = Browser.detailPage(h.state)!.lines
        let index = lines.firstIndex { $0.owner == field && $0.element == element }!
        while h.state.detail!.selection < index { h.keys(.char("j")) }
        while h.state.detail!.selection > index { h.keys(.char("k")) }
    }

    /// e on one element of a list changes that element; a adds one after it, x removes it; u on a
    /// field unstages that field only, U the record.
    @Test mutating func oneElementAtATime() {
        var h = open()
        select(&h, element: 1, of: "tags")
        h.keys(.char("e"))
        #expect(h.state.editor?.type == .string && h.state.editor?.string == "wave")
        h.keys(.ctrl("u"))
        h.type("sea")
        h.keys(.enter)
        #expect(h.state.staged.operations.first?.changes["tags"] == .stringList(["ukiyo-e", "sea"]))
        select(&h, element: 0, of: "tags")
        h.keys(.char("a"))
        h.type("print")
        h.keys(.enter)
        #expect(h.state.staged.operations.first?.changes["tags"] == .stringList(["ukiyo-e", "print", "sea"]))
        select(&h, element: 0, of: "tags")
        h.keys(.char("x"))
        #expect(h.state.staged.operations.first?.changes["tags"] == .stringList(["print", "sea"]))
        // Another field's change, then u on tags: only tags is unstaged.
        h.select(field: "year")
        h.keys(.char("e"), .ctrl("u"))
        h.type("1900")
        h.keys(.enter)
        select(&h, element: 0, of: "tags")
        h.keys(.char("u"))
        #expect(h.state.staged.operations.first?.changes == ["year": .int64(1900)], "u leaves the record's other change staged")
        h.keys(.char("U"))
        #expect(h.state.staged.isEmpty)
    }
}

@Suite struct ColumnTests {
    static func gallery(_ h: inout Harness) {
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        let records: [RecordResult] = (1...40).map { i in
            var r = Record(recordName: String(format: "artwork-%04d", i), recordType: "Artwork", recordChangeTag: "t\(i)")
            r.fields = ["title": .string("Work \(i)"), "year": .int64(Int64(1800 + (i * 37) % 200))]
            return .record(r)
        }
        h.page(records, token: "t", more: false)
    }

    /// Records can be told apart by content: the first STRING field by default, chosen fields with
    /// :columns (remembered per record type), and :sort orders the loaded rows.
    @Test func columnsAndSort() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ckb-columns-\(UUID().uuidString)").path
        var h = Harness(width: 100, height: 30, cacheDirectory: directory)
        Self.gallery(&h)
        #expect(h.screen.line(1).contains("TITLE") && h.screen.snapshot.contains("Work 1 "), "the first STRING field is a column")
        h.keys(.char(":"))
        h.type("columns year,title")
        h.keys(.enter)
        #expect(h.screen.line(1).contains("YEAR") && h.screen.line(1).contains("TITLE"))
        h.keys(.char(":"))
        h.type("sort year desc")
        h.keys(.enter)
        let years = (0..<40).compactMap { h.state.list?.row($0)?.columns.first }.compactMap { Int($0) }
        #expect(years.count >= 20 && years == years.sorted(by: >), "sorted by year, descending: \(years.prefix(5))")
        #expect(h.screen.line(1).contains("YEAR ↓"))
        // Another list of the same account: the columns of Artwork are remembered.
        var again = Harness(width: 100, height: 30, cacheDirectory: directory)
        Self.gallery(&again)
        #expect(again.state.list?.view.columns == ["year", "title"])
        again.keys(.char(":"))
        again.type("columns")
        again.keys(.enter)
        #expect(again.state.list?.view.columns == nil && again.screen.line(1).contains("TITLE") && !again.screen.line(1).contains("YEAR"))
    }
}

@Suite struct CosmeticsTests {
    /// $EDITOR's JSON errors name the line and column of the file as the editor shows it.
    @Test func editorErrorsNameLineAndColumn() {
        let text = "// Edit the fields of r\n// two header lines\n{\n  \"title\": {\"value\": \"x\" \"type\": \"STRING\"}\n}\n"
        do {
            _ = try FieldsJSON.changes(from: text, base: [:])
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("line 4, column 26"), "\(error.description)")
        }
    }

    /// Long values wrap in the batch view instead of being cut.
    @Test func theBatchWrapsLongValues() {
        var h = Harness(width: 80, height: 24)
        let long = String(repeating: "a long value ", count: 12) + "END"
        h.state.staged.stage(StagedOperation(kind: .update, database: .private, zoneID: Harness.gallery, base: Harness.detailRecord,
                                             changes: ["title": .string(long)]))
        h.keys(.char("b"))
        #expect(h.screen.snapshot.contains("END"), "the end of the value is on screen")
    }
}

@Suite struct CreateTests {
    /// n in a zone's records stages a new record, its fields are added like any edit, and the commit
    /// sends a create; deleting it before the commit unstages it.
    @Test func aNewRecordIsStagedFilledAndCommittedAsACreate() throws {
        var h = Harness(width: 100, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<5), token: "t", more: false)
        h.keys(.char("n"))
        #expect(h.state.input?.prompt.contains("here: Artist, Artwork") == true)
        h.type("Exhibition spring-show")
        h.keys(.enter)
        #expect(h.state.pane == .recordDetail && h.state.detail?.recordName == "spring-show")
        h.keys(.char("a"))
        h.type("title STRING")
        h.keys(.enter)
        h.type("Spring show")
        h.keys(.enter)
        let op = try #require(h.state.staged.operations.first)
        #expect(op.mode == .create && op.changes == ["title": .string("Spring show")])
        #expect(op.recordOperation == .create(Record(recordName: "spring-show", recordType: "Exhibition", fields: ["title": .string("Spring show")])))
        #expect(h.screen.snapshot.contains("Spring show"))
        h.keys(.char("b"))
        #expect(h.screen.snapshot.contains("CREATE private › Gallery › spring-show (Exhibition) · a new record"))
        h.keys(.char("c"))
        #expect(Browser.previewText(h.state).contains { $0.contains("\"operationType\": \"create\"") })
        h.keys(.escape)
        // d on a record that only exists in the batch: nothing to send, it is unstaged.
        h.keys(.enter)
        h.keys(.char("d"))
        #expect(h.state.staged.isEmpty)
    }
}
