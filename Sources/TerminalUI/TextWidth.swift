import CLibc

/// Display widths by the terminal's own rules (glibc's wcwidth, as ncursesw and tmux use).
public enum TextWidth {
    /// The width of one scalar: 0 for combining marks, 2 for wide characters, -1 for controls.
    public static func width(of scalar: Unicode.Scalar) -> Int {
        if scalar.value >= 0x20 && scalar.value < 0x7F { return 1 }
        return Int(clibc_wcwidth(scalar.value))
    }

    /// What a grapheme of escaped text (`TerminalText.visible`) puts in the terminal: the whole cluster
    /// (Swift's `Character` is an extended grapheme cluster), in one cell whose width is `width` columns
    /// (`clusterWidth`). ZWJ sequences, flags, skin tones, keycaps, combining marks and conjoining jamo are
    /// never drawn apart. The string functions here and `CellGrid.put` escape first, so a control never gets
    /// here from them; one passed directly becomes U+FFFD. A lone zero-width scalar draws nothing.
    public static func cellText(_ character: Character) -> (text: String, width: Int) {
        let scalars = character.unicodeScalars
        guard let base = scalars.first else { return ("", 0) }
        let baseWidth = width(of: base)
        if baseWidth < 0 { return ("\u{FFFD}", 1) }
        if baseWidth == 0 { return ("", 0) }
        return (String(character), clusterWidth(scalars))
    }

    /// The columns a grapheme cluster takes, by the rules terminals that draw clusters whole use:
    ///
    /// - one scalar: its wcwidth (as ncursesw and tmux count it);
    /// - an emoji sequence is 2: an emoji-presentation base with anything after it, a regional-indicator
    ///   pair (🇯🇵), an emoji tag sequence (🏴󠁧󠁢󠁥󠁮󠁧󠁿), a ZWJ sequence of emoji (👩‍👩‍👧‍👦), a skin-tone modifier (👍🏽), a
    ///   keycap (1️⃣, U+20E3) or U+FE0F asking a text-default symbol for emoji presentation (❤️);
    /// - anything else: the wcwidth of each scalar added up, so a base and its combining marks (e + U+0301,
    ///   several marks), conjoining jamo (ᄒ + ᅡ + ᆫ) and an Indic conjunct (क + ् + ष) take the columns a
    ///   terminal advances for them.
    public static func clusterWidth(_ scalars: String.UnicodeScalarView) -> Int {
        var iterator = scalars.makeIterator()
        guard let base = iterator.next() else { return 0 }
        let baseWidth = max(0, width(of: base))
        guard let second = iterator.next() else { return min(baseWidth, 2) }
        let baseIsEmoji = base.value >= 0x80 && base.properties.isEmoji
        var emoji = base.properties.isEmojiPresentation
        var sum = baseWidth
        var next: Unicode.Scalar? = second
        while let scalar = next {
            switch scalar.value {
            case 0xFE0F, 0x20E3, 0x1F3FB...0x1F3FF: emoji = true
            case 0x1F1E6...0x1F1FF where (0x1F1E6...0x1F1FF).contains(base.value): emoji = true
            case 0x200D where baseIsEmoji: emoji = true
            default: sum += max(0, width(of: scalar))
            }
            next = iterator.next()
        }
        return emoji ? 2 : min(max(sum, 1), 255)
    }

    /// Printable ASCII only (a tab allowed): one column a byte, nothing to escape, no cluster to
    /// find — the common case (names, dates, tags, JSON keys), measured and drawn byte by byte.
    public static func isPlainASCII(_ string: String) -> Bool { TerminalText.isPlainASCII(string, .tab) }

    /// The display width of a string as the screen draws it (escapes included: see `TerminalText`).
    public static func width(_ string: String) -> Int {
        if isPlainASCII(string) { return string.utf8.count }
        var total = 0
        for character in TerminalText.visible(string, allowing: .tab) {
            if character == "\t" {
                total += 1
                continue
            }
            total += cellText(character).width
        }
        return total
    }

    /// The longest prefix that fits in `columns`, with `…` when cut; escaped (`TerminalText.visible`),
    /// and an escape is never cut in half.
    public static func truncate(_ string: String, to columns: Int) -> String {
        guard columns > 0 else { return "" }
        if isPlainASCII(string) {
            let count = string.utf8.count
            return count <= columns ? string : String(decoding: string.utf8.prefix(columns - 1), as: UTF8.self) + "…"
        }
        if width(string) <= columns { return TerminalText.visible(string, allowing: .tab) }
        var result = ""
        var used = 0
        for character in string {
            let (text, w) = character == "\t" ? ("\t", 1) : piece(character)
            if used + w > columns - 1 { break }
            result += text
            used += w
        }
        return result + "…"
    }

    /// One grapheme as drawn: itself, or its escape (`TerminalText.visible`), and the columns it takes.
    public static func piece(_ character: Character) -> (text: String, width: Int) {
        if let ascii = character.asciiValue, ascii >= 0x20, ascii < 0x7F { return (String(character), 1) }
        let text = TerminalText.visible(String(character))
        var w = 0
        for c in text { w += cellText(c).width }
        return (text, w)
    }

    /// Pads (or truncates) to exactly `columns`.
    public static func fit(_ string: String, to columns: Int, alignRight: Bool = false) -> String {
        let cut = truncate(string, to: columns)
        let pad = String(repeating: " ", count: max(0, columns - width(cut)))
        return alignRight ? pad + cut : cut + pad
    }

    /// Splits text into lines of at most `columns`: at newlines, then at the last space that fits,
    /// and inside a word only when the word alone is wider than the line. Nothing is dropped; the lines
    /// are escaped (`TerminalText.visible`: a CR shows as `\r`), and an escape stays on one line.
    public static func wrap(_ string: String, to columns: Int) -> [String] {
        guard columns > 0 else { return [] }
        var lines: [String] = []
        var line: [(text: String, width: Int)] = []
        var used = 0
        var lastSpace: Int?  // index in `line` just after the last space
        func add(_ text: String, _ w: Int) {
            if used + w > columns && !line.isEmpty {
                if let cut = lastSpace, cut < line.count {
                    lines.append(line[..<cut].map(\.text).joined())
                    line = Array(line[cut...])
                } else {
                    lines.append(line.map(\.text).joined())
                    line = []
                }
                used = line.reduce(0) { $0 + $1.width }
                lastSpace = nil
            }
            line.append((text, w))
            used += w
            if text == " " { lastSpace = line.count }
        }
        func endLine() {
            lines.append(line.map(\.text).joined())
            line = []
            used = 0
            lastSpace = nil
        }
        for character in string {
            switch character {
            case "\n": endLine()
            case "\r\n":
                add("\\r", 2)
                endLine()
            case "\t": for _ in 0..<4 { add(" ", 1) }
            default:
                let (text, w) = piece(character)
                add(text, w)
            }
        }
        endLine()
        return lines
    }
}
