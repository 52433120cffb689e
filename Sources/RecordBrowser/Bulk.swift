import CloudKitModels
import TerminalUI

/// Marks and bulk edits on a zone's records: Space marks the selected record, `V` a range, `*` every
/// record the filter shows, Esc unmarks; `d` stages the marked records' deletion, `:set FIELD VALUE`
/// one field change on each, `:export FILE` writes them (or every record the filter shows).
extension Browser {
    /// The marks of the zone's records screen (on the stack, or set aside).
    public static func marks(_ state: BrowserState) -> Marks {
        if case .records(let screen)? = state.stack.find(.records) { return screen.marks }
        return Marks()
    }

    static func setMarks(_ state: inout BrowserState, _ change: (inout Marks) -> Void) {
        state.stack.modify(.records) {
            guard case .records(var screen) = $0 else { return }
            change(&screen.marks)
            $0 = .records(screen)
        }
    }

    /// Space, `V`, `*` and (with marks) `d` on a zone's records; nil for any other key.
    static func markKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect]? {
        guard state.pane == .records, var list = state.list else { return nil }
        let marks = Self.marks(state)
        switch key {
        case .char(" "):
            guard let row = list.row(list.selection) else { return [] }
            guard !row.deleted else {
                // A deleted row cannot be marked; Space still moves on, so a run of Spaces is not stuck.
                move(&list.selection, &list.scroll, count: list.matching, delta: 1, height: listHeight(state))
                state.list = list
                state.message = "'\(row.recordName)' is deleted: it cannot be marked"
                return window(&state, force: false)
            }
            var marked = false
            setMarks(&state) { marked = $0.toggle(row.recordName, row: list.selection) }
            // And on to the next row, so Space Space Space marks a run.
            move(&list.selection, &list.scroll, count: list.matching, delta: 1, height: listHeight(state))
            state.list = list
            state.message = (marked ? "marked '\(row.recordName)'" : "unmarked '\(row.recordName)'") + " · " + markSummary(state)
            return window(&state, force: false) + prefetch(&state)
        case .char("V"):
            guard let anchor = marks.anchor else {
                state.message = "V marks from the last record marked (Space) to this one: mark one first"
                return []
            }
            let low = min(anchor, list.selection), high = max(anchor, list.selection)
            // The rows between may be outside the window: the cache names them.
            return [.markRows(list.key, filter: state.filter, sort: list.view.sort, start: low, count: high - low + 1, generation: list.generation)]
        case .char("*"):
            guard list.matching > 0 else {
                state.message = "nothing to mark: the list is empty"
                return []
            }
            return [.markRows(list.key, filter: state.filter, sort: list.view.sort, start: 0, count: list.matching, generation: list.generation)]
        case .char("d") where !marks.isEmpty:
            guard writable(&state) else { return [] }
            state.message = "reading \(Format.plural(marks.count, "marked record")) to stage their deletion…"
            return [.loadMarked(list.key, names: marks.sorted, purpose: .delete)]
        case .escape where !marks.isEmpty:
            let count = marks.count
            setMarks(&state) { $0.clear() }
            state.message = "unmarked \(Format.plural(count, "record"))"
            return []
        default:
            return nil
        }
    }

    /// `3 marked`, with what `*` could not reach.
    static func markSummary(_ state: BrowserState) -> String {
        "\(Format.count(marks(state).count)) marked"
    }

    /// The names `V` or `*` asked for: marked.
    static func rowsToMark(generation: Int, names: [String], skipped: Int, _ state: inout BrowserState) {
        guard let list = state.list, list.generation == generation else { return }
        var added = 0
        setMarks(&state) { added = $0.add(names) }
        var text = "marked \(Format.plural(added, "more record")) · \(markSummary(state))"
        if list.moreComing, list.source != .awaitingQuery {
            // `*` marks what is loaded; the rest of the zone is not known here.
            text += " · records not loaded yet are not marked (G loads the rest)"
        }
        if skipped > 0 { text += " · \(Format.plural(skipped, "deleted row")) not marked" }
        state.message = text
    }

    /// The marked records, read from the cache: their deletion or the field change staged, all or
    /// nothing.
    static func markedLoaded(_ key: ListKey, _ purpose: BulkPurpose, records: [Record], missing: [String], _ state: inout BrowserState) -> [BrowserEffect] {
        guard writable(&state) else { return [] }
        switch purpose {
        case .delete:
            let ops = records.map { StagedOperation(kind: .delete, zone: key.zone, base: $0) }
            state.staged.stage(all: ops)
            setMarks(&state) { $0.clear() }
            var text = "staged the deletion of \(Format.plural(ops.count, "record"))"
            if !missing.isEmpty { text += " (\(Format.plural(missing.count, "marked record")) not in the cache, not staged)" }
            state.message = text + " · marks cleared · \(state.staged.operations.count) staged (b batch, c commit)"
            return stagedLookups(&state)
        case .set(let field, let value):
            let typed = "set \(field) \(value)"
            var ops: [StagedOperation] = []
            for record in records {
                let type: FieldType
                if let known = record.recordType.flatMap({ state.schema?.schema.recordType($0) })?.field(field), case let schemaType = FieldType(rawValue: known.type.wireType) {
                    type = schemaType
                } else if let current = record.fields[field], current != .null {
                    type = current.type
                } else {
                    reopen(.command, text: typed, reason: "nothing staged: the type of '\(field)' is unknown for '\(record.recordName)' (not in the schema, and the record has no value): load the schema (:schema) or edit it in the record", &state)
                    return []
                }
                let base = state.staged.operation(for: RecordKey(zone: key.zone, recordName: record.recordName))
                switch FieldInput.parse(value, as: type, original: base?.changes[field] ?? record.fields[field]) {
                case .success(let parsed):
                    ops.append(StagedOperation(kind: .update, zone: key.zone, base: record, changes: [field: parsed]))
                case .failure(let error):
                    reopen(.command, text: typed, reason: "nothing staged: '\(value)' is not a \(type.rawValue) ('\(field)' of \(record.recordName)): \(error.description)", &state)
                    return []
                }
            }
            state.staged.stage(all: ops)
            setMarks(&state) { $0.clear() }
            var text = "staged \(field) = \(value) on \(Format.plural(ops.count, "record"))"
            if !missing.isEmpty { text += " (\(Format.plural(missing.count, "marked record")) not in the cache, not staged)" }
            state.message = text + " · marks cleared · \(state.staged.operations.count) staged (b batch, c commit)"
            return stagedLookups(&state)
        }
    }

    /// `:set FIELD VALUE` on the marked records.
    static func setCommand(_ text: String, _ state: inout BrowserState) -> [BrowserEffect] {
        let usage = ":set FIELD VALUE changes one field of every marked record (Space marks; the value is typed from the schema, else the field's type in each record)"
        let rest = text.trimmingWhitespace().drop { $0 != " " }.drop { $0 == " " }
        let field = String(rest.prefix { $0 != " " })
        let value = String(rest.dropFirst(field.count).drop { $0 == " " })
        guard !field.isEmpty, !value.isEmpty else {
            refuse(usage, &state)
            return []
        }
        guard FieldNames.isValid(field) else {
            refuse("'\(field)' is not a valid field name (a letter, then letters, digits or _)", &state)
            return []
        }
        guard state.pane == .records, let list = state.list else {
            refuse(":set acts on the marked records of a zone's list: open a zone and mark records (Space, V, *)", &state)
            return []
        }
        let marks = Self.marks(state)
        guard !marks.isEmpty else {
            refuse("no record is marked: Space marks the selected record, V a range, * every record shown", &state)
            return []
        }
        guard writable(&state) else { return [] }
        state.message = "reading \(Format.plural(marks.count, "marked record"))…"
        return [.loadMarked(list.key, names: marks.sorted, purpose: .set(field: field, value: value))]
    }

    /// `:export FILE`: the marked records, or every record the filter shows (the rest of the zone
    /// loaded first).
    static func exportCommand(_ text: String, _ state: inout BrowserState) -> [BrowserEffect] {
        let path = String(text.trimmingWhitespace().drop { $0 != " " }.drop { $0 == " " }).trimmingWhitespace()
        guard !path.isEmpty else {
            refuse(":export FILE writes the marked records (else every record the filter shows) as JSON lines, or CSV when FILE ends in .csv", &state)
            return []
        }
        guard state.pane == .records, let list = state.list else {
            refuse(":export writes a zone's records: open a zone first", &state)
            return []
        }
        let marks = Self.marks(state)
        let request = ExportRequest(list: list.key, names: marks.isEmpty ? nil : marks.sorted, filter: state.filter, sort: list.view.sort, path: path,
                                    generation: list.generation)
        state.message = "checking \(path)…"
        return [.checkExportPath(request)]
    }

    /// The export's file can be written: with marks (or the whole zone loaded) it is written now; else
    /// the rest of the zone loads first, with progress, and the export follows the last page.
    static func exportPathChecked(_ request: ExportRequest, refused: String?, _ state: inout BrowserState) -> [BrowserEffect] {
        let typed = "export \(request.path)"
        if let refused {
            state.message = nil
            reopen(.command, text: typed, reason: "nothing written: \(refused)", &state)
            return []
        }
        guard var list = state.list, list.generation == request.generation else { return [] }
        if request.names != nil || !list.moreComing || list.source == .awaitingQuery {
            state.message = "writing \(request.path)…"
            return [.export(request)]
        }
        state.stack.modify(.records) {
            guard case .records(var screen) = $0 else { return }
            screen.pendingExport = request
            $0 = .records(screen)
        }
        list.loadingToEnd = true
        state.list = list
        state.show("loading the rest of the zone for the export… \(Format.count(list.total)) loaded (Esc stops)", kind: .progress(.loadingToEnd))
        return prefetch(&state)
    }

    /// A page came in: the export waiting for the zone's last page is written now (nil: none waits or
    /// more pages come).
    static func pendingExport(_ state: inout BrowserState) -> [BrowserEffect] {
        guard let list = state.list, !list.moreComing, case .records(let screen)? = state.stack.find(.records), let request = screen.pendingExport,
            request.generation == list.generation
        else { return [] }
        dropPendingExport(&state)
        state.message = "writing \(request.path)…"
        return [.export(request)]
    }

    /// The export waiting for the zone to load is forgotten (Esc stopped the loading).
    static func dropPendingExport(_ state: inout BrowserState) {
        state.stack.modify(.records) {
            guard case .records(var screen) = $0 else { return }
            screen.pendingExport = nil
            $0 = .records(screen)
        }
    }

    static func exported(_ request: ExportRequest, _ result: Result<ExportResult, BrowserFailure>, _ state: inout BrowserState) {
        switch result {
        case .success(let done):
            state.message = "exported \(Format.plural(done.records, "record")) to \(done.path) (\(request.format.rawValue))"
        case .failure(let failure):
            state.message = nil
            reopen(.command, text: "export \(request.path)", reason: "nothing written: \(failure.message)", &state)
        }
    }
}
