import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

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
