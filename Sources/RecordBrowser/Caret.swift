import TerminalUI

/// Where the caret of typed text is drawn: the terminal's own cursor stands there (no glyph is drawn
/// in the text), and a line longer than the screen scrolls so the caret stays in view.
enum Caret {
    /// One row of typed text after a prompt, scrolled so the caret is in view: what to draw (each piece
    /// with its style) and the caret's column. Text cut at either end shows `…` there.
    static func row(prompt: String, text: [Character], cursor: Int, width: Int, textStyle: Style = .plain)
        -> (pieces: [(text: String, style: Style)], caret: Int)
    {
        var cells: [(text: String, width: Int, style: Style)] = []
        // Each character as drawn: itself, or its visible escape (a control, bidi or invisible character
        // typed or pasted shows as `\u{202E}`, never vanishes), as `put` and `wrap` draw it.
        for character in prompt { let c = TextWidth.piece(character); cells.append((c.text, c.width, .plain)) }
        let caretIndex = cells.count + max(0, min(cursor, text.count))
        for character in text { let c = TextWidth.piece(character); cells.append((c.text, c.width, textStyle)) }
        // The last column is kept for the caret after the end of the text, and one before it for a
        // trailing `…` when text follows the caret.
        let room = max(3, Layout(width: width, height: 1).rowWidth)
        func span(_ range: Range<Int>) -> Int { cells[range].reduce(0) { $0 + $1.width } }
        let caretWidth = caretIndex < cells.count ? cells[caretIndex].width : 0
        var start = 0
        if span(0..<caretIndex) + caretWidth > room - 1 {
            // Scroll right: the caret's cell last but one, after a leading `…`.
            start = caretIndex
            var used = 1 + caretWidth
            while start > 0, used + cells[start - 1].width <= room - 1 { start -= 1; used += cells[start].width }
        }
        var pieces: [(text: String, style: Style)] = start > 0 ? [("…", .plain)] : []
        var column = start > 0 ? 1 : 0
        var caret = column
        var index = start
        var rest = span(start..<cells.count)
        while index < cells.count {
            let cell = cells[index]
            if column + rest > room, column + cell.width > room - 1 {
                pieces.append(("…", .plain))
                break
            }
            if index == caretIndex { caret = column }
            pieces.append((cell.text, cell.style))
            column += cell.width
            rest -= cell.width
            index += 1
        }
        if caretIndex >= cells.count { caret = column }
        return (pieces, caret)
    }

    /// Draws `row`'s pieces at (x, y); answers the columns used.
    @discardableResult
    static func draw(_ pieces: [(text: String, style: Style)], on screen: inout CellGrid, x: Int, y: Int) -> Int {
        var column = x
        for piece in pieces { column += screen.put(piece.text, x: column, y: y, style: piece.style) }
        return column - x
    }

    /// A mark put into text at the caret before it is wrapped, found again in the wrapped rows and taken
    /// out there (so the caret lands where wrapping put its character). The same character typed in the
    /// text is told apart by counting.
    static let mark: Character = "\u{258F}"

    /// `text` with the mark at `cursor`.
    static func marked(_ text: [Character], cursor: Int) -> String {
        var shown = text
        shown.insert(mark, at: max(0, min(cursor, shown.count)))
        return String(shown)
    }

    /// Takes the caret's mark out of wrapped rows: the rows as drawn, and the mark's row and column.
    /// `before`: how many of the mark's character the text held before the caret.
    static func unmark(_ rows: [String], before: Int) -> (rows: [String], row: Int, column: Int)? {
        var seen = 0
        for (r, row) in rows.enumerated() {
            var prefix = ""
            for (i, character) in row.enumerated() {
                if character == mark {
                    if seen == before {
                        var rest = Array(row)
                        rest.remove(at: i)
                        var out = rows
                        out[r] = String(rest)
                        return (out, r, TextWidth.width(prefix))
                    }
                    seen += 1
                }
                prefix.append(character)
            }
        }
        return nil
    }

    /// How many of the mark's character stand in `text` before `cursor`.
    static func marksBefore(_ text: [Character], cursor: Int) -> Int {
        text.prefix(max(0, min(cursor, text.count))).reduce(0) { $0 + ($1 == mark ? 1 : 0) }
    }
}
