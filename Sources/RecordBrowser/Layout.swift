import TerminalUI

/// A screen's rectangles, computed in one place and used by rendering and by scrolling alike, so
/// what the keys scroll is exactly what is drawn.
public struct Layout: Sendable, Hashable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public init(_ state: BrowserState) { self.init(width: state.size.width, height: state.size.height) }

    public init(_ screen: CellGrid) { self.init(width: screen.width, height: screen.height) }

    /// Row 0: the title bar (breadcrumbs).
    public var title: Int { 0 }
    /// Row 1: a list's column header.
    public var header: Int { 1 }
    /// The rows under the header, above the hint line.
    public var body: Range<Int> { 2..<max(3, height - 2) }
    public var bodyHeight: Int { body.count }
    /// The hint line (keys, messages, the input line).
    public var hint: Int { height - 2 }
    /// The status bar.
    public var status: Int { height - 1 }

    /// A screen of text with no column header (the commit preview, a subscription's detail): the
    /// rows from under the title to the hint line.
    public var page: Range<Int> { 1..<max(2, height - 2) }
    public var pageHeight: Int { page.count }
    /// The page above a prompt that wraps upwards from the hint line over `promptRows` rows.
    public func page(promptRows: Int) -> Range<Int> { 1..<max(2, hint - max(0, promptRows - 1)) }
    /// The width text wraps to on those screens and in the lists' messages (a space stands before it).
    public var textWidth: Int { Self.wrapWidth(width) }

    /// A row's text: a margin column is left on the right.
    public var rowWidth: Int { max(0, width - 1) }
    /// Text between a column of margin on each side (may be narrow; `textWidth` is what text wraps to).
    public var innerWidth: Int { max(0, width - 2) }
    /// The title's breadcrumbs: what is left of the row after "? help  q quit".
    public var crumbsWidth: Int { max(0, width - 20) }
    /// The columns left on a row after `x`.
    public func room(after x: Int) -> Int { max(0, width - x) }
    /// The width text wraps to in a `width` wide view, after an indent (a space stands before it).
    public static func wrapWidth(_ width: Int, indent: Int = 0) -> Int { max(10, width - 2 - indent) }
    /// What text already `textWidth` wide wraps to when its continuation lines are indented by `indent`.
    public static func indentedWidth(_ textWidth: Int, indent: Int) -> Int { max(10, textWidth - indent) }
    /// Rows under an empty list's one-line note where a long message can still be read in full.
    public var noteRows: Int { max(0, bodyHeight - 4) }

    /// A box of `contentWidth` × `contentRows` (borders included), made to fit and centred.
    public func centredBox(contentWidth: Int, contentRows: Int) -> Rect {
        let w = min(width - 4, contentWidth), h = min(height - 2, contentRows)
        return Rect(x: (width - w) / 2, y: (height - h) / 2, width: w, height: h)
    }

    /// The inline editor's box: full width but a margin, standing on the hint line, at most the
    /// body's height plus the title's row.
    public func editorBox(contentRows: Int) -> Rect {
        let h = min(height - 4, contentRows)
        return Rect(x: 2, y: hint - h, width: width - 4, height: h)
    }

    /// The help box: its text's width, its rows (title and bottom border included) when the help is
    /// taller than the screen, and the rows of text it then shows (its last row says how to scroll).
    public var helpTextWidth: Int { min(width - 4, 80) - 4 }
    public var helpRoom: Int { max(3, height - 4) }
    public var helpRows: Int { helpRoom - 1 }

    // The record detail's columns.
    public static let detailNameWidth = 20
    public static let detailTypeWidth = 15
    /// Where a detail value starts, and how wide it may be before it wraps.
    public var detailValueX: Int { Self.detailNameWidth + Self.detailTypeWidth + 3 }
    public var detailValueWidth: Int { max(10, width - Self.detailNameWidth - Self.detailTypeWidth - 4) }
}

/// The record detail's lines and the screen rows each takes (long values wrap).
struct DetailPage {
    var lines: [DetailLine]
    var rows: [Int]
    /// The raw JSON: text with no selection, which the keys scroll.
    var isRaw = false

    /// Lines the selection can rest on: those a key acts on (fields, list elements, system fields);
    /// never section headers, the `was:` line under a staged change, nor the further lines of a
    /// multi-line value (`e` on those would edit the field just edited again).
    func isSelectable(_ index: Int) -> Bool {
        guard lines.indices.contains(index) else { return false }
        let line = lines[index]
        let continuation = line.field.isEmpty && line.element == nil && line.owner != nil
        return !line.isHeading && line.mark != .was && !continuation
    }

    var firstSelectable: Int { lines.indices.first(where: isSelectable) ?? 0 }
    var lastSelectable: Int { lines.indices.last(where: isSelectable) ?? 0 }

    /// The page's rows as one list: `ListMovement` over its lines, wrapped values taking several rows,
    /// a section header shown with the first line under it.
    func movement(_ selection: Int, _ scroll: Int, height: Int) -> ListMovement {
        let page = self
        let selectable: ((Int) -> Bool)? = isRaw ? nil : { page.isSelectable($0) }
        var list = ListMovement(count: lines.count, selection: selection, scroll: scroll, pageHeight: height, isSelectable: selectable)
        let rows = rows, lines = lines
        list.rows = { rows.indices.contains($0) ? rows[$0] : 1 }
        list.leadsIn = { lines.indices.contains($0) && lines[$0].isHeading }
        return list
    }

    /// Applies a movement key; false when `key` is not one.
    func apply(_ key: Key, _ selection: inout Int, _ scroll: inout Int, height: Int) -> Bool {
        var list = movement(selection, scroll, height: height)
        guard list.apply(key) else { return false }
        selection = list.selection
        scroll = list.scroll
        return true
    }

    /// Keeps the selection on a line a key acts on, and all of its rows in the body.
    func settle(_ selection: inout Int, _ scroll: inout Int, height: Int) {
        var list = movement(selection, scroll, height: height)
        list.settle()
        selection = list.selection
        scroll = list.scroll
    }
}

/// A rectangle of the screen.
public struct Rect: Sendable, Hashable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    /// The columns inside a border and a space of margin on each side.
    public var textWidth: Int { max(0, width - 4) }
    /// The rows inside a border.
    public var innerRows: Int { max(0, height - 2) }
    public var right: Int { x + width - 1 }
    public var bottom: Int { y + height - 1 }
    /// A horizontal border row `┌──┐` / `└──┘` of this width.
    public func border(_ left: Character, _ right: Character) -> String {
        String(left) + String(repeating: "─", count: max(0, width - 2)) + String(right)
    }
}
