import CloudKitModels
import TerminalUI

/// The browser's single update function: an event changes the state and may ask for effects
/// (bubbletea's `Update(msg) -> (model, cmd)`).
public enum Browser {
    /// Effects to run when the browser starts.
    public static func start(_ state: inout BrowserState) -> [BrowserEffect] {
        state.zonesLoading = true
        // The schema comes early (`:query` is checked against it and Tab completes from it), but
        // after the zones: the first frame waits for the zones alone, and on two cores the schema's
        // reading and parsing slowed it by a fifth (issue 33's first frame, scripts/bench-startup.sh).
        state.schemaLoading = true
        state.known.schemaAfterZones = true
        return [.loadZones(state.connection.database)]
    }

    /// Rows available to a list (title, column header, hint line and status bar excluded).
    static func listHeight(_ state: BrowserState) -> Int { Layout(state).bodyHeight }

    /// Pages are requested this many rows before the end of what is loaded: two pages. PgDn held at
    /// 30 a second with 300 ms per answer went through 10,000 records at 0.70 of what the change feed
    /// can deliver (one page a round trip) with 100 rows of lead, at 0.99 with 400
    /// (`ckbrowse bench network --delay-ms 300`).
    static let prefetchDistance = 400

    public static func update(_ state: inout BrowserState, _ event: BrowserEvent) -> [BrowserEffect] {
        var effects = apply(event, &state)
        keepRequestRows(&state)
        keepBatchLines(&state)
        if case .key = event { return effects }
        effects += replayWaitingKeys(&state)
        return effects
    }

    /// Keys typed ahead wait while the screen they act on waits for a result (rows from the cache, a
    /// record, the zones): a paste or a fast typist acts on the state the earlier keys produced,
    /// never on what was on screen before.
    static func waitsForResult(_ state: BrowserState) -> Bool {
        if stagingPending(state) { return true }
        switch state.pane {
        case .zones:
            return state.zonesLoading && state.zones.isEmpty
        case .records:
            guard let list = state.stack.top.records?.list else { return false }
            return !list.opened || list.windowPending || (list.loading && list.total == 0)
        case .recordDetail:
            guard let detail = state.stack.top.detail?.detail else { return false }
            return detail.record == nil && detail.loading && detail.error == nil
        case .commit:
            // `c y` typed fast: the y waits until what the deletes take with them is known (the
            // count to type may appear), rather than sending or being refused.
            return state.stack.top.commit?.phase == .preview && impactsPending(state)
        default:
            return false
        }
    }

    /// Whether a key typed into the command line waits, as keys on a screen wait for its rows: Tab
    /// completes from the zones and the schema, and Enter on `:query` asks for a zone to run it in.
    /// Typed in one burst at start (`:query Artw`, Tab, Enter), they acted on nothing yet: the
    /// completion said the schema was loading and the query that no zone was known. Once one waits,
    /// every later key waits behind it (`handle`); they go on when the zones, then the schema, have
    /// come (or failed). Other commands run at once, zones or not.
    static func commandKeyWaits(_ key: Key, _ state: BrowserState) -> Bool {
        guard case .input(let input)? = state.modal, input.mode == .command else { return false }
        let zonesPending = state.zonesLoading && state.zones.isEmpty
        switch key {
        case .tab, .backTab: return zonesPending || (state.schemaLoading && state.schema == nil)
        case .enter: return zonesPending && input.text.split(separator: " ").first == "query"
        default: return false
        }
    }

    /// Keys that open a line to type in on every screen: what follows them is text.
    static func opensALine(_ key: Key) -> Bool { key == .char(":") || key == .char("/") }

    /// Keys that do not act on the current screen's rows (they open another screen, a modal, or quit).
    static func isScreenIndependent(_ key: Key) -> Bool {
        switch key {
        case .char("q"), .ctrl("c"), .char("?"), .char(":"), .char("D"), .char("s"), .char("z"), .char("b"), .char("N"), .char("c"),
             .tab, .backTab, .escape, .char("h"), .left:
            return true
        default:
            return false
        }
    }

    /// Zones of other owners: find out who they are (once per owner; the signed-in user is known).
    static func discoverOwners(_ owners: [String?], _ state: BrowserState) -> [BrowserEffect] {
        let unknown = Set(owners.compactMap { $0 }).subtracting(state.userNames.keys)
            .filter { $0 != state.connection.account.identity.userRecordName }
        return unknown.isEmpty ? [] : [.discoverUsers(unknown.sorted())]
    }

    /// Keys that move the selection or scroll, on every screen.
    static func isMove(_ key: Key) -> Bool {
        switch key {
        case .char("j"), .char("k"), .char("g"), .char("G"), .up, .down, .pageUp, .pageDown, .home, .end, .ctrl("d"), .ctrl("u"):
            return true
        default:
            return false
        }
    }

    /// Keys that waited, in order, once nothing is awaited any more.
    static func replayWaitingKeys(_ state: inout BrowserState) -> [BrowserEffect] {
        var effects: [BrowserEffect] = []
        while let key = state.waitingKeys.first, state.modal != nil ? !commandKeyWaits(key, state) : !waitsForResult(state) {
            effects += handle(state.waitingKeys.removeFirst(), &state, replaying: true)
        }
        return effects
    }

    static func apply(_ event: BrowserEvent, _ state: inout BrowserState) -> [BrowserEffect] {
        switch event {
        case .key(let key):
            // The user moving to another screen leaves the last screen's message and error behind
            // (they stay in `!`).
            let pane = state.pane, notice = state.report.notice, error = state.lastError, modal = state.modal
            let effects = handle(key, &state)
            if state.pane == pane, modal == nil, state.modal == nil, isMove(key), state.report.notice == notice, state.messageKind.goesWithAMove {
                // Moving the selection is moving on: a plain message (a refused key's hint, what
                // was staged) goes; the last error stays in the status line and in `!`.
                state.clearNotice()
            }
            if state.pane != pane {
                if state.report.notice == notice {
                    // A commit's outcome survives this one move, as a plain message; others go.
                    if state.messageKind == .outcome { state.report.kind = .plain } else { state.clearNotice() }

                }
                if state.lastError == error { state.lastError = nil }
            }
            return effects
        case .resized(let width, let height):
            state.size = (width, height)
            clampScrolls(&state)
            return []
        case .zonesLoaded(let scope, let result):
            guard scope == state.connection.database else { return [] }
            state.zonesLoading = false
            var effects = state.known.schemaAfterZones ? loadSchema(&state) : []
            switch result {
            case .success(let zones):
                state.zones = zones
                state.known.zones.loaded = true
                state.setSelection(.zones, min(state.position(.zones).selection, max(0, zones.count - 1)))
                if scope == .shared { effects += discoverOwners(zones.map { $0.zone?.zoneID.ownerRecordName }, state) }
            case .failure(let failure): fail(&state, failure)
            }
            return effects
        case .usersDiscovered(let names):
            state.userNames.merge(names) { $1 }
            return []
        case .sharePermissionLoaded(let zone, let permission):
            state.sharePermissions[zone] = permission
            if permission == .readOnly, state.recordsScreen?.list.zone == zone {
                state.say(.sharedReadOnly(zone: zone.zoneID.zoneName))
            }
            return []
        case .shareAccepted(let guid, let result):
            switch result {
            case .success(let share):
                state.say(.shareAccepted(share, inSharedDatabase: state.connection.database == .shared))
                var effects: [BrowserEffect] = []
                if state.connection.database == .shared {
                    state.zonesLoading = true
                    effects.append(.loadZones(.shared))
                }
                // A `:shares` screen (shown or set aside) lists the shares as they were: read them again.
                if state.stack.find(.shares) != nil {
                    modifyShares(&state) { $0.shares.loading = true }
                    effects.append(.loadShares(state.connection.database))
                }
                return effects
            case .failure(let failure):
                var failure = failure
                failure.message = "the share \(guid) was not accepted: \(failure.message)"
                fail(&state, failure)
                state.say(.failed(failure))
            }
            return []
        case .listOpened(let generation, let total, let token, _):  // a change feed is always asked again, so the saved moreComing is not used
            return state.withRecords { screen, state in
                guard screen.list.generation == generation else { return [] }
                screen.list.opened = true
                screen.list.total = total
                screen.list.deleted = 0  // opening drops the tombstones
                screen.list.matching = total
                guard screen.list.source == .changes else { return window(&screen, state, force: true) }
                screen.list.syncToken = token
                screen.list.moreComing = true  // until the server says otherwise
                screen.list.loading = true
                if total > 0 { state.say(.fetchingChangesSinceCache(cached: total)) }
                return [.loadChanges(screen.list.key, syncToken: token, generation: generation)] + window(&screen, state, force: true)
            } ?? []
        case .pageApplied(let generation, let result):
            guard let list = state.recordsScreen?.list, list.generation == generation else { return [] }
            switch result {
            case .success(let outcome):
                return state.withRecords { pageArrived(outcome, &$0, &$1) } ?? []
            case .failure(let failure):
                state.withRecords { screen, state in
                    screen.list.loading = false
                    screen.list.loadingToEnd = false
                    if screen.list.source != .changes { screen.list.moreComing = false }
                    if state.messageKind == .progress(.fetching) { state.clearNotice() }
                    fail(&state, failure)
                    if screen.pendingExport != nil {
                        screen.pendingExport = nil
                        state.say(.exportPageFailed)
                    }
                }
                // A query that failed before anything came back leaves the screen it was started from,
                // or the list that was shown.
                if case .query = list.source, list.total == 0, let screen = state.recordsScreen,
                    screen.startedFrom.map({ $0 != .records }) == true, state.pane == .records {
                    state.stack.pop()
                    state.say(.queryFailed(backTo: .whereTyped))
                    return []
                }
                if case .query = list.source, list.total == 0, let effects = showListBeforeQuery(&state) {
                    state.say(.queryFailed(backTo: .listBefore))
                    return effects
                }
                return []
            }
        case .windowLoaded(let generation, let request, let start, let rows, let matching, let columns, let labels):
            // Only the answer to the latest request counts: an earlier one was for another filter
            // (a shorter one, while typing) or another scroll position.
            return state.withRecords { screen, state in
                guard screen.list.generation == generation, screen.list.windowRequest == request else { return [] }
                var list = screen.list
                list.windowPending = false
                list.window = rows
                list.windowStart = start
                list.matching = matching
                // The columns the cache chose (remembered, or the label field) stay with the list once
                // there were rows to choose them from.
                if list.view.columns == nil, !columns.isEmpty { list.view.columns = columns }
                if list.view.columns == nil { list.view.labels = labels }
                let widths = RecordSummary.contentWidths(rows, columns: list.view.columns?.count ?? 1)
                list.seenWidths = widths.count == list.seenWidths.count ? zip(widths, list.seenWidths).map { max($0, $1) } : widths
                var jumped = false
                if let target = list.jumpTo {
                    // The rows of a far move have arrived: the selection goes there now.
                    list.jumpTo = nil
                    jumped = true
                    if let scroll = list.jumpScroll {
                        list.selection = min(target, max(0, matching - 1))
                        list.scroll = scroll
                    } else {
                        move(&list.selection, &list.scroll, count: matching, delta: min(target, max(0, matching - 1)) - list.selection, height: listHeight(state))
                    }
                    list.jumpScroll = nil
                }
                var scroll = list.scroll
                move(&list.selection, &scroll, count: matching, delta: 0, height: listHeight(state))
                list.scroll = scroll
                screen.list = list
                return window(&screen, state, force: false) + (jumped ? prefetch(&screen) : [])
            } ?? []
        case .recordLoaded(let key, let result):
            return state.withDetail { screen, state in
                guard screen.detail.key == key else { return [] }
                let name = key.recordName
                screen.detail.loading = false
                switch result {
                case .success((.record(let record), let raw)):
                    let first = screen.detail.record == nil
                    screen.detail.record = record
                    screen.detail.raw = raw
                    // A record opens with the selection on its first field, never on a section header.
                    settleDetail(&screen, state, toFirst: first)
                    // What refers to it: one read of the zone's cached references, kept with the view.
                    return [.findReferencedBy(key)]
                case .success((.deleted, let raw)):
                    screen.detail.raw = raw
                    screen.detail.error = BrowserFailure(message: "record '\(name)' was deleted")
                case .success((.failure(let error), let raw)):
                    screen.detail.raw = raw
                    screen.detail.error = BrowserFailure(message: "\(error.serverErrorCode.rawValue): \(error.reason ?? "") — '\(name)'")
                case .failure(let failure):
                    screen.detail.error = failure
                    fail(&state, failure)
                }
                return []
            } ?? []
        case .schemaLoaded(let result):
            schemaLoaded(result, &state)
            return askServerAfterSchema(&state)
        case .sharesLoaded(let scope, let result):
            guard scope == state.connection.database else { return [] }
            modifyShares(&state) { $0.shares.loading = false }
            switch result {
            case .success(let shares):
                modifyShares(&state) {
                    $0.shares.value = shares
                    $0.position.selection = min($0.position.selection, max(0, shares.count - 1))
                }
                if scope == .shared { return discoverOwners(shares.map { $0.zoneID?.ownerRecordName }, state) }
            case .failure(let failure): fail(&state, failure)
            }
            return []
        case .subscriptionsLoaded(let scope, let result):
            guard scope == state.connection.database else { return [] }
            state.subscriptionsLoading = false
            switch result {
            case .success(let subscriptions):
                // A firesOnce subscription listed before and gone now fired (our own deletes were
                // taken off the list when they were committed): kept, so R can make it again.
                let now = Set(subscriptions.compactMap { $0.subscription?.subscriptionID })
                if state.known.subscriptions.loaded {
                    for old in state.subscriptions.compactMap(\.subscription) where old.firesOnce == true {
                        guard let id = old.subscriptionID, !now.contains(id), !state.known.firedOnce.contains(where: { $0.subscriptionID == id }) else { continue }
                        state.known.firedOnce.append(old)
                    }
                }
                state.known.firedOnce.removeAll { now.contains($0.subscriptionID ?? "") }
                state.known.subscriptions.loaded = true
                state.subscriptions = subscriptions
                clampSubscriptionSelection(&state)
            case .failure(let failure): fail(&state, failure)
            }
            return []
        case .requestFinished(let record):
            state.requests.append(record)
            if state.requests.count > 200 { state.requests.removeFirst(state.requests.count - 200) }
            // Whole exchanges (bodies up to 1 MB) are kept for the latest requests only.
            let keep = state.requests.count - inspectorExchangesKept
            if keep > 0, state.requests[keep - 1].exchange != nil { state.requests[keep - 1].exchange = nil }
            if state.pane == .debug, state.position(.debug).selection > 0 { state.setSelection(.debug, state.position(.debug).selection + 1) }  // the same request stays selected
            return []
        case .cachedZones(let scope, let zones):
            if scope == state.connection.scope { state.cachedZones = zones }
            return []
        case .notice(let notice):
            state.say(notice)
            return []
        case .recordToDelete(let key, let record):
            stagingReadDone(&state)
            return writable(&state) ? recordToDelete(key, record, &state) : []
        case .jsonEdited(let edit, let edited, let status):
            return jsonEdited(edit, edited: edited, status: status, &state)
        case .commitFinished(let outcomes, let zones, let subscriptions):
            let subscriptionReports = subscriptionReports(subscriptions)
            let effects = zonesCommitted(zones, &state) + subscriptionsCommitted(subscriptionReports, &state)
                + commitFinished(outcomes, &state, zoneReports: zoneReports(zones, state) + subscriptionReports)
            // A lost answer is checked by lookup first (verifyCommit); then the commit settles.
            let settled = outcomes.allSatisfy(\.isKnown) && zones.allSatisfy(\.isKnown)
            return effects + (settled ? [.commitSettled] : [])
        case .conflictVersions(let zone, let result):
            return conflictVersions(zone, result, &state)
        case .commitVerified(let verdicts, let failure):
            commitVerified(verdicts, failure: failure, &state)
            return failure == nil ? [.commitSettled] : []
        case .recordsStored(let generation, let total):
            return recordsStored(generation: generation, total: total, &state)
        case .journalRestored(let batch, let inflight):
            return journalRestored(batch, inflight: inflight, &state)
        case .legacyJournalFound(let legacy):
            state.legacyJournal = legacy
            return []
        case .notificationsStatus(let connection, let at):
            notificationsStatus(connection, at: at, &state)
            return []
        case .notificationReceived(let notification, let dropped, let at):
            return notificationReceived(notification, dropped: dropped, at: at, &state)
        case .assetFileChecked(let key, let field, let result):
            return assetFileChecked(key, field: field, result, &state)
        case .pathsListed(let typed, let paths):
            pathsListed(typed: typed, paths, &state)
            return []
        case .assetFileRefused(let key, let field, let path, let reason):
            // The prompt opens again with the path as typed, and why it was refused.
            guard state.detailScreen?.detail.key == key else { return [] }
            state.clearNotice()
            reopen(.assetFile(field: field), text: path, refusal: .fileRefused(reason, staging: true), &state)
            return []
        case .assetSaveRefused(var download, let reason):
            let typed = download.path
            download.path = ""
            if state.messageKind == .progress(.download(download.label)) { state.clearNotice() }
            reopen(.saveAsset(download), text: typed, refusal: .fileRefused(reason, staging: false), &state)
            return []
        case .assetProgress(let label, let done, let total):
            assetProgress(label, done: done, total: total, &state)
            return []
        case .assetDownloaded(let label, let result):
            assetDownloaded(label, result, &state)
            return []
        case .targetsChecked(let found, let failure):
            targetsChecked(found, failure: failure, &state)
            return []
        case .serverReferrersCounted(let counted, let fields):
            serverReferrersCounted(counted, fields: fields, &state)
            return []
        case .referencedByFound(let key, let found):
            referencedByFound(key, found, &state)
            return []
        case .referrersFound(let impacts):
            referrersFound(impacts, &state)
            return []
        case .rowsToMark(let generation, let names, let skipped):
            rowsToMark(generation: generation, names: names, skipped: skipped, &state)
            return []
        case .markedLoaded(let key, let purpose, let records, let missing):
            stagingReadDone(&state)
            return markedLoaded(key, purpose, records: records, missing: missing, &state)
        case .exportPathChecked(let request, let refused):
            return exportPathChecked(request, refused: refused, &state)
        case .exported(let request, let result):
            exported(request, result, &state)
            return []
        case .historyRestored(let lines):
            // Lines run before the history arrived stay the newest.
            state.session.commandHistory = Array((lines.filter { !state.session.commandHistory.contains($0) } + state.session.commandHistory).suffix(commandHistoryLimit))
            return []
        }
    }

    /// `:` lines kept per account.
    static let commandHistoryLimit = 200

    /// A `:` line run goes to the end of the history (once: an earlier copy is dropped).
    static func remember(command: String, _ state: inout BrowserState) {
        let line = command.trimmingWhitespace()
        guard !line.isEmpty, line != state.session.commandHistory.last else { return }
        state.session.commandHistory.removeAll { $0 == line }
        state.session.commandHistory.append(line)
        if state.session.commandHistory.count > commandHistoryLimit { state.session.commandHistory.removeFirst() }
    }

    /// ↑ (older) / ↓ (newer) on a `:` line. The entries that start with what was typed before the
    /// first ↑ are recalled (all of them from an empty line); ↓ past the newest gives that text back.
    static func recall(older: Bool, _ input: inout InputLine, _ history: [String]) {
        let draft = input.recall?.draft ?? input.text
        let matching = history.indices.filter { history[$0].hasPrefix(draft) && history[$0] != draft }
        let current = input.recall?.index
        func show(_ index: Int?) {
            input.recall = index.map { (index: $0, draft: draft) }
            input.characters = Array(index.map { history[$0] } ?? draft)
            input.cursor = input.characters.count
            input.hint = nil
            input.selected = false
        }
        if older {
            guard let next = matching.last(where: { current == nil || $0 < current! }) else {
                if current == nil { input.hint = history.isEmpty ? "no earlier : lines on this account" : "no earlier line starts with '\(draft)'" }
                return
            }
            show(next)
        } else if let current {
            show(matching.first { $0 > current })
        }
    }

    /// Errors kept for `!`.
    static let errorLogLimit = 100

    static func fail(_ state: inout BrowserState, _ failure: BrowserFailure) {
        state.lastError = failure
        state.errorLog.append(LoggedError(failure: failure, at: state.now, pane: state.pane))
        if state.errorLog.count > errorLogLimit { state.errorLog.removeFirst(state.errorLog.count - errorLogLimit) }
        if failure.isAuthenticationRequired { state.signInNotice = failure }
    }

    // MARK: - Keys

    static func handle(_ key: Key, _ state: inout BrowserState, replaying: Bool = false) -> [BrowserEffect] {
        if key == .resize { return [] }
        // ESC then a character arrives as Alt with it. Only the line editors have Alt keys (a word
        // back, forward, deleted); anywhere else it is what a script or a quick hand typed: Esc, then
        // the character.
        if case .alt(let c) = key {
            let editing: Bool
            switch state.modal {
            case .input?, .editor?: editing = "bfd".contains(c)
            default: editing = false
            }
            if !editing {
                return handle(.escape, &state, replaying: replaying) + handle(.char(c), &state, replaying: replaying)
            }
        }
        // A key that acts on the screen's rows waits while they are awaited, and in the command line
        // Tab and Enter wait for what they read (`commandKeyWaits`); once one waits, every later key
        // waits behind it (order is kept), but for quit and Esc.
        let waits: Bool
        switch state.modal {
        case nil: waits = !state.waitingKeys.isEmpty || (waitsForResult(state) && (!isScreenIndependent(key) || stagingPending(state)))
        case .input?: waits = !state.waitingKeys.isEmpty || commandKeyWaits(key, state)
        default: waits = false
        }
        if !replaying, waits {
            switch key {
            case .char("q") where state.modal == nil && !state.waitingKeys.contains(where: opensALine), .ctrl("c"), .escape:
                // Quit and Esc act at once; what was typed ahead is dropped with them. A q typed into
                // a line, or behind a waiting `:` or `/` that opens one, is text (`j:query …` typed
                // before the zones came quit the browser).
                state.waitingKeys = []
            default:
                state.waitingKeys.append(key)
                return []
            }
        }
        // The open modal takes every key.
        switch state.modal {
        case .legacyJournal?: return legacyJournalKey(key, &state)
        case .input?: return handleInput(key, &state)
        case .signIn?:
            // Any key dismisses the notice; the user continues in the public database.
            state.modal = nil
            if state.connection.database != .public { return switchDatabase(.public, &state) }
            return []
        case .help?:
            // The movement keys scroll a help taller than the screen (a page is what the box shows);
            // any other key closes it.
            if !scrollView(key, &state.helpScroll, count: helpShown(state).count, height: Layout(state).helpRows) {
                state.modal = nil
                state.helpScroll = 0
            }
            return []
        case .editor?: return editorKey(key, &state)
        case .confirmation?: return confirmationKey(key, &state)
        case nil: break
        }
        // The commit and conflict screens take every key (a production confirmation is typed there).
        switch state.stack.top {
        case .commit(let commit): return state.onTop(commit, Screen.commit) { commitKey(key, &$0, &$1) }
        case .conflict(let commit): return state.onTop(commit, Screen.conflict) { conflictKey(key, &$0, &$1) }
        case .records(let screen):
            // Marks on a zone's records (Esc unmarks first, when there are marks).
            if let effects = state.onTop(screen, Screen.records, { markKey(key, &$0, &$1) }) { return effects }
        default: break
        }
        switch key {
        case .char("q"), .ctrl("c"):
            state.quitRequested = true
            return [.quit]
        case .char("?"):
            state.showHelp = true
            return []
        case .char(":"):
            state.input = InputLine(.command)
            return []
        case .char("/") where [.records, .zones, .subscriptions, .debug, .recordDetail, .inspector, .notifications, .schema].contains(state.pane):
            // The last filter comes back selected: typing replaces it, an arrow (Home, End) keeps it to edit.
            state.input = InputLine(.filter, text: filterText(state, state.pane) ?? "", selected: true)
            return []
        case .char("D"):
            if state.pane == .debug { state.stack.pop() } else { state.stack.open(.debug) }
            return []
        case .char("!"):
            if state.pane == .errors { state.stack.pop() } else {
                state.stack.discard(.errors)
                state.stack.open(.errors)
            }
            return []
        case .char("s"):
            return openSubscriptions(&state)
        case .char("z"):
            state.stack.jumpToZones()
            return []
        case .char("b"):
            return openBatch(&state)
        case .char("N") where !(state.stack.top.filter.map { !$0.isEmpty } ?? false):
            // With a `/` filter on the screen, N is the previous match (n the next), as the help says.
            return openNotifications(&state)
        case .char("c"):
            return beginCommit(&state)
        case .tab, .backTab:
            return nextPane(&state, forward: key == .tab)
        case .escape, .char("h"), .left:
            return back(&state)
        default:
            break
        }
        // Each screen handles its keys, on its own state where it has any.
        switch state.stack.top {
        case .zones: return zonesKey(key, &state)
        case .records(let screen): return state.onTop(screen, Screen.records) { recordsKey(key, &$0, &$1) }
        case .detail(let screen): return state.onTop(screen, Screen.detail) { detailKey(key, &$0, &$1) }
        case .subscriptions: return subscriptionsKey(key, &state)
        case .subscriptionDetail(let screen): return state.onTop(screen, Screen.subscriptionDetail) { subscriptionDetailKey(key, &$0, &$1) }
        case .batch: return batchKey(key, &state)
        case .notifications: return notificationsKey(key, &state)
        case .errors(let scroll): return state.onTop(scroll, { .errors(scroll: $0) }) { errorsKey(key, &$0, &$1) }
        case .push: return pushKey(key, &state)
        case .requests: return debugKey(key, &state)
        case .inspector(let screen): return state.onTop(screen, Screen.inspector) { inspectorKey(key, &$0, &$1) }
        case .shares(let screen): return state.onTop(screen, Screen.shares) { sharesKey(key, &$0, &$1) }
        case .schema: return schemaKey(key, &state)
        case .commit, .conflict: return []
        }
    }

    /// How many of the latest requests keep their whole exchange for the inspector.
    static let inspectorExchangesKept = 30

    static func debugKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect] {
        let rows = visibleRequests(state)
        let h = listHeight(state)
        if state.withPosition(.debug, { moveList(key, &$0, &$1, count: rows.count, height: h) }) { return [] }
        switch key {
        case .char("n"), .char("N"):
            state.withPosition(.debug) { move(&$0, &$1, count: rows.count, delta: key == .char("n") ? 1 : -1, height: h) }
        case .enter, .char("l"), .right:
            guard rows.indices.contains(state.position(.debug).selection) else { return [] }
            let record = rows[state.position(.debug).selection]
            guard record.exchange != nil else {
                state.say(.exchangeNotKept(kept: inspectorExchangesKept))
                return []
            }
            state.stack.push(.inspector(InspectorScreen(record)))
        default: break
        }
        return []
    }

    static func inspectorKey(_ key: Key, _ screen: inout InspectorScreen, _ state: inout BrowserState) -> [BrowserEffect] {
        let record = screen.record
        let lines = inspectorLines(record, width: state.size.width)
        let h = listHeight(state)
        let last = max(0, lines.count - h)
        if scrollView(key, &screen.scroll, count: lines.count, height: h) { return [] }
        switch key {
        case .char("n"), .char("N"):
            // The next (previous) line with a match, brought to the top.
            guard let filter = filterText(state, .inspector) else { return [] }
            let hits = lines.indices.filter { matches(lines[$0].text, filter) }
            let next = key == .char("n") ? hits.first { $0 > screen.scroll } : hits.last { $0 < screen.scroll }
            if let next { screen.scroll = min(next, last) } else { state.say(.noMoreMatches) }
        case .char("y"):
            // The exchange's own lines, not the screen's: a header or token wrapped at the screen's width
            // would otherwise be copied with a newline inside it.
            state.say(.copied(.exchange))
            return [.copy(inspectorLines(record, width: nil).map(\.text).joined(separator: "\n"))]
        default: break
        }
        return []
    }

    /// The whole exchange as text: request line, headers, body, then the answer; JSON bodies
    /// pretty-printed with invisible characters as `\uXXXX` (`TerminalText.json`), other text escaped
    /// (`TerminalText.visible`). Wrapped to `width`, or, with no width, one line per line of the
    /// exchange (what `y` copies).
    public static func inspectorLines(_ record: RequestRecord, width: Int?) -> [(text: String, tone: Tone)] {
        guard let x = record.exchange else { return [] }
        var lines: [(String, Tone)] = []
        func wrap(_ text: String, _ tone: Tone, indent: String = "") {
            guard let width else { return lines.append((indent + TerminalText.visible(text, allowing: .tab), tone)) }
            for part in TextWidth.wrap(text, to: Layout.wrapWidth(width, indent: indent.count)) { lines.append((indent + part, tone)) }
        }
        func body(_ text: String?, omitted: Int) {
            guard let text, !text.isEmpty else {
                lines.append(("(no body)", .dim))
                return
            }
            let shown = (try? JSON(parsing: text)).map(Format.copyJSON) ?? text
            for line in shown.split(separator: "\n", omittingEmptySubsequences: false) { wrap(String(line), .plain) }
            if omitted > 0 { lines.append(("… \(Format.count(omitted)) more bytes not kept", .dim)) }
        }
        // On screen the query's parameters go one to a line: wrapped at the screen's width, the URL was
        // cut anywhere, "<r" / "edacted>" included. Copied (no width), it stays one line.
        if width != nil, let question = x.url.firstIndex(of: "?") {
            wrap("\(record.method.rawValue) \(x.url[..<question])", .emphasis)
            for (i, parameter) in x.url[x.url.index(after: question)...].split(separator: "&").enumerated() {
                wrap((i == 0 ? "?" : "&") + parameter, .emphasis, indent: "  ")
            }
        } else {
            wrap("\(record.method.rawValue) \(x.url)", .emphasis)
        }
        wrap("sent \(Format.local(x.at)) · attempt \(record.attempt) · \(Int(record.duration * 1000)) ms · \(Format.count(record.bytesSent)) bytes sent, \(Format.count(record.bytesReceived)) received", .dim)
        lines.append(("", .plain))
        lines.append(("REQUEST HEADERS", .emphasis))
        for h in x.requestHeaders { wrap("\(h.name): \(h.value)", .plain, indent: "  ") }
        if x.requestHeaders.isEmpty { lines.append(("  (none besides the query's tokens, redacted)", .dim)) }
        lines.append(("REQUEST BODY", .emphasis))
        body(x.requestBody, omitted: x.requestOmitted)
        lines.append(("", .plain))
        let status = record.status.map { "HTTP \($0)" } ?? "no answer"
        lines.append(("RESPONSE · \(status)" + (record.serverErrorCode.map { " · " + $0.rawValue } ?? ""), (record.status ?? 500) >= 400 ? .bad : .emphasis))
        for h in x.responseHeaders { wrap("\(h.name): \(h.value)", .plain, indent: "  ") }
        lines.append(("RESPONSE BODY", .emphasis))
        body(x.responseBody, omitted: x.responseOmitted)
        return lines
    }

    /// The error log scrolls by rows (newest first).
    static func errorsKey(_ key: Key, _ scroll: inout Int, _ state: inout BrowserState) -> [BrowserEffect] {
        let rows = errorLines(state, width: state.size.width).count
        let h = listHeight(state)
        if scrollView(key, &scroll, count: rows, height: h) {
            return []
        } else if key == .char("X") {
            state.errorLog = []
            state.lastError = nil
            scroll = 0
        }
        return []
    }

    /// Every logged error in full, newest first, wrapped to the screen.
    public static func errorLines(_ state: BrowserState, width: Int) -> [(text: String, tone: Tone)] {
        var lines: [(String, Tone)] = []
        for entry in state.errorLog.reversed() {
            let f = entry.failure
            var head = entry.at > 0 ? Format.local(entry.at) : "this session"
            if let op = f.error?.operation { head += " · " + op }
            if let status = f.httpStatus { head += " · HTTP \(status)" }
            if let code = f.serverErrorCode { head += " · " + code.rawValue }
            lines += TextWidth.wrap(head, to: Layout.wrapWidth(width)).map { ($0, Tone.emphasis) }
            var body: [String] = []
            if let reason = f.error?.reason, !reason.isEmpty { body.append("reason: " + reason) }
            if f.error == nil || body.isEmpty { body.append(f.message) }
            if let uuid = f.error?.uuid { body.append("request uuid: " + uuid) }
            if let hint = f.error?.hint { body.append(hint) }
            if let url = f.redirectURL { body.append("sign in at: " + url) }
            for text in body { lines += TextWidth.wrap(text, to: Layout.wrapWidth(width, indent: 2)).map { ("  " + $0, Tone.plain) } }
            lines.append(("", .plain))
        }
        return lines
    }

    /// Tab: zones → records of the open zone → subscriptions → zones (Shift-Tab backwards).
    static func nextPane(_ state: inout BrowserState, forward: Bool) -> [BrowserEffect] {
        var panes: [Pane] = [.zones]
        if state.recordsScreen != nil { panes.append(.records) }
        panes.append(.subscriptions)
        let top: Pane = [.recordDetail].contains(state.pane) ? .records : (state.pane == .subscriptionDetail ? .subscriptions : ([.batch, .notifications].contains(state.pane) ? .zones : state.pane))
        let index = panes.firstIndex(of: top) ?? 0
        let next = panes[(index + (forward ? 1 : panes.count - 1)) % panes.count]
        switch next {
        case .zones: state.stack.jumpToZones()
        case .records: showRecords(&state)
        default:
            let effects = openSubscriptions(&state)
            return state.subscriptions.isEmpty ? effects : []
        }
        return []
    }

    /// The open zone's records on screen (over the zones).
    static func showRecords(_ state: inout BrowserState) {
        state.stack.jumpToZones()
        state.stack.open(.records)
    }

    static func back(_ state: inout BrowserState) -> [BrowserEffect] {
        if case .records(let screen) = state.stack.top, screen.list.loadingToEnd {
            return state.onTop(screen, Screen.records) { screen, state in
                screen.list.loadingToEnd = false  // Esc cancels "load to the end" first
                screen.list.followEnd = false
                let exporting = screen.pendingExport != nil
                screen.pendingExport = nil
                state.say(.stoppedLoading(at: screen.list.total, exportDropped: exporting))
                return []
            }
        }
        if case .detail(let screen) = state.stack.top, !screen.history.isEmpty {
            return state.onTop(screen, Screen.detail) { screen, _ in
                screen.detail = screen.history.removeLast()
                return []
            }
        }
        if state.stack.top.filter != nil {
            // Esc clears the screen's filter first.
            return setFilter(nil, &state)
        }
        // A query typed over a zone's list (or another query) goes back to that list.
        if state.pane == .records, let effects = showListBeforeQuery(&state) { return effects }
        state.stack.pop()
        return []
    }

    /// The records screen shows the list a `:query` replaced (with its title) again; nil when there is
    /// none.
    static func showListBeforeQuery(_ state: inout BrowserState) -> [BrowserEffect]? {
        guard let shown = state.recordsScreen, let last = shown.beforeQuery.last else { return nil }
        // A zone's changes the query replaced before they had opened (typed fast): opened now.
        if last.list.source == .changes, !last.list.opened { return openZone(last.list.zoneID, &state) }
        return state.withRecords { screen, state in
            let before = screen.beforeQuery.removeLast()
            var list = before.list
            list.generation = screen.list.generation + 1
            screen.list = list
            screen.query = before.query
            screen.filter = nil
            screen.marks.clear()
            return window(&screen, state, force: true)
        }
    }

    /// Moves a selection by `delta` rows (n N, a far move's target), keeping it visible in a window of
    /// `height` rows (`ListMovement`'s reveal).
    static func move(_ selection: inout Int, _ scroll: inout Int, count: Int, delta: Int, height: Int) {
        var list = ListMovement(count: count, selection: max(0, min(count - 1, selection + delta)), scroll: scroll, pageHeight: height)
        list.settle()
        selection = list.selection
        scroll = list.scroll
    }

    /// Moves a plain list's selection (and scroll) when `key` is a movement key; false otherwise.
    static func moveInList(_ key: Key, _ selection: inout Int, _ scroll: inout Int, count: Int, _ state: BrowserState) -> Bool {
        moveList(key, &selection, &scroll, count: count, height: listHeight(state))
    }

    static func clampScrolls(_ state: inout BrowserState) {
        let h = listHeight(state)
        // Zones and subscriptions scroll in rows the filter shows, as their keys do.
        let zones = visibleZones(state), subscriptions = visibleSubscriptions(state)
        state.withPosition(.zones) { moveVisible(&$0, &$1, visible: zones, delta: 0, height: h) }
        state.withPosition(.subscriptions) { moveVisible(&$0, &$1, visible: subscriptions, delta: 0, height: h) }
        state.withRecords { screen, _ in move(&screen.list.selection, &screen.list.scroll, count: screen.list.matching, delta: 0, height: h) }
        state.withDetail { settleDetail(&$0, $1) }
    }

    // MARK: Zones

    static func zonesKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect] {
        let visible = visibleZones(state)
        let h = listHeight(state)
        if state.withPosition(.zones, { moveVisible(key, &$0, &$1, visible: visible, height: h) }) { return [] }
        switch key {
        case .char("n") where filterText(state, .zones) == nil:
            // No filter: n makes a new zone (with a filter, n and N step through the matches).
            guard writable(&state) else { return [] }
            state.input = InputLine(.newZone)
            return []
        case .char("n"), .char("N"):
            state.withPosition(.zones) { moveVisible(&$0, &$1, visible: visible, delta: key == .char("n") ? 1 : -1, height: h) }
            return []
        case .char("d"):
            guard writable(&state) else { return [] }
            guard visible.contains(state.position(.zones).selection), let zone = state.zones[state.position(.zones).selection].zone else { return [] }
            guard !zone.zoneID.isDefaultZone else {
                state.say(.defaultZoneUndeletable)
                return []
            }
            state.input = InputLine(.deleteZone(state.connection.zone(zone.zoneID)))
            return []
        case .char("u"):
            guard visible.contains(state.position(.zones).selection), let zone = state.zones[state.position(.zones).selection].zone else { return [] }
            let key = state.connection.zone(zone.zoneID)
            guard state.staged.zoneOperations.contains(where: { $0.zone == key }) else {
                state.say(.nothingStaged(.zone(zone.zoneID.zoneName)))
                return []
            }
            state.staged.unstage(zone: key)
            state.say(.unstaged(.zone(zone.zoneID.zoneName, nil), total: nil))
            return []
        case .char("1"): return switchDatabase(.public, &state)
        case .char("2"): return switchDatabase(.private, &state)
        case .char("3"): return switchDatabase(.shared, &state)
        case .char("r"):
            state.zonesLoading = true
            return [.loadZones(state.connection.database)]
        case .enter, .char("l"), .right:
            guard visible.contains(state.position(.zones).selection), let zone = state.zones[state.position(.zones).selection].zone else { return [] }
            return openZone(zone.zoneID, &state)
        default:
            return []
        }
    }

    static func switchDatabase(_ scope: DatabaseScope, _ state: inout BrowserState) -> [BrowserEffect] {
        state.connection.database = scope
        state.clearNotice()  // what was said of the other database's zones is not true here
        state.known.zones = Loadable([])
        state.known.subscriptions = Loadable([])
        state.known.firedOnce = []
        state.stack = ScreenStack()
        state.zonesLoading = true
        state.lastError = nil
        return [.loadZones(scope)]
    }

    static func listKey(_ state: BrowserState, _ zoneID: ZoneID, query: String = "") -> ListKey {
        ListKey(zone: state.connection.zone(zoneID), query: query)
    }

    /// Custom zones open their change feed (cached rows first, then the changes since the saved token);
    /// the default zone, which has no change feed, waits for `:query`.
    static func openZone(_ zoneID: ZoneID, _ state: inout BrowserState) -> [BrowserEffect] {
        let generation = (state.recordsScreen?.list.generation ?? 0) + 1
        state.stack.jumpToZones()
        if zoneID.isDefaultZone {
            var list = RecordList(key: listKey(state, zoneID), source: .awaitingQuery)
            list.moreComing = false
            list.opened = true
            list.generation = generation
            state.stack.push(.records(RecordsScreen(list: list)))
            state.say(.defaultZoneHasNoFeed)
            return []
        }
        var list = RecordList(key: listKey(state, zoneID), source: .changes)
        list.generation = generation
        list.loading = true
        state.stack.push(.records(RecordsScreen(list: list)))
        // Someone else's zone: whether it may be edited is known before anything is staged.
        if state.connection.database == .shared, state.sharePermissions[list.zone] == nil {
            return [.openList(list.key, generation: generation), .loadSharePermission(list.zone)]
        }
        return [.openList(list.key, generation: generation)]
    }

    // MARK: Records

    /// Asks the cache for the rows around the visible ones when they are not all in the window
    /// (`force`: the rows changed, read them again).
    static func window(_ screen: inout RecordsScreen, _ state: BrowserState, force: Bool, at scroll: Int? = nil) -> [BrowserEffect] {
        guard screen.list.opened else { return [] }
        let h = listHeight(state)
        let top = scroll ?? screen.list.scroll
        if !force {
            if screen.list.windowPending { return [] }
            if covers(screen.list, top, h) { return [] }
        }
        screen.list.windowPending = true
        screen.list.windowRequest += 1
        let list = screen.list
        return [.loadWindow(list.key, filter: screen.filter, start: max(0, top - h), count: h * 3, generation: list.generation, request: list.windowRequest, view: list.view)]
    }

    /// The window holds every row of a screen that starts at row `top`.
    static func covers(_ list: RecordList, _ top: Int, _ height: Int) -> Bool {
        let end = min(list.matching, top + height)
        let have = list.windowStart..<(list.windowStart + list.window.count)
        return end <= top || (have.contains(top) && have.contains(end - 1))
    }

    /// Moves the selection to `target` (and the scroll to `wanted`, a page's move, else as little as
    /// shows the target): at once when its rows are in the window, else when they arrive.
    static func jump(_ screen: inout RecordsScreen, _ state: BrowserState, to target: Int, scroll wanted: Int? = nil) -> [BrowserEffect] {
        let h = listHeight(state)
        var selection = screen.list.selection, scroll = screen.list.scroll
        if let wanted {
            selection = target
            scroll = wanted
        } else {
            move(&selection, &scroll, count: screen.list.matching, delta: target - selection, height: h)
        }
        if covers(screen.list, scroll, h) {
            screen.list.selection = selection
            screen.list.scroll = scroll
            screen.list.jumpTo = nil
            screen.list.jumpScroll = nil
            return window(&screen, state, force: false)
        }
        screen.list.jumpTo = selection
        screen.list.jumpScroll = wanted == nil ? nil : scroll
        return window(&screen, state, force: true, at: scroll)
    }

    /// A page of the list's changes (or of its query) is in the cache.
    static func pageArrived(_ outcome: PageOutcome, _ screen: inout RecordsScreen, _ state: inout BrowserState) -> [BrowserEffect] {
        screen.list.loading = false
        screen.list.total = outcome.total
        screen.list.deleted = outcome.deleted
        if screen.filter == nil { screen.list.matching = outcome.total }
        screen.list.syncToken = outcome.syncToken ?? screen.list.syncToken
        screen.list.continuationMarker = outcome.continuationMarker
        screen.list.moreComing = outcome.moreComing
        if !outcome.moreComing { screen.list.loadingToEnd = false }
        if outcome.tokenRefused {
            state.say(.syncTokenRefused)
        } else if screen.list.loadingToEnd {
            state.say(.loadingToEnd(loaded: screen.list.total, forExport: screen.pendingExport != nil))
        } else if state.messageKind == .progress(.loadingToEnd) || state.messageKind == .progress(.fetching) {
            // Only the loading message goes: a page prefetched in the background must not take
            // away what the user was just told (what was staged, a commit's outcome).
            state.clearNotice()
        }
        if screen.list.followEnd {
            // G: the selection follows the end as the pages come in.
            screen.list.windowPending = false
            return jump(&screen, state, to: max(0, screen.list.matching - 1)) + prefetch(&screen) + pendingExport(&screen, &state)
        }
        return window(&screen, state, force: true) + prefetch(&screen) + pendingExport(&screen, &state)
    }

    static func recordsKey(_ key: Key, _ screen: inout RecordsScreen, _ state: inout BrowserState) -> [BrowserEffect] {
        if let effects = listStagingKey(key, &screen, &state) { return effects }
        let h = listHeight(state)
        // G loads to the end (below); End goes to the last row loaded.
        if key != .char("G"), let motion = ListMovement.motion(key) {
            screen.list.followEnd = false
            var moved = ListMovement(count: screen.list.matching, selection: screen.list.selection, scroll: screen.list.scroll, pageHeight: h)
            moved.apply(motion)
            if case .step = motion {
                screen.list.selection = moved.selection
                screen.list.scroll = moved.scroll
                return window(&screen, state, force: false) + prefetch(&screen)
            }
            // A far move (g, End, a page) waits for its rows instead of drawing placeholders.
            return jump(&screen, state, to: moved.selection, scroll: moved.scroll) + prefetch(&screen)
        }
        let list = screen.list
        switch key {
        case .char("G"):
            screen.list.followEnd = true
            if list.moreComing {
                screen.list.loadingToEnd = true
                state.say(.loadingToEnd(loaded: nil, forExport: false))
            }
            return jump(&screen, state, to: max(0, list.matching - 1)) + prefetch(&screen)
        case .enter, .char("l"), .right:
            guard let row = list.row(list.selection) else { return [] }
            return openRecord(RecordKey(zone: list.zone, recordName: row.recordName), &state)
        case .char("r"):
            return refresh(&screen, &state)
        case .char("n") where screen.filter?.isEmpty ?? true:
            // No filter: n makes a new record (with a filter, n and N step through the matches).
            guard writable(&state) else { return [] }
            let here = Array(Set(list.window.compactMap(\.recordType))).sorted()
            state.input = InputLine(.newRecord(here: here, schema: creatableTypes(state).filter { !here.contains($0) }))
            return []
        case .char("n"), .char("N"):
            guard screen.filter?.isEmpty == false else { return [] }
            move(&screen.list.selection, &screen.list.scroll, count: list.matching, delta: key == .char("n") ? 1 : -1, height: h)
            return window(&screen, state, force: false)
        case .char("y"):
            guard let row = list.row(list.selection) else { return [] }
            state.say(.copied(.record(row.recordName)))
            return [.copyRecord(list.key, row.recordName)]
        default:
            return []
        }
    }

    /// `r`: the changes since the last token (or the query again, which puts a new list in the
    /// screen's place).
    static func refresh(_ screen: inout RecordsScreen, _ state: inout BrowserState) -> [BrowserEffect] {
        guard !screen.list.loading else { return [] }
        switch screen.list.source {
        case .changes:
            screen.list.loading = true
            state.say(.refreshing)
            return [.loadChanges(screen.list.key, syncToken: screen.list.syncToken, generation: screen.list.generation)]
        case .query(let request):
            return rerunQuery(request, &state)
        case .awaitingQuery:
            return []
        }
    }

    /// Prefetch distance in rows: the next page is requested before the user reaches the end.
    static func prefetch(_ screen: inout RecordsScreen) -> [BrowserEffect] {
        let list = screen.list
        guard list.opened, list.moreComing, !list.loading else { return [] }
        guard list.loadingToEnd || list.selection + prefetchDistance >= list.total else { return [] }
        screen.list.loading = true
        switch list.source {
        case .changes:
            return [.loadChanges(list.key, syncToken: list.syncToken, generation: list.generation)]
        case .query(var request):
            request.continuationMarker = list.continuationMarker
            return [.runQuery(request, list.key, reset: false, generation: list.generation)]
        case .awaitingQuery:
            return []
        }
    }

    /// Runs a query in a zone. On a zone's records it replaces the list (which comes back if the
    /// query fails); from any other screen it opens over it, and Esc goes back there.
    static func runQuery(_ request: QueryRequest, in zoneID: ZoneID, text: String, _ state: inout BrowserState) -> [BrowserEffect] {
        var request = request
        request.zoneID = zoneID.isDefaultZone ? nil : zoneID
        var list = RecordList(key: listKey(state, zoneID, query: request.query.json.text), source: .query(request))
        list.generation = (state.recordsScreen?.list.generation ?? 0) + 1
        list.loading = true
        list.opened = true
        var screen = RecordsScreen(list: list)
        screen.query = text
        if state.pane == .records, case .records(let shown) = state.stack.top {
            // A zone's changes are always one to come back to (typed fast, the query may run before its
            // first page); a query that found nothing is not.
            let keep = shown.list.source == .changes || shown.list.total > 0
            screen.beforeQuery = shown.beforeQuery + (keep ? [(shown.list, shown.query)] : [])
            screen.startedFrom = shown.startedFrom
            state.stack.replace(.records, with: .records(screen))
        } else {
            screen.startedFrom = state.pane
            state.stack.push(.records(screen))
        }
        state.clearNotice()
        return [.runQuery(request, list.key, reset: true, generation: list.generation)]
    }

    /// The open query again (`r`, `:sort`), on its own screen and in its zone.
    static func rerunQuery(_ request: QueryRequest, _ state: inout BrowserState) -> [BrowserEffect] {
        guard case .records(let screen)? = state.stack.find(.records) else { return [] }
        state.stack.open(.records)
        return runQuery(request, in: screen.list.zoneID, text: screen.query ?? "", &state)
    }

    /// The zone a `:query` typed here runs in: the open zone's, or the selected zone on the zones
    /// screen; nil where none is (the query asks).
    static func queryZone(_ state: BrowserState) -> ZoneID? {
        switch state.pane {
        case .records: return state.stack.top.records?.list.zoneID
        case .recordDetail: return state.stack.top.detail?.detail.zoneID
        case .zones:
            let visible = visibleZones(state)
            guard visible.contains(state.position(.zones).selection) else { return nil }
            return state.zones[state.position(.zones).selection].zone?.zoneID
        default: return nil
        }
    }

    /// The zone named for a `:query` typed where no zone was open.
    static func queryInZone(_ command: String, zoneName: String, _ state: inout BrowserState) -> [BrowserEffect] {
        var name = zoneName.trimmingWhitespace()
        let zones = state.zones.compactMap { $0.zone?.zoneID }
        // The one zone there is, shown in the prompt's parentheses, is taken by Enter: it read as a
        // default and was refused.
        if name.isEmpty, zones.count == 1 { name = zones[0].zoneName }
        guard let zoneID = zones.first(where: { $0.zoneName == name }) else {
            refuse(name.isEmpty ? .queryZoneUnnamed : .unknownZone(name, state.connection.database), &state)
            return []
        }
        // The command was parsed when it was typed; it is read again from its text here.
        guard let query = try? parseQuery(Array(command.split(separator: " ").map(String.init).dropFirst()), schema: state.schema) else { return [] }
        return startQuery(command, query, in: zoneID, &state)
    }

    // MARK: Record detail

    /// Opens a record on a new record screen.
    static func openRecord(_ key: RecordKey, _ state: inout BrowserState) -> [BrowserEffect] {
        state.stack.push(.detail(DetailScreen(RecordDetail(key: key))))
        return lookUp(key, &state)
    }

    /// Follows a reference from the record shown, on the same screen, which remembers where it came
    /// from (Esc goes back).
    static func follow(_ key: RecordKey, _ screen: inout DetailScreen, _ state: inout BrowserState) -> [BrowserEffect] {
        screen.history.append(screen.detail)
        screen.detail = RecordDetail(key: key)
        return lookUp(key, &state)
    }

    /// A record opened: asked for.
    static func lookUp(_ key: RecordKey, _ state: inout BrowserState) -> [BrowserEffect] {
        // The record's view says which subscriptions a change of it fires: they are needed.
        guard !state.known.subscriptions.loaded, !state.subscriptionsLoading, key.zone.scope == state.connection.scope else { return [.lookupRecord(key)] }
        state.subscriptionsLoading = true
        return [.lookupRecord(key), .loadSubscriptions(state.connection.database)]
    }

    /// The open record's lines and the rows each takes on this screen (one place for render and keys).
    static func detailPage(_ state: BrowserState) -> DetailPage? {
        state.detailScreen.map { detailPage($0, state) }
    }

    /// A record's view's lines and the rows each takes (its keys hand it the view they change).
    static func detailPage(_ screen: DetailScreen, _ state: BrowserState) -> DetailPage {
        let detail = screen.detail
        let layout = Layout(state)
        if detail.showRaw {
            let lines = rawLines(detail, width: layout.width).map { DetailLine(field: "", type: "", text: $0) }
            return DetailPage(lines: lines, rows: Array(repeating: 1, count: lines.count), isRaw: true)
        }
        var lines = detailLines(detail, staged: state.staged.operation(for: detail.key)) { userName($0, state) }
        if let record = detail.record, record.isShare {
            lines = shareLines(record, key: detail.key, state) + lines
        }
        lines += subscriptionLines(detail, state)
        lines += referencedByLines(detail)
        if let filter = screen.filter, !filter.isEmpty {
            // Section headers stay; of the rest, the lines of fields whose name or value matches.
            let owners = Set(lines.filter { matches($0.field + " " + $0.text, filter) }.compactMap { $0.owner ?? ($0.field.isEmpty ? nil : $0.field) })
            lines = lines.filter { $0.isHeading || owners.contains($0.owner ?? $0.field) }
        }
        let rows = lines.map { $0.isHeading ? 1 : max(1, TextWidth.wrap($0.text, to: layout.detailValueWidth).count) }
        return DetailPage(lines: lines, rows: rows)
    }

    /// Keeps the detail selection on a field and in view (after a load, a resize, a staged change).
    static func settleDetail(_ screen: inout DetailScreen, _ state: BrowserState, toFirst: Bool = false) {
        let page = detailPage(screen, state)
        if toFirst {
            screen.detail.selection = page.firstSelectable
            screen.detail.scroll = 0
        }
        page.settle(&screen.detail.selection, &screen.detail.scroll, height: Layout(state).bodyHeight)
    }

    /// `settleDetail` on the record's view wherever it is (after an edit made on the editor or the
    /// input line, a screen opened with a record).
    static func settleOpenRecord(_ state: inout BrowserState, toFirst: Bool = false) {
        state.withDetail { settleDetail(&$0, $1, toFirst: toFirst) }
    }

    /// After an element's edit the selection stays with that element (the field's first line when
    /// the list is empty), not with the line index, which an insert or removal shifts.
    static func select(field: String, element: Int, _ screen: inout DetailScreen, _ state: BrowserState) {
        let page = detailPage(screen, state)
        let lines = page.lines
        if let index = lines.indices.first(where: { lines[$0].owner == field && lines[$0].element == element && lines[$0].mark != .was })
            ?? lines.indices.first(where: { lines[$0].owner == field && lines[$0].field == field }) {
            screen.detail.selection = index
        }
        page.settle(&screen.detail.selection, &screen.detail.scroll, height: Layout(state).bodyHeight)
    }

    static func detailKey(_ key: Key, _ screen: inout DetailScreen, _ state: inout BrowserState) -> [BrowserEffect] {
        if let effects = detailStagingKey(key, &screen, &state) { return effects }
        let page = detailPage(screen, state)
        let lines = page.lines
        let h = Layout(state).bodyHeight
        if page.apply(key, &screen.detail.selection, &screen.detail.scroll, height: h) { return [] }
        let detail = screen.detail
        switch key {
        case .char("v"):
            screen.detail.showRaw.toggle()
            settleDetail(&screen, state, toFirst: true)
        case .enter, .char("l"), .right:
            guard !detail.showRaw, lines.indices.contains(detail.selection), let reference = lines[detail.selection].reference else {
                state.say(.selectReferenceToFollow)
                return []
            }
            let zone = reference.zoneID.map { state.connection.zone(ZoneID(zoneName: $0.zoneName, ownerRecordName: $0.ownerRecordName)) } ?? detail.zone
            return follow(RecordKey(zone: zone, recordName: reference.recordName), &screen, &state)
        case .char("y"):
            if !detail.showRaw, lines.indices.contains(detail.selection), let json = lines[detail.selection].copyJSON {
                let line = lines[detail.selection]
                state.say(.copied(line.owner == nil && line.field == "  by" ? .userRecordName(json) : .field(line.field)))
                return [.copy(json)]
            }
            guard let raw = detail.raw ?? detail.record?.json else { return [] }
            state.say(.copied(.record(detail.recordName)))
            return [.copy(Format.copyJSON(raw))]
        case .char("r"):
            return [.lookupRecord(detail.key)]
        case .char("o"):
            return openAssetDownload(screen, &state)
        default:
            break
        }
        return []
    }

    // MARK: Subscriptions

    static func openSubscriptions(_ state: inout BrowserState) -> [BrowserEffect] {
        if state.pane != .subscriptions {
            state.stack.discard(.subscriptionDetail)
            state.stack.open(.subscriptions)
        }
        state.subscriptionsLoading = true
        return [.loadSubscriptions(state.connection.database)]
    }

    static func subscriptionsKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect] {
        let visible = visibleSubscriptions(state)
        // Every movement key, G included (issue 30: G did nothing here).
        let h = listHeight(state)
        if state.withPosition(.subscriptions, { moveVisible(key, &$0, &$1, visible: visible, height: h) }) { return [] }
        if let effects = subscriptionStagingKey(key, &state) { return effects }
        switch key {
        case .char("n"), .char("N"):
            state.withPosition(.subscriptions) { moveVisible(&$0, &$1, visible: visible, delta: key == .char("n") ? 1 : -1, height: h) }
        case .enter, .char("l"), .right:
            guard visible.contains(state.position(.subscriptions).selection) else { return [] }
            state.stack.push(.subscriptionDetail(SubscriptionDetailScreen()))
        case .char("r"):
            return openSubscriptions(&state)
        case .char("y"):
            guard let row = selectedSubscriptionRow(state) else { return [] }
            return [.copy(Format.copyJSON(row.json))]
        default: break
        }
        return []
    }

    static func subscriptionDetailKey(_ key: Key, _ screen: inout SubscriptionDetailScreen, _ state: inout BrowserState) -> [BrowserEffect] {
        // The rows drawn (wrapped) and the page drawing shows, from one place.
        if scrollView(key, &screen.scroll, count: subscriptionRows(state, raw: screen.raw).count, height: Layout(state).pageHeight) {
            return []
        } else if key == .char("v") {
            screen.raw.toggle()
            screen.scroll = 0
        } else if key == .char("y"), let row = selectedSubscriptionRow(state) {
            state.say(.copied(.subscription))
            return [.copy(Format.copyJSON(row.json))]
        } else if key != .char("n"), let effects = subscriptionStagingKey(key, &state) {
            // E, d, u and R act on the subscription shown; its row may go (a new one unstaged).
            if selectedSubscriptionRow(state) == nil { state.stack.discard(.subscriptionDetail) }
            return effects
        }
        return []
    }

    // MARK: Input line

    static func handleInput(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect] {
        guard var input = state.input else { return [] }
        switch key {
        case .escape, .ctrl("c"), .backspace where input.characters.isEmpty:
            // Esc, or Backspace on an empty line (as in less and vim), closes the line; a filter goes.
            state.input = nil
            return input.mode == .filter ? setFilter(nil, &state) : []
        case .enter:
            state.input = nil
            let effects: [BrowserEffect]
            switch input.mode {
            case .filter: effects = setFilter(input.text.isEmpty ? nil : input.text, &state)
            case .addField: effects = addField(input.text, &state)
            case .newRecord: effects = newRecord(input.text, &state)
            case .newZone: effects = newZone(input.text, &state)
            case .newSubscription: effects = newSubscription(input.text, &state)
            case .deleteZone(let zone): effects = deleteZone(zone, typed: input.text, &state)
            case .invite: effects = invite(input.text, &state)
            case .assetFile(let field): effects = stageAssetFile(field, path: input.text, &state)
            case .saveAsset(var download):
                download.path = input.text.trimmingWhitespace()
                effects = saveAsset(download, &state)
            case .command:
                remember(command: input.text, &state)
                effects = command(input.text, &state)
            case .queryZone(let command, _): effects = queryInZone(command, zoneName: input.text, &state)
            }
            if case .refused(let reason)? = state.report.notice, state.modal == nil {
                // Refused: the line opens again with what was typed and why.
                state.clearNotice()
                reopen(input.mode, text: input.text, refusal: reason, &state)
            }
            return effects
        case .tab:
            input.refusal = nil  // Tab's candidates take the refusal's place
            let effects = tabComplete(&input, &state)
            state.input = input
            return effects
        case .up, .down, .ctrl("p"), .ctrl("n"):
            guard input.mode == .command else { return [] }
            recall(older: key == .up || key == .ctrl("p"), &input, state.session.commandHistory)
            state.input = input
            return []
        default:
            let before = input.characters
            guard input.edit(key) else { return [] }
            if input.characters != before {
                input.hint = nil
                input.refusal = nil
                input.recall = nil
            }
            state.input = input
            // A filter follows the text as it is typed.
            return input.mode == .filter && input.characters != before ? setFilter(input.text, &state) : []
        }
    }

    /// `d` on a zone, confirmed by typing its name: its deletion is staged.
    /// Refuses what was typed on the input line: it opens again with the text and this reason.
    static func refuse(_ refusal: Notice.Refusal, _ state: inout BrowserState) {
        state.say(.refused(refusal))
    }

    /// Opens the input line again with text the program refused, and why.
    static func reopen(_ mode: InputLine.Mode, text: String, refusal: Notice.Refusal, _ state: inout BrowserState) {
        var line = InputLine(mode, text: text)
        line.hint = nil
        line.refusal = refusal
        state.present(.input(line))
    }

    static func deleteZone(_ zone: ZoneKey, typed: String, _ state: inout BrowserState) -> [BrowserEffect] {
        guard typed == zone.zoneName else {
            // As every refused line: open again with what was typed and why.
            reopen(.deleteZone(zone), text: typed, refusal: .zoneNameMismatch(zone.zoneName), &state)
            return []
        }
        state.staged.stage(zone: StagedZoneOperation(kind: .delete, zone: zone))
        state.say(.stagedZoneDeletion(zone.zoneName))

        return []
    }

    /// The `/` filter of the current screen: the records list's is read from the cache, the other
    /// screens' rows are in memory. Back to the first match either way.
    static func setFilter(_ text: String?, _ state: inout BrowserState) -> [BrowserEffect] {
        let pane = state.pane
        guard pane == .records else {
            state.stack.modify(pane) { $0.filter = (text ?? "").isEmpty ? nil : text }
            paneFilterChanged(&state)
            return []
        }
        // The records list's filter: back to the first match, rows and count from the cache.
        return state.withRecords { screen, state in
            screen.filter = text
            screen.list.selection = 0
            screen.list.scroll = 0
            return window(&screen, state, force: true)
        } ?? []
    }
}
