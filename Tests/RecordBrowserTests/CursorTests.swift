import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI
import CloudKitModels

/// The terminal's cursor stands where the user is: at the caret of what is typed (never out of view,
/// however long the line), else on the selected row, else (a view with no selection) on the hint line.
@Suite struct CursorTests {
    @Test func aCommandLineLongerThanTheScreenScrollsToKeepTheCaretInView() {
        for (width, height) in [(80, 24), (100, 30)] {
            var h = Harness(width: width, height: height)
            h.keys(.char(":"))
            let typed = "query Artwork " + (0..<40).map { "title\($0)" }.joined(separator: " ")
            h.type(typed)
            var screen = h.screen
            let y = height - 2
            #expect(screen.cursor == CursorPosition(x: screen.cursor?.x ?? -1, y: y))
            #expect((screen.cursor?.x ?? width) < width, "the caret is on screen at \(width)×\(height)")
            #expect(screen.line(y).hasPrefix("…"), "what scrolled off the left is marked")
            #expect(screen.beforeCursor.hasSuffix("title38 title39"), "the text just typed stands before the caret")
            h.keys(.home)
            screen = h.screen
            #expect(screen.cursor == CursorPosition(x: 1, y: y), "Home: the caret after the ':'")
            #expect(screen.line(y).hasPrefix(":query Artwork title0"))
            #expect(screen.line(y).trimmingTrailingSpaces.hasSuffix("…"), "what does not fit on the right is marked")
            // Moving right along the line keeps the caret on screen all the way.
            for _ in 0..<typed.count {
                h.keys(.right)
                let x = h.screen.cursor?.x ?? width
                #expect(x < width)
            }
            #expect(h.screen.beforeCursor.hasSuffix("title39"))
        }
    }

    @Test func aShortLineShowsWholeWithTheCaretAfterIt() {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("/"))
        h.type("f-2")
        #expect(h.screen.beforeCursor == "/f-2")
        h.keys(.left, .left)
        #expect(h.screen.beforeCursor == "/f")
    }

    @Test func wideCharactersScrollWhole() {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("/"))
        h.type(String(repeating: "界", count: 60))
        let screen = h.screen
        #expect((screen.cursor?.x ?? 80) < 80)
        #expect(screen.beforeCursor.hasSuffix("界界界"))
        #expect(!screen.line(22).contains("\u{FFFD}"))
    }

    /// A bidi or invisible character typed or pasted on the line shows as its escape, never vanishes,
    /// and the caret stands after it.
    @Test func invisibleCharactersOnTheLineShowAsEscapes() {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("/"))
        h.type("a\u{202E}b\u{200B}")
        #expect(h.screen.beforeCursor == "/a\\u{202E}b\\u{200B}", "\(h.screen.beforeCursor)")
    }

    @Test func theCursorFollowsTheSelectedRow() {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        let screen = h.screen
        let y = screen.cursor?.y ?? -1
        #expect(screen.cursor?.x == 0)
        #expect(screen[2, y].style.reverse, "the cursor is on the highlighted row")
        h.keys(.char("j"))
        #expect(h.screen.cursor?.y == y + 1)
    }

    @Test func theFieldEditorsCaretStaysInViewInALongText() throws {
        var h = Harness(width: 80, height: 24)
        h.openDetail()
        h.select(field: "title")
        h.keys(.char("e"), .ctrl("u"))
        for i in 0..<40 {
            h.type("line \(i)")
            h.keys(.ctrl("o"))
        }
        h.type("last")
        #expect(h.screen.beforeCursor.hasSuffix("last"), "the caret after the text typed")
        for _ in 0..<40 { h.keys(.up) }
        h.keys(.home)
        let screen = h.screen
        #expect(screen.beforeCursor.hasSuffix("│ "), "the caret at the start of the first line: \(screen.beforeCursor)")
        let y = try #require(screen.cursor?.y)
        #expect(screen.line(y).hasPrefix("  │ line 0 "))
    }

    @Test func aViewWithNoSelectionKeepsTheCursorOnTheHintLine() {
        var h = Harness(width: 80, height: 24)
        h.openDetail()
        h.keys(.char("v"))
        #expect(h.screen.cursor == CursorPosition(x: 0, y: 22))
    }
}

private extension String {
    var trimmingTrailingSpaces: String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}

/// Every message can be read in full: the key hints are whole hints, and `? more` ends a line that
/// could not hold them all (the help lists every key); empty lists' notes wrap.
@Suite struct ReadInFullTests {
    @Test func hintsAreWholeAndEndInMoreWhenSomeDoNotFit() {
        let hints = ["Enter open", "1 public 2 private 3 shared", "s subscriptions", "r refresh", "D debug", ": command"]
        #expect(Browser.fittedHints(hints, width: 200) == hints.joined(separator: " · "))
        let cut = Browser.fittedHints(hints, width: 78)
        #expect(cut == "Enter open · 1 public 2 private 3 shared · s subscriptions · ? more")
        for width in 10...120 {
            let line = Browser.fittedHints(hints, width: width)
            #expect(TextWidth.width(line) <= width)
            #expect(line == hints.joined(separator: " · ") || line.hasSuffix("? more") || line.hasSuffix("…"))
        }
    }

    @Test func anEmptyBatchSaysWhatMakesOneInFullAt80Columns() {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("b"))
        let text = (2...4).map { h.screen.line($0).trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(text.contains("E edits all as JSON, d deletes."), "\(text)")
    }
}

@Suite struct MessageOverSelectionTests {
    /// A message that wraps upwards over the body's last rows never hides the selected row: the list
    /// is drawn further down while it shows.
    @Test func aWrappedMessageDoesNotHideTheSelectedRow() throws {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<60), token: "t", more: false)
        h.keys(.char("G"))
        // A report long enough to wrap over three rows at 80 columns.
        h.state.say(.checkingPath("/tmp/" + String(repeating: "a-long-directory-name/", count: 8) + "out.jsonl"))
        let screen = h.screen
        let message = try #require(h.state.message)
        let rows = TextWidth.wrap(message, to: Layout(screen).textWidth).count
        #expect(rows >= 2, "the case needs a message of two rows or more: \(message)")
        let y = try #require(screen.cursor?.y)
        #expect(y < Layout(screen).hint - (rows - 1), "the selected row is above the message")
        #expect(screen[3, y].style.reverse, "and highlighted")
        #expect(screen.line(y).contains(h.state.list?.row(h.state.list?.selection ?? 0)?.recordName ?? "?"))
    }
}
