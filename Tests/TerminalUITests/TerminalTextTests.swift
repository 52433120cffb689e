import Testing
@testable import TerminalUI

/// `TerminalText`: the one escaping between text from elsewhere and the terminal.
@Suite struct TerminalTextTests {
    @Test("printable ASCII is returned as it is", arguments: ["", "abc", "artwork-0001", String(repeating: "The quick brown fox ~!@#$%^&*()_+{}|:\"<>? ", count: 50), "back\\slash \\e \\u{1B}"])
    func asciiFastPath(text: String) {
        #expect(TerminalText.visible(text) == text)
        #expect(TerminalText.isPlainASCII(text, []))
        #expect(!TerminalText.needsEscaping(text))
    }

    @Test func theAttackSequencesShowAsEscapes() {
        #expect(TerminalText.visible("\u{1B}]52;c;cm0gLXJmIH4=\u{7}") == "\\e]52;c;cm0gLXJmIH4=\\u{7}", "OSC 52 clipboard write")
        #expect(TerminalText.visible("\u{1B}]0;pwned\u{7}") == "\\e]0;pwned\\u{7}", "window title")
        #expect(TerminalText.visible("\u{1B}[2J") == "\\e[2J", "clear screen")
        #expect(TerminalText.visible("\u{9B}2J") == "\\u{9B}2J", "C1 CSI")
        #expect(TerminalText.visible("abc\u{202E}fed") == "abc\\u{202E}fed", "right-to-left override")
    }

    @Test("C0 controls, DEL and C1 controls are escaped", arguments: Array(0x00...0x1F) + [0x7F] + Array(0x80...0x9F))
    func controls(value: UInt32) {
        let scalar = Unicode.Scalar(value)!
        let shown = TerminalText.visible("a" + String(scalar) + "b")
        #expect(shown == "a" + TerminalText.escape(scalar) + "b")
        #expect(shown.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F })
    }

    @Test func namedEscapesAndTheRest() {
        #expect(TerminalText.escape("\u{1B}") == "\\e")
        #expect(TerminalText.escape("\t") == "\\t" && TerminalText.escape("\n") == "\\n" && TerminalText.escape("\r") == "\\r")
        #expect(TerminalText.escape("\u{0}") == "\\u{0}" && TerminalText.escape("\u{7F}") == "\\u{7F}")
        #expect(TerminalText.escape("\u{E0041}") == "\\u{E0041}")
    }

    @Test func newlinesAndTabsOnlyWhereAllowed() {
        #expect(TerminalText.visible("a\nb\tc") == "a\\nb\\tc")
        #expect(TerminalText.visible("a\nb\tc", allowing: .lines) == "a\nb\tc")
        #expect(TerminalText.visible("a\nb\tc", allowing: .tab) == "a\\nb\tc")
        #expect(TerminalText.visible("line\r\nnext") == "line\\r\\nnext", "CR LF is one grapheme: both shown")
        #expect(TerminalText.visible("line\r\nnext", allowing: .lines) == "line\\r\nnext")
        #expect(TerminalText.visible("over\rwrite", allowing: .lines) == "over\\rwrite", "a CR is never let through")
    }

    @Test("bidi and invisible formatting characters are escaped", arguments: [
        0x200B, 0x200C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064,
        0x2066, 0x2067, 0x2068, 0x2069, 0xFEFF, 0x061C, 0x180E, 0x00AD, 0x2028, 0x2029, 0x034F, 0x115F, 0x3164, 0xFFA0,
        0x206A, 0x206F, 0xFFF9, 0xFFFB, 0xE0001, 0x1D173, 0x0600, 0x2065,
    ] as [UInt32])
    func invisible(value: UInt32) {
        let scalar = Unicode.Scalar(value)!
        #expect(TerminalText.visible("x" + String(scalar) + "y") == "x" + TerminalText.escape(scalar) + "y")
        #expect(TerminalText.visible(String(scalar)) == TerminalText.escape(scalar))
    }

    @Test func emojiSequencesStayWhole() {
        for emoji in ["👨‍👩‍👧‍👦", "👩‍💻", "🏳️‍🌈", "👁️‍🗨️", "🧑🏽‍💻", "👍🏽", "❤️", "☺︎", "1️⃣", "#️⃣", "🇯🇵", "🇺🇸", "🏴󠁧󠁢󠁥󠁮󠁧󠁿", "🏴󠁧󠁢󠁳󠁣󠁴󠁿"] {
            #expect(TerminalText.visible(emoji) == emoji, "\(emoji.unicodeScalars.map { String($0.value, radix: 16) })")
            #expect(TerminalText.visible("a " + emoji + " b") == "a " + emoji + " b")
        }
    }

    @Test func joinersAndSelectorsOutOfContextAreEscaped() {
        #expect(TerminalText.visible("\u{200D}") == "\\u{200D}")
        #expect(TerminalText.visible("a\u{200D}") == "a\\u{200D}", "a joiner with nothing after it")
        #expect(TerminalText.visible("\u{200D}👩") == "\\u{200D}👩", "a joiner with nothing before it")
        #expect(TerminalText.visible("a\u{200D}b") == "a\\u{200D}b", "a joiner between two graphemes joins nothing")
        #expect(TerminalText.visible("👩\u{200D}\u{200D}💻") == "👩\\u{200D}\\u{200D}💻")
        #expect(TerminalText.visible("\u{1B}\u{200D}👩") == "\\e\\u{200D}👩")
        #expect(TerminalText.visible("\u{FE0F}") == "\\u{FE0F}")
        #expect(TerminalText.visible("\u{202E}\u{FE0F}") == "\\u{202E}\\u{FE0F}", "after an escape nothing is modified")
        #expect(TerminalText.visible("a\u{E0041}\u{E007F}") == "a\\u{E0041}\\u{E007F}", "tags outside a flag sequence (ASCII smuggling)")
        #expect(TerminalText.visible("🏴\u{E0067}\u{E0062}") == "🏴\\u{E0067}\\u{E0062}", "an unterminated tag sequence")
    }

    @Test func combiningMarksAndScriptsAreKept() {
        for text in ["Cafe\u{301}", "e\u{301}\u{302}\u{303}", "한국어", "東京タワー", "नमस्ते", "ไทย", "العربية", "עברית", "Ελληνικά", "a\u{20DD}", "\u{1100}\u{1161}\u{11A8}"] {
            #expect(TerminalText.visible(text) == text, "\(text)")
        }
        #expect(TerminalText.visible("\u{301}x") == "\\u{301}x", "a mark with no base")
        #expect(TerminalText.visible("\u{1B}\u{301}") == "\\e\\u{301}")
        #expect(TerminalText.visible("\u{200C}\u{301}") == "\\u{200C}\\u{301}")
    }

    @Test func unassignedScalarsAreEscaped() {
        #expect(TerminalText.visible("\u{378}") == "\\u{378}")
        #expect(TerminalText.visible("\u{E0080}") == "\\u{E0080}")
    }

    /// Every scalar of the first planes alone and between letters: shown as itself or as its escape
    /// (nothing dropped), nothing harmful left, and escaping twice is escaping once.
    @Test func everyScalarIsKeptOrEscapedAndEscapingIsIdempotent() {
        let harmful: (Unicode.Scalar) -> Bool = { s in
            s.value < 0x20 || (0x7F...0x9F).contains(s.value) || s.properties.generalCategory == .format
                || [.lineSeparator, .paragraphSeparator].contains(s.properties.generalCategory)
        }
        for value in UInt32(0)...0x2FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let shown = TerminalText.visible("a" + String(scalar) + "b")
            let alone = TerminalText.visible(String(scalar))
            #expect(alone == String(scalar) || alone == TerminalText.escape(scalar), "U+\(String(value, radix: 16))")
            if harmful(scalar) && value != 0x200D {
                #expect(alone == TerminalText.escape(scalar), "U+\(String(value, radix: 16))")
            }
            #expect(TerminalText.visible(shown) == shown, "U+\(String(value, radix: 16)) twice")
            #expect(TerminalText.visible(alone) == alone)
        }
    }

    /// Random scalars, mostly awkward ones: no raw control, C1 or bidi character comes out, and the
    /// result is stable.
    @Test func randomTextNeverLeaksAControl() {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return seed >> 33
        }
        let awkward: [UInt32] = [0x1B, 0x07, 0x0D, 0x0A, 0x09, 0x7F, 0x9B, 0x85, 0x200B, 0x200D, 0x202E, 0x2066, 0xFEFF, 0xFE0F, 0x301,
                                 0x1F469, 0x1F4BB, 0x1F3F4, 0xE0067, 0xE007F, 0x1F1EF, 0x1F1F5, 0x41, 0x20, 0x6771, 0x5C]
        for _ in 0..<2000 {
            var text = ""
            for _ in 0..<Int(next() % 12) { text.unicodeScalars.append(Unicode.Scalar(awkward[Int(next() % UInt64(awkward.count))])!) }
            let shown = TerminalText.visible(text)
            for s in shown.unicodeScalars {
                #expect(s.value >= 0x20 && !(0x7F...0x9F).contains(s.value) && ![0x200B, 0x202E, 0x2066, 0xFEFF].contains(s.value), "\(text.unicodeScalars.map(\.value))")
            }
            #expect(TerminalText.visible(shown) == shown)
            #expect(TerminalText.visible(text, allowing: .lines).unicodeScalars.allSatisfy { $0.value != 0x0D && $0.value != 0x1B })
        }
    }

    @Test func jsonEscapesTheSameCharactersAsJSONEscapes() {
        #expect(TerminalText.json(#"{"s":"a\u001b]0;x\u0007"}"#) == #"{"s":"a\u001b]0;x\u0007"}"#, "already escaped by the writer")
        #expect(TerminalText.json("{\"s\":\"a\u{202E}b\u{7F}\u{9B}\u{200B}\"}") == #"{"s":"a\u202eb\u007f\u009b\u200b"}"#)
        #expect(TerminalText.json("[\"\u{E0041}\"]") == #"["\udb40\udc41"]"#, "a surrogate pair above U+FFFF")
        #expect(TerminalText.json("{\n  \"s\": \"👩‍💻 ❤️ 東京 Cafe\u{301}\"\n}") == "{\n  \"s\": \"👩‍💻 ❤️ 東京 Cafe\u{301}\"\n}", "pretty-printing and visible text kept")
        #expect(TerminalText.json(#"["plain"]"#) == #"["plain"]"#)
    }

    @Test func widthsCountTheEscapes() {
        #expect(TextWidth.width("a\u{200B}b") == 10)
        #expect(TextWidth.width("\u{1B}[2J") == 5)
        #expect(TextWidth.width("e\u{301}") == 1)
        #expect(TextWidth.truncate("\u{202E}abc", to: 10) == "\\u{202E}a…", "an escape is never cut in half")
        #expect(TextWidth.truncate("ab\u{202E}cd", to: 6) == "ab…")
        #expect(TextWidth.wrap("a\r\nb\u{1B}c", to: 10) == ["a\\r", "b\\ec"])
        #expect(TextWidth.wrap("xx\u{202E}", to: 8) == ["xx", "\\u{202E}"], "an escape moves to the next line whole")
        #expect(TextWidth.fit("\u{7}", to: 6) == "\\u{7} ")
    }

    @Test func theScreenDrawsEscapes() {
        var screen = CellGrid(width: 30, height: 2)
        screen.put("\u{1B}]0;title\u{7}\u{9B}2J", x: 0, y: 0)
        #expect(screen.line(0).hasPrefix("\\e]0;title\\u{7}\\u{9B}2J"))
        screen.put("A\u{202E}B\u{200B}C\rD", x: 0, y: 1)
        #expect(screen.line(1).hasPrefix("A\\u{202E}B\\u{200B}C\\rD"))
        #expect(screen.cells.allSatisfy { $0.text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F } })
    }
}
