import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

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

    /// A message longer than four rows ends in an ellipsis and a pointer to `!` that is itself shown
    /// in full (it used to lose its last cells to the row's edge).
    @Test func aVeryLongMessageSaysWhereTheRestIs() {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.send(.notice(.failed(BrowserFailure(message: String(repeating: "a long notice ", count: 40)))))
        #expect(h.screen.line(22).contains("… (! shows all)"), "\(h.screen.line(22))")
        #expect((19...22).allSatisfy { h.screen.line($0).contains("a long notice") })
    }
}

@Suite struct RequestColumnsTests {
    /// At 80 columns the request list gives the operation's name its room before STATUS: names were
    /// cut to "records/l…" beside a STATUS column sized for one long error code.
    @Test func operationNamesKeepTheirRoomAtEightyColumns() throws {
        var h = Harness(width: 80, height: 24)
        func record(_ operation: String, _ status: Int, _ code: ServerErrorCode? = nil) -> RequestRecord {
            RequestRecord(method: .post, operation: operation, database: .private, status: status, serverErrorCode: code,
                          duration: 0.012, bytesSent: 90, bytesReceived: 2934, attempt: 1)
        }
        h.send(.requestFinished(record("subscriptions/modify", 200)))
        h.send(.requestFinished(record("records/lookup", 200)))
        h.send(.requestFinished(record("zones/list", 404, .zoneNotFound)))
        h.keys(.char("D"))
        let text = h.screen.allText
        #expect(text.contains("subscriptions/modify ") && text.contains("records/lookup "), "\(text)")
        #expect(text.contains("404 ZONE"), "the long status is kept, cut if it must be")
        for y in 0..<h.screen.height { #expect(TextWidth.width(h.screen.line(y)) <= 80) }
    }
}
