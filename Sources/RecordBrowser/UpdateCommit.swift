import CloudKitModels
import TerminalUI

/// Commit: preview and confirmation, the outcome, the conflict prompt, and the check of a commit
/// whose answer was lost.
extension Browser {
    /// `c`: the exact requests, then a confirmation.
    static func beginCommit(_ state: inout BrowserState) -> [BrowserEffect] {
        if let commit = state.commitSession, commit.inFlight {
            state.say(.commitInFlight)
            return []
        }
        guard !state.staged.isEmpty else {
            state.say(.nothingToCommit)
            return []
        }
        if let reason = state.readOnlyReason {
            state.say(.notSent(.readOnly(reason)))
            return []
        }
        if state.connection.environment == .production, let create = state.staged.subscriptionOperations.first(where: { $0.kind == .create }) {
            state.say(.notSent(.subscriptionCreateInProduction(create.subscriptionID)))
            return []
        }
        do {
            let session = CommitSession(plan: try CommitPlan.make(state.staged))
            state.stack.remove([.commit, .conflict])
            state.stack.push(.commit(session))
        } catch {
            state.say(.failed(BrowserFailure(error)))
            return []
        }
        // VALIDATE targets not yet known (e.g. staged in an earlier session) are looked up now.
        let checks = stagedLookups(&state)
        // What the commit fires is shown in the preview: the database's subscriptions are needed.
        guard !state.known.subscriptions.loaded, !state.subscriptionsLoading else { return checks }
        state.subscriptionsLoading = true
        return checks + [.loadSubscriptions(state.connection.database)]
    }

    static func closeCommit(_ state: inout BrowserState) {
        state.stack.remove([.commit, .conflict])
    }

    /// Shows a commit on its screen: the commit or conflict screen there is, else a commit screen
    /// opened for it (its answer came after the screen was closed).
    static func showCommit(_ commit: CommitSession, _ state: inout BrowserState) {
        if state.stack.contains(.conflict) {
            state.stack.replace(.conflict, with: .conflict(commit))
        } else {
            state.stack.replace(.commit, with: .commit(commit))
        }
    }

    /// How a line of the commit screen is shown.
    public enum Tone: Sendable, Hashable { case plain, good, bad, note, emphasis, dim }

    /// The preview above its requests: the outcome so far, what must be typed, notes, what changes.
    static func previewHead(_ state: BrowserState) -> [(text: String, tone: Tone)] {
        guard let commit = state.commit else { return [] }
        var lines: [(text: String, tone: Tone)] = []
        let plan = commit.plan
        let count = plan.requests.reduce(0) { $0 + $1.body.operations.count } + plan.zoneRequests.reduce(0) { $0 + $1.operations.count }
            + plan.subscriptionRequests.reduce(0) { $0 + $1.operations.count }
        let requestCount = plan.requests.count + plan.zoneRequests.count + plan.subscriptionRequests.count
        lines += commit.outcome.flatMap { reportLines($0, state) }
        switch commit.phase {
        case .preview:
            lines.append(("\(Format.plural(count, "operation")) in \(Format.plural(requestCount, "request")); nothing is sent until you confirm:", .plain))
            if let typed = typedCount(state) {
                lines.append(("Type \(typed.count) to send: \(typed.what).", .bad))
            }
            if let firing = firingLine(state) { lines.append(firing) }
        case .sending: lines.append(("sending \(Format.plural(count, "operation"))…", .plain))
        case .verifying: lines.append(("No answer came back: looking the records up to find out whether the commit was applied…", .plain))
        case .done, .conflicts: lines.append(("The requests that were sent:", .plain))
        }
        lines += (plan.notes + plan.uploadNotes).map { ("NOTE: " + $0, .note) }
        if commit.phase == .preview { lines += changeLines(state) }
        lines.append(("", .plain))
        return lines
    }

    /// The preview: the outcome so far, notes, then each request as it will be sent.
    public static func previewLines(_ state: BrowserState) -> [(text: String, tone: Tone)] {
        guard let commit = state.commit else { return [] }
        return previewHead(state) + requestLines(commit.plan, state)
    }

    /// Each request of `plan` as it will be sent (or was): its path and its body's JSON. Depends on the
    /// plan alone (and the connection), so the commit screen keeps it (`CommitSession.requestRows`).
    static func requestLines(_ plan: CommitPlan, _ state: BrowserState) -> [(text: String, tone: Tone)] {
        var lines: [(text: String, tone: Tone)] = []
        let c = state.connection
        for request in plan.zoneRequests {
            let path = Endpoint.zonesModify.path(container: c.container, environment: c.environment, database: request.database)
            lines.append(("zones · \(Format.plural(request.operations.count, "operation")) (sent first)", .emphasis))
            lines.append(("POST \(path)", .emphasis))
            lines += Format.copyJSON(request.body.json).split(separator: "\n", omittingEmptySubsequences: false).map { (String($0), .plain) }
            lines.append(("", .plain))
        }
        for request in plan.subscriptionRequests {
            let path = Endpoint.subscriptionsModify.path(container: c.container, environment: c.environment, database: request.database)
            let kinds = [StagedSubscriptionOperation.Kind.create, .update, .delete].compactMap { kind -> String? in
                let n = request.operations.filter { $0.kind == kind }.count
                return n == 0 ? nil : "\(n) \(kind.rawValue)"
            }
            lines.append(("subscriptions · \(kinds.joined(separator: ", ")) · each on its own", .emphasis))
            lines.append(("POST \(path)", .emphasis))
            lines += Format.copyJSON(request.body.json).split(separator: "\n", omittingEmptySubsequences: false).map { (String($0), .plain) }
            lines.append(("", .plain))
        }
        for request in plan.requests {
            let path = Endpoint.recordsModify.path(container: c.container, environment: c.environment, database: request.database)
            // The summary on a line of its own: the path alone fits an 80-column terminal.
            var summary = "zone \(state.zoneName(request.zone)) · atomic: \(request.atomic) · \(Format.plural(request.body.operations.count, "operation"))"
            if !c.server.isAppleDefault { summary += " · to \(c.server.displayName)" }
            lines.append((summary, .emphasis))
            lines.append(("POST \(path)", .emphasis))
            lines += Format.copyJSON(Format.hidingSecrets(request.body.json)).split(separator: "\n", omittingEmptySubsequences: false).map { (String($0), .plain) }
            lines.append(("", .plain))
        }
        return lines
    }

    /// The words and tone of one report entry.
    static func reportLines(_ report: CommitReport, _ state: BrowserState) -> [(text: String, tone: Tone)] {
        switch report {
        case .resolved(let choices, let innocent):
            var lines: [(String, Tone)] = [("Conflicts resolved — confirm to commit the batch again, atomically:", .emphasis)]
            for c in choices {
                let server = c.serverTag.map { "tag \($0)" } ?? "deleted"
                let name = c.key.recordName
                switch c.resolution {
                case .rebase: lines.append(("  '\(name)': keep mine, re-based on the server's \(server)", .plain))
                case .force: lines.append(("  '\(name)': keep mine, FORCED (no change tag: overwrites whatever the server has)", .note))
                case .takeServer where c.alreadyApplied:
                    lines.append(("  '\(name)': the server already held exactly my change: dropped, nothing to send", .plain))
                case .takeServer: lines.append(("  '\(name)': the server's version kept, my operation dropped", .plain))
                case .merge: lines.append(("  '\(name)': merged field by field, re-based on the server's \(server)", .plain))
                case .recreate: lines.append(("  '\(name)': re-created with my version (create)", .plain))
                }
            }
            if innocent > 0 {
                lines.append(("  \(Format.plural(innocent, "operation")) that failed only with ATOMIC_ERROR: unchanged, sent again", .plain))
            }
            return lines
        case .request(let zone, let atomic, let result):
            let label = "\(zone.database.rawValue) zone \(state.zoneName(zone))"
            switch result {
            case .appliedAll(let n): return [("\(label): applied \(Format.agree(n, "", "all "))\(Format.plural(n, "operation"))\(atomic ? " atomically" : "").", .good)]
            case .nothingApplied(let refused): return [("\(label): NOTHING was applied (the batch is atomic): \(Format.plural(refused, "operation")) refused.", .bad)]
            case .partial(let applied, let failed): return [("\(label): \(applied) applied, \(failed) failed (not atomic: each on its own).", .bad)]
            case .refused(let failure): return [("\(label): the request was refused, nothing applied: \(failure.message)", .bad)]
            case .unknown(let failure): return [("\(label): no answer (\(failure.message)); checking whether it was applied…", .note)]
            case .notSent: return [("\(label): not sent, because an earlier request's outcome is unknown.", .note)]
            }
        case .zones(let database, let done, let failed, let refused):
            if let refused { return [("\(database.rawValue) zones/modify: refused or unanswered, no record sent: \(refused.message)", .bad)] }
            var lines: [(String, Tone)] = []
            for op in done { lines.append(("\(database.rawValue) zone \(state.zoneName(op.zone)): \(op.kind == .create ? "created" : "deleted, with its records").", .good)) }
            for (op, why) in failed.sorted(by: { $0.key.zone.zoneName < $1.key.zone.zoneName }) {
                lines.append(("\(database.rawValue) zone \(state.zoneName(op.zone)): not \(op.kind == .create ? "created" : "deleted"): \(why) — stays staged", .bad))
            }
            return lines
        case .subscriptions(let database, let done, let failed, let refused):
            if let refused {
                return [("\(database.rawValue) subscriptions/modify: refused or unanswered, nothing applied: \(refused.message) — \(Format.agree(failed.count, "it stays", "they stay")) staged", .bad)]
            }
            var lines: [(String, Tone)] = []
            for op in done {
                let word = op.kind == .create ? (op.recreatesFired ? "re-created" : "created") : (op.kind == .update ? "changed" : "deleted")
                lines.append(("\(database.rawValue) subscription '\(op.subscriptionID)': \(word).", .good))
            }
            for (op, why) in failed.sorted(by: { $0.key.subscriptionID < $1.key.subscriptionID }) {
                let code = why.code.map { "\($0.rawValue): \(why.reason ?? "")" } ?? "the answer has no result for it"
                lines.append(("\(database.rawValue) subscription '\(op.subscriptionID)': not \(op.kind == .create ? "created" : op.kind == .update ? "changed" : "deleted"): \(code) — stays staged", .bad))
            }
            return lines
        case .failedOperation(let key, let failure):
            let why = failure.code.map { "\($0.rawValue): \(failure.reason ?? "")" } ?? "the answer has no result for this operation"
            return [("  \(key.recordName) (\(state.zoneName(key.zone))): \(why) — stays staged", .bad)]
        case .verificationFailed(let failure):
            return [("Could not find out whether the commit was applied: \(failure.message)", .bad),
                    ("Its operations stay staged. Reload the records (r) and check before committing again.", .plain)]
        case .verified(let applied, let notApplied, let unclear):
            if notApplied == 0 && unclear == 0 {
                return [("The commit WAS applied (\(Format.plural(applied, "operation"))): cleared from the staged batch.", .good)]
            } else if applied == 0 && unclear == 0 {
                return [("The commit was NOT applied: its \(Format.plural(notApplied, "operation")) \(Format.agree(notApplied, "stays", "stay")) staged; c sends \(Format.agree(notApplied, "it", "them")) again.", .bad)]
            }
            return [("The commit was partly confirmed: \(applied) applied (cleared), \(notApplied) not applied, \(unclear) unclear (staged).", .note)]
        case .verdict(let v):
            let word: String
            switch v.applied {
            case .yes: word = "applied"
            case .no: word = "not applied"
            case .unclear: word = "unclear"
            }
            return [("  \(v.recordName): \(word) — \(evidenceText(v.evidence))", .plain)]
        }
    }

    static func evidenceText(_ evidence: CommitVerdict.Evidence) -> String {
        switch evidence {
        case .gone: return "the record is gone"
        case .stillHasTag(let tag): return "the record still has change tag \(tag)"
        case .hasAnotherTag: return "the record exists with another change tag"
        case .doesNotExist: return "the record does not exist on the server"
        case .holdsSentValues(let tag): return "the record holds the sent values (change tag \(tag ?? "?"))"
        case .changedDifferently: return "the record changed, but not to the sent values"
        case .lookupFailed(let code): return "lookup failed: \(code.rawValue)"
        }
    }

    static func commitKey(_ key: Key, _ commit: inout CommitSession, _ state: inout BrowserState) -> [BrowserEffect] {
        // The rows drawn (wrapped) and the page drawing shows, from one place (drawing reads the
        // commit on the stack: read before this key changes anything).
        let lineCount = commitRows(state).count, h = commitPage(state).count
        // Outside a production confirmation (where letters spell the container's name), j k g G and q
        // do what they do on every screen; arrows, pages, Home and End scroll always.
        let count = typedCount(commit, state)
        let typing = commit.phase == .preview && (state.connection.environment == .production || count != nil)
        let letter: Bool
        if case .char = key { letter = true } else { letter = false }
        if !(typing && letter), scrollView(key, &commit.scroll, count: lineCount, height: h) { return [] }
        if !typing {
            switch key {
            case .char("?"):
                state.showHelp = true
                return []
            case .char("q") where commit.phase != .sending && commit.phase != .verifying:
                state.quitRequested = true
                return [.quit]
            default: break
            }
        }
        switch commit.phase {
        case .preview:
            let production = state.connection.environment == .production
            switch key {
            case .escape, .ctrl("c"):
                closeCommit(&state)
                state.say(.commitCancelled(staged: state.staged.operations.count))
                return []
            case .char("n") where !typing:
                closeCommit(&state)
                state.say(.commitCancelled(staged: state.staged.operations.count))
                return []
            case .char("y") where !typing:
                return sendChecked(&commit, &state)
            case .char(let c) where typing:
                // A count alone takes digits (y or n are not an answer here: the number is).
                guard production || c.isNumber || c == "," else {
                    state.say(.typeToSend(expected: nil, count: count))
                    return []
                }
                commit.type(c)
                state.clearNotice()  // what was said of the last attempt
            case .backspace where typing:
                commit.type(nil)
                state.clearNotice()
            case .enter where typing:
                let expected = typedConfirmation(state, count)
                guard commit.typed.replacing(",", with: "") == expected.replacing(",", with: "") else {
                    state.say(production ? .typeToSend(expected: expected, count: count) : .notSent(.countMistyped(expected, count)))
                    return []
                }
                return sendChecked(&commit, &state)
            default: break
            }
        case .sending, .verifying:
            state.say(.waitingForAnswer)
        case .done:
            switch key {
            case .escape, .enter, .char("n"), .ctrl("c"), .char("y"), .char("h"), .left:
                closeCommit(&state)
            default: break
            }
        case .conflicts:
            break
        }
        return []
    }

    /// The count the commit on screen needs typed (a split batch, a cascade), if any.
    static func typedCount(_ state: BrowserState) -> CommitSession.TypedCount? {
        state.commitSession.flatMap { typedCount($0, state) }
    }

    /// The count a commit needs typed (a split batch, a cascade), if any.
    static func typedCount(_ commit: CommitSession, _ state: BrowserState) -> CommitSession.TypedCount? {
        CommitSession.typedCount(commit.plan, cascade: cascadeCount(state))
    }

    /// What must be typed to send: the container's name in production, the count, or both.
    static func typedConfirmation(_ state: BrowserState, _ count: CommitSession.TypedCount?) -> String {
        [state.connection.environment == .production ? state.connection.container : nil, count.map { String($0.count) }].compactMap { $0 }.joined(separator: " ")
    }

    /// The records the batch deletes (a referrer among them is not a surprise of another delete).
    static func batchDeletes(_ state: BrowserState) -> Set<RecordKey> {
        var keys: Set<RecordKey> = []
        for op in state.staged.operations where op.kind == .delete { keys.insert(op.key) }
        return keys
    }

    /// Records the staged deletes cascade to (DELETE_SELF, from the cache), each once, leaving out
    /// those staged for deletion themselves.
    static func cascadeCount(_ state: BrowserState) -> Int {
        var deleted: Set<RecordKey> = []
        var cascade: Set<RecordKey> = []
        for op in state.staged.operations where op.kind == .delete {
            deleted.insert(op.key)
            for referrer in state.known.impacts[op.key]?.cascade ?? [] { cascade.insert(referrer.key) }
        }
        return cascade.subtracting(deleted).count
    }

    /// Sends what the preview shows, and only that: not while what the deletes take with them is still
    /// being counted (the count to type may change), and not a plan the batch has moved away from (it
    /// is shown again to be reviewed).
    static func sendChecked(_ commit: inout CommitSession, _ state: inout BrowserState) -> [BrowserEffect] {
        if impactsPending(state) {
            state.say(.notSent(.impactPending))
            return []
        }
        if let current = try? CommitPlan.make(state.staged), current != commit.plan {
            commit = CommitSession(plan: current)
            state.say(.notSent(.batchChanged))
            return []
        }
        return send(&commit, &state)
    }

    /// A staged delete whose referrers are still being looked for (in the cache or on the server).
    /// Asked on every key and frame of the commit screen: the impacts are scanned for one still
    /// looking (cheap), and only such a one is looked up in the batch (a walk of it). Every staged
    /// delete has its impact once `c` has run `stagedLookups`.
    static func impactsPending(_ state: BrowserState) -> Bool {
        state.known.impacts.contains { key, impact in
            // A server that waits for the schema is not waited for (the schema may never come).
            let looking: Bool
            if case .asking = impact.server { looking = true } else { looking = !impact.cacheSearched }
            return looking && state.staged.operation(for: key)?.kind == .delete
        }
    }

    static func send(_ commit: inout CommitSession, _ state: inout BrowserState) -> [BrowserEffect] {
        let effects = commit.send()
        let count = commit.plan.requests.count + commit.plan.zoneRequests.count + commit.plan.subscriptionRequests.count
        state.say(.sending(requests: count))
        return effects
    }

    // MARK: Outcome

    /// The reports of a commit's zones/modify requests.
    static func zoneReports(_ outcomes: [ZoneOutcome], _ state: BrowserState) -> [CommitReport] {
        outcomes.map { outcome in
            switch outcome.answer {
            case .answered(let results):
                var done: [StagedZoneOperation] = [], failed: [StagedZoneOperation: String] = [:]
                for op in outcome.request.operations {
                    let result = results.first { r in
                        switch r {
                        case .zone(let z): return z.zoneID.zoneName == op.zone.zoneName
                        case .failure(let e): return e.zoneID?.zoneName == op.zone.zoneName
                        }
                    }
                    if case .failure(let error)? = result {
                        failed[op] = "\(error.serverErrorCode.rawValue): \(error.reason ?? "")"
                    } else if result == nil {
                        failed[op] = "the answer has no result for this zone"
                    } else {
                        done.append(op)
                    }
                }
                return .zones(outcome.request.database, done: done, failed: failed, refused: nil)
            case .refused(let failure), .unknown(let failure):
                return .zones(outcome.request.database, done: [], failed: [:], refused: failure)
            }
        }
    }

    /// Zone operations that were applied leave the batch, and the zones are listed again.
    static func zonesCommitted(_ outcomes: [ZoneOutcome], _ state: inout BrowserState) -> [BrowserEffect] {
        var changed = false
        for case .zones(_, let done, _, _) in zoneReports(outcomes, state) {
            for op in done { state.staged.unstage(zone: op.zone) }
            changed = changed || !done.isEmpty
        }
        if changed {
            state.zonesLoading = true
            return [.loadZones(state.connection.database)]
        }
        return []
    }

    /// The reports of a commit's subscriptions/modify requests: results are aligned with the
    /// operations (the reference's rule for batch endpoints), else found by subscription ID.
    static func subscriptionReports(_ outcomes: [SubscriptionOutcome]) -> [CommitReport] {
        outcomes.map { outcome in
            switch outcome.answer {
            case .answered(let results):
                var done: [StagedSubscriptionOperation] = [], failed: [StagedSubscriptionOperation: FailedOperation] = [:]
                for (i, op) in outcome.request.operations.enumerated() {
                    func id(_ r: SubscriptionResult) -> String? { r.subscription?.subscriptionID ?? r.error?.subscriptionID }
                    let result = results.indices.contains(i) && (id(results[i]) == nil || id(results[i]) == op.subscriptionID)
                        ? results[i] : results.first { id($0) == op.subscriptionID }
                    switch result {
                    case .subscription?: done.append(op)
                    case .failure(let error)?: failed[op] = FailedOperation(code: error.serverErrorCode, reason: error.reason)
                    case nil: failed[op] = FailedOperation(code: nil, reason: nil)
                    }
                }
                return .subscriptions(outcome.request.database, done: done, failed: failed, refused: nil)
            case .refused(let failure), .unknown(let failure):
                let all = Dictionary(uniqueKeysWithValues: outcome.request.operations.map { ($0, FailedOperation(code: nil, reason: failure.message)) })
                return .subscriptions(outcome.request.database, done: [], failed: all, refused: failure)
            }
        }
    }

    /// Subscription operations that were applied leave the batch; a refused one keeps its reason
    /// (the Subscriptions screen and the batch show it); the subscriptions are listed again.
    static func subscriptionsCommitted(_ reports: [CommitReport], _ state: inout BrowserState) -> [BrowserEffect] {
        guard !reports.isEmpty else { return [] }
        for case .subscriptions(_, let done, let failed, _) in reports {
            for op in done {
                state.staged.unstage(subscription: op.key)
                state.known.firedOnce.removeAll { $0.subscriptionID == op.subscriptionID }
                // Deleted by us: not "fired" when the list comes back without it.
                if op.kind == .delete { state.subscriptions.removeAll { $0.subscription?.subscriptionID == op.subscriptionID } }
            }
            for (op, why) in failed { state.staged.setFailure(why, for: op.key) }
        }
        state.subscriptionsLoading = true
        return [.loadSubscriptions(state.connection.database)]
    }

    static func commitFinished(_ outcomes: [CommitOutcome], _ state: inout BrowserState, zoneReports: [CommitReport] = []) -> [BrowserEffect] {
        var commit = state.commitSession ?? CommitSession(plan: CommitPlan(requests: outcomes.map(\.request), notes: []))
        // The requests as sent (uploaded files' receipts in place of their file: URLs), for the result.
        commit.sent(outcomes.map(\.request))
        var report: [CommitReport] = zoneReports
        var conflicts: [Conflict] = []
        var innocent: [RecordKey] = []
        var failed: [RecordKey: FailedOperation] = [:]
        var unknown: [CommitPlan.Request] = []
        var applied: [(RecordKey, RecordResult)] = []
        // Unstaged together after the answers are read: one pass over the batch, not one per record
        // (10,000 deletions made that 10^8 comparisons).
        var done: Set<RecordKey> = []
        var updated = 0, deleted = 0
        for outcome in outcomes {
            let request = outcome.request
            switch outcome.answer {
            case .answered(let results):
                var answered = 0
                for (i, operation) in request.body.operations.enumerated() {
                    let name = operation.record.recordName
                    let key = request.key(name)
                    let result = results.first { $0.recordName == name } ?? (results.indices.contains(i) ? results[i] : nil)
                    switch result {
                    case .record(let record)?:
                        done.insert(key)
                        applied.append((key, .record(record)))
                        updated += 1
                        answered += 1
                    case .deleted?:
                        done.insert(key)
                        applied.append((key, .deleted(recordName: name, zoneID: request.zone.zoneID)))
                        deleted += 1
                        answered += 1
                    case .failure(let error)?:
                        switch error.serverErrorCode {
                        case .conflict, .notFound:
                            conflicts.append(Conflict(key: key, code: error.serverErrorCode, reason: error.reason ?? ""))
                        case .atomicError:
                            innocent.append(key)
                        default:
                            failed[key] = FailedOperation(code: error.serverErrorCode, reason: error.reason)
                        }
                    case nil:
                        failed[key] = FailedOperation(code: nil, reason: nil)
                    }
                }
                let refusedCount = request.body.operations.count - answered
                let result: CommitReport.RequestResult
                if refusedCount == 0 {
                    result = .appliedAll(answered)
                } else if request.atomic {
                    result = .nothingApplied(refused: refusedCount)
                } else {
                    result = .partial(applied: answered, failed: refusedCount)
                }
                report.append(.request(zone: request.zone, atomic: request.atomic, result))
            case .refused(let failure):
                report.append(.request(zone: request.zone, atomic: request.atomic, .refused(failure)))
            case .unknown(let failure):
                unknown.append(request)
                report.append(.request(zone: request.zone, atomic: request.atomic, .unknown(failure)))
            case .notSent:
                report.append(.request(zone: request.zone, atomic: request.atomic, .notSent))
            }
        }
        state.staged.unstage(done)
        for (key, why) in failed.sorted(by: { $0.key.description < $1.key.description }) { report.append(.failedOperation(key, why)) }
        var effects = showApplied(applied, &state)
        var subscriptionsDone = 0, subscriptionsFailed = 0
        for case .subscriptions(_, let done, let notDone, _) in zoneReports {
            subscriptionsDone += done.count
            subscriptionsFailed += notDone.count
        }
        let failedCount = failed.count + subscriptionsFailed
        effects += commit.answered(report, conflicts: conflicts, innocent: innocent, failed: failed, unknown: unknown)
        switch commit.phase {
        case .conflicts:
            state.stack.remove([.commit, .conflict])
            state.stack.push(.conflict(commit))
            state.say(.conflicted(records: conflicts.count))
        case .verifying:
            showCommit(commit, &state)
            state.say(.answerLost)
        default:
            showCommit(commit, &state)
            state.say(.committed(saved: updated, deleted: deleted, subscriptions: subscriptionsDone, failed: failedCount))
        }
        return effects
    }

    /// Shows records a commit saved or deleted (or the server's versions the user took): the open
    /// record, and the open list through the cache.
    static func showApplied(_ applied: [(RecordKey, RecordResult)], _ state: inout BrowserState) -> [BrowserEffect] {
        guard !applied.isEmpty else { return [] }
        state.withDetail { screen, _ in
            for (key, result) in applied where key == screen.detail.key {
                switch result {
                case .record(let record):
                    screen.detail.record = record
                    screen.detail.raw = nil
                    screen.detail.error = nil
                case .deleted:
                    screen.detail.record = nil
                    screen.detail.error = BrowserFailure(message: "record '\(screen.detail.recordName)' was deleted")
                case .failure: break
                }
            }
        }
        guard let list = state.recordsScreen?.list else { return [] }
        let rows = applied.filter { $0.0.zone == list.zone }.map(\.1)
        return rows.isEmpty ? [] : [.storeRecords(list.key, rows, generation: list.generation)]
    }

    static func recordsStored(generation: Int, total: Int, _ state: inout BrowserState) -> [BrowserEffect] {
        state.withRecords { screen, state in
            guard screen.list.generation == generation else { return [] }
            screen.list.total = total
            if screen.filter == nil { screen.list.matching = total }
            return window(&screen, state, force: true)
        } ?? []
    }

    // MARK: Conflicts

    static func conflictVersions(_ zone: ZoneKey, _ result: Result<[RecordResult], BrowserFailure>, _ state: inout BrowserState) -> [BrowserEffect] {
        state.withScreen(.conflict, \.commit, Screen.conflict) { conflictVersions(zone, result, &$0, &$1) } ?? []
    }

    static func conflictVersions(_ zone: ZoneKey, _ result: Result<[RecordResult], BrowserFailure>, _ session: inout CommitSession,
                                 _ state: inout BrowserState) -> [BrowserEffect] {
        guard var commit = session.prompt else { return [] }
        for i in commit.conflicts.indices where commit.conflicts[i].zone == zone {
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
        // A record whose server version already holds exactly my change (the same batch committed by
        // another browser sharing the journal, say) is no conflict: my op is dropped, not shown.
        var same = 0
        for i in commit.conflicts.indices where commit.conflicts[i].resolution == nil {
            guard let op = state.staged.operation(for: commit.conflicts[i].key) else { continue }
            let identical: Bool
            switch (op.kind, commit.conflicts[i].server) {
            case (.update, .record(let server)):
                identical = !op.changes.isEmpty && op.changes.allSatisfy { StagedOperation.isNoChange($0.value, base: server.fields[$0.key]) }
            case (.delete, .deleted):
                identical = true
            default:
                identical = false
            }
            if identical {
                commit.conflicts[i].resolution = .takeServer
                commit.conflicts[i].alreadyApplied = true
                same += 1
            }
        }
        session.prompt = commit
        if commit.conflicts.allSatisfy({ $0.server != .loading }) {
            if same > 0 { state.say(.alreadyApplied(records: same)) } else { state.clearNotice() }
            if same > 0 {
                if let first = commit.conflicts.indices.first(where: { commit.conflicts[$0].resolution == nil }) {
                    commit.selection = first
                    session.prompt = commit
                } else {
                    return advance(&session, &state)
                }
            }
        }
        return []
    }

    static func conflictKey(_ key: Key, _ session: inout CommitSession, _ state: inout BrowserState) -> [BrowserEffect] {
        guard var commit = session.prompt, commit.conflicts.indices.contains(commit.selection) else {
            closeCommit(&state)
            return []
        }
        var conflict = commit.conflicts[commit.selection]
        guard let op = state.staged.operation(for: conflict.key) else {
            conflict.resolution = .takeServer
            commit.conflicts[commit.selection] = conflict
            session.prompt = commit
            return advance(&session, &state)
        }
        // The field table scrolls when it is taller than the screen: a page of fields at a time.
        if key == .pageDown || key == .pageUp, let view = conflictView(state) {
            let step = max(1, view.shown - 1)
            conflict.fieldScroll = key == .pageDown ? min(max(0, view.blocks.count - 1), view.first + step) : max(0, view.first - step)
            if conflict.merge != nil, let i = view.blocks.indices.contains(conflict.fieldScroll) ? view.blocks[conflict.fieldScroll].index : nil {
                conflict.fieldSelection = i  // the selection moves with the page, so it stays in view
            }
            commit.conflicts[commit.selection] = conflict
            session.prompt = commit
            return []
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
                session.prompt = commit
                return advance(&session, &state)
            case .escape:
                conflict.merge = nil
            default: break
            }
            commit.conflicts[commit.selection] = conflict
            session.prompt = commit
            return []
        }
        switch key {
        case .char("a"):
            abortConflicts(&state)
            return []
        case .escape, .ctrl("c"):
            // Resolutions already chosen would be lost: ask first.
            if commit.conflicts.contains(where: { $0.resolution != nil }) {
                state.confirmation = .abortConflicts
            } else {
                abortConflicts(&state)
            }
            return []
        case .char("?"):
            state.showHelp = true
            return []
        case .char("n"), .tab, .char("j"), .down:
            commit.selection = (commit.selection + 1) % commit.conflicts.count
            session.prompt = commit
            return []
        case .char("p"), .backTab, .char("k"), .up:
            commit.selection = (commit.selection + commit.conflicts.count - 1) % commit.conflicts.count
            session.prompt = commit
            return []
        default: break
        }
        switch conflict.server {
        case .loading:
            state.say(.fetchingServerVersion(conflict.recordName))
            return []
        case .failed(let why):
            switch key {
            case .char("t"): conflict.resolution = .takeServer
            case .char("f"): conflict.resolution = .force
            default:
                state.say(.conflictKeys(.serverVersionFailed(why)))
                return []
            }
        case .deleted:
            switch (op.kind, key) {
            case (.update, .char("r")): conflict.resolution = .recreate
            case (_, .char("t")): conflict.resolution = .takeServer
            default:
                state.say(.conflictKeys(op.kind == .update ? .deletedOnServer : .deletedOnServerToo))
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
                session.prompt = commit
                return []
            case .char("e"):
                // Edit again: resolve what was chosen so far, re-base this op on the server's version,
                // and open the record.
                commit.conflicts[commit.selection].resolution = .rebase
                session.prompt = commit
                let effects = applyResolutions(commit, &state, only: Set(commit.conflicts.filter { $0.resolution != nil }.map(\.key)))
                closeCommit(&state)
                if conflict.zone.scope == state.connection.scope {
                    state.stack.push(.detail(DetailScreen(RecordDetail(key: conflict.key, record: server, raw: nil, loading: false))))
                }
                state.say(.rebasedToEdit(conflict.recordName, tag: server.recordChangeTag))
                return effects
            default:
                state.say(.conflictKeys(.changedOnServer))
                return []
            }
        }
        commit.conflicts[commit.selection] = conflict
        session.prompt = commit
        return advance(&session, &state)
    }

    /// Leaves the conflict prompt: nothing was applied, every op stays staged on its original tag.
    static func abortConflicts(_ state: inout BrowserState) {
        closeCommit(&state)
        state.stack.open(.batch)
        let n = state.staged.operations.count
        state.say(.commitAborted(staged: n))
    }

    /// Shows the next unresolved conflict, or applies every resolution and previews the new commit.
    static func advance(_ session: inout CommitSession, _ state: inout BrowserState) -> [BrowserEffect] {
        guard var commit = session.prompt else { return [] }
        if let next = commit.conflicts.indices.first(where: { commit.conflicts[$0].resolution == nil }) {
            commit.selection = next
            session.prompt = commit
            return []
        }
        var choices: [ResolvedConflict] = []
        for c in commit.conflicts {
            guard let resolution = c.resolution else { continue }
            let tag: String? = { if case .record(let r) = c.server { return r.recordChangeTag ?? "?" } else { return nil } }()
            choices.append(ResolvedConflict(key: c.key, resolution: resolution, serverTag: tag, alreadyApplied: c.alreadyApplied))
        }
        let effects = applyResolutions(commit, &state, only: nil)
        closeCommit(&state)
        guard !state.staged.isEmpty else {
            state.say(.conflictsResolvedNothingLeft)
            return effects
        }
        _ = beginCommit(&state)
        if case .commit(let again) = state.stack.top, again.phase == .preview {
            state.stack.replace(.commit, with: .commit(CommitSession(plan: again.plan, resolved: .resolved(choices, innocent: commit.innocent.count))))
            state.say(.reviewAgain)
        }
        return effects
    }

    /// Applies the chosen resolutions to the staged batch (all, or those of `only`).
    static func applyResolutions(_ commit: CommitSession.ConflictPrompt, _ state: inout BrowserState, only: Set<RecordKey>?) -> [BrowserEffect] {
        var shown: [(RecordKey, RecordResult)] = []
        for c in commit.conflicts {
            guard let resolution = c.resolution, only?.contains(c.key) ?? true, var op = state.staged.operation(for: c.key) else { continue }
            let server: Record? = { if case .record(let r) = c.server { return r } else { return nil } }()
            switch resolution {
            case .rebase:
                if let server { op.rebase(on: server) }
                if op.kind == .update && op.changes.isEmpty { state.staged.unstage(c.key) } else { state.staged.replace(op) }
            case .force:
                op.mode = .force
                state.staged.replace(op)
            case .takeServer:
                state.staged.unstage(c.key)
                shown.append((c.key, server.map { .record($0) } ?? .deleted(recordName: c.recordName, zoneID: c.zoneID)))
            case .merge:
                let merge = c.merge ?? [:]
                if let server { op.rebase(on: server) }
                op.changes = op.changes.filter { merge[$0.key] ?? true }
                if op.changes.isEmpty { state.staged.unstage(c.key) } else { state.staged.replace(op) }
            case .recreate:
                op.mode = .recreate
                state.staged.replace(op)
            }
        }
        return showApplied(shown, &state)
    }

    // MARK: Journal and lost answers

    static func journalRestored(_ batch: StagedBatch, inflight: [CommitPlan.Request], _ state: inout BrowserState) -> [BrowserEffect] {
        for op in batch.operations where state.staged.operation(for: op.key) == nil { state.staged.replace(op) }
        for zone in batch.zoneOperations where !state.staged.zoneOperations.contains(where: { $0.zone == zone.zone }) { state.staged.stage(zone: zone) }
        if !inflight.isEmpty {
            state.say(.checkingInflightCommit)
            return [.verifyCommit(inflight)]
        }
        if !batch.isEmpty {
            let n = batch.count
            state.say(.journalRestored(operations: n))
        }
        return []
    }

    /// The question about an earlier-layout journal: `k` keeps its entries for the server open now,
    /// `D` discards them, Esc leaves the file alone (asked again at the next start).
    static func legacyJournalKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect] {
        guard let legacy = state.legacyJournal else { return [] }
        switch key {
        case .char("k"):
            state.legacyJournal = nil
            var effects: [BrowserEffect] = [.removeLegacyJournal(path: legacy.path)]
            effects = journalRestored(legacy.batch, inflight: legacy.inflight, &state) + effects
            if legacy.inflight.isEmpty {
                let n = legacy.batch.operations.count
                state.say(.legacyJournal(.kept(operations: n, server: state.connection.server.displayName)))
            }
            return effects
        case .char("D"):
            state.legacyJournal = nil
            state.say(.legacyJournal(.discarded(operations: legacy.batch.operations.count)))
            return [.removeLegacyJournal(path: legacy.path)]
        case .escape, .char("q"), .ctrl("c"):
            state.legacyJournal = nil
            state.say(.legacyJournal(.leftAlone))
            return []
        default:
            return []
        }
    }

    static func commitVerified(_ verdicts: [CommitVerdict], failure: BrowserFailure?, _ state: inout BrowserState) {
        var report: [CommitReport] = []
        if let failure {
            report = [.verificationFailed(failure)]
        } else {
            let yes = verdicts.filter { $0.applied == .yes }
            for v in yes { state.staged.unstage(v.key) }
            report.append(.verified(applied: yes.count, notApplied: verdicts.filter { $0.applied == .no }.count,
                                    unclear: verdicts.filter { $0.applied == .unclear }.count))
            report += verdicts.map { .verdict($0) }
        }
        if let first = report.first { state.say(.commitReport(first)) }

        state.withCommit { commit, _ in
            if commit.phase == .verifying { commit.verified(report) }
        }
    }
}
