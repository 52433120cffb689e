import Testing
@testable import TerminalUI

/// Grapheme clusters as users see them (issue 30): one cell holds a whole cluster, at its real width.
@Suite struct GraphemeTests {
    static let family = "👩\u{200D}👩\u{200D}👧\u{200D}👦"
    static let japan = "🇯🇵"
    static let england = "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}"
    static let thumbs = "👍🏽"
    static let keycap = "1\u{FE0F}\u{20E3}"
    static let eAcute = "e\u{301}"
    static let hangul = "\u{1112}\u{1161}\u{11AB}"  // ᄒ + ᅡ + ᆫ: conjoining jamo for 한
    static let kssa = "\u{915}\u{94D}\u{937}"        // क + ् (virama) + ष
    static let heart = "\u{2764}\u{FE0F}"            // ❤ is text-default (wcwidth 1); U+FE0F makes it an emoji

    @Test("a cluster is one cell, whole, at its width", arguments: [
        (family, 2), (japan, 2), (england, 2), (thumbs, 2), (keycap, 2), (heart, 2),
        (eAcute, 1), ("a\u{301}\u{302}\u{303}\u{304}\u{305}\u{306}", 1), (hangul, 2), ("\u{2764}\u{FE0E}", 1), ("東", 2),
    ])
    func clusters(text: String, width: Int) throws {
        #expect(text.count == 1, "one Character")
        let (cell, w) = TextWidth.cellText(Character(text))
        #expect(cell == text, "drawn whole, every scalar kept")
        #expect(w == width)
        #expect(TextWidth.width(text) == width)
        #expect(TerminalText.visible(text) == text, "the escaping keeps the cluster as it is")
    }

    @Test func devanagariWithViramaTakesTheColumnsOfItsConsonants() {
        // Swift joins क्ष into one Character (Unicode 15.1's conjunct rule) or keeps ष apart: either way
        // the width is what a terminal advances, one column per consonant, and nothing is split.
        #expect(TextWidth.width(Self.kssa) == 2)
        var screen = CellGrid(width: 4, height: 1)
        #expect(screen.put(Self.kssa, x: 0, y: 0) == 2)
        #expect(screen.line(0) == Self.kssa + "  ")
        #expect(TextWidth.width("नमस्ते") == 4, "न म स्ते: marks add nothing")
    }

    @Test func screenCellsHoldWholeClusters() {
        var screen = CellGrid(width: 20, height: 1)
        let text = Self.family + Self.japan + Self.england + Self.thumbs + Self.keycap + Self.eAcute + Self.hangul
        #expect(screen.put(text, x: 0, y: 0) == 13)
        #expect(screen[0, 0].text == Self.family && screen[0, 0].width == 2 && screen[1, 0].isContinuation)
        #expect(screen[2, 0].text == Self.japan && screen[4, 0].text == Self.england)
        #expect(screen[6, 0].text == Self.thumbs && screen[8, 0].text == Self.keycap)
        #expect(screen[10, 0].text == Self.eAcute && screen[10, 0].width == 1)
        #expect(screen[11, 0].text == Self.hangul && screen[12, 0].isContinuation)
        #expect(screen.line(0) == text + String(repeating: " ", count: 7))
        #expect(TextWidth.width(screen.line(0)) == 20)
    }

    @Test func aClusterThatDoesNotFitAtTheRightEdgeIsNotDrawn() {
        var screen = CellGrid(width: 4, height: 1)
        screen.put("abcd", x: 0, y: 0)
        #expect(screen.put("xyz" + Self.family, x: 0, y: 0) == 3, "the family would need columns 3 and 4 of 3")
        #expect(screen.line(0) == "xyzd")
        #expect(screen.put("ab" + Self.japan, x: 0, y: 0, maxWidth: 3) == 2, "nor past maxWidth")
        #expect(screen.line(0) == "abzd")
        #expect(screen.put(Self.japan, x: 2, y: 0) == 2)
        #expect(screen.line(0) == "ab" + Self.japan)
        #expect(screen.put(Self.family, x: 3, y: 0) == 0, "one column left: nothing, never half a family")
        #expect(screen.line(0) == "ab" + Self.japan)
    }

    @Test func aWideClusterHalfOverwrittenBecomesBlank() {
        var screen = CellGrid(width: 6, height: 1)
        screen.put(Self.family + Self.thumbs + "ab", x: 0, y: 0)
        screen.put("x", x: 1, y: 0)  // the second half of the family
        #expect(screen.line(0) == " x" + Self.thumbs + "ab")
        screen.put("y", x: 2, y: 0)  // the first half of the thumbs up
        #expect(screen.line(0) == " xy ab")
        #expect((0..<6).allSatisfy { screen[$0, 0].width == 1 }, "no continuation left without its cluster")
        screen.put(Self.keycap, x: 4, y: 0)
        screen.fill(x: 5, y: 0, width: 1, style: .plain)  // a fill over the keycap's continuation
        #expect(screen.line(0) == " xy   ")
        screen.put(Self.hangul, x: 0, y: 0)
        screen.put(Self.japan, x: 1, y: 0)  // overlapping: the jamo block goes, the flag is whole
        #expect(screen.line(0) == " " + Self.japan + "   " && screen[1, 0].text == Self.japan)
    }

    @Test func aClusterCutByTheLeftEdgeLeavesBlanks() {
        var screen = CellGrid(width: 4, height: 1)
        screen.put("abcd", x: 0, y: 0)
        #expect(screen.put(Self.family + "z", x: -1, y: 0) == 3, "columns consumed, the hidden one included")
        #expect(screen.line(0) == " zcd")
    }

    @Test func truncateFitAndWrapNeverCutACluster() {
        let text = Self.family + Self.japan + Self.thumbs + Self.keycap
        #expect(TextWidth.truncate(text, to: 5) == Self.family + Self.japan + "…")
        #expect(TextWidth.truncate(text, to: 4) == Self.family + "…")
        #expect(TextWidth.width(TextWidth.fit(text, to: 6)) == 6)
        #expect(TextWidth.fit(Self.eAcute + Self.eAcute, to: 3) == Self.eAcute + Self.eAcute + " ")
        #expect(TextWidth.wrap(text, to: 3) == [Self.family, Self.japan, Self.thumbs, Self.keycap])
        #expect(TextWidth.wrap(Self.hangul + Self.hangul + Self.hangul, to: 5) == [Self.hangul + Self.hangul, Self.hangul])
        #expect(TextWidth.wrap(Self.england + " " + Self.england, to: 2) == [Self.england, " ", Self.england])
    }

    @Test func theDiffSeesAClusterChange() {
        var a = CellGrid(width: 4, height: 2)
        a.put(Self.japan, x: 0, y: 0)
        a.put(Self.japan, x: 0, y: 1)
        var b = a
        b.put("🇫🇷", x: 0, y: 1)
        #expect(b.changedRows(since: a) == [1])
        b.put(Self.family, x: 0, y: 0)
        var c = b
        c.put("👩\u{200D}👩\u{200D}👧", x: 0, y: 0)  // same first scalar, one person fewer
        #expect(c.changedRows(since: b) == [0])
    }
}
