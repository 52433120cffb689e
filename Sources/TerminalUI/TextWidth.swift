import CLibc

/// Display widths by the terminal's own rules (glibc's wcwidth, as ncursesw and tmux use).
public enum TextWidth {
    /// The width of one scalar: 0 for combining marks, 2 for wide characters, -1 for controls.
    public static func width(of scalar: Unicode.Scalar) -> Int {
        if scalar.value >= 0x20 && scalar.value < 0x7F { return 1 }
        return Int(clibc_wcwidth(scalar.value))
    }

    /// What a grapheme puts in one terminal cell: its base scalar and the zero-width marks after it,
    /// stopping at a ZWJ or a second spacing scalar (ZWJ sequences and flag pairs would otherwise be
    /// drawn apart by curses). Controls become U+FFFD.
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

    /// The display width of a string as the screen draws it.
    public static func width(_ string: String) -> Int {
        var total = 0
        for character in string {
            if character == "\t" {
                total += 1
                continue
            }
            total += cellText(character).width
        }
        return total
    }

    /// The longest prefix that fits in `columns`, with `…` when cut.
    public static func truncate(_ string: String, to columns: Int) -> String {
        guard columns > 0 else { return "" }
        if width(string) <= columns { return string }
        var result = ""
        var used = 0
        for character in string {
            let w = character == "\t" ? 1 : cellText(character).width
            if used + w > columns - 1 { break }
            result.append(character)
            used += w
        }
        return result + "…"
    }

    /// Pads (or truncates) to exactly `columns`.
    public static func fit(_ string: String, to columns: Int, alignRight: Bool = false) -> String {
        let cut = truncate(string, to: columns)
        let pad = String(repeating: " ", count: max(0, columns - width(cut)))
        return alignRight ? pad + cut : cut + pad
    }

    /// Splits text into lines of at most `columns`: at newlines, then at the last space that fits,
    /// and inside a word only when the word alone is wider than the line. Nothing is dropped.
    public static func wrap(_ string: String, to columns: Int) -> [String] {
        guard columns > 0 else { return [] }
        var lines: [String] = []
        for raw in string.split(separator: "\n", omittingEmptySubsequences: false) {
            var line: [Character] = []
            var used = 0
            var lastSpace: Int?  // index in `line` just after the last space
            for character in raw.replacingTabs() {
                let w = cellText(character).width
                if used + w > columns && !line.isEmpty {
                    if let cut = lastSpace, cut < line.count {
                        lines.append(String(line[..<cut]))
                        line = Array(line[cut...])
                    } else {
                        lines.append(String(line))
                        line = []
                    }
                    used = line.reduce(0) { $0 + cellText($1).width }
                    lastSpace = nil
                }
                line.append(character)
                used += w
                if character == " " { lastSpace = line.count }
            }
            lines.append(String(line))
        }
        return lines
    }
}

extension Substring {
    fileprivate func replacingTabs() -> String {
        var out = ""
        for c in self { if c == "\t" { out += "    " } else { out.append(c) } }
        return out
    }
}
