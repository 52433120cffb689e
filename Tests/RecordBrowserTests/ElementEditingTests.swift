import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

@Suite struct ElementEditingTests {
    func open() -> Harness {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        return h
    }

    mutating func select(_ h: inout Harness, element: Int, of field: String) {
        let lines = Browser.detailPage(h.state)!.lines
        let index = lines.firstIndex { $0.owner == field && $0.element == element }!
        while h.state.detail!.selection < index { h.keys(.char("j")) }
        while h.state.detail!.selection > index { h.keys(.char("k")) }
    }

    func selectedElement(_ h: Harness) -> Int? {
        Browser.detailPage(h.state)!.lines[h.state.detail!.selection].element
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
        #expect(selectedElement(h) == 1, "the selection is on the added element")
        select(&h, element: 2, of: "tags")
        h.keys(.char("x"))
        #expect(h.state.staged.operations.first?.changes["tags"] == .stringList(["ukiyo-e", "print"]))
        #expect(selectedElement(h) == 1, "after removing the last element, the one before it")
        #expect((0..<30).contains { h.screen.line($0).contains("was: [ukiyo-e, wave]") }, "the old elements, not only their count")
        // A plain message goes when the selection moves; the hint line shows the keys again.
        #expect(h.state.message != nil)
        h.keys(.char("k"))
        #expect(h.state.message == nil)
        select(&h, element: 0, of: "tags")
        h.keys(.char("x"))
        #expect(h.state.staged.operations.first?.changes["tags"] == .stringList(["print"]))
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

    /// x on a list's own row clears the whole field, as `elementToRemove` tells a user on an element
    /// (found by a new-user trial: x there only repeated that message); a there still adds a field.
    @Test mutating func xOnTheListsOwnRowClearsTheField() {
        var h = open()
        let lines = Browser.detailPage(h.state)!.lines
        let row = lines.firstIndex { $0.owner == "tags" && $0.element == nil }!
        while h.state.detail!.selection < row { h.keys(.char("j")) }
        while h.state.detail!.selection > row { h.keys(.char("k")) }
        h.keys(.char("x"))
        #expect(h.state.staged.operations.first?.changes["tags"] == .null)
        h.keys(.char("a"))
        #expect(h.state.input?.mode == .addField)
    }

    /// A zone staged for creation is listed under the zones, as staged; a long help line wraps under
    /// its description, not under its key.
    @Test func stagedZonesAndHelpAreReadable() {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("n"))
        h.type("Scratch")
        h.keys(.enter)
        let rows = (0..<24).map { h.screen.line($0) }
        #expect(rows.contains { $0.contains("+ Scratch") && $0.contains("CREATE staged") })
        // In the batch, the zone operation is selectable like a record's, and u unstages it.
        h.keys(.char("b"))
        #expect(h.screen.line(2).contains("CREATE ZONE private › Scratch"))
        h.keys(.char("u"))
        #expect(h.state.staged.isEmpty && h.state.message?.contains("unstaged the creation of zone Scratch") == true)
        h.keys(.escape, .char("n"))
        h.type("Scratch")
        h.keys(.enter)
        h.keys(.char("?"))
        let help = (0..<24).map { h.screen.line($0) }
        let start = help.firstIndex { $0.contains("n             a new zone") }!
        // The description starts 14 cells into a help line ("n" and 13 spaces); after the border's
        // space, its continuation does too.
        #expect(help[start].contains("│ n             a new zone"))
        let next = help[start + 1]
        let inside = next[next.firstIndex(of: "│")!...].dropFirst()
        #expect(inside.prefix { $0 == " " }.count == 1 + 14, "continuation under the description: \(next)")
    }
}
