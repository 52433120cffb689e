import CloudKitModels
import TerminalUI

/// Drawing of staged edits: list marks, the inline editor, the batch, the commit and the conflicts.
extension Browser {
    /// `M` (modified) or `D` (deleted) in the first column of staged rows.
    static func drawStageMarks(_ screen: inout CellGrid, _ state: BrowserState, zone: ZoneKey, first: Int, count: Int, name: (Int) -> String?) {
        guard !state.staged.isEmpty, count > 0 else { return }
        for i in 0..<count {
            guard let recordName = name(first + i), let op = state.staged.operation(for: RecordKey(zone: zone, recordName: recordName)) else { continue }
            let style = op.kind == .delete ? Theme.stagedDelete : Theme.staged
            screen.put(op.kind == .delete ? "D" : (op.mode == .create ? "N" : "M"), x: 0, y: 2 + i, style: style)
        }
    }

    /// One line for a field value in a diff or a conflict cell.
    static func cell(_ value: FieldValue?) -> String {
        guard let value else { return "—" }
        if value == .null { return "∅ cleared" }
        if value.isList {
            let count = value.listCount ?? 0
            return Format.items(count) + " " + value.listElements.prefix(3).map(Format.scalar).joined(separator: ", ") + (count > 3 ? ", …" : "")
        }
        return Format.scalar(value).replacing("\n", with: "⏎")
    }

    /// One line of the batch, wrapped to `width` (continuation lines indented under its text; none
    /// wrapped at `Int.max`).
    static func appendWrapped(_ lines: inout [(op: Int, text: String, style: Style)], _ op: Int, _ text: String, _ style: Style, width: Int) {
        for row in hangingRows(text, width: width) { lines.append((op, row, style)) }
    }

    /// A line as drawn in `width` columns: whole when it fits, else wrapped with each continuation
    /// indented under the line's text (the batch's lines and the commit preview's).
    static func hangingRows(_ text: String, width: Int) -> [String] {
        guard width < Int.max, TextWidth.width(text) > width else { return [text] }
        let indent = String(text.prefix { $0 == " " }) + "  "
        // Wrapped short of the width by the indent, so an indented continuation still fits (a wider
        // one lost its last characters at the screen's edge).
        return TextWidth.wrap(text, to: Layout.indentedWidth(width, indent: indent.count)).enumerated().map { i, part in i == 0 ? part : indent + part }
    }

    /// The batch's lines, long values wrapped to `width` (continuation lines indented).
    static func batchLines(_ state: BrowserState, width: Int = Int.max) -> [(op: Int, text: String, style: Style)] {
        var lines: [(op: Int, text: String, style: Style)] = []
        func add(_ op: Int, _ text: String, _ style: Style) { appendWrapped(&lines, op, text, style, width: width) }
        let warnings = ChangeWords.targetWarningsByRecord(state)
        let batchDeletes = batchDeletes(state)
        for (i, op) in state.staged.operations.enumerated() {
            var head = "\(op.verb) \(op.database.rawValue) › \(state.zoneName(op.zone)) › \(op.recordName)"
            if let type = op.recordType { head += " (\(type))" }
            head += " · based on change tag \(op.baseTag ?? "none")"
            switch op.mode {
            case .force: head += " · FORCED (sent without the tag)"
            case .recreate: head += " · RE-CREATE (deleted on the server)"
            case .create: head = head.replacing(" · based on change tag none", with: " · a new record")
            case .conditional: break
            }
            add(i, head, op.kind == .delete ? Theme.stagedDelete : Theme.staged)
            if op.kind == .delete {
                add(i, "    the record and its \(op.baseFields.count) field\(op.baseFields.count == 1 ? "" : "s") are deleted", Theme.dim)
                for line in state.known.impacts[op.key]?.lines(deleting: op.recordName, batchDeletes: batchDeletes) ?? [] { add(i, "    " + (line.bad ? "✗ " : "") + line.text, line.bad ? Theme.error : Theme.dim) }
            } else {
                // Lists element by element, references as target (ACTION), assets as the file uploaded.
                for d in op.diff {
                    for line in ChangeWords.lines(d) { add(i, "    " + line, .plain) }
                }
            }
            for warning in warnings[op.key] ?? [] { add(i, "    ✗ " + warning.text, warning.bad ? Theme.error : Theme.dim) }
        }
        return lines
    }

    /// The batch's lines at `width`: those the batch screen keeps when they show what is staged and
    /// known now, else built.
    static func recordBatchLines(_ state: BrowserState, width: Int) -> [(op: Int, text: String, style: Style)] {
        if case .batch(let screen)? = state.stack.find(.batch), let kept = screen.kept, kept.shows(state, width: width) { return kept.lines }
        return batchLines(state, width: width)
    }

    /// After every event: the batch screen keeps its lines for what is staged and known now (built
    /// again only when the batch, what is known of it or the width changed: not on every key).
    static func keepBatchLines(_ state: inout BrowserState) {
        guard case .batch(var screen)? = state.stack.find(.batch) else { return }
        let width = Layout(state).textWidth
        if let kept = screen.kept, kept.shows(state, width: width) { return }
        screen.kept = BatchLines(state, width: width, lines: batchLines(state, width: width))
        state.stack.modify(.batch) { $0 = .batch(screen) }
    }

    static func drawBatch(_ screen: inout CellGrid, _ state: BrowserState) {
        let ops = state.staged.operations
        let zoneOps = state.staged.zoneOperations
        guard !state.staged.isEmpty else {
            drawNote(&screen, "Nothing staged. In a record: e edits a field, a adds one, x clears one, E edits all as JSON, d deletes.", y: 2)
            return
        }
        let zones = Set(ops.map(\.zone)).count
        var parts: [String] = []
        if !ops.isEmpty { parts.append("\(Format.plural(ops.count, "record operation")) in \(Format.plural(zones, "zone"))") }
        if !zoneOps.isEmpty { parts.append(Format.plural(zoneOps.count, "zone operation")) }
        let subscriptionOps = state.staged.subscriptionOperations.count
        if subscriptionOps > 0 { parts.append(Format.plural(subscriptionOps, "subscription operation")) }
        var header = " Staged: " + parts.joined(separator: " + ")
        // Staged edits belong to one server: say which, unless it is Apple's.
        let server = state.connection.server
        if !server.isAppleDefault { header += " on \(server.displayName)" }
        let legend = " · old → new"
        if TextWidth.width(header + legend) <= Layout(screen).rowWidth { header += legend }
        screen.put(header, x: 0, y: 1, style: Theme.header, maxWidth: Layout(screen).rowWidth)
        // Zone operations first (they are sent first), then the records; one selection runs over
        // both (zone operations are 0..<zoneOps.count).
        let zoneLines: [(op: Int, text: String, style: Style)] = zoneOps.enumerated().map { i, z in
            (i, z.kind == .create ? "CREATE ZONE \(z.zone.database.rawValue) › \(state.zoneName(z.zone))" : "DELETE ZONE \(z.zone.database.rawValue) › \(state.zoneName(z.zone)) and every record in it",
             z.kind == .create ? Theme.staged : Theme.stagedDelete)
        }
        let subscriptionLines = subscriptionBatchLines(state, width: Layout(screen).innerWidth).map { ($0.op + zoneOps.count, $0.text, $0.style) }
        let before = zoneOps.count + state.staged.subscriptionOperations.count
        let lines = zoneLines + subscriptionLines + recordBatchLines(state, width: Layout(screen).innerWidth).map { ($0.op + before, $0.text, $0.style) }
        let layout = Layout(state)
        // The operations as a list whose items take several rows, moved as the keys move it.
        var list = batchMovement(state)
        list.settle()
        let scroll = lines.firstIndex { $0.op >= list.scroll } ?? 0
        let first = lines.firstIndex { $0.op == list.selection } ?? 0
        for (i, y) in layout.body.enumerated() where scroll + i < lines.count {
            let line = lines[scroll + i]
            screen.put(" " + line.text, x: 0, y: y, style: line.style, maxWidth: Layout(screen).rowWidth)
            if scroll + i == first { highlight(&screen, y: y) }
        }
    }

    /// A staged subscription operation's lines: what it does, then old → new per key.
    static func subscriptionBatchLines(_ state: BrowserState, width: Int = Int.max) -> [(op: Int, text: String, style: Style)] {
        var lines: [(op: Int, text: String, style: Style)] = []
        func add(_ op: Int, _ text: String, _ style: Style) { appendWrapped(&lines, op, text, style, width: width) }
        for (i, op) in state.staged.subscriptionOperations.enumerated() {
            let verb = op.kind == .create ? (op.recreatesFired ? "CREATE AGAIN" : "CREATE") : (op.kind == .update ? "UPDATE" : "DELETE")
            let what = op.subscription.query?.recordType ?? op.subscription.zoneID?.zoneName ?? op.subscription.subscriptionType.rawValue
            add(i, "\(verb) SUBSCRIPTION \(op.database.rawValue) › \(op.subscriptionID) (\(op.subscription.subscriptionType.rawValue): \(what))",
                op.kind == .delete ? Theme.stagedDelete : Theme.staged)
            if let failure = op.failure {
                add(i, "    refused by the last commit: " + (failure.code.map { "\($0.rawValue): \(failure.reason ?? "")" } ?? (failure.reason ?? "no result")), Theme.error)
            }
            if op.kind != .delete {
                for d in op.diff { add(i, "    \(d.key): \(d.old ?? "—") → \(d.new ?? "—")", .plain) }
            }
        }
        return lines
    }

    /// The batch's operations (zone operations first, then subscriptions, then records) as one list,
    /// each taking the rows it is drawn on.
    static func batchMovement(_ state: BrowserState) -> ListMovement {
        let layout = Layout(state)
        let zoneOps = state.staged.zoneOperations.count + state.staged.subscriptionOperations.count
        var rows = Array(repeating: 1, count: zoneOps + state.staged.operations.count)
        for line in subscriptionBatchLines(state, width: layout.textWidth) where rows.indices.contains(line.op + state.staged.zoneOperations.count) {
            rows[line.op + state.staged.zoneOperations.count] += 1
        }
        for line in recordBatchLines(state, width: layout.textWidth) where rows.indices.contains(line.op + zoneOps) { rows[line.op + zoneOps] += 1 }
        for i in state.staged.zoneOperations.count..<rows.count { rows[i] -= 1 }
        var list = ListMovement(count: rows.count, selection: state.position(.batch).selection, scroll: state.position(.batch).scroll, pageHeight: layout.bodyHeight)
        list.rows = { rows.indices.contains($0) ? max(1, rows[$0]) : 1 }
        return list
    }

    /// The commit screen's lines as drawn, wrapped to the screen (the keys scroll these): the head
    /// built per call, the requests kept in the session while its plan and the width stay.
    static func commitRows(_ state: BrowserState) -> CommitRows {
        let width = Layout(state).textWidth
        let head = wrapped(previewHead(state), width)
        guard let commit = state.commit else { return CommitRows(head: head, tail: []) }
        if let kept = commit.requestRows, kept.width == width, kept.revision == commit.planRevision {
            return CommitRows(head: head, tail: kept.rows)
        }
        return CommitRows(head: head, tail: wrapped(requestLines(commit.plan, state), width))
    }

    /// Lines wrapped to `width`, each continuation indented under its line's text (as the batch's are).
    static func wrapped(_ lines: [(text: String, tone: Tone)], _ width: Int) -> [(text: String, tone: Tone)] {
        var rows: [(text: String, tone: Tone)] = []
        rows.reserveCapacity(lines.count)
        for line in lines {
            for row in hangingRows(line.text, width: width) { rows.append((row, line.tone)) }
        }
        return rows
    }

    /// After every event: the open commit keeps its requests' rows for the width shown (built again
    /// only when the plan or the width changed).
    static func keepRequestRows(_ state: inout BrowserState) {
        guard let commit = state.commitSession else { return }
        let width = Layout(state).textWidth
        if let kept = commit.requestRows, kept.width == width, kept.revision == commit.planRevision { return }
        state.withCommit { commit, state in
            commit.requestRows = CommitSession.RequestRows(width: width, revision: commit.planRevision, rows: wrapped(requestLines(commit.plan, state), width))
        }
    }

    /// The commit screen's rows: above its prompt, which wraps upwards from the hint line (as
    /// `putUpward` draws it), so no row the keys scroll to is hidden under it.
    static func commitPage(_ state: BrowserState) -> Range<Int> {
        let layout = Layout(state)
        let prompt = commitPrompt(state).map { String($0.text.drop(while: { $0 == " " })) + ($0.caret ? String(Caret.mark) : "") } ?? ""
        return layout.page(promptRows: min(3, TextWidth.wrap(prompt, to: layout.textWidth).count))
    }

    static func drawCommit(_ screen: inout CellGrid, _ state: BrowserState) {
        guard let commit = state.commit else { return }
        let page = commitPage(state)
        let lines = commitRows(state)
        let scroll = clampedScroll(commit.scroll, count: lines.count, height: page.count)
        for (i, y) in page.enumerated() where scroll + i < lines.count {
            let (part, tone) = lines[scroll + i]
            screen.put(" " + part, x: 0, y: y, style: style(tone))
        }
    }

    static func style(_ tone: Tone) -> Style {
        switch tone {
        case .plain: return .plain
        case .good: return Style(foreground: .green, bold: true)
        case .bad: return Theme.error
        case .note: return Theme.staged
        case .emphasis: return Style(bold: true)
        case .dim: return Theme.dim
        }
    }

    /// The line under a commit or conflict screen: what the user can do now.
    /// The commit's prompt on the hint line; `caret`: what is typed goes at its end (the cursor stands there).
    static func commitPrompt(_ state: BrowserState) -> (text: String, style: Style, caret: Bool)? {
        guard let commit = state.commit else { return nil }
        if state.pane == .commit {
            switch commit.phase {
            case .preview:
                let count = typedCount(state)
                // Why what was typed did not send stands before the prompt (the prompt takes the hint line).
                // (A reminder of what to type is the prompt itself: only a reason is added.)
                var why = ""
                if case .notSent? = state.report.notice, let words = state.message { why = words + " · " }
                if impactsPending(state) {
                    return (" counting what the deletes take with them (the cache, the server)… · Esc cancels", Theme.dim, false)
                }
                if state.connection.environment == .production {
                    return (" \(why)PRODUCTION: type \(typedConfirmation(state, count)), Enter sends, Esc cancels: \(commit.typed)", Theme.production, true)
                }
                if let count {
                    return (" \(why)type \(count.count) to send (see above) · Enter sends · Esc cancels: \(commit.typed)", Theme.staged, true)
                }
                if commit.plan.hasNonAtomic {
                    return (" NOT ATOMIC (see NOTE): y sends them anyway, each on its own · n cancels · j/k scroll", Theme.staged, false)
                }
                return (" y send · n cancel · j/k PgUp PgDn scroll", Style(bold: true), false)
            case .sending: return (" sending… (recorded in the journal first, so a crash cannot send it twice blindly)", Theme.dim, false)
            case .verifying: return (" checking whether the commit was applied…", Theme.dim, false)
            case .done, .conflicts: return (" Enter or Esc closes · j/k PgUp PgDn g/G scroll", Theme.dim, false)
            }
        }
        guard state.pane == .conflict, commit.conflicts.indices.contains(commit.selection) else { return nil }
        let conflict = commit.conflicts[commit.selection]
        if conflict.merge != nil { return (" MERGE: j/k field · Space toggles mine/server · m mine · t server · Enter done · Esc back", Theme.staged, false) }
        let op = state.staged.operation(for: conflict.key)
        switch conflict.server {
        case .loading: return (" fetching the server's version… · a abort", Theme.dim, false)
        case .failed: return (" f force mine · t drop mine · n next · a abort the commit", Theme.staged, false)
        case .deleted:
            if op?.kind == .update { return (" r re-create it with my version · t accept the deletion · n next · a abort", Theme.staged, false) }
            return (" t drop my delete (already gone) · n next · a abort", Theme.staged, false)
        case .record(let server):
            let tag = server.recordChangeTag ?? "?"
            var text = " m keep mine (re-base on \(tag)) · f force · t take server's"
            if op?.kind == .update { text += " · g merge" }
            return (text + " · e edit · a abort · n next", Theme.staged, false)
        }
    }

    /// The conflict prompt as drawn: its lines above the field table, the table's header, and one block
    /// of rows per field shown (long values wrap within their column); read by drawing and by the keys
    /// that scroll it, so what PgDn moves over is what is drawn.
    struct ConflictView {
        var intro: [(text: String, style: Style)] = []
        var header: String?
        /// Each field's rows: its index among the fields (the merge selection's), and the cells of each row.
        var blocks: [(index: Int, field: String, rows: [[(text: String, style: Style)]], both: Bool)] = []
        var unchanged = 0
        var merging = false
        var cellWidth = 0
        /// Rows the table has on screen (under its header, above the line saying what is hidden).
        var room = 0
        /// The first block shown, and how many fit from there.
        var first = 0
        var shown = 0
    }

    static let conflictFieldWidth = 18

    static func conflictView(_ state: BrowserState) -> ConflictView? {
        guard let commit = state.commit, commit.conflicts.indices.contains(commit.selection) else { return nil }
        let layout = Layout(state)
        let conflict = commit.conflicts[commit.selection]
        let op = state.staged.operation(for: conflict.key)
        var view = ConflictView()
        func line(_ text: String, _ style: Style = .plain) {
            for part in TextWidth.wrap(text, to: layout.innerWidth) { view.intro.append((part, style)) }
        }
        let n = commit.conflicts.count
        let atomicZone = commit.plan.requests.first { $0.zone == conflict.zone }?.atomic ?? true
        line(atomicZone ? "Nothing was applied in zone \(state.zoneName(conflict.zone)): the batch is atomic, and \(n) record\(n == 1 ? "" : "s") changed on the server since you read \(n == 1 ? "it" : "them")."
                : "\(n) record\(n == 1 ? "" : "s") changed on the server since you read \(n == 1 ? "it" : "them"); the other operations were applied on their own.", Theme.error)
        if !commit.innocent.isEmpty {
            let k = commit.innocent.count
            line("\(k) other operation\(k == 1 ? "" : "s") failed only with ATOMIC_ERROR because of \(n == 1 ? "this one" : "these"): innocent, \(k == 1 ? "it stays" : "they stay") staged unchanged and \(k == 1 ? "is" : "are") sent again.", Theme.dim)
        }
        let resolved = commit.conflicts.filter { $0.resolution != nil }.count
        let kind = op?.kind == .delete ? "DELETE" : "UPDATE"
        line("Conflict \(commit.selection + 1) of \(n) (\(resolved) resolved) · \(kind) '\(conflict.recordName)' (\(op?.recordType ?? "?")) · you \(op?.kind == .delete ? "deleted it" : "edited it") from change tag \(op?.baseTag ?? "none") · \(conflict.code.rawValue): \(conflict.reason)", Theme.header)
        guard let op else { return view }
        var serverFields: [String: FieldValue] = [:]
        switch conflict.server {
        case .loading:
            line("fetching the server's current version…", Theme.dim)
            return view
        case .failed(let why):
            line("The server's version could not be fetched: \(why)", Theme.error)
            return view
        case .deleted:
            line(op.kind == .update ? "DELETED on the server since you read it. You updated it: re-create it with your version, or accept the deletion."
                 : "DELETED on the server since you read it, and you deleted it too: nothing is left to do but drop your delete.", Theme.stagedDelete)
        case .record(let server):
            serverFields = server.fields
            var who = "server now: change tag \(server.recordChangeTag ?? "?")"
            if let m = server.modified { who += ", modified \(Format.utc(m.timestamp))" + (m.userRecordName.map { " by \(userName($0, state))" } ?? "") }
            line(who)
        }
        view.intro.append(("", .plain))
        let mine: [String: FieldValue]? = op.kind == .update ? op.resultingFields : nil
        let serverDeleted = conflict.server == .deleted
        var fields = Set(op.baseFields.keys).union(serverFields.keys).union(op.changes.keys).sorted()
        if let merge = conflict.merge { fields = merge.keys.sorted() }
        view.merging = conflict.merge != nil
        let columnCount = view.merging ? 4 : 3
        view.cellWidth = layout.room(after: conflictFieldWidth + 2 + columnCount) / columnCount
        var headers = ["FIELD", "BASE", "MINE", serverDeleted ? "SERVER (deleted)" : "SERVER NOW"]
        if view.merging { headers.append("TAKE") }
        view.header = row(headers, [conflictFieldWidth] + Array(repeating: view.cellWidth, count: columnCount))
        for (index, field) in fields.enumerated() {
            let base = op.baseFields[field]
            let mineValue = mine.map { $0[field] } ?? nil
            let serverValue = serverDeleted ? nil : serverFields[field]
            let mineChanged = op.kind == .delete || op.changes[field] != nil
            let serverChanged = serverDeleted || serverValue != base
            if !mineChanged && !serverChanged && !view.merging {
                view.unchanged += 1
                continue
            }
            let both = mineChanged && serverChanged && !(op.kind == .update && mineValue == serverValue)
            // Long values wrap within their column (up to 4 lines, the last ending in … when cut) so the
            // three can be compared.
            let texts = [cell(base), op.kind == .delete ? "(deleted)" : cell(mineValue), serverDeleted ? "(deleted)" : cell(serverValue)]
            let wrapped = texts.map { text -> [String] in
                let all = TextWidth.wrap(text, to: view.cellWidth)
                guard all.count > 4 else { return all }
                return Array(all.prefix(3)) + [TextWidth.truncate(all[3] + " …", to: view.cellWidth)]
            }
            let styles: [Style] = [.plain, mineChanged ? Theme.staged : Theme.dim, serverChanged ? Theme.serverChanged : Theme.dim]
            let height = max(1, wrapped.map(\.count).max() ?? 1)
            var rows: [[(text: String, style: Style)]] = []
            for r in 0..<height {
                var cells = (0..<3).map { c in (r < wrapped[c].count ? wrapped[c][r] : "", styles[c]) }
                if r == 0, let merge = conflict.merge { cells.append((merge[field] == true ? "mine" : "server", .plain)) }
                rows.append(cells)
            }
            view.blocks.append((index, field, rows, both))
        }
        // The table's room: under its header, above the prompt (which wraps upwards from the hint line)
        // and the line saying what is hidden.
        view.room = max(1, commitPage(state).upperBound - 1 - (1 + view.intro.count + 1))
        func fits(_ from: Int, _ to: Int) -> Bool { view.blocks[from...to].reduce(0) { $0 + $1.rows.count } <= view.room }
        var first = max(0, min(conflict.fieldScroll, view.blocks.count - 1))
        if view.merging, let selected = view.blocks.firstIndex(where: { $0.index == conflict.fieldSelection }) {
            // The field being chosen is always in view.
            if selected < first { first = selected }
            while first < selected, !fits(first, selected) { first += 1 }
        }
        view.first = first
        var shown = 0
        while first + shown < view.blocks.count, fits(first, first + shown) { shown += 1 }
        // A block taller than the whole table is shown cut rather than not at all.
        view.shown = max(view.blocks.isEmpty ? 0 : 1, shown)
        return view
    }

    static func drawConflict(_ screen: inout CellGrid, _ state: BrowserState) {
        guard let view = conflictView(state), let commit = state.commit else { return }
        let conflict = commit.conflicts[commit.selection]
        let layout = Layout(screen)
        var y = 1
        for line in view.intro where y < layout.hint {
            screen.put(" " + line.text, x: 0, y: y, style: line.style)
            y += 1
        }
        guard let header = view.header else { return }
        screen.put(" " + header, x: 0, y: y, style: Theme.header)
        y += 1
        let bottom = y + view.room
        for block in view.blocks[view.first..<min(view.blocks.count, view.first + view.shown)] {
            for (r, cells) in block.rows.enumerated() where y < bottom {
                if r == 0 { screen.put(TextWidth.fit(block.field, to: conflictFieldWidth), x: 1, y: y, style: block.both ? Theme.bothChanged : .plain) }
                var x = 1 + conflictFieldWidth + 1
                for cell in cells {
                    screen.put(cell.text, x: x, y: y, style: cell.style, maxWidth: view.cellWidth)
                    x += view.cellWidth + 1
                }
                if r == 0, view.merging, block.index == conflict.fieldSelection { highlight(&screen, y: y) }
                y += 1
            }
        }
        // What is not shown is said, with the keys that show it.
        var notes: [String] = []
        let above = view.first, below = view.blocks.count - view.first - view.shown
        if above > 0 { notes.append("↑ \(Format.plural(above, "field")) above") }
        if below > 0 { notes.append("↓ \(Format.plural(below, "more field")) below") }
        if above > 0 || below > 0 { notes.append(view.merging ? "j/k move" : "PgDn/PgUp scroll") }
        if view.unchanged > 0 { notes.append("\(Format.plural(view.unchanged, "field")) changed by nobody: not shown") }
        if !notes.isEmpty && y <= bottom {
            screen.put(" " + TextWidth.truncate(notes.joined(separator: " · "), to: layout.innerWidth), x: 0, y: y, style: above > 0 || below > 0 ? Theme.staged : Theme.dim)
        }
    }

    /// The inline editor: a box over the lower part of the detail view.
    static func drawEditor(_ screen: inout CellGrid, _ editor: FieldEditor, _ state: BrowserState) {
        let layout = Layout(screen)
        let textWidth = layout.editorBox(contentRows: 0).textWidth
        var body: [(String, Style)] = []
        if let original = editor.original, original != .null { body.append(("was: " + cell(original), Theme.dim)) }
        // The text wrapped with the caret's mark in it, so the caret lands where wrapping put its character.
        let marked = TextWidth.wrap(Caret.marked(editor.text, cursor: editor.cursor), to: textWidth)
        var caret: (row: Int, column: Int)?
        if let found = Caret.unmark(marked, before: Caret.marksBefore(editor.text, cursor: editor.cursor)) {
            caret = (body.count + found.row, found.column)
            body += found.rows.map { ($0, Style.plain) }
        } else {
            body += marked.map { ($0, Style.plain) }
        }
        // A reference said plainly: which record, and what its action does.
        if editor.type == .reference, case .success(.reference(let r)) = FieldInput.parse(editor.string, as: .reference, original: editor.original) {
            body += TextWidth.wrap("→ target \(ChangeWords.reference(r)): \(ChangeWords.meaning(r.action))", to: textWidth).map { ($0, Theme.dim) }
            // A zone typed that the database is not known to have: said before it goes to the server.
            let known = state.zones.compactMap { $0.zone?.zoneID.zoneName }
            if let zone = r.zoneID?.zoneName, state.known.zones.loaded, !known.contains(zone) {
                let names = known.prefix(6).joined(separator: ", ") + (known.count > 6 ? ", …" : "")
                body += TextWidth.wrap("✗ the \(state.connection.database.rawValue) database has no zone '\(zone)' (its zones: \(names))", to: textWidth).map { ($0, Theme.error) }
            }
        }
        if let error = editor.error { body += TextWidth.wrap("✗ " + error, to: textWidth).map { ($0, Theme.error) } }
        // The hints wrap rather than being cut at 80 columns.
        for hint in [editorHint(editor.type), "Enter stages · Ctrl-O new line · Ctrl-U/Ctrl-K cut to line start/end · Esc cancels"] where !hint.isEmpty {
            body += TextWidth.wrap(hint, to: textWidth).map { ($0, Theme.dim) }
        }
        let box = layout.editorBox(contentRows: body.count + 2)
        for r in 0..<box.height { screen.fill(x: 0, y: box.y + r, width: layout.width, style: .plain) }
        let what: String
        switch editor.element {
        case .replace(let i)?: what = "edit \(editor.field)[\(i)]"
        case .insert(let i)?: what = "add to \(editor.field) at [\(i)]"
        case nil: what = "edit \(editor.field)"
        }
        // The end (the hints) in view when the text is long, unless the caret is above it: the caret's row
        // is always in view.
        var first = max(0, body.count - box.innerRows)
        if let caret, caret.row < first { first = caret.row }
        drawBox(&screen, box, title: "\(what) (\(editor.type.rawValue))", rows: Array(body[first..<min(body.count, first + box.innerRows)]))
        if let caret { screen.cursor = CursorPosition(x: box.x + 2 + caret.column, y: box.y + 1 + caret.row - first) }
    }

    static func editorHint(_ type: FieldType) -> String {
        if type.isList { return "one element per line, or a JSON array" }
        switch type {
        case .string: return "any text"
        case .int64: return "a whole number in INT64's range"
        case .double: return "a finite number, e.g. 3.25"
        case .timestamp: return "ISO-8601 (2024-03-01T12:00:00Z) or epoch milliseconds"
        case .bytes: return "base64, or hex with 0x"
        case .reference: return "recordName [NONE|DELETE_SELF|VALIDATE] [zone ZONE]"
        case .location: return "lat, lon [± m] [alt m [± m]] [course °] [speed m/s] [at TIME]; a part taken out is cleared"
        default: return ""
        }
    }
}

/// The commit screen's rows: the preview's head, then the requests (kept between keys).
struct CommitRows: RandomAccessCollection {
    let head: [(text: String, tone: Browser.Tone)]
    let tail: [(text: String, tone: Browser.Tone)]
    var startIndex: Int { 0 }
    var endIndex: Int { head.count + tail.count }
    subscript(i: Int) -> (text: String, tone: Browser.Tone) { i < head.count ? head[i] : tail[i - head.count] }
}

/// The batch screen's lines as last built, with what they were built from: compared with `==`, which
/// for an unchanged batch and dictionaries (the same storage) answers at once.
struct BatchLines: Sendable {
    var width: Int
    var staged: StagedBatch
    var impacts: [RecordKey: DeleteImpact]
    var targets: [RecordKey: TargetCheck]
    var userNames: [String: String]
    var lines: [(op: Int, text: String, style: Style)]

    init(_ state: BrowserState, width: Int, lines: [(op: Int, text: String, style: Style)]) {
        self.width = width
        staged = state.staged
        impacts = state.known.impacts
        targets = state.known.targets
        userNames = state.known.userNames
        self.lines = lines
    }

    func shows(_ state: BrowserState, width: Int) -> Bool {
        self.width == width && staged == state.staged && impacts == state.known.impacts && targets == state.known.targets && userNames == state.known.userNames
    }
}
