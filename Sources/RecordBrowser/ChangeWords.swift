import CloudKitModels
import TerminalUI

/// What one element of a list did between the old list and the new one.
public enum ElementChange: Sendable, Hashable {
    case added(index: Int, FieldValue)
    case removed(index: Int, FieldValue)
    /// The element at `old` in the old list is `new` in the new one, with another value.
    case changed(old: Int, new: Int, from: FieldValue, to: FieldValue)
    /// The same value at another place.
    case moved(from: Int, to: Int, FieldValue)
}

/// Whether a record a `VALIDATE` reference names exists (records/lookup, or the batch itself).
public enum TargetCheck: Sendable, Hashable {
    case checking
    case exists
    case missing
    /// The lookup failed: not known.
    case unknown(String)
}

/// The words of a staged change: values as the batch shows them, lists element by element, and the
/// references whose target must exist.
public enum ChangeWords {
    /// Old list → new list, element by element: the longest common run stays unsaid; between two
    /// kept elements, removed and added elements pair up as changes; an element removed in one place
    /// and added in another is a move. Nil when the lists are too long to compare (more than
    /// `limit` × `limit` steps).
    public static func elements(_ old: [FieldValue], _ new: [FieldValue], limit: Int = 2000) -> [ElementChange]? {
        guard old.count * new.count <= limit * limit else { return nil }
        let n = old.count, m = new.count
        // lcs[i][j]: the longest common subsequence of old[i...] and new[j...].
        var lcs = Array(repeating: Array(repeating: 0, count: m + 1), count: n + 1)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                lcs[i][j] = old[i] == new[j] ? lcs[i + 1][j + 1] + 1 : max(lcs[i + 1][j], lcs[i][j + 1])
            }
        }
        // Gaps between kept elements: (removed old indices, added new indices).
        var gaps: [([Int], [Int])] = []
        var removed: [Int] = [], added: [Int] = []
        var i = 0, j = 0
        while i < n || j < m {
            if i < n, j < m, old[i] == new[j] {
                if !removed.isEmpty || !added.isEmpty { gaps.append((removed, added)) }
                removed = []
                added = []
                i += 1
                j += 1
            } else if j < m, i == n || lcs[i][j + 1] >= lcs[i + 1][j] {
                added.append(j)
                j += 1
            } else {
                removed.append(i)
                i += 1
            }
        }
        if !removed.isEmpty || !added.isEmpty { gaps.append((removed, added)) }
        // Moves first (the same value gone from one gap and arrived in another, or in the same one).
        var allRemoved = gaps.flatMap(\.0), allAdded = gaps.flatMap(\.1)
        var changes: [ElementChange] = []
        for a in allAdded {
            if let r = allRemoved.firstIndex(where: { old[$0] == new[a] }) {
                changes.append(.moved(from: allRemoved[r], to: a, new[a]))
                allRemoved.remove(at: r)
                allAdded.removeAll { $0 == a }
            }
        }
        for (gapRemoved, gapAdded) in gaps {
            let r = gapRemoved.filter(allRemoved.contains), a = gapAdded.filter(allAdded.contains)
            for k in 0..<max(r.count, a.count) {
                if k < r.count && k < a.count {
                    changes.append(.changed(old: r[k], new: a[k], from: old[r[k]], to: new[a[k]]))
                } else if k < r.count {
                    changes.append(.removed(index: r[k], old[r[k]]))
                } else {
                    changes.append(.added(index: a[k], new[a[k]]))
                }
            }
        }
        return changes.sorted { order($0) < order($1) }
    }

    private static func order(_ change: ElementChange) -> (Int, Int) {
        switch change {
        case .added(let i, _): return (i, 1)
        case .removed(let i, _): return (i, 0)
        case .changed(_, let i, _, _): return (i, 1)
        case .moved(_, let i, _): return (i, 1)
        }
    }

    /// A value as the batch shows it: a reference as `target (ACTION)`, an asset as the file that is
    /// uploaded, a list as its count, anything else as the detail view shows it (on one line).
    public static func value(_ value: FieldValue?) -> String {
        guard let value else { return "—" }
        switch value {
        case .null: return "∅ cleared"
        case .reference(let r): return reference(r)
        case .asset(let a):
            if let path = a.localFilePath { return "file \(path) (\(a.size.map { AssetProgress.bytes($0) } ?? "?"), uploaded on commit)" }
            return "asset" + (a.size.map { " of \(Format.count(Int($0))) bytes" } ?? "") + (a.fileChecksum.map { " (checksum \($0))" } ?? "")
        default:
            if value.isList { return Format.items(value.listCount ?? 0) }
            return Format.scalar(value).replacing("\n", with: "⏎")
        }
    }

    /// `artist-nobody (VALIDATE)`, `folder-1 in zone Notes (DELETE_SELF)`, `x (no action)`.
    public static func reference(_ r: Reference) -> String {
        var text = r.recordName
        if let zone = r.zoneID { text += " in zone \(zone.zoneName)" }
        return text + " (\(r.action?.rawValue ?? "no action"))"
    }

    /// What a reference's action means, for the inline editor.
    public static func meaning(_ action: ReferenceAction?) -> String {
        switch action {
        case .deleteSelf?: return "deleting the target deletes this record too"
        case .validate?: return "the target must exist, and cannot be deleted while this refers to it"
        case .noAction?: return "nothing happens to this record when the target is deleted"
        default: return "no action is sent"
        }
    }

    /// The lines of one field's change (`tags: [3 items] → [4 items]`, then one line per element that
    /// changed), unindented; at most `limit` element lines.
    public static func lines(_ diff: FieldDiff, limit: Int = 12) -> [String] {
        let head = "\(diff.field): \(value(diff.old)) → \(value(diff.new))"
        guard let old = diff.old, let new = diff.new, old.isList || new.isList else { return [head] }
        let oldElements = old == .null ? [] : old.listElements, newElements = new == .null ? [] : new.listElements
        guard let changes = elements(oldElements, newElements) else { return [head + " (too long to compare element by element)"] }
        var lines = [head]
        for change in changes.prefix(limit) {
            switch change {
            case .added(let i, let v): lines.append("  + [\(i)] \(element(v)) added")
            case .removed(let i, let v): lines.append("  − [\(i)] \(element(v)) removed")
            case .changed(let o, let n, let a, let b): lines.append("  ~ [\(o == n ? "\(n)" : "\(o)→\(n)")] \(element(a)) → \(element(b))")
            case .moved(let f, let t, let v): lines.append("  ↕ [\(f)→\(t)] \(element(v)) moved")
            }
        }
        if changes.count > limit { lines.append("  … \(Format.plural(changes.count - limit, "more element change"))") }
        return lines
    }

    static func element(_ v: FieldValue) -> String {
        let text = value(v)
        return text.count > 60 ? String(text.prefix(59)) + "…" : text
    }

    // MARK: VALIDATE targets

    /// The records the staged updates refer to with `VALIDATE` (in their new values only: a reference
    /// the record already had was checked when it was saved).
    public static func validateTargets(_ batch: StagedBatch) -> [(op: StagedOperation, field: String, target: RecordKey)] {
        var found: [(StagedOperation, String, RecordKey)] = []
        for op in batch.operations where op.kind == .update {
            for (field, value) in op.changes.sorted(by: { $0.key < $1.key }) {
                let old = op.mode == .create ? [] : (op.baseFields[field].map(references) ?? [])
                for r in references(value) where r.action == .validate && !old.contains(r) {
                    found.append((op, field, target(r, from: op.zone)))
                }
            }
        }
        return found
    }

    static func references(_ value: FieldValue) -> [Reference] {
        switch value {
        case .reference(let r): return [r]
        case .referenceList(let rs): return rs
        default: return []
        }
    }

    /// The record a reference names: in its own zone when it says one (same database and owner).
    static func target(_ r: Reference, from zone: ZoneKey) -> RecordKey {
        guard let zoneID = r.zoneID else { return RecordKey(zone: zone, recordName: r.recordName) }
        let owner = zone.database == .shared ? (zoneID.ownerRecordName ?? zone.owner) : ""
        return RecordKey(zone: ZoneKey(scope: zone.scope, owner: owner, zoneName: zoneID.zoneName), recordName: r.recordName)
    }

    /// What is known of a target: the batch first (a record it creates exists, one it deletes will
    /// not), then the lookups.
    public static func status(of target: RecordKey, _ state: BrowserState) -> TargetCheck? {
        if let op = state.staged.operation(for: target) { return op.kind == .delete ? .missing : .exists }
        return state.known.targets[target]
    }

    /// The staged VALIDATE references whose target is not known yet, marked as being checked, and
    /// the lookup that checks them.
    public static func checkTargets(_ state: inout BrowserState) -> [BrowserEffect] {
        var keys: [RecordKey] = []
        for found in validateTargets(state.staged) where status(of: found.target, state) == nil && !keys.contains(found.target) {
            keys.append(found.target)
            state.known.targets[found.target] = .checking
        }
        return keys.isEmpty ? [] : [.checkTargets(keys)]
    }

    /// Warnings for the batch view and the commit preview: `artist-nobody does not exist: VALIDATE will refuse`.
    public static func targetWarnings(_ state: BrowserState, for op: StagedOperation? = nil) -> [(text: String, bad: Bool)] {
        var lines: [(text: String, bad: Bool)] = []
        for found in validateTargets(state.staged) where op == nil || found.op.key == op!.key {
            if let line = targetWarning(found, state, naming: op == nil) { lines.append(line) }
        }
        return lines
    }

    /// Every staged operation's warnings, from one pass over the batch (the batch screen's lines for
    /// 10,000 operations would otherwise go over the batch once per operation).
    static func targetWarningsByRecord(_ state: BrowserState) -> [RecordKey: [(text: String, bad: Bool)]] {
        var byRecord: [RecordKey: [(text: String, bad: Bool)]] = [:]
        for found in validateTargets(state.staged) {
            if let line = targetWarning(found, state, naming: false) { byRecord[found.op.key, default: []].append(line) }
        }
        return byRecord
    }

    /// `artwork-7.artist → artist-nobody does not exist: VALIDATE will refuse`, after the reference.
    static func missingTarget(_ reference: String, stagedForDeletion: Bool) -> String {
        "\(reference) \(stagedForDeletion ? "is staged for deletion" : "does not exist"): VALIDATE will refuse"
    }

    private static func targetWarning(_ found: (op: StagedOperation, field: String, target: RecordKey), _ state: BrowserState, naming: Bool) -> (text: String, bad: Bool)? {
        let name = found.target.recordName
        let who = naming ? "\(found.op.recordName).\(found.field) → " : "\(found.field) → "
        switch status(of: found.target, state) {
        case .missing?:
            let deleted = state.staged.operation(for: found.target)?.kind == .delete
            return (missingTarget(who + name, stagedForDeletion: deleted), true)
        case .unknown(let why)?: return ("\(who)\(name): not checked (\(why)); VALIDATE refuses if it does not exist", false)
        case .checking?, nil: return ("\(who)\(name): checking that it exists…", false)
        case .exists?: return nil
        }
    }
}

extension Browser {
    /// The lookup's answer: which targets exist.
    static func targetsChecked(_ found: [RecordKey: Bool], failure: BrowserFailure?, _ state: inout BrowserState) {
        for (key, exists) in found { state.known.targets[key] = exists ? .exists : .missing }
        if let failure {
            for (key, check) in state.known.targets where check == .checking { state.known.targets[key] = .unknown(failure.message) }
        }
        let missing = ChangeWords.validateTargets(state.staged).filter { ChangeWords.status(of: $0.target, state) == .missing }
        if let first = missing.first {
            state.say(.targetMissing(record: first.op.recordName, field: first.field, target: first.target.recordName,
                                     stagedForDeletion: state.staged.operation(for: first.target)?.kind == .delete, more: missing.count - 1))
        }
    }
}

extension Browser {
    /// The commit preview's "what changes": per operation, its fields old → new (lists element by
    /// element), and the VALIDATE references whose target does not exist.
    static func changeLines(_ state: BrowserState) -> [(text: String, tone: Tone)] {
        let ops = state.staged.operations
        guard !ops.isEmpty || !state.staged.subscriptionOperations.isEmpty else { return [] }
        var lines: [(String, Tone)] = [("", .plain), ("What changes:", .emphasis)]
        // Subscriptions first (they are sent before the records): old → new per key.
        for line in subscriptionBatchLines(state) {
            lines.append(("  " + line.text, line.text.hasPrefix("DELETE") ? .bad : (line.text.hasPrefix("    refused") ? .bad : .plain)))
        }
        let warnings = ChangeWords.targetWarningsByRecord(state)
        let batchDeletes = Browser.batchDeletes(state)
        for op in ops.prefix(50) {
            lines.append(("  \(op.verb) \(state.zoneName(op.zone)) › \(op.recordName)" + (op.recordType.map { " (\($0))" } ?? "")
                + (op.mode == .recreate ? ": re-created whole (deleted on the server)" : ""), op.kind == .delete ? .bad : .plain))
            if op.kind == .update {
                for d in op.diff {
                    for line in ChangeWords.lines(d) { lines.append(("    " + line, Tone.plain)) }
                }
            }
            for line in state.known.impacts[op.key]?.lines(deleting: op.recordName, batchDeletes: batchDeletes) ?? [] {
                lines.append(("    " + (line.bad ? "✗ " : "") + line.text, line.bad ? Tone.bad : Tone.dim))
            }
            for warning in warnings[op.key] ?? [] { lines.append(("    ✗ " + warning.text, warning.bad ? Tone.bad : Tone.note)) }
        }
        if ops.count > 50 { lines.append(("  … and \(Format.plural(ops.count - 50, "more operation")) (b shows them all)", .dim)) }
        return lines
    }
}

extension Format {
    /// A request body as shown: an asset's wrapping key (a secret an upload may answer with) hidden.
    public static func hidingSecrets(_ json: JSON) -> JSON {
        switch json {
        case .object(let object):
            return .object(JSONObject(pairs: object.pairs.map { pair in
                (pair.key, pair.key == "wrappingKey" ? JSON.string("(hidden)") : hidingSecrets(pair.value))
            }))
        case .array(let elements): return .array(elements.map(hidingSecrets))
        default: return json
        }
    }
}
