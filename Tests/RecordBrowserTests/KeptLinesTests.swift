import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// Issue 32: the commit preview's requests and the batch's lines are built once per change of what
/// they show, kept in their screen's value, not built again on every key (10,000 staged deletions
/// made each key cost seconds in a debug build).
@Suite struct KeptLinesTests {
    func staged(_ count: Int) -> Harness {
        var h = Harness(width: 80, height: 24)
        let zone = h.state.connection.zone(Harness.gallery)
        h.state.staged.stage(all: (0..<count).map { i in
            StagedOperation(kind: .delete, zone: zone, base: Record(recordName: String(format: "art-%04d", i), recordType: "Artwork", recordChangeTag: "t\(i)"))
        })
        return h
    }

    @Test func theCommitScreenKeepsItsRequestRowsBetweenKeys() throws {
        var h = staged(450)
        h.keys(.char("c"))
        let kept = try #require(h.state.commit?.requestRows)
        #expect(kept.width == Layout(h.state).textWidth && kept.rows.count > 450)
        // What is drawn is what would be built: the preview, wrapped (continuations indented).
        let built = Browser.wrapped(Browser.previewLines(h.state), kept.width).map(\.text)
        #expect(Browser.commitRows(h.state).map(\.text) == built)
        // A key does not build them again: a marker put in the kept rows stays (and is what is drawn).
        var commit = try #require(h.state.commit)
        commit.requestRows?.rows[0].text = "KEPT"
        h.state.commit = commit
        h.keys(.char("j"), .pageDown, .char("4"))
        #expect(h.state.commit?.requestRows?.rows[0].text == "KEPT")
        #expect(Browser.commitRows(h.state).contains { $0.text == "KEPT" })
        // Another width builds them again.
        h.send(.resized(width: 100, height: 30))
        #expect(h.state.commit?.requestRows?.rows[0].text != "KEPT" && h.state.commit?.requestRows?.width == Layout(h.state).textWidth)
    }

    @Test func theBatchScreenKeepsItsLinesUntilTheBatchOrWhatIsKnownChanges() throws {
        var h = staged(300)
        h.keys(.char("b"))
        guard case .batch(let screen)? = h.state.stack.find(.batch), let kept = screen.kept else {
            Issue.record("the batch screen keeps no lines")
            return
        }
        #expect(kept.lines.map(\.text) == Browser.batchLines(h.state, width: kept.width).map(\.text))
        func mark() {
            h.state.stack.modify(.batch) { if case .batch(var s) = $0 { s.kept?.lines[0].text = "KEPT"; $0 = .batch(s) } }
        }
        func first() -> String? { if case .batch(let s)? = h.state.stack.find(.batch) { return s.kept?.lines.first?.text } else { return nil } }
        mark()
        h.keys(.char("j"), .char("j"), .pageDown, .char("k"))
        #expect(first() == "KEPT", "keys that only move do not build the lines again")
        h.keys(.char("g"))
        #expect(first() == "KEPT" && h.screen.line(2).contains("KEPT"), "what is kept is what is drawn")
        // What the cache found of a delete is new knowledge: built again, and shown.
        let zone = h.state.connection.zone(Harness.gallery)
        let key = RecordKey(zone: zone, recordName: "art-0000")
        h.send(.referrersFound([key: DeleteImpact(referrers: [Referrer(key: RecordKey(zone: zone, recordName: "child"), recordType: "Caption", field: "work", action: .deleteSelf, target: "art-0000")])]))
        #expect(first() != "KEPT")
        #expect(Browser.recordBatchLines(h.state, width: Layout(h.state).textWidth).contains { $0.text.contains("deleting art-0000 also deletes 1 record") })
        // Unstaging changes the batch: built again.
        mark()
        h.keys(.char("u"))
        #expect(h.state.staged.operations.count == 299 && first() != "KEPT")
    }

    /// A long value wraps in the batch with every character shown (continuations were indented past
    /// the screen's edge and lost their last characters).
    @Test func aLongValueWrapsWhole() {
        var h = Harness(width: 80, height: 24)
        h.openDetail()
        h.select(field: "title")
        let value = "ABCDEFGHIJ0123456789abcdefghij0123456789KLMNOPQRST0123456789klmnopqrst0123456789UVWXYZ"
        h.keys(.char("e"), .ctrl("u"))
        h.type(value)
        h.keys(.enter, .char("b"))
        let shown = h.screen.snapshot.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined()
        #expect(shown.contains(value), "\(h.screen.snapshot)")
    }
}
