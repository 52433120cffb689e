import Testing
@testable import TerminalUI

@Suite struct TextWidthTests {
    @Test("display widths follow wcwidth", arguments: [
        ("abc", 3), ("東京", 4), ("Café", 4), ("Cafe\u{301}", 4), ("😀", 2), ("한국어", 6), ("", 0), ("a\u{200B}b", 10),
    ])
    func widths(text: String, width: Int) {
        #expect(TextWidth.width(text) == width)
    }

    @Test func zwjSequencesAndFlagsOccupyOneWideCell() {
        #expect(TextWidth.cellText(Character("👩‍💻")) == ("👩‍💻", 2))
        #expect(TextWidth.cellText(Character("🇯🇵")) == ("🇯🇵", 2), "a flag is one wide cell, whole")
        #expect(TextWidth.cellText(Character("e\u{301}")) == ("e\u{301}", 1))
        #expect(TextWidth.cellText(Character("\u{7}")) == ("\u{FFFD}", 1), "a control passed to cellText directly never reaches the terminal")
    }

    @Test func truncateFitAndWrapNeverSplitAWideCharacter() {
        #expect(TextWidth.truncate("東京タワー", to: 5) == "東京…")
        #expect(TextWidth.width(TextWidth.fit("東京タワー", to: 6)) == 6)
        #expect(TextWidth.fit("ab", to: 4, alignRight: true) == "  ab")
        #expect(TextWidth.wrap("東京東京東", to: 4) == ["東京", "東京", "東"])
        #expect(TextWidth.wrap("a\nbc", to: 10) == ["a", "bc"])
    }
}

@Suite struct ScreenTests {
    @Test func wideCharactersTakeTwoCellsAndAreRepairedWhenHalfOverwritten() {
        var screen = CellGrid(width: 6, height: 1)
        #expect(screen.put("東京", x: 0, y: 0) == 4)
        #expect(screen[0, 0].width == 2 && screen[1, 0].isContinuation)
        screen.put("x", x: 1, y: 0)  // overwrite the second half of 東
        #expect(screen.line(0) == " x京  ")
        #expect(screen.put("東京東", x: 2, y: 0) == 4, "a wide character that does not fit is not drawn")
        #expect(screen.line(0) == " x東京")
    }

    @Test func clippingAndSnapshots() {
        var screen = CellGrid(width: 5, height: 2)
        screen.put("hello world", x: 0, y: 0)
        screen.put("ab", x: 3, y: 1, maxWidth: 1)
        #expect(screen.snapshot == "hello\n   a")
        #expect(screen.put("zz", x: 9, y: 0) == 0 && screen.put("zz", x: 0, y: 5) == 0)
    }

    @Test func changedRowsIsTheDiff() {
        var a = CellGrid(width: 4, height: 3)
        a.put("abc", x: 0, y: 1)
        var b = a
        #expect(b.changedRows(since: a).isEmpty)
        b.put("x", x: 0, y: 2)
        #expect(b.changedRows(since: a) == [2])
        b.restyle(y: 0) { $0.reversed }
        #expect(b.changedRows(since: a) == [0, 2], "a style change is a change")
        #expect(CellGrid(width: 5, height: 3).changedRows(since: a) == [0, 1, 2])
    }

    @MainActor @Test func memoryBackendKeepsFramesAndTheirDiff() {
        let backend = MemoryBackend(width: 4, height: 2)
        var screen = CellGrid(width: 4, height: 2)
        backend.present(screen)
        #expect(backend.lastChangedRows == [0, 1])
        screen.put("x", x: 0, y: 1)
        backend.present(screen)
        #expect(backend.lastChangedRows == [1] && backend.current?.line(1) == "x   ")
    }
}

@Suite struct WrapTests {
    @Test func wrapsAtSpacesAndSplitsOnlyLongWords() {
        #expect(TextWidth.wrap("2026-11-22 15:47:35 UTC · 2026-11-22 15:47:35 UTC", to: 20) == ["2026-11-22 15:47:35 ", "UTC · 2026-11-22 ", "15:47:35 UTC"])
        #expect(TextWidth.wrap("abcdefghij", to: 4) == ["abcd", "efgh", "ij"])
        #expect(TextWidth.wrap("東京 東京東京", to: 5) == ["東京 ", "東京", "東京"])
        #expect(TextWidth.wrap("a\n\nb", to: 3) == ["a", "", "b"])
        let text = "The quick brown fox jumps over the lazy dog"
        #expect(TextWidth.wrap(text, to: 10).joined() == text, "nothing is dropped")
    }
}
