import TerminalUI

/// One list behaviour for every list-shaped screen (issue 30): what j k ↓ ↑, PgDn PgUp (Space,
/// Ctrl-F, Ctrl-B), g G and Home End do to a selection and its scroll. A value built from the
/// screen's rows and its page height (from `Layout`, which drawing reads too), moved, then read back.
///
/// - A list with a selection: the selection rests only on rows `isSelectable` allows (never a
///   section header or a `was:` line), and after every move all of its rows are drawn.
///   PgDn/PgUp move the selection and the scroll a whole page, so the selection keeps its place on
///   the screen; at the ends the scroll stops and the selection goes on to the first or last row.
/// - A view with no selection (`isSelectable` nil): the keys scroll it; PgDn a whole page.
///
/// `scroll` is the first row (item) drawn; items may take more than one screen row (`rows`).
struct ListMovement {
    var count: Int
    var selection: Int
    var scroll: Int
    /// Screen rows the list has.
    var pageHeight: Int
    /// Items the selection may rest on; nil for a view that only scrolls.
    var isSelectable: ((Int) -> Bool)?
    /// Screen rows each item takes (a wrapped value takes several).
    var rows: (Int) -> Int = { _ in 1 }
    /// Items drawn together with the item after them when it is revealed from below (section headers).
    var leadsIn: (Int) -> Bool = { _ in false }

    init(count: Int, selection: Int = 0, scroll: Int, pageHeight: Int, isSelectable: ((Int) -> Bool)? = { _ in true }) {
        self.count = count
        self.selection = selection
        self.scroll = scroll
        self.pageHeight = max(1, pageHeight)
        self.isSelectable = isSelectable
    }

    /// What a key asks of a list.
    enum Motion: Equatable {
        /// j k ↓ ↑: the next (previous) row that can be selected.
        case step(Int)
        /// PgDn PgUp Space Ctrl-F Ctrl-B: a whole page down (+1) or up (-1).
        case page(Int)
        /// g Home.
        case first
        /// G End.
        case last
    }

    /// The motion a key asks for, or nil when it is not a movement key.
    static func motion(_ key: Key) -> Motion? {
        switch key {
        case .char("j"), .down: return .step(1)
        case .char("k"), .up: return .step(-1)
        case .pageDown, .ctrl("f"), .char(" "): return .page(1)
        case .pageUp, .ctrl("b"): return .page(-1)
        case .char("g"), .home: return .first
        case .char("G"), .end: return .last
        default: return nil
        }
    }

    /// Applies `key`; false when it is not a movement key.
    @discardableResult
    mutating func apply(_ key: Key) -> Bool {
        guard let motion = Self.motion(key) else { return false }
        apply(motion)
        return true
    }

    mutating func apply(_ motion: Motion) {
        guard count > 0 else {
            selection = 0
            scroll = 0
            return
        }
        guard let isSelectable else {
            // A view with no selection: the keys scroll it.
            let last = lastScroll
            switch motion {
            case .step(let d): scroll += d
            case .page(let d): scroll += d * pageHeight
            case .first: scroll = 0
            case .last: scroll = last
            }
            scroll = max(0, min(last, scroll))
            return
        }
        selection = max(0, min(count - 1, selection))
        scroll = max(0, min(scroll, count - 1))
        switch motion {
        case .step(let d):
            if !isSelectable(selection) { selection = nearestSelectable(selection, preferring: d) ?? selection }
            var steps = abs(d)
            let step = d < 0 ? -1 : 1
            while steps > 0, let next = nextSelectable(after: selection, step: step) {
                selection = next
                steps -= 1
            }
        case .page(let d):
            // The scroll moves a page (as far as there is a page to move to) and the selection with it;
            // a scroll that cannot move any more leaves the selection to go to the end.
            // A page is what fills the screen: the items from the top down, or those above the top
            // (at the top, a page up is as far as a page down would be).
            let items = d > 0 || scroll == 0 ? itemsFitting(from: scroll, step: 1) : itemsFitting(from: scroll - 1, step: -1)
            let newScroll = max(0, min(lastScroll, scroll + d * items))
            selection = max(0, min(count - 1, selection + d * items))
            scroll = newScroll
            selection = nearestSelectable(selection, preferring: d) ?? selection
        case .first:
            scroll = 0
            selection = nearestSelectable(0, preferring: 1) ?? 0
        case .last:
            scroll = lastScroll
            selection = nearestSelectable(count - 1, preferring: -1) ?? count - 1
        }
        reveal()
    }

    /// Keeps the selection on a selectable row and every row of it drawn (after a resize, a filter,
    /// rows that changed).
    mutating func settle() {
        guard count > 0 else {
            selection = 0
            scroll = 0
            return
        }
        guard let isSelectable else {
            scroll = max(0, min(lastScroll, scroll))
            return
        }
        selection = max(0, min(count - 1, selection))
        if !isSelectable(selection) { selection = nearestSelectable(selection, preferring: 1) ?? selection }
        reveal()
    }

    /// Scrolls as little as needed so that every row of the selection is drawn (and the header
    /// leading into it, when it fits).
    mutating func reveal() {
        var top = selection
        if top > 0, leadsIn(top - 1) { top -= 1 }
        if top < scroll { scroll = top }
        if scroll > selection { scroll = selection }
        // The first item that still shows the whole selection, found walking up from it (at most a
        // page of items): moving `scroll` down one item at a time and summing the rows again each
        // time was quadratic in the distance, 21 s for the reopen of a 100,000-record list whose
        // selection was at its end (`bench reopen`).
        var first = selection, used = rows(selection)
        while first > scroll, used + rows(first - 1) <= pageHeight {
            first -= 1
            used += rows(first)
        }
        scroll = first
        scroll = max(0, min(scroll, max(lastScroll, min(selection, count - 1))))
    }

    /// The first item drawn when the list's end is at the page's bottom.
    var lastScroll: Int {
        guard count > 0 else { return 0 }
        var top = count - 1, used = rows(top)
        while top > 0, used + rows(top - 1) <= pageHeight {
            top -= 1
            used += rows(top)
        }
        return top
    }

    /// Screen rows from item `from` through item `to`.
    func rowsBetween(_ from: Int, _ to: Int) -> Int {
        guard from <= to else { return 0 }
        return (max(0, from)...min(count - 1, to)).reduce(0) { $0 + rows($1) }
    }

    /// How many items fill a page starting at `from` and going `step` (at least one).
    func itemsFitting(from: Int, step: Int) -> Int {
        var index = from, used = 0, items = 0
        while index >= 0, index < count, used + rows(index) <= pageHeight {
            used += rows(index)
            items += 1
            index += step
        }
        return max(1, items)
    }

    func nextSelectable(after index: Int, step: Int) -> Int? {
        guard let isSelectable else { return nil }
        var next = index + step
        while next >= 0, next < count {
            if isSelectable(next) { return next }
            next += step
        }
        return nil
    }

    /// `index` when it can be selected, else the nearest selectable item in the direction of
    /// `preferring`, else in the other.
    func nearestSelectable(_ index: Int, preferring d: Int) -> Int? {
        guard let isSelectable else { return nil }
        if index >= 0, index < count, isSelectable(index) { return index }
        let step = d < 0 ? -1 : 1
        return nextSelectable(after: index, step: step) ?? nextSelectable(after: index, step: -step)
    }
}

extension Browser {
    /// Moves a list whose every row can be selected when `key` is a movement key; false otherwise.
    static func moveList(_ key: Key, _ selection: inout Int, _ scroll: inout Int, count: Int, height: Int) -> Bool {
        var list = ListMovement(count: count, selection: selection, scroll: scroll, pageHeight: height)
        guard list.apply(key) else { return false }
        selection = list.selection
        scroll = list.scroll
        return true
    }

    /// Moves `selection` (an index of the whole list) among the `visible` indices (a filter hides the
    /// others) when `key` is a movement key; `scroll` counts visible rows.
    static func moveVisible(_ key: Key, _ selection: inout Int, _ scroll: inout Int, visible: [Int], height: Int) -> Bool {
        guard ListMovement.motion(key) != nil else { return false }
        guard !visible.isEmpty else {
            scroll = 0
            return true
        }
        var position = visible.firstIndex(of: selection) ?? (visible.firstIndex { $0 > selection } ?? visible.count - 1)
        _ = moveList(key, &position, &scroll, count: visible.count, height: height)
        selection = visible[position]
        return true
    }

    /// Scrolls a view with no selection when `key` is a movement key; false otherwise.
    static func scrollView(_ key: Key, _ scroll: inout Int, count: Int, height: Int) -> Bool {
        var view = ListMovement(count: count, scroll: scroll, pageHeight: height, isSelectable: nil)
        guard view.apply(key) else { return false }
        scroll = view.scroll
        return true
    }

    /// The first line a view with no selection draws: its scroll, clamped for text that shrank since.
    static func clampedScroll(_ scroll: Int, count: Int, height: Int) -> Int {
        var view = ListMovement(count: count, scroll: scroll, pageHeight: height, isSelectable: nil)
        view.settle()
        return view.scroll
    }
}
