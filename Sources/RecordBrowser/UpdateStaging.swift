import CloudKitModels
import TerminalUI

/// Staging: the inline editor, `$EDITOR`, deletes, unstaging and the batch screen.
extension Browser {
    /// The staged op of the open record, if any.
    static func detailOperation(_ state: BrowserState) -> StagedOperation? {
        guard let detail = state.detailScreen?.detail else { return nil }
        return state.staged.operation(for: detail.key)
    }

    /// False (with the reason on the hint line) when the connection refuses writes.
    static func writable(_ state: inout BrowserState) -> Bool {
        if let reason = state.readOnlyReason {
            state.say(.nothingStaged(.readOnly(reason)))
            return false
        }
        // A zone shared with the user READ_ONLY: said before anything is staged, not after a commit fails.
        // (The zone is read from the stack: a screen's zone does not change while its keys are handled.)
        let zone = state.pane == .recordDetail ? state.detailScreen?.detail.key.zone : state.recordsScreen?.list.zone
        if let zone, zone.database == .shared, state.sharePermissions[zone] == .readOnly {
            state.say(.nothingStaged(.sharedReadOnly(zone: zone.zoneID.zoneName, owner: ownerName(state, zone.zoneID))))
            return false
        }
        return true
    }

    static func stage(_ operation: StagedOperation, _ state: inout BrowserState, as change: Notice.StagedChange) {
        state.staged.stage(operation)
        state.say(.staged(change, total: state.staged.operations.count))
    }

    /// The field of the selected detail line: its name, and its current value (staged or server).
    static func selectedField(_ screen: DetailScreen, _ state: BrowserState) -> (name: String, value: FieldValue?)? {
        let detail = screen.detail
        guard detail.record != nil, !detail.showRaw else { return nil }
        // The lines as shown (a `/` filter may hide some), so the selection names the field on screen.
        let lines = detailPage(screen, state).lines
        guard lines.indices.contains(detail.selection), let owner = lines[detail.selection].owner else { return nil }
        let op = state.staged.operation(for: detail.key)
        let value = op?.kind == .update ? (op!.changes[owner] ?? detail.record!.fields[owner]) : detail.record!.fields[owner]
        return (owner, value)
    }

    /// The selected detail line as shown.
    static func selectedLine(_ screen: DetailScreen, _ state: BrowserState) -> DetailLine? {
        let detail = screen.detail
        guard !detail.showRaw else { return nil }
        let lines = detailPage(screen, state).lines
        guard lines.indices.contains(detail.selection) else { return nil }
        return lines[detail.selection]
    }

    /// The current value of a field of a record: staged, else the server's.
    static func currentValue(_ detail: RecordDetail, _ state: BrowserState, _ field: String) -> FieldValue? {
        guard let record = detail.record else { return nil }
        if let op = state.staged.operation(for: detail.key), op.kind == .update, let staged = op.changes[field] { return staged }
        return record.fields[field]
    }

    /// Staging keys of the record detail.
    static func detailStagingKey(_ key: Key, _ screen: inout DetailScreen, _ state: inout BrowserState) -> [BrowserEffect]? {
        let detail = screen.detail
        if let record = detail.record, record.isShare, let effects = shareKey(key, record, &screen, &state) { return effects }
        switch key {
        case .char("e"), .char("a"), .char("x"), .char("d"), .char("E"):
            guard let record = detail.record else {
                state.say(.recordNotLoaded)
                return []
            }
            guard writable(&state) else { return [] }
            return editKey(key, record, &screen, &state)
        case .char("u"):
            // u: the selected field's staged change only; U: the whole record.
            if let line = selectedLine(screen, state), let field = line.owner, state.staged.unstage(field: field, of: detail.key) {
                let left = state.staged.operation(for: detail.key)?.changes.count ?? 0
                state.say(.unstagedField(field, record: detail.recordName, changesLeft: left))
                settleDetail(&screen, state)
                return []
            }
            unstage(detail.key, &state)
            return []
        case .char("U"):
            unstage(detail.key, &state)
            return []
        default:
            return nil
        }
    }

    static func editKey(_ key: Key, _ record: Record, _ screen: inout DetailScreen, _ state: inout BrowserState) -> [BrowserEffect] {
        let detail = screen.detail
        // On one element of a list: e edits it, a adds one after it, x removes it. On the list's own row,
        // a adds a field and x clears the whole field, as anywhere else (the help's "a add a field", and
        // what `elementToRemove` says); e on an empty list adds its first element.
        if let line = selectedLine(screen, state), let field = line.owner, let list = currentValue(detail, state, field), list.isList,
            let elementType = list.type.elementType, FieldInput.isEditable(list.type), ["e", "a", "x"].contains(key.character ?? " "),
            line.element != nil || key == .char("e") {
            let elements = list.listElements
            switch key {
            case .char("e"):
                if elements.isEmpty {
                    var editor = FieldEditor(field: field, type: elementType, original: nil, text: "")
                    editor.element = .insert(0)
                    state.editor = editor
                    return []
                }
                guard let i = line.element, elements.indices.contains(i) else {
                    state.say(.select(.elementToEdit))
                    return []
                }
                var editor = FieldEditor(field: field, type: elementType, original: elements[i], text: FieldInput.text(of: elements[i]))
                editor.element = .replace(i)
                state.editor = editor
            case .char("a"):
                var editor = FieldEditor(field: field, type: elementType, original: nil, text: "")
                editor.element = .insert(line.element.map { $0 + 1 } ?? elements.count)
                state.editor = editor
            default:
                guard let i = line.element, elements.indices.contains(i) else {
                    state.say(.select(.elementToRemove))
                    return []
                }
                var rest = elements
                rest.remove(at: i)
                guard let value = FieldInput.list(list.type, rest) else { return [] }
                stage(StagedOperation(kind: .update, zone: detail.zone, base: record, changes: [field: value]), &state,
                      as: .elementRemoved(i, field: field))
                select(field: field, element: min(i, rest.count - 1), &screen, state)
            }
            return []
        }
        switch key {
        case .char("e"):
            guard let (name, value) = selectedField(screen, state) else {
                state.say(.select(.fieldToEdit))
                return []
            }
            guard let value, value != .null else {
                let type = record.fields[name]?.type
                guard let type, type.rawValue != "NULL" else {
                    state.say(.fieldCleared(name))
                    return []
                }
                if type == .assetID {
                    state.input = InputLine(.assetFile(field: name))
                    return []
                }
                state.editor = FieldEditor(field: name, type: type, original: nil, text: "")
                return []
            }
            if value.type == .assetID {
                // An asset is replaced by a file, uploaded on commit.
                state.input = InputLine(.assetFile(field: name))
                return []
            }
            guard FieldInput.isEditable(value.type) else {
                state.say(.typeNotEditable(value.type))
                return []
            }
            state.editor = FieldEditor(field: name, type: value.type, original: record.fields[name], text: FieldInput.text(of: value))
        case .char("a"):
            state.input = InputLine(.addField)
        case .char("x"):
            guard let (name, value) = selectedField(screen, state) else {
                state.say(.select(.fieldToClear))
                return []
            }
            guard value != nil, value != .null else {
                state.say(.alreadyCleared(name))
                return []
            }
            stage(StagedOperation(kind: .update, zone: detail.zone, base: record, changes: [name: .null]), &state,
                  as: .cleared(field: name, record: record.recordName))
        case .char("d"):
            stage(StagedOperation(kind: .delete, zone: detail.zone, base: record), &state,
                  as: .deletion(record: record.recordName))
            return stagedLookups(&state)
        case .char("E"):
            let op = state.staged.operation(for: detail.key)
            return [.editJSON(JSONEdit(zone: detail.zone, record: record, text: FieldsJSON.text(record: record, operation: op, error: nil)))]
        default:
            break
        }
        return []
    }

    /// `n` on the zones screen: a zone to create, staged with the batch.
    static func newZone(_ text: String, _ state: inout BrowserState) -> [BrowserEffect] {
        let name = text.trimmingWhitespace()
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains(Character($0)) || "_-.".unicodeScalars.contains($0)) }),
            name != ZoneID.defaultZoneName
        else {
            refuse(.invalidZoneName, &state)
            return []
        }
        guard state.connection.database == .private else {
            refuse(.zonesOnlyInPrivate, &state)
            return []
        }
        let key = state.connection.zone(ZoneID(zoneName: name))
        guard !state.zones.contains(where: { $0.zone?.zoneID.zoneName == name }) else {
            refuse(.zoneExists(name), &state)
            return []
        }
        state.staged.stage(zone: StagedZoneOperation(kind: .create, zone: key))
        state.say(.stagedZoneCreation(name))
        return []
    }

    /// `n`: "TYPE [NAME]" stages a new record and opens it, to add its fields (a, E).
    static func newRecord(_ text: String, _ state: inout BrowserState) -> [BrowserEffect] {
        let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let list = state.recordsScreen?.list, let type = words.first, words.count <= 2 else {
            refuse(.newRecordUsage, &state)
            return []
        }
        guard FieldNames.isValid(type) else {
            refuse(.invalidRecordType(type), &state)
            return []
        }
        state.newRecordCount += 1
        let name = words.count == 2 ? words[1] : "\(type.lowercased())-\(String(state.now, radix: 36))\(state.newRecordCount)"
        let key = RecordKey(zone: list.zone, recordName: name)
        guard state.staged.operation(for: key) == nil else {
            refuse(.alreadyStaged(name), &state)
            return []
        }
        state.staged.stage(StagedOperation.newRecord(zone: list.zone, recordType: type, recordName: name))
        state.stack.push(.detail(DetailScreen(RecordDetail(key: key, record: Record(recordName: name, recordType: type), loading: false))))
        settleOpenRecord(&state, toFirst: true)
        state.say(.stagedNewRecord(type: type, name: name))
        return []
    }

    /// `a`: "name TYPE" typed on the input line opens the editor for a new field.
    static func addField(_ text: String, _ state: inout BrowserState) -> [BrowserEffect] {
        let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let record = state.detailScreen?.detail.record else { return [] }
        // A field the schema knows needs no type: the schema's is used.
        if words.count == 1, let type = record.recordType.flatMap({ state.schema?.schema.recordType($0) })?.field(words[0]) {
            return addField("\(words[0]) \(type.type.wireType)", &state)
        }
        guard words.count == 2 else {
            refuse(.addFieldUsage, &state)
            return []
        }
        let name = words[0], type = FieldType(rawValue: words[1].uppercased())
        if let known = record.recordType.flatMap({ state.schema?.schema.recordType($0) })?.field(name), known.type.wireType != type.rawValue {
            refuse(.schemaTypeDiffers(name, type: "\(known.type)", source: state.schema?.source ?? "", wireType: known.type.wireType), &state)
            return []
        }
        guard FieldNames.isValid(name) else {
            refuse(.invalidFieldName(name), &state)
            return []
        }
        if type == .assetID || type == .asset {
            if let existing = record.fields[name], existing != .null, existing.type != .assetID {
                refuse(.fieldExists(name, existing.type), &state)
                return []
            }
            state.input = InputLine(.assetFile(field: name))
            return []
        }
        guard FieldInput.isEditable(type) else {
            refuse(.typeNotTypeable(words[1]), &state)
            return []
        }
        if let existing = record.fields[name], existing != .null, existing.type != type {
            refuse(.fieldExists(name, existing.type), &state)
            return []
        }
        state.editor = FieldEditor(field: name, type: type, original: record.fields[name], text: "")
        return []
    }

    /// Keys while the inline editor is open: Enter validates and stages, Esc cancels.
    static func editorKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect] {
        guard var editor = state.editor else { return [] }
        switch key {
        case .escape, .ctrl("c"):
            state.editor = nil
            state.say(.nothingStaged(.editCancelled))
            return []
        case .enter:
            switch FieldInput.parse(editor.string, as: editor.type, original: editor.original) {
            case .failure(let error):
                editor.error = error.description
                state.editor = editor
            case .success(var value):
                state.editor = nil
                guard let detail = state.detailScreen?.detail, let record = detail.record else { return [] }
                if let element = editor.element {
                    // One element: the whole list goes out with it replaced or inserted.
                    guard let list = currentValue(detail, state, editor.field) else { return [] }
                    var elements = list.listElements
                    switch element {
                    case .replace(let i) where elements.indices.contains(i): elements[i] = value
                    case .insert(let i): elements.insert(value, at: min(max(0, i), elements.count))
                    default: return []
                    }
                    guard let rebuilt = FieldInput.list(list.type, elements) else { return [] }
                    value = rebuilt
                }
                let op = StagedOperation(kind: .update, zone: detail.zone, base: record, changes: [editor.field: value])
                if value == record.fields[editor.field], state.staged.operation(for: op.key)?.changes[editor.field] == nil {
                    state.say(.nothingStaged(.unchanged(field: editor.field)))
                    return []
                }
                stage(op, &state, as: .field(editor.field, record: record.recordName))
                switch editor.element {
                case .replace(let i)?, .insert(let i)?: state.withDetail { select(field: editor.field, element: i, &$0, $1) }
                case nil: settleOpenRecord(&state)
                }
                return stagedLookups(&state)
            }
            return []
        default:
            if editor.edit(key) { state.editor = editor }
            return []
        }
    }

    /// `$EDITOR` returned.
    static func jsonEdited(_ edit: JSONEdit, edited: String?, status: Int32, _ state: inout BrowserState) -> [BrowserEffect] {
        guard let edited else {
            state.say(.nothingStaged(.editedFileUnreadable))
            return []
        }
        if status != 0 {
            state.say(.nothingStaged(.editorFailed(status: status)))
            return []
        }
        let zone: ZoneKey, record: Record
        switch edit.subject {
        case .fields(let z, let r): (zone, record) = (z, r)
        case .subscription(_, .some) where edited == edit.text:
            state.say(.nothingStaged(.noChange))
            return []
        case .subscription(let scope, let base):
            // A new subscription's template saved as it came is a subscription to stage.
            return subscriptionEdited(edit, edited, scope: scope, base: base, &state)
        }
        if edited == edit.text {
            state.say(.nothingStaged(.noChange))
            return []
        }
        let op = state.staged.operation(for: RecordKey(zone: zone, recordName: record.recordName))
        let base = op?.baseFields ?? record.fields
        do throws(FieldInputError) {
            guard let changes = try FieldsJSON.changes(from: edited, base: base) else {
                state.say(.nothingStaged(.fileEmptied))
                return []
            }
            var update = StagedOperation(kind: .update, zone: zone, base: record, changes: changes)
            if let op {
                update.baseTag = op.baseTag
                update.baseFields = op.baseFields
                if op.mode == .create { update.mode = .create }  // still a new record
            }
            state.staged.replaceChanges(update)
            let staged = state.staged.operation(for: update.key)?.changes ?? [:]
            let cleared = staged.values.filter { $0 == .null }.count
            state.say(staged.isEmpty ? .nothingStaged(.fieldsEqual(record: record.recordName))
                : .staged(.fieldChanges(staged.count, record: record.recordName, cleared: cleared), total: state.staged.operations.count))
            return stagedLookups(&state)
        } catch {
            // The editor opens again with the error on top; the user's text is kept as it was.
            var again = edit
            again.text = FieldsJSON.reopen(edited, record: record, error: error.description)
            return [.editJSON(again)]
        }
        return []
    }

    // MARK: Lists

    static func listStagingKey(_ key: Key, _ screen: inout RecordsScreen, _ state: inout BrowserState) -> [BrowserEffect]? {
        let list = screen.list
        guard let row = list.row(list.selection) else { return nil }
        let recordKey = RecordKey(zone: list.zone, recordName: row.recordName)
        switch key {
        case .char("d"):
            guard writable(&state) else { return [] }
            guard !row.deleted else {
                state.say(.alreadyDeleted(row.recordName))
                return []
            }
            screen.stagingReads += 1
            return [.loadRecordToDelete(list.key, row.recordName)]
        case .char("u"):
            unstage(recordKey, &state)
            return []
        default:
            return nil
        }
    }

    /// `u` in a record or a list: drops the record's staged op, or says there is none.
    static func unstage(_ key: RecordKey, _ state: inout BrowserState) {
        let name = key.recordName
        guard state.staged.operation(for: key) != nil else {
            state.say(.nothingStaged(.record(name)))
            return
        }
        state.staged.unstage(key)
        state.say(.unstaged(.record(name), total: state.staged.operations.count))
    }

    /// A staging read (`d` on a row, marked records read for `d` or `:set`) came back.
    static func stagingReadDone(_ state: inout BrowserState) {
        state.withRecords { screen, _ in screen.stagingReads = max(0, screen.stagingReads - 1) }
    }

    /// Staging waits for the cache: keys typed meanwhile wait too.
    static func stagingPending(_ state: BrowserState) -> Bool {
        (state.recordsScreen?.stagingReads ?? 0) > 0
    }

    static func recordToDelete(_ key: RecordKey, _ record: Record?, _ state: inout BrowserState) -> [BrowserEffect] {
        let name = key.recordName
        guard let record else {
            state.say(.notCachedToDelete(name))
            return []
        }
        stage(StagedOperation(kind: .delete, zone: key.zone, base: record), &state, as: .deletion(record: name))
        return stagedLookups(&state)
    }

    // MARK: Batch screen

    static func openBatch(_ state: inout BrowserState) -> [BrowserEffect] {
        if state.pane != .batch {
            state.stack.remove([.commit, .conflict])
            state.stack.open(.batch)
        }
        state.setSelection(.batch, min(state.position(.batch).selection, max(0, state.staged.count - 1)))
        return []
    }

    static func batchKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect] {
        // One selection over the zone operations (listed first) and the record operations.
        let ops = state.staged.operations, zoneOps = state.staged.zoneOperations
        let count = zoneOps.count + ops.count
        var list = batchMovement(state)
        if list.apply(key) {
            state.setSelection(.batch, list.selection)
            state.setScroll(.batch, list.scroll)
            return []
        }
        if key == .char("X") {
            if state.staged.isEmpty { state.say(.nothingToCommit) } else { state.confirmation = .discardAll }
            return []
        }
        if zoneOps.indices.contains(state.position(.batch).selection) {
            let zone = zoneOps[state.position(.batch).selection]
            switch key {
            case .char("u"):
                state.staged.unstage(zone: zone.zone)
                state.setSelection(.batch, min(state.position(.batch).selection, max(0, state.staged.count - 1)))
                state.say(.unstaged(.zone(zone.zone.zoneID.zoneName, zone.kind), total: state.staged.count))
            case .enter, .char("l"), .right:
                state.say(.zoneOperationHint)
            default: break
            }
            return []
        }
        let subscriptionOps = state.staged.subscriptionOperations
        if subscriptionOps.indices.contains(state.position(.batch).selection - zoneOps.count) {
            let op = subscriptionOps[state.position(.batch).selection - zoneOps.count]
            switch key {
            case .char("u"):
                state.staged.unstage(subscription: op.key)
                state.setSelection(.batch, min(state.position(.batch).selection, max(0, state.staged.count - 1)))
                state.say(.unstaged(.subscription(op.subscriptionID, op.kind), total: state.staged.count))
            case .enter, .char("l"), .right:
                guard op.key.scope == state.connection.scope else {
                    state.say(.inOtherDatabase(op.subscriptionID, op.database))
                    return []
                }
                let effects = openSubscriptions(&state)
                if let index = subscriptionList(state).firstIndex(where: { $0.subscription?.subscriptionID == op.subscriptionID }) {
                    state.setSelection(.subscriptions, index)
                    state.stack.push(.subscriptionDetail(SubscriptionDetailScreen()))
                }
                return effects
            default: break
            }
            return []
        }
        let before = zoneOps.count + subscriptionOps.count
        guard ops.indices.contains(state.position(.batch).selection - before) else { return [] }
        let op = ops[state.position(.batch).selection - before]
        switch key {
        case .char("u"):
            state.staged.unstage(op.key)
            state.setSelection(.batch, min(state.position(.batch).selection, max(0, state.staged.count - 1)))
            state.say(.unstaged(.record(op.recordName), total: state.staged.count))
        case .enter, .char("l"), .right:
            guard op.zone.scope == state.connection.scope else {
                state.say(.inOtherDatabase(op.recordName, op.database))
                return []
            }
            if op.mode == .create {
                // Not on the server yet: shown from the batch.
                state.stack.push(.detail(DetailScreen(RecordDetail(key: op.key, record: Record(recordName: op.recordName, recordType: op.recordType), loading: false))))
                settleOpenRecord(&state, toFirst: true)
                return []
            }
            return openRecord(op.key, &state)
        default: break
        }
        return []
    }

    static func confirmationKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect] {
        guard let confirmation = state.confirmation else { return [] }
        state.confirmation = nil
        switch (confirmation, key) {
        case (.discardAll, .char("y")), (.discardAll, .char("Y")):
            let count = state.staged.operations.count
            state.staged.discardAll()
            state.setSelection(.batch, 0)
            state.say(.discarded(count))
        case (.abortConflicts, .char("y")), (.abortConflicts, .char("Y")):
            abortConflicts(&state)
        case (.abortConflicts, _):
            state.say(.backToConflicts)
        case (.refusedQuery(let text, let zone, _), .char("y")), (.refusedQuery(let text, let zone, _), .char("Y")):
            // Sent as typed: the server's answer says the rest.
            guard let query = try? parseQuery(Array(text.split(separator: " ").map(String.init).dropFirst())) else { return [] }
            return runQuery(QueryRequest(query: query), in: zone, text: text, &state)
        case (.refusedQuery(let text, _, _), _):
            state.input = InputLine(.command, text: text)
        default:
            state.say(.keptStaged)

        }
        return []
    }
}

extension FieldInput {
    /// Types the inline editor can parse.
    public static let editableTypes: [FieldType] = [
        .string, .int64, .double, .timestamp, .bytes, .reference, .location,
        .stringList, .int64List, .doubleList, .timestampList, .bytesList, .referenceList, .locationList,
    ]

    public static func isEditable(_ type: FieldType) -> Bool { editableTypes.contains(type) }
}

extension Key {
    /// The character of a plain character key.
    var character: Character? { if case .char(let c) = self { return c } else { return nil } }
}

extension FieldInput {
    /// A list of `listType` from scalar elements (nil when an element is of another type).
    static func list(_ listType: FieldType, _ elements: [FieldValue]) -> FieldValue? {
        func all<T>(_ pick: (FieldValue) -> T?) -> [T]? {
            let picked = elements.compactMap(pick)
            return picked.count == elements.count ? picked : nil
        }
        switch listType {
        case .stringList: return all { if case .string(let v) = $0 { return v } else { return nil } }.map(FieldValue.stringList)
        case .int64List: return all { if case .int64(let v) = $0 { return v } else { return nil } }.map(FieldValue.int64List)
        case .doubleList: return all { if case .double(let v) = $0 { return v } else { return nil } }.map(FieldValue.doubleList)
        case .timestampList: return all { if case .timestamp(let v) = $0 { return v } else { return nil } }.map(FieldValue.timestampList)
        case .bytesList: return all { if case .bytes(let v) = $0 { return v } else { return nil } }.map(FieldValue.bytesList)
        case .referenceList: return all { if case .reference(let v) = $0 { return v } else { return nil } }.map(FieldValue.referenceList)
        case .locationList: return all { if case .location(let v) = $0 { return v } else { return nil } }.map(FieldValue.locationList)
        default: return nil
        }
    }
}
