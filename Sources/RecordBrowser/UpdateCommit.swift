import CloudKitWeb
import TerminalUI

/// Commit: preview and confirmation, the outcome, the conflict prompt, and the check of a commit
/// whose answer was lost.
extension Browser {
    /// `c`: the exact requests, then a confirmation.
    static func beginCommit(_ state: inout BrowserState) -> [BrowserEffect] {
        if let commit = state.commit, [.sending, .verifying].contains(commit.phase) {
            state.message = "a commit is in flight: waiting for its answer"
            return []
        }
        guard !state.staged.isEmpty else {
            state.message = "nothing staged: in a record, e edits a field and d stages its deletion"
            return []
        }
        if let reason = state.readOnlyReason {
            state.message = "read-only: \(reason). Nothing sent."
            return []
        }
        do {
            state.commit = CommitSession(plan: try CommitPlan.make(state.staged))
        } catch {
            state.message = BrowserFailure(error).message
            return []
        }
        state.stack = state.stack.filter { ![.commit, .conflict].contains($0) }
        state.stack.append(.commit)
        return []
    }

    static func closeCommit(_ state: inout BrowserState) {
        state.commit = nil
        state.stack = state.stack.filter { ![.commit, .conflict].contains($0) }
        if state.stack.isEmpty { state.stack = [.zones] }
    }

    /// The preview: notes, then each request as it will be sent.
    public static func previewLines(_ state: BrowserState) -> [String] {
        guard let commit = state.commit else { return [] }
        var lines: [String] = []
        let plan = commit.plan
        let count = plan.requests.reduce(0) { $0 + $1.body.operations.count }
        lines += commit.outcome
        switch commit.phase {
        case .preview: lines.append("\(count) operation\(count == 1 ? "" : "s") in \(plan.requests.count) request\(plan.requests.count == 1 ? "" : "s"); nothing is sent until you confirm:")
        case .sending: lines.append("sending \(count) operation\(count == 1 ? "" : "s")…")
        case .verifying: lines.append("No answer came back: looking the records up to find out whether the commit was applied…")
        case .done, .conflicts: lines.append("The requests that were sent:")
        }
        lines += plan.notes.map { "NOTE: " + $0 }
        lines.append("")
        let c = state.connection
        for request in plan.requests {
            let path = Endpoint.recordsModify.path(container: c.container, environment: c.environment, database: request.database)
            // The summary on a line of its own: the path alone fits an 80-column terminal.
            lines.append("zone \(request.body.zoneID?.zoneName ?? "_defaultZone") · atomic: \(request.atomic) · \(request.body.operations.count) operations")
            lines.append("POST \(path)")
            lines += request.body.json.prettyPrinted().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            lines.append("")
        }
        return lines
    }

    static func commitKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect] {
        guard var commit = state.commit else {
            closeCommit(&state)
            return []
        }
        let h = listHeight(state)
        let lineCount = previewLines(state).count
        func scroll(_ delta: Int) {
            commit.scroll = max(0, min(max(0, lineCount - h), commit.scroll + delta))
            state.commit = commit
        }
        switch key {
        case .down: scroll(1); return []
        case .up: scroll(-1); return []
        case .pageDown: scroll(h); return []
        case .pageUp: scroll(-h); return []
        default: break
        }
        switch commit.phase {
        case .preview:
            let production = state.connection.environment == .production
            switch key {
            case .escape, .ctrl("c"):
                closeCommit(&state)
                state.message = "commit cancelled: nothing sent; \(state.staged.operations.count) still staged"
                return []
            case .char("n") where !production:
                closeCommit(&state)
                state.message = "commit cancelled: nothing sent; \(state.staged.operations.count) still staged"
                return []
            case .char("j") where !production: scroll(1); return []
            case .char("k") where !production: scroll(-1); return []
            case .char("y") where !production:
                return send(&commit, &state)
            case .char(let c) where production:
                commit.typed.append(c)
            case .backspace where production:
                if !commit.typed.isEmpty { commit.typed.removeLast() }
            case .enter where production:
                guard commit.typed == state.connection.container else {
                    state.message = "type the container name exactly (\(state.connection.container)) to send to production"
                    return []
                }
                return send(&commit, &state)
            default: break
            }
            state.commit = commit
        case .sending, .verifying:
            state.message = "waiting for the server's answer…"
        case .done:
            if [.escape, .enter, .char("q"), .char("n"), .ctrl("c")].contains(key) || key == .char("y") {
                closeCommit(&state)
            }
        case .conflicts:
            break
        }
        return []
    }

    static func send(_ commit: inout CommitSession, _ state: inout BrowserState) -> [BrowserEffect] {
        commit.phase = .sending
        commit.outcome = []
        state.commit = commit
        state.message = "sending \(commit.plan.requests.count) request\(commit.plan.requests.count == 1 ? "" : "s")…"
        return [.commit(commit.plan)]
    }

    // MARK: Outcome

    static func commitFinished(_ outcomes: [CommitOutcome], _ state: inout BrowserState) -> [BrowserEffect] {
        var commit = state.commit ?? CommitSession(plan: CommitPlan(requests: outcomes.map(\.request), notes: []))
        var lines: [String] = []
        var conflicts: [Conflict] = []
        var innocent: [String] = []
        var failed: [String: String] = [:]
        var unknown: [CommitPlan.Request] = []
        var applied: [(DatabaseScope, ZoneID, RecordResult)] = []
        var updated = 0, deleted = 0
        for outcome in outcomes {
            let request = outcome.request
            let zone = request.body.zoneID ?? .default
            let label = "\(request.database.rawValue) zone \(zone.zoneName)"
            switch outcome.answer {
            case .answered(let results):
                var done = 0
                for (i, operation) in request.body.operations.enumerated() {
                    let name = operation.record.recordName
                    let t = target(request.database, zone, name)
                    let result = results.first { $0.recordName == name } ?? (results.indices.contains(i) ? results[i] : nil)
                    switch result {
                    case .record(let record)?:
                        state.staged.unstage(target: t)
                        applied.append((request.database, zone, .record(record)))
                        updated += 1
                        done += 1
                    case .deleted?:
                        state.staged.unstage(target: t)
                        applied.append((request.database, zone, .deleted(recordName: name, zoneID: zone)))
                        deleted += 1
                        done += 1
                    case .failure(let error)?:
                        switch error.serverErrorCode {
                        case .conflict, .notFound:
                            conflicts.append(Conflict(target: t, database: request.database, zoneID: zone, recordName: name,
                                                      code: error.serverErrorCode.rawValue, reason: error.reason ?? ""))
                        case .atomicError:
                            innocent.append(t)
                        default:
                            failed[t] = "\(error.serverErrorCode.rawValue): \(error.reason ?? "")"
                        }
                    case nil:
                        failed[t] = "the answer has no result for this operation"
                    }
                }
                let refusedCount = request.body.operations.count - done
                if refusedCount == 0 {
                    lines.append("\(label): applied all \(done) operation\(done == 1 ? "" : "s")\(request.atomic ? " atomically" : "").")
                } else if request.atomic {
                    lines.append("\(label): NOTHING was applied (the batch is atomic): \(refusedCount) operation\(refusedCount == 1 ? "" : "s") refused.")
                } else {
                    lines.append("\(label): \(done) applied, \(refusedCount) failed (not atomic: each on its own).")
                }
            case .refused(let failure):
                lines.append("\(label): the request was refused, nothing applied: \(failure.message)")
            case .unknown(let failure):
                unknown.append(request)
                lines.append("\(label): no answer (\(failure.message)); checking whether it was applied…")
            case .notSent:
                lines.append("\(label): not sent, because an earlier request's outcome is unknown.")
            }
        }
        for (t, why) in failed.sorted(by: { $0.key < $1.key }) { lines.append("  \(t): \(why) — stays staged") }
        var effects = showApplied(applied, &state)
        commit.outcome = lines
        commit.conflicts = conflicts
        commit.innocent = innocent
        commit.failed = failed
        commit.selection = 0
        var summary = "committed \(updated + deleted) operation\(updated + deleted == 1 ? "" : "s") (\(updated) saved, \(deleted) deleted)"
        if !failed.isEmpty { summary += "; \(failed.count) failed and stay staged" }
        if !conflicts.isEmpty {
            commit.phase = .conflicts
            state.commit = commit
            state.stack = state.stack.filter { ![.commit, .conflict].contains($0) }
            state.stack.append(.conflict)
            state.message = "\(conflicts.count) record\(conflicts.count == 1 ? "" : "s") changed on the server: nothing of their batch was applied; fetching the server's versions…"
            var groups: [(DatabaseScope, ZoneID, [String])] = []
            for c in conflicts {
                if let i = groups.firstIndex(where: { $0.0 == c.database && $0.1 == c.zoneID }) { groups[i].2.append(c.recordName) } else { groups.append((c.database, c.zoneID, [c.recordName])) }
            }
            effects += groups.map { .lookupConflicts($0.0, $0.1, $0.2) }
        } else if !unknown.isEmpty {
            commit.phase = .verifying
            state.commit = commit
            state.message = "the answer was lost: checking whether the commit was applied…"
            effects.append(.verifyCommit(unknown))
        } else {
            commit.phase = .done
            state.commit = commit
            state.message = updated + deleted == 0 && !failed.isEmpty ? "nothing committed: \(failed.count) failed and stay staged" : summary
        }
        return effects
    }

    /// Shows records a commit saved or deleted (or the server's versions the user took): the open
    /// record, and the open list through the cache.
    static func showApplied(_ applied: [(DatabaseScope, ZoneID, RecordResult)], _ state: inout BrowserState) -> [BrowserEffect] {
        guard !applied.isEmpty else { return [] }
        let database = state.connection.database
        if var detail = state.detail {
            for (scope, zone, result) in applied where scope == database && zone.zoneName == detail.zoneID.zoneName && result.recordName == detail.recordName {
                switch result {
                case .record(let record):
                    detail.record = record
                    detail.raw = nil
                    detail.error = nil
                case .deleted:
                    detail.record = nil
                    detail.error = BrowserFailure(message: "record '\(detail.recordName)' was deleted")
                case .failure: break
                }
            }
            state.detail = detail
        }
        guard let list = state.list else { return [] }
        let rows = applied.filter { $0.0 == database && $0.1.zoneName == list.zoneID.zoneName }.map(\.2)
        return rows.isEmpty ? [] : [.storeRecords(list.key, rows, generation: list.generation)]
    }

    static func recordsStored(generation: Int, total: Int, _ state: inout BrowserState) -> [BrowserEffect] {
        guard var list = state.list, list.generation == generation else { return [] }
        list.total = total
        if state.filter == nil { list.matching = total }
        state.list = list
        return window(&state, force: true)
    }

    // MARK: Conflicts

    static func conflictVersions(_ scope: DatabaseScope, _ zone: ZoneID, _ result: Result<[RecordResult], BrowserFailure>, _ state: inout BrowserState) {
        guard var commit = state.commit else { return }
        for i in commit.conflicts.indices where commit.conflicts[i].database == scope && commit.conflicts[i].zoneID.zoneName == zone.zoneName {
            let name = commit.conflicts[i].recordName
            switch result {
            case .success(let results):
                switch results.first(where: { $0.recordName == name }) {
                case .record(let record)?: commit.conflicts[i].server = .record(record)
                case .deleted?: commit.conflicts[i].server = .deleted
                case .failure(let error)? where error.serverErrorCode == .notFound: commit.conflicts[i].server = .deleted
                case .failure(let error)?: commit.conflicts[i].server = .failed("\(error.serverErrorCode.rawValue): \(error.reason ?? "")")
                case nil: commit.conflicts[i].server = .failed("the lookup returned nothing for this record")
                }
            case .failure(let failure):
                commit.conflicts[i].server = .failed(failure.message)
            }
        }
        state.commit = commit
        if commit.conflicts.allSatisfy({ $0.server != .loading }) { state.message = nil }
    }

    static func conflictKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect] {
        guard var commit = state.commit, commit.conflicts.indices.contains(commit.selection) else {
            closeCommit(&state)
            return []
        }
        var conflict = commit.conflicts[commit.selection]
        guard let op = state.staged.operation(for: conflict.target) else {
            conflict.resolution = .takeServer
            commit.conflicts[commit.selection] = conflict
            state.commit = commit
            return advance(&state)
        }
        // Merge mode: choose mine or the server's per field.
        if var merge = conflict.merge {
            let fields = op.changes.keys.sorted()
            switch key {
            case .char("j"), .down: conflict.fieldSelection = min(fields.count - 1, conflict.fieldSelection + 1)
            case .char("k"), .up: conflict.fieldSelection = max(0, conflict.fieldSelection - 1)
            case .char(" "):
                if fields.indices.contains(conflict.fieldSelection) { merge[fields[conflict.fieldSelection]]?.toggle() }
                conflict.merge = merge
            case .char("m"), .char("t"):
                if fields.indices.contains(conflict.fieldSelection) { merge[fields[conflict.fieldSelection]] = key == .char("m") }
                conflict.merge = merge
            case .enter:
                conflict.resolution = .merge
                commit.conflicts[commit.selection] = conflict
                state.commit = commit
                return advance(&state)
            case .escape:
                conflict.merge = nil
            default: break
            }
            commit.conflicts[commit.selection] = conflict
            state.commit = commit
            return []
        }
        switch key {
        case .char("a"), .escape, .ctrl("c"):
            closeCommit(&state)
            state.stack.append(.batch)
            state.message = "commit aborted: nothing was applied; \(state.staged.operations.count) operations stay staged on their original change tags"
            return []
        case .char("n"), .tab, .char("j"), .down:
            commit.selection = (commit.selection + 1) % commit.conflicts.count
            state.commit = commit
            return []
        case .char("p"), .backTab, .char("k"), .up:
            commit.selection = (commit.selection + commit.conflicts.count - 1) % commit.conflicts.count
            state.commit = commit
            return []
        default: break
        }
        switch conflict.server {
        case .loading:
            state.message = "fetching the server's version of '\(conflict.recordName)'…"
            return []
        case .failed(let why):
            switch key {
            case .char("t"): conflict.resolution = .takeServer
            case .char("f"): conflict.resolution = .force
            default:
                state.message = "the server's version could not be fetched (\(why)): f force mine, t drop mine, a abort"
                return []
            }
        case .deleted:
            switch (op.kind, key) {
            case (.update, .char("r")): conflict.resolution = .recreate
            case (_, .char("t")): conflict.resolution = .takeServer
            default:
                state.message = op.kind == .update ? "deleted on the server: r re-creates it with your version, t accepts the deletion, a aborts"
                    : "already deleted on the server: t drops your delete, a aborts"
                return []
            }
        case .record(let server):
            switch key {
            case .char("m"): conflict.resolution = .rebase
            case .char("f"): conflict.resolution = .force
            case .char("t"): conflict.resolution = .takeServer
            case .char("g") where op.kind == .update:
                conflict.merge = Dictionary(uniqueKeysWithValues: op.changes.keys.map { ($0, true) })
                conflict.fieldSelection = 0
                commit.conflicts[commit.selection] = conflict
                state.commit = commit
                return []
            case .char("e"):
                // Edit again: resolve what was chosen so far, re-base this op on the server's version,
                // and open the record.
                commit.conflicts[commit.selection].resolution = .rebase
                state.commit = commit
                let effects = applyResolutions(&state, only: Set(commit.conflicts.filter { $0.resolution != nil }.map(\.target)))
                closeCommit(&state)
                state.detailHistory = []
                if conflict.database == state.connection.database {
                    state.detail = RecordDetail(zoneID: conflict.zoneID, recordName: conflict.recordName, record: server, raw: nil, loading: false)
                    state.stack.append(.recordDetail)
                }
                state.message = "re-based '\(conflict.recordName)' on the server's version (tag \(server.recordChangeTag ?? "?")): edit it, then c commits again"
                return effects
            default:
                state.message = "m keep mine (re-base) · f force mine · t take the server's · g merge per field · e edit again · a abort"
                return []
            }
        }
        commit.conflicts[commit.selection] = conflict
        state.commit = commit
        return advance(&state)
    }

    /// Shows the next unresolved conflict, or applies every resolution and previews the new commit.
    static func advance(_ state: inout BrowserState) -> [BrowserEffect] {
        guard var commit = state.commit else { return [] }
        if let next = commit.conflicts.indices.first(where: { commit.conflicts[$0].resolution == nil }) {
            commit.selection = next
            state.commit = commit
            return []
        }
        var notes: [String] = []
        for c in commit.conflicts {
            let server: String
            if case .record(let r) = c.server { server = "tag \(r.recordChangeTag ?? "?")" } else { server = "deleted" }
            switch c.resolution {
            case .rebase?: notes.append("'\(c.recordName)': keep mine, re-based on the server's \(server)")
            case .force?: notes.append("'\(c.recordName)': keep mine, FORCED (no change tag: overwrites whatever the server has)")
            case .takeServer?: notes.append("'\(c.recordName)': the server's version kept, my operation dropped")
            case .merge?: notes.append("'\(c.recordName)': merged field by field, re-based on the server's \(server)")
            case .recreate?: notes.append("'\(c.recordName)': re-created with my version (create)")
            case nil: break
            }
        }
        if !commit.innocent.isEmpty {
            notes.append("\(commit.innocent.count) operation\(commit.innocent.count == 1 ? "" : "s") that failed only with ATOMIC_ERROR: unchanged, sent again")
        }
        let effects = applyResolutions(&state, only: nil)
        closeCommit(&state)
        guard !state.staged.isEmpty else {
            state.message = "conflicts resolved: nothing left to commit"
            return effects
        }
        _ = beginCommit(&state)
        if var again = state.commit {
            again.outcome = ["Conflicts resolved — confirm to commit the batch again, atomically:"] + notes.map { "  " + $0 }
            state.commit = again
            state.message = "review the new requests; confirm to commit again"
        }
        return effects
    }

    /// Applies the chosen resolutions to the staged batch (all, or those of `only`).
    static func applyResolutions(_ state: inout BrowserState, only: Set<String>?) -> [BrowserEffect] {
        guard let commit = state.commit else { return [] }
        var shown: [(DatabaseScope, ZoneID, RecordResult)] = []
        for c in commit.conflicts {
            guard let resolution = c.resolution, only?.contains(c.target) ?? true, var op = state.staged.operation(for: c.target) else { continue }
            let server: Record? = { if case .record(let r) = c.server { return r } else { return nil } }()
            switch resolution {
            case .rebase:
                if let server { op.rebase(on: server) }
                if op.kind == .update && op.changes.isEmpty { state.staged.unstage(target: c.target) } else { state.staged.replace(op) }
            case .force:
                op.mode = .force
                state.staged.replace(op)
            case .takeServer:
                state.staged.unstage(target: c.target)
                shown.append((c.database, c.zoneID, server.map { .record($0) } ?? .deleted(recordName: c.recordName, zoneID: c.zoneID)))
            case .merge:
                let merge = c.merge ?? [:]
                if let server { op.rebase(on: server) }
                op.changes = op.changes.filter { merge[$0.key] ?? true }
                if op.changes.isEmpty { state.staged.unstage(target: c.target) } else { state.staged.replace(op) }
            case .recreate:
                op.mode = .recreate
                state.staged.replace(op)
            }
        }
        return showApplied(shown, &state)
    }

    // MARK: Journal and lost answers

    static func journalRestored(_ batch: StagedBatch, inflight: [CommitPlan.Request], _ state: inout BrowserState) -> [BrowserEffect] {
        for op in batch.operations where state.staged.operation(for: op.target) == nil { state.staged.replace(op) }
        if !inflight.isEmpty {
            state.message = "a commit was in flight when ckbrowse stopped: checking whether it was applied…"
            return [.verifyCommit(inflight)]
        }
        if !batch.isEmpty {
            let n = batch.operations.count
            state.message = "restored \(n) staged operation\(n == 1 ? "" : "s") from the journal, on the change tags they were based on — b reviews, c commits"
        }
        return []
    }

    static func commitVerified(_ verdicts: [CommitVerdict], failure: BrowserFailure?, _ state: inout BrowserState) {
        var lines: [String] = []
        if let failure {
            lines = ["Could not find out whether the commit was applied: \(failure.message)",
                     "Its operations stay staged. Reload the records (r) and check before committing again."]
        } else {
            let yes = verdicts.filter { $0.applied == .yes }, no = verdicts.filter { $0.applied == .no }, unclear = verdicts.filter { $0.applied == .unclear }
            for v in yes { state.staged.unstage(target: v.target) }
            if no.isEmpty && unclear.isEmpty {
                lines.append("The commit WAS applied (\(yes.count) operation\(yes.count == 1 ? "" : "s")): cleared from the staged batch.")
            } else if yes.isEmpty && unclear.isEmpty {
                lines.append("The commit was NOT applied: its \(no.count) operation\(no.count == 1 ? "" : "s") stay staged; c sends them again.")
            } else {
                lines.append("The commit was partly confirmed: \(yes.count) applied (cleared), \(no.count) not applied, \(unclear.count) unclear (staged).")
            }
            for v in verdicts { lines.append("  \(v.recordName): \(v.applied == .yes ? "applied" : v.applied == .no ? "not applied" : "unclear") — \(v.explanation)") }
        }
        state.message = lines.first
        if var commit = state.commit, commit.phase == .verifying {
            commit.phase = .done
            commit.outcome += lines
            state.commit = commit
        }
    }
}
