import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

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
