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

    /// Lines the selection can rest on: fields and system fields, never section headers.
    func isSelectable(_ index: Int) -> Bool { lines.indices.contains(index) && !lines[index].isHeading }

    var firstSelectable: Int { lines.indices.first(where: isSelectable) ?? 0 }
    var lastSelectable: Int { lines.indices.last(where: isSelectable) ?? 0 }

    /// Moves the selection `delta` selectable lines (clamped), then scrolls so that all of the
    /// selected line's rows are in the body, and the section header right above it when it fits.
    func move(_ selection: inout Int, _ scroll: inout Int, delta: Int, height: Int) {
        guard !lines.isEmpty else {
            selection = 0
            scroll = 0
            return
        }
        var index = isSelectable(selection) ? selection : firstSelectable
        var steps = abs(delta)
        let step = delta < 0 ? -1 : 1
        while steps > 0 {
            var next = index + step
            while lines.indices.contains(next) && !isSelectable(next) { next += step }
            guard lines.indices.contains(next) else { break }
            index = next
            steps -= 1
        }
        selection = index
        reveal(selection, &scroll, height: height)
    }

    func reveal(_ selection: Int, _ scroll: inout Int, height: Int) {
        var top = selection
        // Show the heading of the section when the selection is its first line.
        if top > 0, lines[top - 1].isHeading { top -= 1 }
        if top < scroll { scroll = top }
        if scroll > selection { scroll = selection }
        while scroll < selection, rowsBetween(scroll, selection) > height { scroll += 1 }
        scroll = max(0, min(scroll, lines.count - 1))
    }

    /// Screen rows from line `from` through line `to`.
    func rowsBetween(_ from: Int, _ to: Int) -> Int {
        guard from <= to else { return 0 }
        return rows[from...to].reduce(0, +)
    }
}
