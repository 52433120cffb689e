import CloudKitModels
import TerminalUI

/// `/` on the screens whose rows are in memory (zones, subscriptions, the debug pane's requests, a
/// record's fields): a case-insensitive substring of the row's visible text. Selections keep indexing
/// the whole list; moves step over the rows the filter hides. (The records list filters in the cache,
/// over names, types and field values: `RecordCache.window`.)
extension Browser {
    /// The filter typed on `pane`'s screen, if any (each screen keeps its own).
    static func filterText(_ state: BrowserState, _ pane: Pane) -> String? {
        guard let text = state.stack.find(pane)?.filter, !text.isEmpty else { return nil }
        return text
    }

    static func matches(_ text: String, _ filter: String?) -> Bool {
        guard let filter, !filter.isEmpty else { return true }
        return text.lowercased().contains(filter.lowercased())
    }

    static func zoneText(_ zone: ZoneResult) -> String {
        switch zone {
        case .zone(let z): return "\(z.zoneID.zoneName) \(z.zoneID.ownerRecordName ?? "")"
        case .failure(let e): return "\(e.zoneID?.zoneName ?? "") \(e.serverErrorCode.rawValue) \(e.reason ?? "")"
        }
    }

    static func subscriptionText(_ subscription: SubscriptionResult) -> String {
        switch subscription {
        case .subscription(let s):
            return "\(s.subscriptionID ?? "") \(s.subscriptionType.rawValue) \(s.query?.recordType ?? "") \(s.zoneID?.zoneName ?? "")"
        case .failure(let e): return "\(e.subscriptionID ?? "") \(e.serverErrorCode.rawValue) \(e.reason ?? "")"
        }
    }

    static func requestText(_ r: RequestRecord) -> String {
        "\(r.operation) \(r.method.rawValue) \(r.database?.rawValue ?? "device") \(r.status.map(String.init) ?? "failed") \(r.serverErrorCode?.rawValue ?? "")"
    }

    /// Indices of the zones the filter shows.
    static func visibleZones(_ state: BrowserState) -> [Int] {
        let filter = filterText(state, .zones)
        return state.zones.indices.filter { matches(zoneText(state.zones[$0]), filter) }
    }

    static func visibleSubscriptions(_ state: BrowserState) -> [Int] {
        let filter = filterText(state, .subscriptions)
        let rows = subscriptionList(state)
        return rows.indices.filter { i in
            switch rows[i] {
            case .listed(let result, _): return matches(subscriptionText(result), filter)
            case .new(let op): return matches(subscriptionText(.subscription(op.subscription)) + " staged new", filter)
            case .fired(let s): return matches(subscriptionText(.subscription(s)) + " fired", filter)
            }
        }
    }

    /// Requests newest first, filtered.
    static func visibleRequests(_ state: BrowserState) -> [RequestRecord] {
        let filter = filterText(state, .debug)
        return state.requests.reversed().filter { matches(requestText($0), filter) }
    }

    /// Moves `selection` (an index of the whole list) among the `visible` indices; `scroll` counts
    /// visible rows.
    static func moveVisible(_ selection: inout Int, _ scroll: inout Int, visible: [Int], delta: Int, height: Int) {
        guard !visible.isEmpty else {
            scroll = 0
            return
        }
        var position = visible.firstIndex(of: selection) ?? (visible.firstIndex { $0 > selection } ?? visible.count - 1)
        move(&position, &scroll, count: visible.count, delta: delta, height: height)
        selection = visible[position]
    }

    /// The filter of an in-memory screen changed: the selection goes to the first match.
    static func paneFilterChanged(_ state: inout BrowserState) {
        switch state.pane {
        case .zones:
            state.setSelection(.zones, visibleZones(state).first ?? 0)
            state.setScroll(.zones, 0)
        case .subscriptions:
            state.setSelection(.subscriptions, visibleSubscriptions(state).first ?? 0)
            state.setScroll(.subscriptions, 0)
        case .recordDetail:
            settleOpenRecord(&state, toFirst: true)
        case .notifications:
            state.notifications.selection = 0
            state.notifications.scroll = 0
        case .schema:
            // Finds rather than hides: the first type or field whose name contains the text is selected.
            if let filter = filterText(state, .schema),
                let first = schemaRows(state).firstIndex(where: { $0.kind != .grants && matches($0.cells[0], filter) })
            {
                state.setSelection(.schema, first)
                state.setScroll(.schema, max(0, first - listHeight(state) / 2))
            }
        case .debug:
            state.setSelection(.debug, 0)
            state.setScroll(.debug, 0)
        case .inspector:
            // The first line with a match comes to the top.
            if case .inspector(var inspector) = state.stack.top, let filter = filterText(state, .inspector) {
                let lines = inspectorLines(inspector.record, width: state.size.width)
                if let first = lines.firstIndex(where: { matches($0.text, filter) }) {
                    inspector.scroll = min(first, max(0, lines.count - listHeight(state)))
                    state.stack.replace(.inspector, with: .inspector(inspector))
                }
            }
        default:
            break
        }
    }

    /// Underlines where `filter` occurs in row `y` (the first occurrence in each row).
    static func highlightMatch(_ screen: inout CellGrid, y: Int, filter: String?) {
        guard let filter, !filter.isEmpty, y >= 0, y < screen.height else { return }
        // Lower-casing keeps the text's characters (and so their columns) for the scripts used here.
        let lowered = screen.line(y).lowercased()
        guard let range = lowered.firstRange(of: filter.lowercased()) else { return }
        let x = TextWidth.width(String(lowered[..<range.lowerBound]))
        let width = TextWidth.width(String(lowered[range]))
        guard x < screen.width else { return }
        screen.restyle(y: y, x: x, width: min(width, Layout(screen).room(after: x))) { $0.with(foreground: .yellow).bolded.underlined }
    }
}
