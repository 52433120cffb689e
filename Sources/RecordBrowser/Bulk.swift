import CloudKitModels
import TerminalUI

/// Marks and bulk edits on a zone's records: Space marks the selected record, `V` a range, `*` every
/// record the filter shows, Esc unmarks; `d` stages the marked records' deletion, `:set FIELD VALUE`
/// one field change on each, `:export FILE` writes them (or every record the filter shows).
extension Browser {
    /// The marks of the zone's records screen (on the stack, or set aside).
    public static func marks(_ state: BrowserState) -> Marks {
        state.recordsScreen?.marks ?? Marks()
    }

    static func setMarks(_ state: inout BrowserState, _ change: (inout Marks) -> Void) {
        state.withRecords { screen, _ in change(&screen.marks) }
    }

    /// Space, `V`, `*` and (with marks) `d` on a zone's records; nil for any other key.
    static func markKey(_ key: Key, _ screen: inout RecordsScreen, _ state: inout BrowserState) -> [BrowserEffect]? {
        let list = screen.list, marks = screen.marks
        switch key {
        case .char(" "):
            guard let row = list.row(list.selection) else { return [] }
            guard !row.deleted else {
                // A deleted row cannot be marked; Space still moves on, so a run of Spaces is not stuck.
                move(&screen.list.selection, &screen.list.scroll, count: list.matching, delta: 1, height: listHeight(state))
                state.say(.cannotMarkDeleted(record: row.recordName))
                return window(&screen, state, force: false)
            }
            let marked = screen.marks.toggle(row.recordName, row: list.selection)
            // And on to the next row, so Space Space Space marks a run.
            move(&screen.list.selection, &screen.list.scroll, count: list.matching, delta: 1, height: listHeight(state))
            state.say(.markToggled(record: row.recordName, marked: marked, total: screen.marks.count))
            return window(&screen, state, force: false) + prefetch(&screen)
        case .char("V"):
            guard let anchor = marks.anchor else {
                state.say(.rangeNeedsAnchor)
                return []
            }
            let low = min(anchor, list.selection), high = max(anchor, list.selection)
            // The rows between may be outside the window: the cache names them.
            return [.markRows(list.key, filter: screen.filter, sort: list.view.sort, start: low, count: high - low + 1, generation: list.generation)]
        case .char("*"):
            guard list.matching > 0 else {
                state.say(.nothingToMark)
                return []
            }
            return [.markRows(list.key, filter: screen.filter, sort: list.view.sort, start: 0, count: list.matching, generation: list.generation)]
        case .char("d") where !marks.isEmpty:
            guard writable(&state) else { return [] }
            state.say(.readingMarked(count: marks.count, purpose: .delete))
            screen.stagingReads += 1
            return [.loadMarked(list.key, names: marks.sorted, purpose: .delete)]
        case .escape where !marks.isEmpty:
            let count = marks.count
            screen.marks.clear()
            state.say(.unmarked(count: count))
            return []
        default:
            return nil
        }
    }


    /// The names `V` or `*` asked for: marked.
    static func rowsToMark(generation: Int, names: [String], skipped: Int, _ state: inout BrowserState) {
        guard let list = state.recordsScreen?.list, list.generation == generation else { return }
        var added = 0
        setMarks(&state) { added = $0.add(names) }
        // `*` marks what is loaded; the rest of the zone is not known here (a `V` range inside the loaded
        // rows leaves nothing out: said only when the marks reached the last loaded row).
        let partial = list.moreComing && list.source != .awaitingQuery && names.count + skipped >= list.matching
        state.say(.markedMore(added: added, total: marks(state).count, notLoadedLeft: partial, skippedDeleted: skipped))
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
            state.say(.bulkStaged(.delete, records: ops.count, notCached: missing.count, staged: state.staged.operations.count))
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
                    let knownType = record.recordType.flatMap { state.schema?.schema.recordType($0) }?.name
                    reopen(.command, text: typed, refusal: .setTypeUnknown(field: field, record: record.recordName, recordType: knownType), &state)
                    return []
                }
                let base = state.staged.operation(for: RecordKey(zone: key.zone, recordName: record.recordName))
                let original = base?.changes[field] ?? record.fields[field]
                switch FieldInput.parse(value, as: type, original: original) {
                case .success(var parsed):
                    // `:set artist artist-hokusai` changes the target: each record's action (and zone)
                    // stays unless the value names one (the inline editor shows them, :set does not).
                    if case .reference(var new) = parsed, case .reference(let old)? = original {
                        if !FieldInput.namesReferenceAction(value) { new.action = old.action }
                        if new.zoneID == nil { new.zoneID = old.zoneID }
                        parsed = .reference(new)
                    }
                    ops.append(StagedOperation(kind: .update, zone: key.zone, base: record, changes: [field: parsed]))
                case .failure(let error):
                    reopen(.command, text: typed, refusal: .setValueInvalid(value, type: type, field: field, record: record.recordName, error: error.description), &state)
                    return []
                }
            }
            state.staged.stage(all: ops)
            setMarks(&state) { $0.clear() }
            state.say(.bulkStaged(purpose, records: ops.count, notCached: missing.count, staged: state.staged.operations.count))
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
            refuse(.setUsage, &state)
            return []
        }
        guard FieldNames.isValid(field) else {
            refuse(.invalidFieldName(field), &state)
            return []
        }
        guard state.pane == .records, let list = state.recordsScreen?.list else {
            refuse(.setNeedsList, &state)
            return []
        }
        let marks = Self.marks(state)
        guard !marks.isEmpty else {
            refuse(.setNeedsMarks, &state)
            return []
        }
        guard writable(&state) else { return [] }
        state.say(.readingMarked(count: marks.count, purpose: .set(field: field, value: value)))
        state.withRecords { screen, _ in screen.stagingReads += 1 }
        return [.loadMarked(list.key, names: marks.sorted, purpose: .set(field: field, value: value))]
    }

    /// `:export FILE`: the marked records, or every record the filter shows (the rest of the zone
    /// loaded first).
    static func exportCommand(_ text: String, _ state: inout BrowserState) -> [BrowserEffect] {
        let path = String(text.trimmingWhitespace().drop { $0 != " " }.drop { $0 == " " }).trimmingWhitespace()
        guard !path.isEmpty else {
            refuse(.exportUsage, &state)
            return []
        }
        guard state.pane == .records, let screen = state.recordsScreen else {
            refuse(.exportNeedsZone, &state)
            return []
        }
        let list = screen.list, marks = screen.marks
        let request = ExportRequest(list: list.key, names: marks.isEmpty ? nil : marks.sorted, filter: screen.filter, sort: list.view.sort, path: path,
                                    generation: list.generation)
        state.say(.checkingPath(path))
        return [.checkExportPath(request)]
    }

    /// The export's file can be written: with marks (or the whole zone loaded) it is written now; else
    /// the rest of the zone loads first, with progress, and the export follows the last page.
    static func exportPathChecked(_ request: ExportRequest, refused: String?, _ state: inout BrowserState) -> [BrowserEffect] {
        let typed = "export \(request.path)"
        if let refused {
            state.clearNotice()
            reopen(.command, text: typed, refusal: .exportNotWritten(refused), &state)
            return []
        }
        return state.withRecords { screen, state in
            guard screen.list.generation == request.generation else { return [] }
            let list = screen.list
            if request.names != nil || !list.moreComing || list.source == .awaitingQuery {
                state.say(.writing(path: request.path))
                return [.export(request)]
            }
            screen.pendingExport = request
            screen.list.loadingToEnd = true
            state.say(.loadingToEnd(loaded: list.total, forExport: true))
            return prefetch(&screen)
        } ?? []
    }

    /// A page came in: the export waiting for the zone's last page is written now (nil: none waits or
    /// more pages come).
    static func pendingExport(_ screen: inout RecordsScreen, _ state: inout BrowserState) -> [BrowserEffect] {
        guard !screen.list.moreComing, let request = screen.pendingExport, request.generation == screen.list.generation else { return [] }
        screen.pendingExport = nil
        state.say(.writing(path: request.path))
        return [.export(request)]
    }

    static func exported(_ request: ExportRequest, _ result: Result<ExportResult, BrowserFailure>, _ state: inout BrowserState) {
        switch result {
        case .success(let done):
            state.say(.exported(records: done.records, path: done.path, format: request.format))
        case .failure(let failure):
            state.clearNotice()

            reopen(.command, text: "export \(request.path)", refusal: .exportNotWritten(failure.message), &state)
        }
    }
}
