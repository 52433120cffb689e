import BrowserCache
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

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
