import CloudKitModels
import TerminalUI

extension Browser {
    public static let minimumWidth = 80
    public static let minimumHeight = 24

    enum Theme {
        static let title = Style(foreground: .white, background: .blue, bold: true)
        static let header = Style(bold: true, underline: true)
        /// The selection bar: reverse video, so the row keeps its own colours (a staged or deleted row
        /// stays recognisable) and works on monochrome terminals. It is also the cheapest bar to move:
        /// on terminals without back-colour erase (tmux, screen) a coloured bar costs a colour change
        /// on and off per row, and reverse video one attribute.
        static func selected(_ style: Style) -> Style { style.reversed }
        static let status = Style(reverse: true)
        static let production = Style(foreground: .white, background: .red, bold: true)
        static let error = Style(foreground: .red, bold: true)
        static let dim = Style(dim: true)
        static let tombstone = Style(foreground: .red, dim: true)
        static let heading = Style(foreground: .cyan, bold: true)
        static let reference = Style(foreground: .cyan)
        static let box = Style(foreground: .yellow)
        static let staged = Style(foreground: .yellow, bold: true)
        /// A marked row's `*` (Space, V, *): apart from the staged marks' yellow and red.
        static let marked = Style(foreground: .cyan, bold: true)
        static let stagedDelete = Style(foreground: .red, bold: true)
        static let was = Style(foreground: .yellow, dim: true)
        static let serverChanged = Style(foreground: .magenta, bold: true)
        static let bothChanged = Style(foreground: .white, background: .red, bold: true)
    }

    /// Marks row `y` as the selection: the bar covers the row's text and one cell after it, not the
    /// blank rest of the line (on terminals without back-colour erase every cell of a bar is written,
    /// so a bar to the edge costs a full row on each move).
    static func highlight(_ screen: inout CellGrid, y: Int) {
        screen.restyle(y: y, width: min(screen.width, screen.contentWidth(y: y) + 1), Theme.selected)
        // The terminal's cursor follows the selection (screen readers and magnifiers follow it).
        screen.cursor = CursorPosition(x: 0, y: y)
    }

    /// Draws the whole frame for the current state.
    public static func render(_ state: BrowserState) -> CellGrid {
        let (screen, hintTop) = renderOnce(state)
        // A message wrapped upwards over the body's last rows would hide the selected row: the list is
        // drawn that many rows further down while the message shows (its own scroll is not changed).
        if let cursor = screen.cursor, cursor.y >= hintTop, cursor.y < Layout(screen).hint, state.modal == nil {
            var shifted = state
            shifted.stack.set(shifted.stack.count - 1, state.stack.top.scrolled(by: cursor.y - hintTop + 1))
            let again = renderOnce(shifted).screen
            if let moved = again.cursor, moved.y < hintTop { return again }
        }
        return screen
    }

    /// The frame, and the first row the hint line's content took (a message wraps upwards over the body).
    static func renderOnce(_ state: BrowserState) -> (screen: CellGrid, hintTop: Int) {
        var screen = CellGrid(width: state.size.width, height: state.size.height)
        let (w, h) = state.size
        guard w >= minimumWidth, h >= minimumHeight else {
            let lines = ["ckbrowse needs a terminal of at least \(minimumWidth)×\(minimumHeight).",
                         "This one is \(w)×\(h): make it larger, or press q to quit."]
            for (i, line) in lines.enumerated() {
                let wrapped = TextWidth.wrap(line, to: max(1, w))
                for (j, part) in wrapped.enumerated() where h / 2 - 1 + i * 2 + j < h {
                    screen.put(part, x: 0, y: max(0, h / 2 - 1 + i * 2 + j))
                }
            }
            return (screen, h)
        }
        drawTitle(&screen, state)
        // Each screen draws itself from its own state (and what is global).
        switch state.stack.top {
        case .zones: drawZones(&screen, state)
        case .records: drawRecords(&screen, state)
        case .detail: drawDetail(&screen, state)
        case .subscriptions: drawSubscriptions(&screen, state)
        case .shares(let shares): drawShares(&screen, shares, state)
        case .schema: drawSchema(&screen, state)
        case .subscriptionDetail(let detail): drawSubscriptionDetail(&screen, detail, state)
        case .requests: drawDebug(&screen, state)
        case .batch: drawBatch(&screen, state)
        case .commit: drawCommit(&screen, state)
        case .conflict: drawConflict(&screen, state)
        case .notifications: drawNotifications(&screen, state)
        case .errors(let scroll): drawErrors(&screen, scroll: scroll, state)
        case .push: drawPush(&screen, state)
        case .inspector(let inspector): drawInspector(&screen, inspector, state)
        }
        if [.records, .recordDetail, .debug, .notifications, .schema].contains(state.pane), let filter = filterText(state, state.pane) {
            // Matches are marked where they are visible (a record may match by a field not shown).
            for y in Layout(width: w, height: h).body { highlightMatch(&screen, y: y, filter: filter) }
        }
        if let editor = state.editor { drawEditor(&screen, editor, state) }
        // The status line first: an error it has no room for is read on the hint line instead.
        let errorInStatus = drawStatus(&screen, state)
        let hintTop = drawHintLine(&screen, state, errorInStatus: errorInStatus)
        if state.showHelp { drawHelp(&screen, state) }
        if let notice = state.signInNotice { drawSignIn(&screen, notice, state) }
        if let legacy = state.legacyJournal { drawLegacyJournal(&screen, legacy, state) }
        // A view with no selection (raw JSON, a request, the preview) keeps the cursor on the hint
        // line, as a pager does.
        if screen.cursor == nil { screen.cursor = CursorPosition(x: 0, y: Layout(screen).hint) }
        return (screen, hintTop)
    }

    static func drawTitle(_ screen: inout CellGrid, _ state: BrowserState) {
        screen.fill(y: 0, style: Theme.title)
        var crumbs = ["ckbrowse"]
        switch state.pane {
        case .zones: crumbs.append("Zones")
        case .records:
            if case .records(let screen) = state.stack.top, let query = screen.query {
                // The query in its zone (room for it before "Zones").
                crumbs += [state.list?.zoneID.zoneName ?? "", ":query " + query.split(separator: " ").dropFirst().joined(separator: " ")]
            } else {
                crumbs += ["Zones", state.list?.zoneID.zoneName ?? ""]
            }
        case .recordDetail: crumbs += [state.list?.zoneID.zoneName ?? state.detail?.zoneID.zoneName ?? "", state.detail?.recordName ?? ""]
        case .subscriptions: crumbs.append("Subscriptions")
        case .shares: crumbs.append("Shares in the \(state.connection.database.rawValue) database")
        case .schema:
            let source: String
            switch state.schema?.origin {
            case .server?: source = " · from the server"
            case .file(let path)?: source = " · from \(path)"
            case .inferred?: source = " · inferred from cached records"
            case nil: source = ""
            }
            crumbs.append("Schema (\(state.connection.environment.rawValue)\(source))")
        case .subscriptionDetail: crumbs += ["Subscriptions", selectedSubscriptionRow(state).map { $0.subscription?.subscriptionID ?? "error" } ?? ""]
        case .debug: crumbs.append("Debug: recent requests")
        case .batch: crumbs.append("Staged batch")
        case .commit: crumbs.append(state.connection.environment == .production ? "Commit to PRODUCTION" : "Commit")
        case .conflict: crumbs.append("Commit › Conflicts")
        case .notifications: crumbs.append("Notifications")
        case .push:
            var what = "push"
            if case .push(let push) = state.stack.top { what = push.item.notification.subscriptionID.map { "push from \($0)" } ?? "push" }
            crumbs += ["Notifications", what]
        case .errors: crumbs.append("Recent errors")
        case .inspector:
            if case .inspector(let inspector) = state.stack.top { crumbs += ["Debug", inspector.record.operation] }
        }
        // Cut with an ellipsis, so a long query's title does not look whole. Measured only when it fills
        // the bar: truncating every frame's title cost a key press 3 % more instructions.
        let crumbsWidth = Layout(screen).crumbsWidth
        let title = " " + crumbs.joined(separator: " › ")
        let used = screen.put(title, x: 0, y: 0, style: Theme.title, maxWidth: crumbsWidth)
        if used >= crumbsWidth - 1, TextWidth.width(title) > used { screen.put("…", x: used - 1, y: 0, style: Theme.title) }
        let right = "? help  q quit "
        screen.put(right, x: Layout(screen).room(after: TextWidth.width(right)), y: 0, style: Theme.title)
    }

    /// Column layout: fixed widths, the first column takes the rest.
    static func columns(_ widths: [Int], total: Int) -> [Int] {
        let fixed = widths.dropFirst().reduce(0, +) + widths.count
        return [max(10, total - fixed)] + widths.dropFirst()
    }

    static func row(_ texts: [String], _ widths: [Int]) -> String {
        zip(texts, widths).map { TextWidth.fit($0, to: $1) }.joined(separator: " ")
    }

    /// A list under a column header. `gutter` columns stand before each row (2 where a staged mark
    /// goes in the first, so it stays apart from the name).
    static func drawList(
        _ screen: inout CellGrid, header: [String], widths: [Int], count: Int, selection: Int, scroll: Int, gutter: Int = 1,
        row rowText: (Int) -> (String, Style)
    ) {
        // A first width of 0 takes what is left; otherwise the widths are used as given.
        let cols = widths.first == 0 ? columns(widths, total: Layout(screen).room(after: gutter)) : widths
        let pad = String(repeating: " ", count: gutter)
        screen.put(pad + row(header, cols), x: 0, y: 1, style: Theme.header)
        let height = Layout(screen).bodyHeight
        for i in 0..<height {
            let index = scroll + i
            guard index < count else { break }
            let (text, style) = rowText(index)
            let y = 2 + i
            screen.put(pad + text, x: 0, y: y, style: style)
            if index == selection { highlight(&screen, y: y) }
        }
    }

    static func drawZones(_ screen: inout CellGrid, _ state: BrowserState) {
        if state.zones.isEmpty {
            screen.put(state.zonesLoading ? " loading zones…" : " no zones", x: 0, y: 2, style: Theme.dim)
            return
        }
        let visible = visibleZones(state)
        let filter = filterText(state, .zones)
        if visible.isEmpty {
            screen.put(" no zone matches the filter (Esc clears it)", x: 0, y: 2, style: Theme.dim)
            return
        }
        // The owner (33 characters) gets what is left after a readable zone name.
        // In the shared database the owner (a name and email, once discovered) is what tells zones apart.
        let ownerWidth = state.connection.database == .shared ? max(14, min(40, Layout(screen).rowWidth / 3)) : max(14, min(34, Layout(screen).rowWidth / 4))
        let widths = [0, ownerWidth, 8, 7, 14]
        let cols = columns(widths, total: Layout(screen).rowWidth)
        let height = Layout(screen).bodyHeight
        // The scroll the keys keep, clamped for a list that shrank since.
        let scroll = min(state.position(.zones).scroll, max(0, visible.count - height))
        let selected = visible.firstIndex(of: state.position(.zones).selection) ?? -1
        drawList(&screen, header: ["ZONE", "OWNER", "KIND", "ATOMIC", "SYNC TOKEN"], widths: widths, count: visible.count,
                 selection: selected, scroll: scroll) { i in
            switch state.zones[visible[i]] {
            case .zone(let zone):
                let kind = zone.zoneID.isDefaultZone ? "default" : "custom"
                let key = state.connection.zone(zone.zoneID)
                var cached = state.cachedZones.contains(key) ? "cached" : "—"
                let staged = state.staged.operations.filter { $0.zone == key }.count
                if staged > 0 { cached = "\(staged) staged" }
                if state.staged.zoneOperations.contains(where: { $0.zone == key && $0.kind == .delete }) {
                    return (row(["✝ " + zone.zoneID.zoneName, ownerName(state, zone.zoneID), kind, zone.atomic == true ? "yes" : "no", "DELETE staged"], cols), Theme.stagedDelete)
                }
                return (row([zone.zoneID.zoneName, ownerName(state, zone.zoneID), kind, zone.atomic == true ? "yes" : "no", cached], cols), staged > 0 ? Theme.staged : .plain)
            case .failure(let error):
                return (row([error.zoneID?.zoneName ?? "?", error.serverErrorCode.rawValue, error.reason ?? "", "", ""], cols), Theme.error)
            }
        }
        for y in Layout(screen).body.lowerBound..<min(Layout(screen).body.upperBound, 2 + visible.count - scroll) { highlightMatch(&screen, y: y, filter: filter) }
        // Zones staged for creation in this database, under the list (they exist once committed).
        var y = 2 + min(visible.count - scroll, height)
        let creates = state.staged.zoneOperations.filter { $0.kind == .create && $0.zone.scope == state.connection.scope }
        for op in creates where y < Layout(screen).body.upperBound {
            screen.put(" " + row(["+ " + op.zone.zoneID.zoneName, op.zone.zoneID.ownerRecordName ?? "", "custom", "", "CREATE staged"], cols), x: 0, y: y, style: Theme.staged)
            y += 1
        }
    }

    /// A zone's owner as people read it: their discovered name (and email) when known, else the
    /// record name.
    static func ownerName(_ state: BrowserState, _ zoneID: ZoneID) -> String {
        guard let owner = zoneID.ownerRecordName else { return "" }
        return userName(owner, state)
    }

    /// A user record name as people read it: `you` for the signed-in user (CloudKit's
    /// `__defaultOwner__` too), a discovered user's name and email, else the record name itself.
    static func userName(_ recordName: String, _ state: BrowserState) -> String {
        if recordName == state.connection.account.identity.userRecordName || recordName == "__defaultOwner__" {
            return state.userNames[recordName].map { "\($0) (you)" } ?? "you"
        }
        return state.userNames[recordName] ?? recordName
    }

    static func drawRecords(_ screen: inout CellGrid, _ state: BrowserState) {
        guard let list = state.list else { return }
        if list.matching == 0 {
            let empty: String
            if list.loading || !list.opened {
                empty = "loading…"
            } else if state.filter != nil {
                empty = list.moreComing ? "no loaded record matches the filter (G loads the rest · Esc clears the filter)" : "no record matches the filter (Esc clears it)"
            } else if case .records(let records) = state.stack.top, records.query != nil {
                empty = "no record matches the query (Esc goes back)"
            } else if list.source == .awaitingQuery {
                // Not "no records": the default zone may hold many, and only a query lists them.
                empty = "the default zone has no change feed: :query TYPE [FIELD COMPARATOR VALUE] lists its records (n makes one)"
            } else {
                empty = "no records in this zone (n makes one)"
            }
            drawNote(&screen, empty, y: 2)
            // The default zone's hint is the note above: not twice.
            if let message = state.message, list.total == 0, state.report.notice != .defaultZoneHasNoFeed {
                // Wrapped, never cut: it tells a new user what to type next.
                for (i, row) in TextWidth.wrap(message, to: Layout(screen).textWidth).prefix(Layout(screen).noteRows).enumerated() {
                    screen.put(" " + row, x: 0, y: 4 + i, maxWidth: Layout(screen).rowWidth)
                }
            }
        }
        // Chosen columns, else one column of each type's label field (ListView.labelField) (named after those fields).
        let labelNames = Set(list.view.labels.values.filter { !$0.isEmpty }).sorted()
        let fields = list.view.columns.map { Array($0.prefix(4)) } ?? (labelNames.isEmpty ? [] : [labelNames.joined(separator: "/")])
        if !fields.isEmpty {
            // Chosen fields (or the type's label field) between the name and the type, so
            // records can be told apart by their content; the sort column says its direction.
            // Columns as wide as what the window holds (within limits), so rows are packed to the left
            // and the selection bar does not run over blank cells (each one is written in reverse).
            var seen = RecordSummary.contentWidths(list.window, columns: fields.count)
            if list.seenWidths.count == seen.count { seen = zip(seen, list.seenWidths).map { max($0, $1) } }
            let nameWidth = min(40, max(12, seen[0] + 1))
            let fieldWidths = fields.indices.map { i in min(28, max(TextWidth.width(fields[i]) + 2, seen[1 + i] + 1)) }
            let typeWidth = min(16, max(5, seen[fields.count + 1] + 1))
            var widths = [nameWidth] + fieldWidths + [typeWidth, 16]
            let room = Layout(screen).room(after: 2 + widths.count)
            if widths.reduce(0, +) > room { widths = [0] + fieldWidths.map { min($0, 20) } + [typeWidth, 16] }
            let cols = widths[0] == 0 ? columns(widths, total: Layout(screen).innerWidth) : widths
            let headers = fields.map { name -> String in
                guard let sort = list.view.sort, sort.field == name else { return name.uppercased() }
                return name.uppercased() + (sort.descending ? " ↓" : " ↑")
            }
            drawList(&screen, header: ["RECORD NAME"] + headers + ["TYPE", "MODIFIED"], widths: widths, count: list.matching,
                     selection: list.selection, scroll: list.scroll, gutter: 2) { i in
                guard let record = list.row(i) else { return (" …", Theme.dim) }
                if record.deleted {
                    return (row(["✝ " + record.recordName] + fields.map { _ in "" } + [record.recordType ?? "", "deleted"], cols), Theme.tombstone)
                }
                let values = fields.indices.map { record.columns.indices.contains($0) ? record.columns[$0] : "" }
                return (row([record.recordName] + values + [record.recordType ?? "", Format.short(record.modified)], cols), .plain)
            }
        } else {
            let widths = [0, 14, 16, 14, 10]
            let cols = columns(widths, total: Layout(screen).innerWidth)
            drawList(&screen, header: ["RECORD NAME", "TYPE", "MODIFIED", "MODIFIED BY", "CHANGE TAG"], widths: widths, count: list.matching,
                     selection: list.selection, scroll: list.scroll, gutter: 2) { i in
                guard let record = list.row(i) else { return (" …", Theme.dim) }
                if record.deleted {
                    return (row(["✝ " + record.recordName, record.recordType ?? "", "deleted", "", ""], cols), Theme.tombstone)
                }
                // A name as known; a bare record name cut as before (its start tells users apart).
                let by = record.modifiedBy.map { raw in
                    let name = userName(raw, state)
                    return name == raw ? String(raw.prefix(13)) : name
                } ?? ""
                return (row([record.recordName, record.recordType ?? "", Format.short(record.modified), by, record.changeTag ?? ""], cols), .plain)
            }
        }
        drawStageMarks(&screen, state, zone: list.zone, first: list.scroll, count: min(list.matching - list.scroll, Layout(screen).bodyHeight)) { list.row($0)?.recordName }
        drawMarks(&screen, state, list: list)
    }

    /// A marked record shows `*` in the gutter's second column (the first is the staged N/M/D mark,
    /// so a marked row staged for deletion reads `D*`).
    static func drawMarks(_ screen: inout CellGrid, _ state: BrowserState, list: RecordList) {
        let marks = Self.marks(state)
        guard !marks.isEmpty else { return }
        for i in 0..<max(0, min(list.matching - list.scroll, Layout(screen).bodyHeight)) {
            guard let name = list.row(list.scroll + i)?.recordName, marks.contains(name) else { continue }
            screen.put("*", x: 1, y: 2 + i, style: Theme.marked)
        }
    }

    static func drawDetail(_ screen: inout CellGrid, _ state: BrowserState) {
        guard let detail = state.detail else { return }
        if detail.loading && detail.record == nil {
            screen.put(" looking up \(detail.recordName)…", x: 0, y: 2, style: Theme.dim)
            return
        }
        if let error = detail.error, detail.record == nil {
            screen.put(" " + error.message, x: 0, y: 2, style: Theme.error, maxWidth: Layout(screen).innerWidth)
            return
        }
        let layout = Layout(width: screen.width, height: screen.height)
        guard let page = detailPage(state) else { return }
        let lines = page.lines
        if detail.showRaw {
            screen.put(" RAW JSON as received: keys, order and values unchanged, re-indented — v: table", x: 0, y: layout.header, style: Theme.header)
            for (i, y) in layout.body.enumerated() where detail.scroll + i < lines.count {
                // Text with no selection: the keys scroll it.
                screen.put(" " + lines[detail.scroll + i].text, x: 0, y: y)
            }
            return
        }
        let nameWidth = Layout.detailNameWidth, typeWidth = Layout.detailTypeWidth
        let valueWidth = layout.detailValueWidth
        screen.put(" " + row(["FIELD", "TYPE", "VALUE"], [nameWidth, typeWidth, valueWidth]), x: 0, y: layout.header, style: Theme.header)
        // Each logical line wraps to the rows `page` counted; the selection is per logical line.
        var y = layout.body.lowerBound
        var index = detail.scroll
        while y < layout.body.upperBound, index < lines.count {
            let line = lines[index]
            if line.isHeading {
                screen.put(" \(line.field) \(line.text)", x: 0, y: y, style: line.mark == .deleted ? Theme.stagedDelete : Theme.heading)
            } else {
                let wrapped = TextWidth.wrap(line.text, to: valueWidth)
                let valueStyle: Style
                switch line.mark {
                case .changed?: valueStyle = Theme.staged
                case .was?: valueStyle = Theme.was
                case .cleared?: valueStyle = Theme.stagedDelete
                default: valueStyle = line.reference != nil ? Theme.reference : .plain
                }
                for (j, part) in wrapped.enumerated() where y < layout.body.upperBound {
                    let left = j == 0 ? row([line.field, line.type], [nameWidth, typeWidth]) : String(repeating: " ", count: nameWidth + typeWidth + 1)
                    screen.put(" " + left + " ", x: 0, y: y)
                    if j == 0, line.mark == .changed || line.mark == .cleared, !line.field.isEmpty { screen.put("●", x: 0, y: y, style: valueStyle) }
                    screen.put(part, x: layout.detailValueX, y: y, style: valueStyle)
                    if index == detail.selection { highlight(&screen, y: y) }
                    if j < wrapped.count - 1 { y += 1 }
                }
            }
            y += 1
            index += 1
        }
    }

    static func drawSubscriptions(_ screen: inout CellGrid, _ state: BrowserState) {
        let rows = subscriptionList(state)
        if rows.isEmpty {
            let text = state.subscriptionsLoading ? "loading subscriptions…" : "no subscriptions in the \(state.connection.database.rawValue) database (n makes one)"
            drawNote(&screen, text, y: 2)
            return
        }
        let visible = visibleSubscriptions(state)
        let filter = filterText(state, .subscriptions)
        if visible.isEmpty {
            screen.put(" no subscription matches the filter (Esc clears it)", x: 0, y: 2, style: Theme.dim)
            return
        }
        // WATCHES is as wide as its widest type or zone: the rest goes to the IDs, which were cut
        // ("first-new-exhibi…") beside a half-empty column.
        // (A refused one's error code stands there.)
        let watched = rows.map { row -> String in
            if case .listed(.failure(let e), _) = row { return e.serverErrorCode.rawValue }
            return row.subscription.map { $0.query?.recordType ?? $0.zoneID?.zoneName ?? "" } ?? ""
        }
        let widths = [0, 8, min(24, max(7, watched.map(TextWidth.width).max() ?? 0)), 20, 4, 8]
        let cols = columns(widths, total: Layout(screen).rowWidth)
        let height = Layout(screen).bodyHeight
        let scroll = min(state.position(.subscriptions).scroll, max(0, visible.count - height))
        drawList(&screen, header: ["SUBSCRIPTION ID", "TYPE", "WATCHES", "FIRES ON", "ONCE", "STAGED"], widths: widths,
                 count: visible.count, selection: visible.firstIndex(of: state.position(.subscriptions).selection) ?? -1, scroll: scroll) { i in
            let row = rows[visible[i]]
            if case .listed(.failure(let e), _) = row {
                return (self.row([e.subscriptionID ?? "?", "error", e.serverErrorCode.rawValue, e.reason ?? "", "", ""], cols), Theme.error)
            }
            guard let s = row.subscription else { return ("", .plain) }
            let target = s.query?.recordType ?? s.zoneID?.zoneName ?? ""
            let fires = (s.firesOn ?? []).map(\.rawValue).joined(separator: ",")
            let (word, style) = subscriptionState(row)
            return (self.row([s.subscriptionID ?? "", s.subscriptionType.rawValue, target, fires, s.firesOnce == true ? "yes" : "", word], cols), style)
        }
        for y in Layout(screen).body.lowerBound..<min(Layout(screen).body.upperBound, 2 + visible.count - scroll) { highlightMatch(&screen, y: y, filter: filter) }
    }

    /// The STAGED column of a subscription row and the row's colour.
    static func subscriptionState(_ row: SubscriptionRow) -> (String, Style) {
        switch row {
        case .fired: return ("fired·R", Theme.dim)
        case .listed(_, nil): return ("", .plain)
        case .listed(_, let op?), .new(let op):
            if op.failure != nil { return ("refused", Theme.error) }
            switch op.kind {
            case .create: return (op.recreatesFired ? "again" : "new", Theme.staged)
            case .update: return ("changed", Theme.staged)
            case .delete: return ("delete", Theme.stagedDelete)
            }
        }
    }

    static func drawShares(_ screen: inout CellGrid, _ list: SharesScreen, _ state: BrowserState) {
        let shares = list.shares.value
        if shares.isEmpty {
            let text = list.shares.loading ? "loading shares…" : (state.connection.database == .shared
                ? "nothing is shared with you here (:accept URL accepts a share)" : "nothing shared in this database (:share in a record or a zone's list shares it)")
            drawNote(&screen, text, y: 2)
            return
        }
        let widths = [0, 30, 10, 16, 10]
        let cols = columns(widths, total: Layout(screen).rowWidth)
        let scroll = min(list.position.scroll, max(0, shares.count - Layout(screen).bodyHeight))
        drawList(&screen, header: ["ZONE", "SHARES", "PUBLIC", "PARTICIPANTS", "YOU"], widths: widths, count: shares.count,
                 selection: list.position.selection, scroll: scroll) { i in
            (row(shareRow(shares[i], state), cols), .plain)
        }
    }

    static func drawSchema(_ screen: inout CellGrid, _ state: BrowserState) {
        let rows = schemaRows(state)
        guard !rows.isEmpty else {
            let text = state.schemaLoading ? "loading the schema…" : "no schema known yet (r loads it; :schema load FILE reads a .ckdb file)"
            drawNote(&screen, text, y: 2)
            return
        }
        // Names and types as wide as the longest (within reason); indexes fit their longest spelling;
        // the record count takes what is left.
        let nameWidth = min(30, max(19, rows.filter { $0.kind != .grants }.map { TextWidth.width($0.cells[0]) }.max() ?? 0))
        let typeWidth = min(24, max(6, rows.filter { $0.kind == .field }.map { TextWidth.width($0.cells[1]) }.max() ?? 0))
        let indexWidth = 29
        let rest = max(8, Layout(screen).room(after: 1 + nameWidth + typeWidth + indexWidth + 4))
        let widths = [nameWidth, typeWidth, indexWidth, rest]
        let cols = widths
        let height = listHeight(state)
        let scroll = min(state.position(.schema).scroll, max(0, rows.count - height))
        drawList(&screen, header: ["RECORD TYPE / FIELD", "TYPE", "INDEXES", "RECORDS"], widths: widths, count: rows.count,
                 selection: state.position(.schema).selection, scroll: scroll) { i in
            let row = rows[i]
            let cells = row.kind == .grants ? [row.cells[0], row.cells[1]] : row.cells
            let widthsHere = row.kind == .grants ? [cols[0], cols[1] + cols[2] + cols[3] + 2] : cols
            return (self.row(cells, widthsHere), row.kind == .type ? Theme.heading : (row.kind == .grants ? Theme.dim : .plain))
        }
    }

    /// A subscription's detail as drawn: its lines wrapped to the screen (the keys scroll these).
    static func subscriptionRows(_ state: BrowserState, raw: Bool) -> [String] {
        let width = Layout(state).textWidth
        return subscriptionLines(state, raw: raw).flatMap { TextWidth.wrap($0, to: width) }
    }

    static func drawSubscriptionDetail(_ screen: inout CellGrid, _ detail: SubscriptionDetailScreen, _ state: BrowserState) {
        let layout = Layout(state)
        let lines = subscriptionRows(state, raw: detail.raw)
        let scroll = clampedScroll(detail.scroll, count: lines.count, height: layout.pageHeight)
        for (i, y) in layout.page.enumerated() where scroll + i < lines.count {
            screen.put(" " + lines[scroll + i], x: 0, y: y)
        }
    }

    static func drawDebug(_ screen: inout CellGrid, _ state: BrowserState) {
        let records = visibleRequests(state)
        func status(_ r: RequestRecord) -> String { (r.status.map(String.init) ?? "failed") + (r.serverErrorCode.map { " \($0.rawValue)" } ?? "") }
        // Each column as wide as what it holds; the operation's name first (at 80 columns it was cut to
        // "records/l…" beside a STATUS column sized for one long error code), STATUS next, cut last.
        func widest(_ texts: [String], least: Int) -> Int { max(least, texts.map(TextWidth.width).max() ?? 0) }
        let verbWidth = widest(records.map(\.method.rawValue), least: 4)
        let msWidth = widest(records.map { String(Int($0.duration * 1000)) }, least: 4)
        let bytesWidth = widest(records.map { "\($0.bytesSent)/\($0.bytesReceived)" }, least: 12)
        let room = Layout(screen).room(after: 1) - (8 + verbWidth + 8 + 3 + msWidth + bytesWidth) - 8
        let operationWidth = min(28, widest(records.map(\.operation), least: 9))
        let statusWidth = min(widest(records.map(status), least: 6), max(6, room - operationWidth))
        let widths = [0, 8, verbWidth, 8, statusWidth, 3, msWidth, bytesWidth]
        let cols = columns(widths, total: Layout(screen).room(after: 1))
        let height = Layout(screen).bodyHeight
        let scroll = min(state.position(.debug).scroll, max(0, records.count - height))
        drawList(&screen, header: ["OPERATION", "TIME", "VERB", "DATABASE", "STATUS", "TRY", "MS", "BYTES OUT/IN"], widths: widths,
                 count: records.count, selection: state.position(.debug).selection, scroll: scroll) { i in
            let r = records[i]
            let time = r.exchange.map { clock($0.at) } ?? ""
            return (row([r.operation, time, r.method.rawValue, r.database?.rawValue ?? "device", status(r),
                         String(r.attempt), String(Int(r.duration * 1000)), "\(r.bytesSent)/\(r.bytesReceived)"], cols),
                    (r.status ?? 500) >= 400 ? Theme.error : .plain)
        }
    }

    static func drawInspector(_ screen: inout CellGrid, _ inspector: InspectorScreen, _ state: BrowserState) {
        let record = inspector.record
        let layout = Layout(width: screen.width, height: screen.height)
        let lines = inspectorLines(record, width: screen.width)
        screen.put(" \(record.operation) · secrets redacted", x: 0, y: layout.header, style: Theme.header)
        let scroll = min(inspector.scroll, max(0, lines.count - layout.bodyHeight))
        for (i, y) in layout.body.enumerated() where scroll + i < lines.count {
            let line = lines[scroll + i]
            screen.put(" " + line.text, x: 0, y: y, style: style(line.tone))
        }
        if let filter = filterText(state, .inspector) { for y in layout.body { highlightMatch(&screen, y: y, filter: filter) } }
    }

    /// The current screen's main keys, most used first (`?` lists every key).
    static func hints(_ state: BrowserState) -> [String] {
        switch state.pane {
        case .zones: return ["Enter open", "1 public 2 private 3 shared", "s subscriptions", "r refresh", "D debug", ": command"]
        case .records: return ["Enter open", "/ filter", "r refresh", "G all", "d delete", "u unstage", "b batch"]
        case .recordDetail: return ["e edit", "a add", "x clear", "E $EDITOR", "d delete", "u/U unstage field/record", "b batch", "c commit", "v raw"]
        case .subscriptions: return ["Enter details", "n new", "E edit", "d delete", "u unstage", "R re-create"]
        case .shares: return ["Enter open the share", "r refresh", "z zones", "Esc back"]
        case .schema: return ["Enter query the type / filter by the field", "r reload", ":schema load FILE"]
        case .subscriptionDetail: return ["j/k scroll", "E edit", "d delete", "u unstage", "v raw JSON", "y copy", "Esc back"]
        case .debug: return ["Enter inspect the exchange", "/ filter", "D or Esc back", "tokens are never shown"]
        case .batch: return ["u unstage", "X discard all", "Enter open", "c commit", "Esc back"]
        case .commit, .conflict: return []
        case .notifications: return ["Enter the push in full", "o open its record", "y copy", "R refresh the zone", "X clear", "Esc back"]
        case .push: return ["j/k scroll", "y copy the payload", "o open its record or zone", "Esc back"]
        case .errors: return ["j/k scroll", "X clear", "! or Esc back"]
        case .inspector: return ["j/k scroll", "/ search", "n N next/previous match", "y copy (redacted)", "Esc back"]
        }
    }

    /// The hints that fit in `width` columns: whole ones, from the first; when some do not fit, `? more`
    /// ends the line (the help lists them all), never a hint cut in half.
    static func fittedHints(_ hints: [String], width: Int) -> String {
        let all = hints.joined(separator: " · ")
        if TextWidth.width(all) <= width { return all }
        var kept = hints
        while !kept.isEmpty, TextWidth.width((kept + ["? more"]).joined(separator: " · ")) > width { kept.removeLast() }
        return TextWidth.truncate((kept + ["? more"]).joined(separator: " · "), to: width)
    }

    static func drawErrors(_ screen: inout CellGrid, scroll: Int, _ state: BrowserState) {
        let layout = Layout(width: screen.width, height: screen.height)
        let lines = errorLines(state, width: screen.width)
        guard !lines.isEmpty else {
            screen.put(" No errors this session.", x: 0, y: layout.header, style: Theme.dim)
            return
        }
        screen.put(" \(Format.plural(state.errorLog.count, "error")), newest first", x: 0, y: layout.header, style: Theme.header)
        let scroll = min(scroll, max(0, lines.count - layout.bodyHeight))
        for (i, y) in layout.body.enumerated() where scroll + i < lines.count {
            let line = lines[scroll + i]
            screen.put(" " + line.text, x: 0, y: y, style: line.tone == .emphasis ? Theme.error : .plain)
        }
    }

    /// `errorInStatus`: false when the last error did not fit in the status line (then, with nothing
    /// else to show here, it is shown here in full, wrapped).
    /// Answers the first row its content took (a message wraps upwards over the body).
    @discardableResult
    static func drawHintLine(_ screen: inout CellGrid, _ state: BrowserState, errorInStatus: Bool) -> Int {
        let y = Layout(screen).hint
        var top = y
        if let confirmation = state.confirmation {
            switch confirmation {
            case .abortConflicts:
                top = putUpward(&screen, "Abort the commit and drop the resolutions chosen so far? Nothing was applied. y aborts · any other key returns", style: Theme.error)
            case .discardAll:
                let n = state.staged.operations.count
                top = putUpward(&screen, "Discard \(n == 1 ? "the staged operation" : "all \(Format.plural(n, "staged operation"))")? y discards · any other key keeps \(Format.agree(n, "it", "them"))", style: Theme.error)
            case .refusedQuery(_, _, let reason):
                top = putUpward(&screen, "CloudKit will refuse this query: \(reason). y sends it anyway · any other key edits it", style: Theme.error, maxRows: 4)
            }
        } else if let prompt = commitPrompt(state) {
            // Prompts wrap rather than lose their last keys at 80 columns.
            top = putUpward(&screen, String(prompt.text.drop(while: { $0 == " " })), style: prompt.style, caretAtEnd: prompt.caret)
        } else if let input = state.input {
            if let hint = input.refusal.map(Browser.words) ?? input.hint {
                // Why the text was refused, or Tab's candidates (or why there are none), stand above
                // the line, wrapped.
                let style = input.refused ? Theme.error : Theme.dim
                var rows = TextWidth.wrap(hint, to: Layout(screen).textWidth)
                if rows.count > 3 { rows = Array(rows.prefix(3)); rows[2] = TextWidth.truncate(rows[2] + " …", to: Layout(screen).innerWidth) }
                top = y - rows.count
                for (i, row) in rows.enumerated() {
                    let line = y - rows.count + i
                    screen.fill(y: line, style: style)
                    screen.put(" " + row, x: 0, y: line, style: style, maxWidth: Layout(screen).rowWidth)
                }
            }
            // The terminal's cursor at the caret; a line longer than the screen scrolls to keep it in
            // view. Selected text (typing replaces it) in reverse video.
            let line = Caret.row(prompt: input.prompt, text: input.characters, cursor: input.cursor, width: screen.width,
                                 textStyle: input.selected ? Style(reverse: true) : .plain)
            screen.fill(y: y, style: .plain)
            Caret.draw(line.pieces, on: &screen, x: 0, y: y)
            screen.cursor = CursorPosition(x: line.caret, y: y)
        } else if let message = state.message {
            // A long message wraps upwards over the body (up to 4 rows), so it can be read in full.
            top = putUpward(&screen, message, style: .plain, maxRows: 4, more: " (! shows all)")
        } else if !errorInStatus, let error = state.lastError {
            top = putUpward(&screen, shortForm(error), style: Theme.error, maxRows: 3, more: " (! shows all)")
        } else {
            screen.put(" " + fittedHints(hints(state), width: Layout(screen).innerWidth), x: 0, y: y, style: Theme.dim)
        }
        return top
    }

    /// Text on the hint line that wraps upwards over the body (up to `maxRows` rows) instead of being
    /// cut; what does not fit ends in an ellipsis and `more`.
    /// `caretAtEnd`: the text is being typed; the cursor stands after it.
    @discardableResult
    static func putUpward(_ screen: inout CellGrid, _ text: String, style: Style, maxRows: Int = 3, more: String = "", caretAtEnd: Bool = false) -> Int {
        let y = Layout(screen).hint
        var rows = TextWidth.wrap(caretAtEnd ? text + String(Caret.mark) : text, to: Layout(screen).textWidth)
        var caret: (row: Int, column: Int)?
        if caretAtEnd, let found = Caret.unmark(rows, before: Caret.marksBefore(Array(text), cursor: text.count)) {
            rows = found.rows
            caret = (found.row, found.column)
        }
        if rows.count > maxRows {
            rows = Array(rows.prefix(maxRows))
            rows[maxRows - 1] = TextWidth.truncate(rows[maxRows - 1] + " …", to: Layout(screen).room(after: 2 + TextWidth.width(more))) + more
        }
        for (i, row) in rows.enumerated() {
            let line = y - (rows.count - 1) + i
            screen.fill(y: line, style: .plain)
            screen.put(" " + row, x: 0, y: line, style: style, maxWidth: Layout(screen).rowWidth)
        }
        if let caret {
            let row = min(caret.row, rows.count - 1)
            let column = row == caret.row ? caret.column : TextWidth.width(rows[row])
            screen.cursor = CursorPosition(x: min(1 + column, Layout(screen).rowWidth), y: y - (rows.count - 1) + row)
        }
        return y - (rows.count - 1)
    }

    /// [server ›] container · environment (production in red) · database · zone · counts │ last error.
    /// When the row is too narrow the container name gives way first, then the error.
    /// Answers whether the last error, if any, was shown.
    @discardableResult
    static func drawStatus(_ screen: inout CellGrid, _ state: BrowserState) -> Bool {
        let y = Layout(screen).status
        screen.fill(y: y, style: Theme.status)
        let c = state.connection
        var parts = [c.database.rawValue]
        // What is staged is not sent yet: said before the counts, which a narrow bar cuts first.
        let staged = state.staged.isEmpty ? nil : "\(Format.count(state.staged.count)) staged"
        var deletedCount = ""
        if let list = state.list, [.records, .recordDetail].contains(state.pane) {
            parts.append(list.zoneID.zoneName)
            if let staged { parts.append(staged) }
            // Marks before the counts: a narrow status bar cuts from the end, and marks are what a
            // bulk d, :set or :export acts on.
            if state.pane == .records, case let marked = marks(state).count, marked > 0 { parts.append("\(Format.count(marked)) marked") }
            var counts = "\(Format.count(list.total)) loaded"
            if list.deleted > 0 {
                deletedCount = " (\(Format.count(list.deleted)) deleted)"
                counts += deletedCount
            }
            // The filter's matches are the list's: not said over an open record.
            if state.filter != nil, state.pane == .records { counts += " · \(Format.count(list.matching)) match\(list.matching == 1 ? "" : "es")" }
            if list.loading { counts += " · loading" }
            if list.moreComing && list.source != .awaitingQuery { counts += " · more coming" }
            parts.append(counts)
        } else if state.pane == .zones {
            let shown = filterText(state, .zones) == nil ? "" : "\(visibleZones(state).count) of "
            parts.append(shown + Format.plural(state.zones.count, "zone"))
        } else if state.pane == .subscriptions || state.pane == .subscriptionDetail {
            let shown = filterText(state, .subscriptions) == nil ? "" : "\(visibleSubscriptions(state).count) of "
            parts.append(shown + Format.plural(subscriptionList(state).count, "subscription"))
        } else if state.pane == .debug, filterText(state, .debug) != nil {
            parts.append("\(visibleRequests(state).count) of " + Format.plural(state.requests.count, "request"))
        }
        if let staged, !parts.contains(staged) { parts.append(staged) }
        if state.notifications.isDisconnected { parts.append("pushes: disconnected") }
        if state.readOnlyReason != nil { parts.append("read-only") }
        var tail = " · " + parts.joined(separator: " · ") + " "
        // The server, whenever it is not Apple's: the same container ID lives on several servers.
        let server = c.server.isAppleDefault ? "" : TextWidth.truncate(c.server.displayName, to: 22) + " › "
        // Development is the usual case and may shorten; production is always said in full (in red).
        var environment = c.environment.rawValue
        func fixed() -> Int { TextWidth.width(server) + TextWidth.width(environment) + TextWidth.width(tail) + 4 }
        if fixed() + 10 > screen.width {
            // Narrow: shorter words before anything is cut (the container keeps at least 10 cells).
            tail = tail.replacing(" · more coming", with: " · more…").replacing(" loaded", with: "")
        }
        if fixed() + 10 > screen.width {
            // Narrower still: "200+" says more are coming in one cell.
            tail = tail.replacing(" · more…", with: "+")
        }
        if fixed() + 10 > screen.width, c.environment == .development { environment = "dev" }
        if fixed() + 10 > screen.width, !deletedCount.isEmpty {
            // The filter's match count matters more than how many of the loaded rows are tombstones.
            tail = tail.replacing(deletedCount, with: "")
        }
        let layout = Layout(screen)
        // The container gives way before the counts (down to 6 cells: "iClou…").
        let container = TextWidth.truncate(c.container, to: max(fixed() + 10 > screen.width ? 6 : 8, layout.room(after: fixed())))
        var x = screen.put(" \(server)\(container) · ", x: 0, y: y, style: Theme.status)
        x += screen.put(environment, x: x, y: y, style: c.environment == .production ? Theme.production : Theme.status)
        // Whatever still does not fit ends in an ellipsis, never mid-word without one.
        let room = Layout(screen).room(after: x)
        x += screen.put(TextWidth.width(tail) <= room ? tail : TextWidth.truncate(tail, to: max(1, room - 1)) + " ", x: x, y: y, style: Theme.status)
        guard let error = state.lastError else { return true }
        guard layout.room(after: x) > 4 else { return false }
        let short = shortForm(error)
        let errorRoom = layout.room(after: x + 3)  // "│ " before, one cell spare after
        let text = TextWidth.width(short) <= errorRoom ? short : TextWidth.truncate(short, to: max(4, errorRoom - 4)) + " (!)"
        screen.put("│ " + text, x: x, y: y, style: Theme.status.with(foreground: .red).bolded)
        return true
    }

    /// An error's short form: its code and reason when the server gave one, else its message; `!`
    /// shows every error in full.
    static func shortForm(_ error: BrowserFailure) -> String {
        error.serverErrorCode.map { $0.rawValue + (error.error?.reason.map { ": " + $0 } ?? "") } ?? error.message
    }

    /// A centred box of `lines`, as wide as the widest of `measuring` (default: `lines`). A blank column
    /// on each side keeps what is under it from touching its border.
    static func box(_ screen: inout CellGrid, title: String, lines: [String], measuring: [String]? = nil) {
        let layout = Layout(screen)
        let wanted = max(TextWidth.width(title), (measuring ?? lines).map(TextWidth.width).max() ?? 0) + 4
        let textWidth = layout.centredBox(contentWidth: wanted, contentRows: 0).textWidth
        let wrapped = lines.flatMap { hangingWrap($0, to: textWidth) }
        let rect = layout.centredBox(contentWidth: wanted, contentRows: wrapped.count + 2)
        for row in 0..<rect.height { screen.fill(x: rect.x - 1, y: rect.y + row, width: rect.width + 2, style: .plain) }
        drawBox(&screen, rect, title: title, rows: wrapped.map { ($0, Style.plain) })
    }

    /// A note where a list would be (why it is empty, what makes it fill), wrapped so it is read whole.
    static func drawNote(_ screen: inout CellGrid, _ text: String, y: Int, style: Style = Theme.dim) {
        let rows = TextWidth.wrap(text, to: Layout(screen).textWidth)
        for (i, row) in rows.enumerated() { screen.put(" " + row, x: 0, y: y + i, style: style) }
    }

    /// A bordered box with a title in its top border and `rows` inside (as many as fit).
    static func drawBox(_ screen: inout CellGrid, _ rect: Rect, title: String, rows: [(String, Style)]) {
        guard rect.height >= 2, rect.width >= 4 else { return }
        screen.put(rect.border("┌", "┐"), x: rect.x, y: rect.y, style: Theme.box)
        screen.put(" \(title) ", x: rect.x + 2, y: rect.y, style: Theme.box.bolded)
        for row in stride(from: 1, through: rect.innerRows, by: 1) {
            screen.put("│", x: rect.x, y: rect.y + row, style: Theme.box)
            screen.put("│", x: rect.right, y: rect.y + row, style: Theme.box)
            if row - 1 < rows.count { screen.put(rows[row - 1].0, x: rect.x + 2, y: rect.y + row, style: rows[row - 1].1, maxWidth: rect.textWidth) }
        }
        screen.put(rect.border("└", "┘"), x: rect.x, y: rect.bottom, style: Theme.box)
        // The cursor at the box's text (what the keys act on now).
        if rect.innerRows > 0 { screen.cursor = CursorPosition(x: rect.x + 2, y: rect.y + 1) }
    }

    /// Wraps a "key   description" line so its continuation lines start under the description.
    static func hangingWrap(_ line: String, to columns: Int) -> [String] {
        let rows = TextWidth.wrap(line, to: columns)
        guard rows.count > 1 else { return rows }
        // The description starts after the first run of two or more spaces (within the key column).
        let chars = Array(line)
        var indent = chars.prefix(while: { $0 == " " }).count
        if let gap = (indent..<max(indent, chars.count - 1)).first(where: { chars[$0] == " " && chars[$0 + 1] == " " }), gap < 20 {
            indent = gap + (chars[gap...].prefix(while: { $0 == " " }).count)
        }
        guard indent > 0, indent < columns / 2 else { return rows }
        let rest = String(line.dropFirst(rows[0].count)).drop(while: { $0 == " " })
        let pad = String(repeating: " ", count: indent)
        return [rows[0]] + TextWidth.wrap(String(rest), to: columns - indent).map { pad + $0 }
    }

    /// Every key of the current screen: its own keys first, then those that work everywhere. The
    /// commit and conflict screens take every key, so they list only their own.
    public static func helpLines(_ state: BrowserState) -> [String] {
        let everywhere = [
            "j k ↓ ↑       move            PgDn PgUp  page",
            "g G           first / last    Enter      open",
            "Esc h         back            q Ctrl-C   quit",
            "s             subscriptions   z          zones",
            "Tab           next pane (zones → records → subscriptions)",
            ":             command line    ?          this help",
            "/             filter what is listed (n N next / previous, Esc clears)",
            "!             recent errors in full (code, reason, request uuid, time)",
            "b             staged batch    c          commit (preview first)",
            "N             notifications (/ filter on: previous match)  D requests",
            "",
            ":db public|private|shared   :open RECORD   :schema   :q",
            ":share this record/zone   :shares all shared   :accept URL",
        ]
        var own: [String] = []
        switch state.pane {
        case .zones:
            own = ["1 2 3         public / private / shared database", "r             reload zones",
                   "n             a new zone    d   delete the zone (its name typed)    u   unstage"]
        case .records:
            own = ["/             filter by name, type or any field value in the local cache",
                   "r             fetch changes since the last sync token",
                   "G             load to the end (Esc stops)", "y             copy the record as JSON (OSC 52)",
                   ":query TYPE [FIELD COMPARATOR VALUE]   query by record type",
                   "d             stage the selected record's deletion   u   unstage it",
                   "n             a new record (TYPE [NAME]); with a filter, n N step through matches",
                   ":columns FIELD,…   :sort FIELD [asc|desc]",
                   "Space         mark the record (* in the gutter) and move on",
                   "V             mark from the last marked record to this one",
                   "*             mark every loaded record the filter shows   Esc  unmark all",
                   "d             with marks: stage the deletion of every marked record",
                   ":set FIELD VALUE   change one field on every marked record",
                   ":export FILE  the marked records (else all the filter shows) as JSON lines; .csv: CSV"]
        case .recordDetail:
            own = ["Enter         follow the REFERENCE, or open the referrer", "v             raw JSON as the server sent it",
                   "y             copy the field (or record) as JSON", "r             look the record up again",
                   "e             edit the selected field (Enter stages, Ctrl-O new line, Esc cancels)",
                   "a             add a field (NAME TYPE)   x   clear the field (set to null)",
                   "              on a list element: e edits it, a adds one after it, x removes it",
                   "u             unstage the selected field's change   U   unstage the whole record",
                   "E             edit all fields as JSON in $EDITOR",
                   "d             stage the record's deletion",
                   "o             save the selected asset to a file (asks where)",
                   "e on an ASSETID field (or a NAME ASSETID): a local file, uploaded on commit"]
        case .subscriptions, .subscriptionDetail:
            own = ["Enter         the whole definition (what is staged for it, why a commit refused it)",
                   "n             new subscription: query TYPE [ZONE] · zone ZONE · database, then $EDITOR",
                   "E (or e)      edit it as JSON in $EDITOR (staged as an update)",
                   "d             stage its deletion   u   unstage what is staged for it",
                   "R             re-create a firesOnce subscription that fired (STAGED: fired·R)",
                   "c             commit (subscriptions/modify with the records)   b   the batch",
                   "v             raw JSON", "r             reload", "y             copy as JSON"]
        case .batch:
            own = ["u             unstage the selected operation (a record's, a zone's or a subscription's)", "X             discard every staged operation (asks first)",
                   "Enter         open the record"]
        case .notifications:
            own = ["Enter         the push in full: its payload as received, each key named",
                   "o             open the notified record (or zone)", "y             copy the payload",
                   "R             refresh the open zone (after a reconnect)", "X             clear the list"]
        case .push:
            own = ["j k PgDn PgUp scroll", "y             copy the payload as received", "o Enter       open the record or zone it names"]
        case .debug: own = ["Enter         the whole exchange (headers and bodies, secrets redacted)"]
        case .inspector: own = ["/ n N         search the exchange; next / previous match", "y             copy it (secrets redacted)"]
        case .shares: own = ["Enter         open the share record (who, how, and its keys to change them)", "r             reload"]
        case .schema:
            own = ["Enter         on a record type: query it (:query TYPE)",
                   "              on a field: start a :query filter on it (Tab offers its comparators)",
                   "r             load the schema again   :schema load FILE   a .ckdb file (cktool export-schema)",
                   ":query        Tab completes types, fields and the comparators their indexes allow"]
        case .errors: own = ["j k PgDn PgUp scroll         ! or Esc   back"]
        case .conflict:
            return ["m             keep mine, re-based on the server's change tag",
                    "f             force mine (no change tag: overwrites the server's)",
                    "t             take the server's version (drop mine)",
                    "g             merge field by field (j/k field, Space toggles, Enter done)",
                    "e             edit again from the server's version",
                    "r             re-create a record deleted on the server",
                    "n p j k       next / previous conflict",
                    "a             abort the commit",
                    "Esc           abort (asks first when something is already chosen)",
                    "?             this help", ""]
        case .commit:
            return ["y             send (in production: type the container's name, then Enter)",
                    "n Esc         cancel: nothing is sent, everything stays staged",
                    "j k PgDn PgUp scroll          g G   top / end",
                    "Enter Esc     close, once the answer is in",
                    "q             quit (not while a request is in flight)",
                    "?             this help", ""]
        }
        return own + (own.isEmpty ? [] : [""]) + everywhere
    }

    /// The help's lines wrapped to the box's width, so what is cut off can be scrolled to (the keys
    /// scroll these, a page at a time of what the box shows).
    static func helpText(_ state: BrowserState) -> [String] {
        let width = Layout(state).helpTextWidth
        return helpLines(state).flatMap { hangingWrap($0, to: width) }
    }

    /// The help's lines as shown: "press any key to close" ends them when they fit; when they do not,
    /// the box's last line says how to scroll and close instead (any key does not close then: j/k
    /// scroll), and a blank line left at the end goes. Keys and drawing read this.
    static func helpShown(_ state: BrowserState) -> [String] {
        let lines = helpText(state)
        guard lines.count + 1 > Layout(state).helpRoom else { return lines + ["press any key to close"] }
        return Array(lines.reversed().drop(while: \.isEmpty).reversed())
    }

    static func drawHelp(_ screen: inout CellGrid, _ state: BrowserState) {
        let layout = Layout(state)
        let lines = helpShown(state)
        guard lines.count > layout.helpRoom else { return box(&screen, title: "Keys", lines: lines) }
        let rows = layout.helpRows
        let top = clampedScroll(state.helpScroll, count: lines.count, height: rows)
        var shown = Array(lines[top..<min(lines.count, top + rows)])
        shown.append(top + rows < lines.count ? "↓ j/k or PgDn scroll for more · other keys close" : "↑ the end · other keys close")
        // As wide on every page: sized by all the lines, not the page's.
        box(&screen, title: "Keys (\(top + 1)–\(top + shown.count - 1) of \(lines.count))", lines: shown, measuring: lines)
    }

    static func drawLegacyJournal(_ screen: inout CellGrid, _ legacy: LegacyJournal, _ state: BrowserState) {
        let ops = legacy.batch.operations
        var lines = ["An earlier version of ckbrowse kept staged edits for \(state.connection.container) (\(state.connection.environment.rawValue)) without recording which server or user they were made against:", ""]
        let shown = 6
        for op in ops.prefix(shown) {
            lines.append("\(op.kind == .delete ? "DELETE" : "UPDATE") \(op.database.rawValue) › \(state.zoneName(op.zone)) › \(op.recordName)")
        }
        if ops.count > shown { lines.append("… and \(ops.count - shown) more") }
        if !legacy.inflight.isEmpty {
            lines.append("and a commit that was in flight (\(Format.plural(legacy.inflight.count, "request"))): keeping it checks it against this server")
        }
        lines += ["", "k  keep them for \(state.connection.server.displayName) (as \(state.connection.account.identity.displayName))",
                  "D  discard them", "Esc  decide later (the file is left as it is)"]
        box(&screen, title: "Staged edits from an earlier version", lines: lines)
    }

    static func drawSignIn(_ screen: inout CellGrid, _ notice: BrowserFailure, _ state: BrowserState) {
        var lines = ["The \(state.connection.database.rawValue) database needs a signed-in iCloud user."]
        if let url = notice.redirectURL { lines += ["", "Sign in at:", url] }
        lines += ["", "Then pass the web auth token you receive:",
                  "  CLOUDKIT_WEB_AUTH_TOKEN=… ckbrowse   (or web-auth-token in a profile)",
                  "", "Press any key to continue in the public database."]
        box(&screen, title: "Sign-in required", lines: lines)
    }
}
