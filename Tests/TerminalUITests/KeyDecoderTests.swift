import Testing
@testable import TerminalUI

@Suite struct KeyDecoderTests {
    func chars(_ text: String) -> [KeyDecoder.Input] { text.unicodeScalars.map { .character($0.value) } }

    /// The sequences tmux, screen, xterm and the Linux console send for keys their terminfo entries
    /// may not list: each is one key, never Esc followed by commands.
    @Test func sequencesBecomeKeys() {
        let cases: [(String, Key)] = [
            ("\u{1B}[1~", .home), ("\u{1B}[4~", .end), ("\u{1B}[H", .home), ("\u{1B}[F", .end), ("\u{1B}OH", .home), ("\u{1B}OF", .end),
            ("\u{1B}[7~", .home), ("\u{1B}[8~", .end), ("\u{1B}[3~", .delete), ("\u{1B}[5~", .pageUp), ("\u{1B}[6~", .pageDown),
            ("\u{1B}[A", .up), ("\u{1B}OB", .down), ("\u{1B}[1;5C", .ctrlRight), ("\u{1B}[1;5D", .ctrlLeft), ("\u{1B}[Z", .backTab),
            ("\u{1B}[15~", .function(5)), ("\u{1B}OP", .function(1)), ("\u{1B}b", .alt("b")), ("\u{1B}f", .alt("f")),
        ]
        for (text, key) in cases {
            var decoder = KeyDecoder()
            #expect(decoder.decode(chars(text)) == [key], "\(text.debugDescription)")
            #expect(!decoder.isHolding)
        }
    }

    @Test func unknownSequencesAreDroppedNotEsc() {
        var decoder = KeyDecoder()
        #expect(decoder.decode(chars("a\u{1B}[2~b\u{1B}[200~x")) == [.char("a"), .char("b"), .char("x")])
    }

    /// An ESC at the end of a read is held: the rest of its sequence may come in the next read.
    @Test func aSequenceSplitAcrossReads() {
        var decoder = KeyDecoder()
        #expect(decoder.decode(chars("ab\u{1B}")) == [.char("a"), .char("b")] && decoder.isHolding)
        #expect(decoder.decode(chars("[1")) == [] && decoder.isHolding)
        #expect(decoder.decode(chars("~c")) == [.home, .char("c")])
        // A lone Esc: nothing follows, so the flush says it was Esc.
        #expect(decoder.decode(chars("\u{1B}")) == [] && decoder.flush() == [.escape] && !decoder.isHolding)
        // Esc followed by a key curses decoded: Esc, then that key.
        #expect(decoder.decode(chars("\u{1B}") + [.key(.up)]) == [.escape, .up])
        #expect(decoder.decode(chars("\u{1B}\u{1B}")) == [.escape] && decoder.flush() == [.escape])
    }

    @Test func plainCharacters() {
        var decoder = KeyDecoder()
        #expect(decoder.decode(chars("\r\t\u{7F}\u{01}東")) == [.enter, .tab, .backspace, .ctrl("a"), .char("東")])
    }
}
