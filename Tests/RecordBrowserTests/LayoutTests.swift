import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// The frame with a `▶` before every body row drawn in reverse video (the selection bar), so a
/// snapshot shows where the selection is.
func selectionSnapshot(_ screen: CellGrid) -> CellGrid {
    var marked = CellGrid(width: screen.width + 1, height: screen.height)
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
