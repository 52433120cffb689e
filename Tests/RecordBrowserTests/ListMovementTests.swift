import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// Issue 30: one list behaviour. Every list-shaped screen × every movement key, at two sizes, with
/// lists shorter than, as long as and longer than the screen: the selection lands where the key says
/// and is drawn; views with no selection scroll a page at a time, and what the keys scroll is what is
/// drawn.
@Suite struct ListMovementTests {
    static let keys: [(String, Key)] = [
        ("j", .char("j")), ("k", .char("k")), ("↓", .down), ("↑", .up), ("PgDn", .pageDown), ("PgUp", .pageUp),
        ("g", .char("g")), ("G", .char("G")), ("Home", .home), ("End", .end),
    ]
    static let sizes = [(80, 24), (100, 30)]

    /// A list-shaped screen: how to open it with `n` rows, and the text that names row `i`.
    struct ListScreen {
        var name: String
        var open: (_ width: Int, _ height: Int, _ n: Int) -> Harness
        var rowName: (_ i: Int, _ n: Int) -> String
        var selection: (BrowserState) -> Int
    }

    static let owner = Harness.owner

    static var screens: [ListScreen] { [
        ListScreen(name: "zones", open: { w, h, n in
            var harness = Harness(width: w, height: h)
            harness.send(.zonesLoaded(.private, .success((0..<n).map { .zone(Zone(zoneID: ZoneID(zoneName: String(format: "zone-%03d", $0), ownerRecordName: owner, zoneType: .regularCustomZone), atomic: true)) })))
            return harness
        }, rowName: { i, _ in String(format: "zone-%03d", i) }, selection: { $0.position(.zones).selection }),
        ListScreen(name: "subscriptions", open: { w, h, n in
            var harness = Harness(width: w, height: h)
            harness.send(.zonesLoaded(.private, .success(Harness.zones)))
            harness.keys(.char("s"))
            harness.send(.subscriptionsLoaded(.private, .success((0..<n).map { .subscription(.zone(String(format: "sub-%03d", $0), ZoneID(zoneName: "Gallery"))) })))
            return harness
        }, rowName: { i, _ in String(format: "sub-%03d", i) }, selection: { $0.position(.subscriptions).selection }),
        ListScreen(name: "records", open: { w, h, n in
            var harness = Harness(width: w, height: h)
            harness.send(.zonesLoaded(.private, .success(Harness.zones)))
            harness.keys(.char("j"), .enter)
            harness.page((0..<n).map { .record(Record(recordName: String(format: "rec-%04d", $0), recordType: "Artwork", recordChangeTag: "t")) }, token: "t", more: false)
            return harness
        }, rowName: { i, _ in String(format: "rec-%04d", i) }, selection: { $0.list?.selection ?? -1 }),
        ListScreen(name: "requests", open: { w, h, n in
            var harness = Harness(width: w, height: h)
            harness.send(.zonesLoaded(.private, .success(Harness.zones)))
            for i in 0..<n {
                harness.send(.requestFinished(RequestRecord(method: .post, operation: String(format: "op-%03d", i), database: .private, status: 200, serverErrorCode: nil,
                                                            duration: 0.01, bytesSent: 1, bytesReceived: 1, attempt: 1)))
            }
            harness.keys(.char("D"))
            return harness
        }, rowName: { i, n in String(format: "op-%03d", n - 1 - i) }, selection: { $0.position(.debug).selection }),
        ListScreen(name: "shares", open: { w, h, n in
            var harness = Harness(width: w, height: h)
            harness.send(.zonesLoaded(.private, .success(Harness.zones)))
            harness.state.stack.open(.shares)
            harness.send(.sharesLoaded(.private, .success((0..<n).map {
                var share = Record(recordName: String(format: "share-%03d", $0), recordType: "cloudkit.share", recordChangeTag: "t")
                share.zoneID = ZoneID(zoneName: String(format: "zone-%03d", $0))
                return share
            })))
            return harness
        }, rowName: { i, _ in String(format: "zone-%03d", i) }, selection: { $0.position(.shares).selection }),
    ] }

    /// Where the selection of an `n`-row list with a body of `page` rows lands: from `from`, after `key`.
    static func expected(_ key: String, from: Int, n: Int, page: Int) -> Int {
        switch key {
        case "j", "↓": return min(n - 1, from + 1)
        case "k", "↑": return max(0, from - 1)
        case "PgDn": return min(n - 1, from + page)
        case "PgUp": return max(0, from - page)
        case "g", "Home": return 0
        default: return n - 1
        }
    }

    /// The screen row drawn in reverse video (the selection bar), if exactly one is.
    static func selectedRow(_ screen: CellGrid, body: Range<Int>) -> Int? {
        let rows = body.filter { screen[0, $0].style.reverse && screen[1, $0].style.reverse }
        return rows.count == 1 ? rows[0] : nil
    }

    @Test(arguments: 0..<5) func everyListAndEveryKey(screenIndex: Int) throws {
        let screen = Self.screens[screenIndex]
        for (width, height) in Self.sizes {
            let layout = Layout(width: width, height: height)
            let page = layout.bodyHeight
            for n in [page / 2, page, 3 * page + 5] {
                for start in ["top", "end"] {
                    for (label, key) in Self.keys {
                        var h = screen.open(width, height, n)
                        if start == "end" { h.keys(.end) }
                        let from = start == "end" ? n - 1 : 0
                        #expect(screen.selection(h.state) == from, "\(screen.name) \(width)x\(height) n=\(n) start \(start)")
                        h.keys(key)
                        let want = Self.expected(label, from: from, n: n, page: page)
                        let context = "\(screen.name) \(width)x\(height) n=\(n) from \(start), \(label)"
                        let got = screen.selection(h.state)
                        #expect(got == want, "\(context): selection \(got), expected \(want)")
                        let frame = h.screen
                        let row = Self.selectedRow(frame, body: layout.body)
                        #expect(row != nil, "\(context): the selection is drawn")
                        if let row { #expect(frame.line(row).contains(screen.rowName(want, n)), "\(context): row \(row) is \(frame.line(row))") }
                        if label == "PgDn", start == "top", n > 2 * page, let row {
                            // A whole page: the selection keeps its place, the rows under it come up.
                            #expect(row == layout.body.lowerBound, "\(context): the first PgDn moves a whole page")
                        }
                    }
                }
            }
        }
    }

    /// A view with no selection: how to open it with about `n` lines, the lines the keys scroll, and
    /// the rows they are drawn on.
    struct TextView {
        var name: String
        var open: (_ width: Int, _ height: Int, _ n: Int) -> Harness
        var lines: (BrowserState) -> [String]
        var rows: (BrowserState) -> Range<Int>
        var scroll: (BrowserState) -> Int
    }

    static func errors(_ n: Int) -> [LoggedError] {
        (0..<n).map { LoggedError(failure: BrowserFailure(message: String(format: "failure %03d", $0)), at: 0, pane: .zones) }
    }

    static var views: [TextView] { [
        TextView(name: "recent errors", open: { w, h, n in
            var harness = Harness(width: w, height: h)
            harness.send(.zonesLoaded(.private, .success(Harness.zones)))
            harness.state.errorLog = errors(max(1, n / 3))
            harness.keys(.char("!"))
            return harness
        }, lines: { Browser.errorLines($0, width: $0.size.width).map(\.text) }, rows: { Layout($0).body }, scroll: { state in if case .errors(let scroll) = state.stack.top { scroll } else { -1 } }),
        TextView(name: "raw JSON", open: { w, h, n in
            var harness = Harness(width: w, height: h)
            var record = Record(recordName: "big", recordType: "Artwork", recordChangeTag: "t")
            record.fields = Dictionary(uniqueKeysWithValues: (0..<max(1, n / 4)).map { (String(format: "f%03d", $0), FieldValue.string("v\($0)")) })
            harness.openDetail(record)
            harness.keys(.char("v"))
            return harness
        }, lines: { Browser.detailPage($0)!.lines.map(\.text) }, rows: { Layout($0).body }, scroll: { $0.detail!.scroll }),
        TextView(name: "subscription detail", open: { w, h, n in
            var harness = Harness(width: w, height: h)
            harness.send(.zonesLoaded(.private, .success(Harness.zones)))
            harness.keys(.char("s"))
            let query = Query(recordType: "Artwork", filterBy: (0..<max(1, n / 2)).map { Filter(String(format: "field%03d", $0), .equals, .int64(Int64($0))) })
            harness.send(.subscriptionsLoaded(.private, .success([.subscription(.query("big", query, firesOn: [.create], zoneID: ZoneID(zoneName: "Gallery")))])))
            harness.keys(.enter, .char("v"))
            return harness
        }, lines: { Browser.subscriptionRows($0, raw: true) }, rows: { Layout($0).page },
                 scroll: { state in if case .subscriptionDetail(let detail) = state.stack.top { detail.scroll } else { -1 } }),
        TextView(name: "commit preview", open: { w, h, n in
            var harness = Harness(width: w, height: h)
            harness.openDetail()
            for i in 0..<max(1, n / 4) {
                let base = Record(recordName: String(format: "del-%03d", i), recordType: "Artwork", recordChangeTag: "1", fields: ["title": .string("One")])
                harness.state.staged.stage(StagedOperation(kind: .delete, zone: harness.state.connection.zone(Harness.gallery), base: base))
            }
            harness.keys(.char("c"))
            return harness
        }, lines: { Browser.commitRows($0).map(\.text) }, rows: { Browser.commitPage($0) }, scroll: { $0.commit!.scroll }),
    ] }

    @Test(arguments: 0..<4) func everyViewScrollsAWholePage(viewIndex: Int) throws {
        let view = Self.views[viewIndex]
        for (width, height) in Self.sizes {
            let layout = Layout(width: width, height: height)
            for n in [layout.bodyHeight / 2, layout.bodyHeight * 3 + 5] {
                for (label, key) in Self.keys {
                    for start in ["top", "end"] {
                        var h = view.open(width, height, n)
                        if start == "end" { h.keys(.end) }
                        let lines = view.lines(h.state)
                        let rows = view.rows(h.state)
                        let page = rows.count
                        let last = max(0, lines.count - page)
                        let from = view.scroll(h.state)
                        #expect(from == (start == "end" ? last : 0), "\(view.name): End scrolls to the last page")
                        h.keys(key)
                        let want: Int
                        switch label {
                        case "j", "↓": want = min(last, from + 1)
                        case "k", "↑": want = max(0, from - 1)
                        case "PgDn": want = min(last, from + page)
                        case "PgUp": want = max(0, from - page)
                        case "g", "Home": want = 0
                        default: want = last
                        }
                        let context = "\(view.name) \(width)x\(height) \(lines.count) lines from \(start), \(label)"
                        #expect(view.scroll(h.state) == want, "\(context): scroll \(view.scroll(h.state)), expected \(want)")
                        // What the keys scrolled to is what is drawn, to the page's last row.
                        let frame = h.screen
                        let first = frame.line(rows.lowerBound).trimmingCharacters(in: .whitespaces)
                        #expect(lines.indices.contains(want) && first == lines[want].trimmingCharacters(in: .whitespaces), "\(context): first row \(first)")
                        if lines.count >= want + page {
                            let bottom = frame.line(rows.upperBound - 1).trimmingCharacters(in: .whitespaces)
                            #expect(bottom == lines[want + page - 1].trimmingCharacters(in: .whitespaces), "\(context): last row \(bottom)")
                        }
                    }
                }
            }
        }
    }

    /// The help scrolls by the rows its box shows.
    @Test func theHelpPagesByWhatItsBoxShows() throws {
        for (width, height) in Self.sizes {
            var h = Harness(width: width, height: height)
            h.send(.zonesLoaded(.private, .success(Harness.zones)))
            h.keys(.char("?"))
            let layout = Layout(width: width, height: height)
            let lines = Browser.helpText(h.state)
            guard lines.count > layout.helpRoom else { continue }
            let rows = layout.helpRows
            let last = lines.count - rows
            h.keys(.pageDown)
            #expect(h.state.helpScroll == min(last, rows))
            #expect(h.screen.snapshot.contains("Keys (\(min(last, rows) + 1)–\(min(last, rows) + rows) of \(lines.count))"), "\(width)x\(height)")
            h.keys(.char("G"))
            #expect(h.state.helpScroll == last && h.state.showHelp)
            #expect(h.screen.snapshot.contains("of \(lines.count))") && h.screen.snapshot.contains("↑ the end"))
            h.keys(.char("g"))
            #expect(h.state.helpScroll == 0)
            h.keys(.char("x"))
            #expect(!h.state.showHelp)
        }
    }

    /// The fields of a record: every key leaves the selection on a line a key acts on, drawn.
    @Test func aRecordsFieldsSkipHeadersAndAreDrawn() throws {
        for (width, height) in Self.sizes {
            for n in [3, 12, 60] {
                for (label, key) in Self.keys {
                    var h = Harness(width: width, height: height)
                    var record = Record(recordName: "big", recordType: "Artwork", recordChangeTag: "t")
                    record.fields = Dictionary(uniqueKeysWithValues: (0..<n).map { (String(format: "f%03d", $0), FieldValue.string("value \($0)")) })
                    h.openDetail(record)
                    for _ in 0..<3 { h.keys(key) }
                    let page = try #require(Browser.detailPage(h.state))
                    let selection = h.state.detail!.selection
                    let context = "fields \(width)x\(height) n=\(n) \(label)"
                    #expect(page.isSelectable(selection), "\(context)")
                    let selectable = page.lines.indices.filter(page.isSelectable)
                    switch label {
                    case "g", "Home", "k", "↑", "PgUp": #expect(selection == selectable.first, "\(context)")
                    case "G", "End": #expect(selection == selectable.last, "\(context)")
                    case "j", "↓": #expect(selection == selectable[min(3, selectable.count - 1)], "\(context)")
                    default: #expect(selection > selectable[0] || selectable.count == 1, "\(context)")
                    }
                    let layout = Layout(width: width, height: height)
                    let row = Self.selectedRow(h.screen, body: layout.body)
                    #expect(row.map { h.screen.line($0).contains(page.lines[selection].field) } == true, "\(context): drawn")
                }
            }
        }
    }

    /// `j` after staging a field goes to the next field, not to the `was:` line (where `e` edited the
    /// same field again).
    @Test func theWasLineIsNeverSelected() throws {
        var h = Harness(width: 100, height: 30)
        var record = Harness.detailRecord
        record.fields["title"] = .string("Great Wave")
        h.openDetail(record)
        h.select(field: "title")
        h.keys(.char("e"), .ctrl("u"))
        h.type("Red Fuji")
        h.keys(.enter)
        let page = try #require(Browser.detailPage(h.state))
        #expect(page.lines.contains { $0.mark == .was }, "the old value is shown")
        #expect(page.lines[h.state.detail!.selection].field == "title")
        // Typed fast, as the user did: j e C-u 1999 Enter edits the next field.
        h.keys(.char("j"), .char("e"), .ctrl("u"))
        h.type("1999")
        h.keys(.enter)
        let op = try #require(h.state.staged.operations.first)
        #expect(op.changes["title"] == .string("Red Fuji"), "the staged title stays")
        #expect(op.changes.count == 2)
        // Upwards too: k from the next field passes over the was: line.
        let lines = try #require(Browser.detailPage(h.state)).lines
        for _ in 0..<lines.count {
            h.keys(.char("k"))
            #expect(lines[h.state.detail!.selection].mark != .was)
        }
    }

    /// `/` opened again selects the last filter: typing replaces it, an arrow keeps it to edit.
    @Test func slashTwiceReplacesTheFilter() throws {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success((0..<30).map { .zone(Zone(zoneID: ZoneID(zoneName: "f-\($0)", ownerRecordName: Self.owner, zoneType: .regularCustomZone), atomic: true)) })))
        h.keys(.char("/"))
        h.type("f-2")
        h.keys(.enter)
        #expect(Browser.filterText(h.state, .zones) == "f-2")
        h.keys(.char("/"))
        #expect(h.state.input?.selected == true && h.state.input?.text == "f-2")
        let hint = Layout(width: 80, height: 24).hint
        #expect(h.screen[1, hint].style.reverse, "the selected text is drawn selected")
        h.type("f-3")
        h.keys(.enter)
        #expect(Browser.filterText(h.state, .zones) == "f-3", "typing replaced the filter")
        // An arrow (or Home/End) keeps it, to edit.
        h.keys(.char("/"), .end)
        h.type("0")
        #expect(h.state.input?.text == "f-30")
        h.keys(.enter)
        h.keys(.char("/"), .home, .delete)
        #expect(h.state.input?.text == "-30" && h.state.input?.selected == false)
        h.keys(.escape)
        // Backspace on the selection clears it; a second closes the line.
        h.keys(.char("/"))
        h.type("f-2")
        h.keys(.enter, .char("/"), .backspace)
        #expect(h.state.input?.text == "" && h.state.input != nil)
    }

    /// `G` in the subscriptions list, as help promises.
    @Test func bigGGoesToTheLastSubscription() throws {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("s"))
        h.send(.subscriptionsLoaded(.private, .success(Harness.subscriptions)))
        h.keys(.char("G"))
        #expect(h.state.position(.subscriptions).selection == Harness.subscriptions.count - 1)
        h.keys(.char("g"))
        #expect(h.state.position(.subscriptions).selection == 0)
    }

    /// The value type itself: selectable rows, items of several rows, pages.
    @Test func listMovementStepsOverRowsThatCannotBeSelected() {
        var list = ListMovement(count: 10, selection: 0, scroll: 0, pageHeight: 4, isSelectable: { $0 % 3 != 1 })
        list.apply(.step(1))
        #expect(list.selection == 2)
        list.apply(.last)
        #expect(list.selection == 9 && list.scroll == 6)
        list.apply(.step(-1))
        #expect(list.selection == 8)
        list.apply(.page(-1))
        #expect(list.selection == 3 && list.scroll == 2)
        list.apply(.first)
        #expect(list.selection == 0 && list.scroll == 0)
        var tall = ListMovement(count: 5, selection: 0, scroll: 0, pageHeight: 4)
        tall.rows = { $0 == 1 ? 3 : 1 }
        tall.apply(.step(2))
        #expect(tall.selection == 2 && tall.rowsBetween(tall.scroll, 2) <= 4)
    }

    /// A selection far below the scroll (a reopened list of a million records, its selection kept at
    /// the end) is revealed by scrolling as little as needed, with items of one row and of several:
    /// the last page shows the selection whole. (The walk that summed the rows again for every item
    /// it moved took 21 s for 100,000 records; this one looks at a page of items.)
    @Test func aSelectionFarBelowTheScrollIsRevealedAtOnce() {
        let count = 1_000_000
        var list = ListMovement(count: count, selection: count - 1, scroll: 0, pageHeight: 20)
        list.settle()
        #expect(list.selection == count - 1 && list.scroll == count - 20)
        var wrapped = ListMovement(count: count, selection: count - 1, scroll: 0, pageHeight: 20)
        wrapped.rows = { 1 + $0 % 3 }
        wrapped.settle()
        #expect(wrapped.rowsBetween(wrapped.scroll, count - 1) <= 20)
        #expect(wrapped.rowsBetween(wrapped.scroll - 1, count - 1) > 20, "it scrolls as little as needed")
        // Taller than the page: the selection's own first row is the top.
        var tall = ListMovement(count: 10, selection: 9, scroll: 0, pageHeight: 4)
        tall.rows = { $0 == 9 ? 6 : 1 }
        tall.settle()
        #expect(tall.scroll == 9)
        // Already in view: nothing moves.
        var shown = ListMovement(count: 100, selection: 50, scroll: 45, pageHeight: 20)
        shown.settle()
        #expect(shown.scroll == 45)
    }
}
