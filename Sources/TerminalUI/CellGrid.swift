/// One terminal cell. A grapheme cluster (a `Character`: a letter and its marks, an emoji ZWJ sequence, a
/// flag) is held whole by one cell; a cluster `n` columns wide occupies `n` cells: the first holds it
/// (width `n`), the others are continuations (width 0, empty text).
public struct Cell: Hashable, Sendable {
    public var text: String
    public var width: UInt8
    public var style: Style

    public static let blank = Cell(text: " ", width: 1, style: .plain)

    public init(text: String, width: UInt8, style: Style) {
        self.text = text
        self.width = width
        self.style = style
    }

    public var isContinuation: Bool { width == 0 }
}

/// A cell of the grid the terminal's cursor stands on.
public struct CursorPosition: Hashable, Sendable {
    public var x: Int
    public var y: Int
    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }
}

/// A frame: a grid of cells the widgets draw into and the backend shows. A value, so frames can be
/// compared, diffed and snapshotted in tests.
public struct CellGrid: Hashable, Sendable {
    public let width: Int
    public let height: Int
    public private(set) var cells: [Cell]
    /// Where the terminal's cursor stands: the caret of the text being typed, else the selected row.
    /// Nil hides it (a screen with nothing to point at).
    public var cursor: CursorPosition?

    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    public subscript(x: Int, y: Int) -> Cell {
        get { cells[y * width + x] }
        set { cells[y * width + x] = newValue }
    }

    /// Fills a rectangle with spaces in a style.
    public mutating func fill(x: Int = 0, y: Int, width w: Int? = nil, height h: Int = 1, style: Style) {
        let w = w ?? width - x
        for row in max(0, y)..<min(height, y + h) {
            for column in max(0, x)..<min(width, x + w) {
                self[column, row] = Cell(text: " ", width: 1, style: style)
            }
        }
        for row in max(0, y)..<min(height, y + h) { repairWideCharacters(row: row) }
    }

    /// Draws text at (x, y), clipped to `maxWidth` columns and to the screen. Never splits a grapheme
    /// cluster: one that does not fit is not drawn (nor is anything after it); returns the number of
    /// columns used. The text is escaped first (`TerminalText.visible`: a control, bidi or invisible
    /// character shows as `\e`, `\n`, `\u{202E}`, …), so nothing drawn can drive the terminal or vanish;
    /// a tab is one blank.
    @discardableResult
    public mutating func put(_ string: String, x: Int, y: Int, style: Style = .plain, maxWidth: Int? = nil) -> Int {
        guard y >= 0, y < height, x < width else { return 0 }
        let limit = min(width, x + (maxWidth ?? width))
        var column = x
        if TextWidth.isPlainASCII(string) {
            // One cell a byte (a tab drawn as a space): no escape, no cluster to find.
            for byte in string.utf8 {
                if column + 1 > limit { break }
                if column >= 0 {
                    breakCluster(at: column, y: y)
                    self[column, y] = Cell(text: byte == 0x09 ? " " : String(Unicode.Scalar(byte)), width: 1, style: style)
                }
                column += 1
            }
            return column - x
        }
        for character in TerminalText.visible(string, allowing: .tab) {
            let (text, w) = character == "\t" ? (" ", 1) : TextWidth.cellText(character)
            if w == 0 { continue }
            if column + w > limit { break }
            if column >= 0 {
                breakCluster(at: column, y: y)
                if w > 1 { breakCluster(at: column + w - 1, y: y) }
                self[column, y] = Cell(text: text, width: UInt8(w), style: style)
                for c in column + 1..<column + w { self[c, y] = Cell(text: "", width: 0, style: style) }
            } else if column + w > 0 {
                // Cut by the left edge: the visible part is blank, never half a cluster.
                breakCluster(at: column + w - 1, y: y)
                for c in 0..<column + w { self[c, y] = Cell(text: " ", width: 1, style: style) }
            }
            column += w
        }
        return column - x
    }

    /// Overwriting part of a wide cluster blanks the rest of it: finds the cluster covering column `x`
    /// (its first cell, or one of its continuations) and turns all its cells into blanks.
    private mutating func breakCluster(at x: Int, y: Int) {
        guard x >= 0, x < width else { return }
        var head = x
        while head > 0, self[head, y].isContinuation { head -= 1 }
        let w = Int(self[head, y].width)
        guard w > 1, head + w > x else { return }
        for c in head..<min(width, head + w) { self[c, y] = Cell(text: " ", width: 1, style: self[c, y].style) }
    }

    /// After a fill: a continuation with no cluster before it covering it, and a wide cluster missing one
    /// of its continuations, become blanks.
    private mutating func repairWideCharacters(row y: Int) {
        guard y >= 0, y < height else { return }
        var covered = 0  // continuations the last cluster still owns
        var x = 0
        while x < width {
            let cell = self[x, y]
            if cell.isContinuation {
                if covered == 0 { self[x, y] = Cell(text: " ", width: 1, style: cell.style) } else { covered -= 1 }
                x += 1
                continue
            }
            let w = Int(cell.width)
            covered = 0
            if w > 1 {
                let whole = x + w <= width && (x + 1..<x + w).allSatisfy { self[$0, y].isContinuation }
                if whole {
                    covered = w - 1
                } else {
                    self[x, y] = Cell(text: " ", width: 1, style: cell.style)
                }
            }
            x += 1
        }
    }

    /// Applies a style to a rectangle, keeping the text (e.g. to highlight a selected row).
    public mutating func restyle(y: Int, x: Int = 0, width w: Int? = nil, _ transform: (Style) -> Style) {
        guard y >= 0, y < height else { return }
        for column in max(0, x)..<min(width, x + (w ?? width)) {
            self[column, y].style = transform(self[column, y].style)
        }
    }

    /// The columns up to and including the row's last non-blank cell (0 for a blank row).
    public func contentWidth(y: Int) -> Int {
        guard y >= 0, y < height else { return 0 }
        var x = width
        while x > 0, self[x - 1, y].text == " " || self[x - 1, y].text.isEmpty { x -= 1 }
        return x
    }

    /// The text of one row (continuation cells contribute nothing), trailing spaces kept.
    public func line(_ y: Int) -> String {
        var result = ""
        for x in 0..<width { result += self[x, y].text }
        return result
    }

    /// The whole frame as text, trailing spaces trimmed per row: for snapshot tests.
    public var snapshot: String {
        (0..<height).map { y in
            var line = self.line(y)
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }

    /// Rows whose cells differ from `previous` (all rows when the size differs).
    public func changedRows(since previous: CellGrid?) -> [Int] {
        guard let previous, previous.width == width, previous.height == height else { return Array(0..<height) }
        return (0..<height).filter { y in
            let start = y * width
            return cells[start..<start + width] != previous.cells[start..<start + width]
        }
    }
}
