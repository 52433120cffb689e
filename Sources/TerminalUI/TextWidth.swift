import CLibc

/// Display widths by the terminal's own rules (glibc's wcwidth, as ncursesw and tmux use).
public enum TextWidth {
    /// The width of one scalar: 0 for combining marks, 2 for wide characters, -1 for controls.
    public static func width(of scalar: Unicode.Scalar) -> Int {
        if scalar.value >= 0x20 && scalar.value < 0x7F { return 1 }
        return Int(clibc_wcwidth(scalar.value))
    }

    /// What a grapheme of escaped text (`TerminalText.visible`) puts in one terminal cell: its base
    /// scalar and the zero-width marks after it, stopping at a ZWJ or a second spacing scalar (ZWJ
    /// sequences and flag pairs would otherwise be drawn apart by curses). The string functions here and
    /// `Screen.put` escape first, so a control never gets here from them; one passed directly becomes
    /// U+FFFD.
    public static func cellText(_ character: Character) -> (text: String, width: Int) {
        var scalars = character.unicodeScalars.makeIterator()
        guard let base = scalars.next() else { return ("", 0) }
        var w = width(of: base)
        if w < 0 { return ("\u{FFFD}", 1) }
        var text = String(base)
        if w == 0 {
            // A lone zero-width scalar (ZWSP, a stray combining mark): nothing to draw.
            return ("", 0)
        }
        while let next = scalars.next() {
            if next.value == 0x200D { break }
            if width(of: next) != 0 { break }
            if text.unicodeScalars.count >= 5 { break }
            text.unicodeScalars.append(next)
        }
        w = min(w, 2)
        return (text, w)
    }

    /// The display width of a string as the screen draws it (escapes included: see `TerminalText`).
    public static func width(_ string: String) -> Int {
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
    static func piece(_ character: Character) -> (text: String, width: Int) {
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
