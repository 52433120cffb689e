import CloudKitWeb
import Foundation
import Testing

@testable import CloudKitLocal

/// The query index holds text in NFC through the standard library's own normalization; Foundation's
/// (ICU's) gives the same text for the same input, so an index written by an earlier version, which used
/// Foundation's, is found by the same values.
@Suite struct NormalizationTests {
    @Test func theIndexNormalizesAsFoundationDoes() {
        var samples = [
            "plain", "", "e\u{301}", "é", "A\u{30A}ngstr\u{F6}m", "\u{212B}", "\u{1E9B}\u{323}", "가", "\u{1100}\u{1161}\u{11A8}",
            "ﬁ ligature stays", "Ω\u{2126}", "q\u{307}\u{323}", "🧑‍🎨 e\u{301}", "\u{0958}", "ｶﾞ", "a\u{0}b", "\u{1100}\u{1161}",
        ]
        // Random sequences of scalars from blocks with combining marks, precomposed letters and Hangul.
        var rng = SystemRandomNumberGenerator()
        // Hangul jamo: the modern leading and vowel ones. (With the archaic leading jamo from U+1113 in
        // the pool, a draw such as "\u{AC12}\u{1113}\u{116F}" failed one run in a few dozen: Foundation
        // on Linux returns U+FFFD for the last two scalars, where Unicode's NFC, and the index, keep them.)
        let pools: [ClosedRange<UInt32>] = [
            0x41...0x7A, 0xC0...0x17F, 0x300...0x36F, 0x1E00...0x1EFF, 0xAC00...0xAC40, 0x1100...0x1112, 0x1161...0x1175,
        ]
        for _ in 0..<500 {
            var text = ""
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                let pool = pools.randomElement(using: &rng)!
                if let scalar = Unicode.Scalar(UInt32.random(in: pool, using: &rng)) { text.unicodeScalars.append(scalar) }
            }
            samples.append(text)
        }
        #expect(FieldIndex.text("\u{AC00}\u{11A8}") == "\u{AC01}")
        #expect(FieldIndex.text("\u{AC12}\u{1113}\u{116F}") == "\u{AC12}\u{1113}\u{116F}", "archaic jamo do not compose")
        for text in samples {
            let ours = FieldIndex.text(text)
            #expect(Array(ours.unicodeScalars) == Array(text.precomposedStringWithCanonicalMapping.unicodeScalars), "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }
}

/// `CONTAINS_*_TOKENS` words: ASCII text is cut from its bytes, and gives what Character's properties give.
@Suite struct TokenTests {
    @Test func asciiTextGivesTheWordsCharacterPropertiesGive() {
        func oracle(_ s: String) -> Set<String> { Set(s.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init)) }
        var samples = ["", "Item 7", "Hello, World!", "a\r\nb", "MiXeD-case_words 42x", "  ", "x\u{0}y", "tab\tsep", "ÉCOLE école", "Crème brûlée 2"]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            samples.append(String(decoding: (0..<Int.random(in: 0...12, using: &rng)).map { _ in UInt8.random(in: 0...127, using: &rng) }, as: UTF8.self))
        }
        for s in samples { #expect(FilterPredicate.tokens(s) == oracle(s), "\(Array(s.utf8))") }
        #expect(FilterPredicate.tokens("Item 7 ITEM") == ["item", "7"])
    }
}
