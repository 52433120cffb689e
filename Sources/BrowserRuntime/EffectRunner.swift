import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RecordBrowser

/// Runs the browser's effects against the service and the local cache, and turns each answer into
/// events. Pages are written to the cache before the core hears of them, so the core only ever reads
/// windows of rows.
public struct EffectRunner: Sendable {
    public let client: CloudKitClient
    public let cache: RecordCache?
    /// Where commits are recorded before they are sent (nil: no journal, e.g. in tests).
    public let journal: StagingJournal?
    /// The account the cache belongs to (nil without a cache).
    public var account: Account? { journal?.account ?? cacheAccount }
    let cacheAccount: Account?
    /// Records per change-feed page.
    public var pageSize = 200

    public init(client: CloudKitClient, cache: RecordCache?, journal: StagingJournal? = nil, account: Account? = nil) {
        self.client = client
        self.cache = cache
        self.journal = journal
        self.cacheAccount = account
    }

    /// Runs one effect; what only the program around the browser can do goes to `host`.
    public func execute(_ effect: BrowserEffect, host: any EffectHost) async -> [BrowserEvent] {
        switch effect {
        case .copy(let text):
            await host.copy(text)
            return []
        case .copyRecord(let key, let name):
            guard let record = try? cache?.record(key, name: name) else { return [.notice(.notCachedToCopy(name))] }
            await host.copy(Format.copyJSON(record.json))
            return []
        case .quit:
            await host.quit()
            return []
        case .editJSON(let edit):
            return await host.edit(edit).map { [$0] } ?? []
        case .startNotifications:
            await NotificationListener(client: client).run { event in await host.deliver(event) }
            return []
        case .removeLegacyJournal(let path):
            StagingJournal.removeLegacy(path: path)
            return []
        case .downloadAsset(let download):
            return await downloadAsset(download, host: host)
        default:
            return await execute(effect)
        }
    }

    /// Runs an effect that needs no host (the network and the local cache).
    public func execute(_ effect: BrowserEffect) async -> [BrowserEvent] {
        if let cache, let events = Self.answer(effect, from: cache) { return events }
        switch effect {
        case .discoverUsers(let names):
            // Best effort: an owner shown by record name is still right.
            guard let users = try? await client.database(.public).discoverUsers(names.map { UserLookupInfo(userRecordName: $0) }) else { return [] }
            var found: [String: String] = [:]
            for user in users {
                guard let recordName = user.userRecordName else { continue }
                let name = [user.nameComponents?.givenName, user.nameComponents?.familyName].compactMap { $0 }.joined(separator: " ")
                let email = user.lookupInfo?.emailAddress
                found[recordName] = name.isEmpty ? (email ?? recordName) : (email.map { "\(name) <\($0)>" } ?? name)
            }
            return [.usersDiscovered(found)]
        case .countReferrersOnServer(let keys, let fields):
            return [.serverReferrersCounted(await countReferrersOnServer(keys, fields: fields), fields: fields)]
        case .loadSharePermission(let zone):
            // The zone's shares as the signed-in user sees them: their own participation in each.
            let request = QueryRequest(query: Query(recordType: Record.shareRecordType), zoneID: zone.zoneID)
            guard let page = try? await client.database(zone.database).query(request) else { return [.sharePermissionLoaded(zone, nil)] }
            let permissions = page.records.compactMap(\.record).compactMap { $0.currentUserParticipant?.permission }
            let best: SharePermission? = permissions.contains(.readWrite) ? .readWrite : permissions.first
            return [.sharePermissionLoaded(zone, best)]
        case .loadShares(let scope):
            do {
                var shares: [Record] = []
                let request = QueryRequest(query: Query(recordType: Record.shareRecordType), zoneWide: true)
                for try await page in client.database(scope).queryPages(request) { shares += page.records.compactMap(\.record) }
                return [.sharesLoaded(scope, .success(shares))]
            } catch let error as CloudKitError where error.serverErrorCode == .badRequest {
                // No share was ever saved in this container: the record type is unknown.
                return [.sharesLoaded(scope, .success([]))]
            } catch { return [.sharesLoaded(scope, .failure(BrowserFailure(error)))] }
        case .acceptShare(let guid):
            do {
                let results = try await client.database(.shared).acceptShares([ShortGUID(value: guid, shouldFetchRootRecord: false)])
                switch results.first {
                case .result(let result)?: return [.shareAccepted(guid, .success(result))]
                case .failure(let error)?:
                    return [.shareAccepted(guid, .failure(BrowserFailure(CloudKitError(kind: .server, operation: "records/accept", serverErrorCode: error.serverErrorCode, reason: error.info.reason))))]
                case nil: return [.shareAccepted(guid, .failure(BrowserFailure(message: "records/accept answered nothing")))]
                }
            } catch { return [.shareAccepted(guid, .failure(BrowserFailure(error)))] }
        case .loadZones(let scope):
            do {
                let zones = try await client.database(scope).listZones()
                var events: [BrowserEvent] = [.zonesLoaded(scope, .success(zones))]
                if let cache, let account, let cached = try? cache.cachedZones(Scope(account: account, database: scope)) {
                    events.append(.cachedZones(Scope(account: account, database: scope), cached))
                }
                return events
            } catch { return [.zonesLoaded(scope, .failure(BrowserFailure(error)))] }
        // Without a cache (with one, `answer` took these).
        case .openList(_, let generation):
            return [.listOpened(generation: generation, total: 0, syncToken: nil, moreComing: true)]
        case .loadWindow(_, _, let start, _, let generation, let request, _):
            return [.windowLoaded(generation: generation, request: request, start: start, rows: [], matching: 0)]
        case .rememberColumns, .storeRecords:
            return []
        case .findReferrers(let keys):
            return [.referrersFound(Dictionary(uniqueKeysWithValues: keys.map { ($0, DeleteImpact(referrers: [])) }))]
        case .findReferencedBy:
            return []
        case .loadRecordToDelete(let key, let name):
            return [.recordToDelete(RecordKey(zone: key.zone, recordName: name), nil)]
        case .markRows(_, _, _, _, _, let generation):
            return [.rowsToMark(generation: generation, names: [], skipped: 0)]
        case .loadMarked(let key, let names, let purpose):
            return [.markedLoaded(key, purpose, records: [], missing: names)]
        case .checkExportPath(let request):
            return [.exportPathChecked(request, refused: cache == nil ? "there is no local cache to export from" : Exporter.refusal(request.path))]
        case .export(let request):
            guard let cache else { return [.exported(request, .failure(BrowserFailure(message: "there is no local cache to export from")))] }
            return [Exporter.export(request, cache: cache)]
        case .loadChanges(let key, let token, let generation):
            return [.pageApplied(generation: generation, await loadChanges(key, token))]
        case .runQuery(let request, let key, let reset, let generation):
            do {
                if reset { try cache?.reset(key) }
                let page = try await client.database(key.zone.database).query(request)
                let outcome = try apply(key, page.records, syncToken: nil, marker: page.continuationMarker, more: page.continuationMarker != nil)
                return [.pageApplied(generation: generation, .success(outcome))]
            } catch { return [.pageApplied(generation: generation, .failure(BrowserFailure(error)))] }
        case .loadSchema:
            return [.schemaLoaded(await loadSchema())]
        case .loadSchemaFile(let path):
            guard let text = try? String(contentsOfFile: Self.absolutePath(path), encoding: .utf8) else {
                return [.schemaLoaded(.failure(BrowserFailure(message: "cannot read \(path): " + Paths.whyUnreadable(Self.absolutePath(path)))))]
            }
            do {
                let schema = try SchemaLanguage.parse(text)
                let counts = (try? cache?.inferredSchema(limit: 0).counts) ?? [:]
                return [.schemaLoaded(.success(KnownSchema(schema: schema, origin: .file(path), environment: client.configuration.environment, counts: counts)))]
            } catch {
                return [.schemaLoaded(.failure(BrowserFailure(message: "\(path):\(error.line):\(error.column): \(error.message)")))]
            }
        case .lookupRecord(let key):
            do {
                let request = LookupRecordsRequest(recordNames: [key.recordName], zoneID: key.zone.zoneID)
                let results = try await client.database(key.zone.database).lookupRecordsWithJSON(request)
                guard let first = results.first else { return [.recordLoaded(key, .failure(BrowserFailure(message: "no result for \(key.recordName)")))] }
                return [.recordLoaded(key, .success(first))]
            } catch { return [.recordLoaded(key, .failure(BrowserFailure(error)))] }
        case .loadSubscriptions(let scope):
            do { return [.subscriptionsLoaded(scope, .success(try await client.database(scope).listSubscriptions()))] } catch {
                return [.subscriptionsLoaded(scope, .failure(BrowserFailure(error)))]
            }
        case .commit(let plan):
            let zones = await commitZones(plan)
            let zonesFailed = zones.contains { if case .answered = $0.answer { return false } else { return true } }
            if zonesFailed {
                // The records wait for their zones: none is sent.
                return [.commitFinished(plan.requests.map { CommitOutcome(request: $0, answer: .notSent) }, zones: zones,
                                        subscriptions: plan.subscriptionRequests.map { SubscriptionOutcome(request: $0, answer: .refused(BrowserFailure(message: "not sent: the zones/modify before it failed"))) })]
            }
            let subscriptions = await commitSubscriptions(plan)
            return [.commitFinished(await commit(plan), zones: zones, subscriptions: subscriptions)]
        case .lookupConflicts(let zone, let names):
            do {
                let results = try await client.database(zone.database).lookupRecords(LookupRecordsRequest(recordNames: names, zoneID: zone.zoneID))
                return [.conflictVersions(zone, .success(results))]
            } catch { return [.conflictVersions(zone, .failure(BrowserFailure(error)))] }
        case .verifyCommit(let requests):
            return [await verify(requests)]
        case .checkAssetFile(let key, let field, let path):
            return [checkAssetFile(key, field: field, path: path)]
        case .checkTargets(let keys):
            return [await checkTargets(keys)]
        case .listPaths(let typed):
            return [listPaths(typed)]
        case .copy, .copyRecord, .quit, .editJSON, .startNotifications, .removeLegacyJournal, .downloadAsset, .commitSettled:
            return []
        }
    }

    /// What the local cache answers at once, with no network and no waiting: a list opened, a window
    /// of rows, remembered columns, the record a delete reads, records stored; nil for any other
    /// effect. `execute` answers these effects with it, and so does `settle(_:_:cache:)`.
    public static func answer(_ effect: BrowserEffect, from cache: RecordCache) -> [BrowserEvent]? {
        switch effect {
        case .openList(let key, let generation):
            do {
                let state = try cache.open(key)
                return [.listOpened(generation: generation, total: state.count, syncToken: state.syncToken, moreComing: state.moreComing)]
            } catch {
                return [.listOpened(generation: generation, total: 0, syncToken: nil, moreComing: true), .notice(.cache(.unreadable(reason: "\(error)")))]
            }
        case .loadWindow(let key, let filter, let start, let count, let generation, let request, let view):
            return window(cache, key, filter: filter, start: start, count: count, generation: generation, request: request, view: view)
        case .rememberColumns(let type, let columns):
            try? cache.setColumns(columns, for: type)
            return []
        case .loadRecordToDelete(let key, let name):
            return [.recordToDelete(RecordKey(zone: key.zone, recordName: name), try? cache.record(key, name: name))]
        case .markRows(let key, let filter, let sort, let start, let count, let generation):
            let found = (try? cache.names(key, filter: filter, sort: sort, start: start, count: count)) ?? (names: [], deleted: 0)
            return [.rowsToMark(generation: generation, names: found.names, skipped: found.deleted)]
        case .loadMarked(let key, let names, let purpose):
            // One read for all of them: 10,000 marks are not 10,000 round trips.
            let records = (try? cache.records(key, names: names)) ?? []
            let found = Set(records.map(\.recordName))
            return [.markedLoaded(key, purpose, records: records, missing: names.filter { !found.contains($0) })]
        case .findReferrers(let keys):
            var impacts: [RecordKey: DeleteImpact] = [:]
            if keys.count > 20, let all = try? cache.deleteImpacts(of: keys) {
                // A bulk d: one read of the zone for all of them.
                impacts = all
            } else {
                for key in keys { impacts[key] = (try? cache.deleteImpact(of: key)) ?? DeleteImpact(referrers: []) }
            }
            return [.referrersFound(impacts)]
        case .findReferencedBy(let key):
            guard let found = try? cache.referencedBy(key) else { return [] }
            return [.referencedByFound(key, found)]
        case .storeRecords(let key, let records, let generation):
            do {
                let state = try cache.store(key, records: records)
                return [.recordsStored(generation: generation, total: state.count)]
            } catch { return [.notice(.cache(.notUpdated(reason: "\(error)")))] }
        default:
            return nil
        }
    }

    /// The core and the cache alone, synchronously: every effect the cache answers (`answer`) is
    /// answered and its events go through `Browser.update`, until none is left; the other effects are
    /// returned in order, unrun. No journal, network or host: for the key-press benchmark's measured
    /// region and tests of the core.
    public static func settle(_ state: inout BrowserState, _ effects: [BrowserEffect], cache: RecordCache) -> [BrowserEffect] {
        var pending = effects
        var left: [BrowserEffect] = []
        while !pending.isEmpty {
            let effect = pending.removeFirst()
            guard let events = answer(effect, from: cache) else {
                left.append(effect)
                continue
            }
            for event in events { pending += Browser.update(&state, event) }
        }
        return left
    }

    /// Sends a commit's requests in order, after recording them in the journal. A request whose
    /// answer is lost (no HTTP status: the connection dropped or timed out) may have been applied:
    /// the requests after it are not sent, and the caller checks by looking the records up.
    public func commit(_ planned: CommitPlan) async -> [CommitOutcome] {
        // Files staged into asset fields are uploaded first; their receipts go out with the records.
        let plan: CommitPlan
        do {
            plan = try await uploadingLocalFiles(planned)
        } catch {
            let failure = error as? BrowserFailure ?? BrowserFailure(error)
            return planned.requests.map { CommitOutcome(request: $0, answer: .refused(failure)) }
        }
        if let journal {
            do { try journal.beginCommit(plan, at: Int64(Date().timeIntervalSince1970 * 1000)) } catch {
                return plan.requests.map { CommitOutcome(request: $0, answer: .refused(BrowserFailure(message: "the journal could not record the commit, so it was not sent: \(error)"))) }
            }
        }
        var outcomes: [CommitOutcome] = []
        var stop = false
        for request in plan.requests {
            if stop {
                outcomes.append(CommitOutcome(request: request, answer: .notSent))
                continue
            }
            do {
                let result = try await client.database(request.database).modifyRecords(request.body)
                outcomes.append(CommitOutcome(request: request, answer: .answered(result.results)))
            } catch let error as CloudKitError where error.httpStatus == nil {
                outcomes.append(CommitOutcome(request: request, answer: .unknown(BrowserFailure(error))))
                stop = true
            } catch {
                outcomes.append(CommitOutcome(request: request, answer: .refused(BrowserFailure(error))))
            }
        }
        return outcomes
    }

    /// Sends a commit's zones/modify requests (before its records).
    public func commitZones(_ plan: CommitPlan) async -> [ZoneOutcome] {
        var outcomes: [ZoneOutcome] = []
        for request in plan.zoneRequests {
            do {
                outcomes.append(ZoneOutcome(request: request, answer: .answered(try await client.database(request.database).modifyZones(request.body.operations))))
            } catch let error as CloudKitError where error.httpStatus == nil {
                // The answer was lost: whether the zones changed is looked up, not guessed. Only when
                // the lookup fails too does it stay unknown (and the records are not sent).
                guard let results = await lookUpZoneOutcomes(request) else {
                    outcomes.append(ZoneOutcome(request: request, answer: .unknown(BrowserFailure(error))))
                    break
                }
                outcomes.append(ZoneOutcome(request: request, answer: .answered(results)))
            } catch {
                outcomes.append(ZoneOutcome(request: request, answer: .refused(BrowserFailure(error))))
                break
            }
        }
        return outcomes
    }

    /// Sends a commit's subscriptions/modify requests (after its zones, before its records). Each
    /// operation succeeds or fails on its own; a refused one stays staged with its reason.
    public func commitSubscriptions(_ plan: CommitPlan) async -> [SubscriptionOutcome] {
        var outcomes: [SubscriptionOutcome] = []
        for request in plan.subscriptionRequests {
            do {
                outcomes.append(SubscriptionOutcome(request: request, answer: .answered(try await client.database(request.database).modifySubscriptions(request.body.operations))))
            } catch let error as CloudKitError where error.httpStatus == nil {
                // The answer was lost: what the server holds now says what was applied.
                guard let results = await lookUpSubscriptionOutcomes(request) else {
                    outcomes.append(SubscriptionOutcome(request: request, answer: .unknown(BrowserFailure(error))))
                    continue
                }
                outcomes.append(SubscriptionOutcome(request: request, answer: .answered(results)))
            } catch {
                outcomes.append(SubscriptionOutcome(request: request, answer: .refused(BrowserFailure(error))))
            }
        }
        return outcomes
    }

    /// What a subscriptions/modify whose answer was lost did, from subscriptions/lookup: a created
    /// or changed subscription that holds the sent definition, and a deleted one that is gone, were
    /// applied; the others were not (and stay staged).
    func lookUpSubscriptionOutcomes(_ request: CommitPlan.SubscriptionRequest) async -> [SubscriptionResult]? {
        guard let found = try? await client.database(request.database).lookupSubscriptions(request.operations.map(\.subscriptionID)) else { return nil }
        return request.operations.map { op in
            let current = found.compactMap(\.subscription).first { $0.subscriptionID == op.subscriptionID }
            switch op.kind {
            case .delete where current == nil: return .subscription(Subscription(subscriptionID: op.subscriptionID, subscriptionType: ""))
            case .create, .update:
                if let current, current.query == op.subscription.query, current.firesOn == op.subscription.firesOn, current.subscriptionType == op.subscription.subscriptionType {
                    return .subscription(current)
                }
            default: break
            }
            let reason = "not applied: the answer was lost, and subscriptions/lookup shows the subscription \(current == nil ? "does not exist" : "as it was")"
            return .failure(SubscriptionError(subscriptionID: op.subscriptionID, info: ServerErrorInfo(serverErrorCode: .internalError, reason: reason)))
        }
    }

    /// What a zones/modify whose answer was lost did, from zones/lookup: a created zone that exists
    /// and a deleted zone that does not were applied; the others were not (and stay staged).
    func lookUpZoneOutcomes(_ request: CommitPlan.ZoneRequest) async -> [ZoneResult]? {
        guard let found = try? await client.database(request.database).lookupZones(request.operations.map(\.zone.zoneID)) else { return nil }
        return request.operations.map { op in
            let exists = found.contains { result in
                if case .zone(let zone) = result { return zone.zoneID.zoneName == op.zone.zoneID.zoneName && zone.deleted != true }
                return false
            }
            let applied = (op.kind == .create) == exists
            if applied { return .zone(Zone(zoneID: op.zone.zoneID, deleted: op.kind == .delete ? true : nil)) }
            let reason = "not applied: the answer was lost, and zones/lookup shows the zone \(exists ? "still exists" : "does not exist")"
            return .failure(ZoneError(zoneID: op.zone.zoneID, info: ServerErrorInfo(serverErrorCode: op.kind == .create ? .zoneNotFound : .exists, reason: reason)))
        }
    }

    /// Whether records exist, by records/lookup per zone: NOT_FOUND is "missing", a record (or any
    /// other answer for it) "exists" only when it is a record.
    func checkTargets(_ keys: [RecordKey]) async -> BrowserEvent {
        var found: [RecordKey: Bool] = [:]
        var zones: [ZoneKey] = []
        for key in keys where !zones.contains(key.zone) { zones.append(key.zone) }
        do {
            for zone in zones {
                let names = keys.filter { $0.zone == zone }.map(\.recordName)
                let results = try await client.database(zone.database).lookupRecords(LookupRecordsRequest(recordNames: names, zoneID: zone.zoneID))
                for name in names {
                    switch results.first(where: { $0.recordName == name }) {
                    case .record?: found[RecordKey(zone: zone, recordName: name)] = true
                    case .failure(let error)? where error.serverErrorCode == .notFound: found[RecordKey(zone: zone, recordName: name)] = false
                    case .deleted?: found[RecordKey(zone: zone, recordName: name)] = false
                    default: break
                    }
                }
            }
        } catch { return .targetsChecked(found, failure: BrowserFailure(error)) }
        let unanswered = keys.filter { found[$0] == nil }
        return .targetsChecked(found, failure: unanswered.isEmpty ? nil : BrowserFailure(message: "records/lookup did not say"))
    }

    /// Looks up the records of requests whose answer was lost and judges each operation.
    public func verify(_ requests: [CommitPlan.Request]) async -> BrowserEvent {
        var verdicts: [CommitVerdict] = []
        do {
            for request in requests {
                let names = request.body.operations.map(\.record.recordName)
                let lookup = LookupRecordsRequest(recordNames: names, zoneID: request.body.zoneID ?? request.zone.zoneID)
                let results = try await client.database(request.database).lookupRecords(lookup)
                for operation in request.body.operations {
                    let name = operation.record.recordName
                    let server = results.first { $0.recordName == name } ?? .failure(RecordError(recordName: name, info: ServerErrorInfo(serverErrorCode: .notFound, reason: "no result")))
                    verdicts.append(CommitVerdict.judge(operation, zone: request.zone, server: server))
                }
            }
        } catch { return .commitVerified(verdicts, failure: BrowserFailure(error)) }
        return .commitVerified(verdicts, failure: nil)
    }

    /// One page of the change feed into the cache. A token the server no longer understands starts a
    /// clean fetch (and says so) instead of failing.
    ///
    /// Which answers mean "token refused" is decided on types, not on the reason's wording: the
    /// reference observes an unusable token as BAD_REQUEST (reason "Unknown sync continuation type")
    /// and mentions CHANGE_TOKEN_EXPIRED (unconfirmed). BAD_REQUEST could also have another cause, so
    /// the zone is first fetched from no token: only if that succeeds was the token the problem, and
    /// only then is the cache replaced. Otherwise the original error is reported and the cache kept.
    func loadChanges(_ key: ListKey, _ token: String?) async -> Result<PageOutcome, BrowserFailure> {
        let database = client.database(key.zone.database)
        let zoneID = key.zone.zoneID
        do {
            let page = try await database.recordChanges(RecordChangesRequest(zoneID: zoneID, syncToken: token, resultsLimit: pageSize))
            return .success(try apply(key, page.records, syncToken: page.syncToken, marker: nil, more: page.moreComing))
        } catch let error as CloudKitError where token != nil && Self.mayBeRefusedToken(error) {
            let fresh: RecordChangesPage
            do {
                fresh = try await database.recordChanges(RecordChangesRequest(zoneID: zoneID, syncToken: nil, resultsLimit: pageSize))
            } catch {
                return .failure(BrowserFailure(error))
            }
            do {
                try cache?.reset(key)
                var outcome = try apply(key, fresh.records, syncToken: fresh.syncToken, marker: nil, more: fresh.moreComing)
                outcome.tokenRefused = true
                return .success(outcome)
            } catch { return .failure(BrowserFailure(error)) }
        } catch {
            return .failure(BrowserFailure(error))
        }
    }

    /// A server error that an unusable sync token produces (see `loadChanges`).
    static func mayBeRefusedToken(_ error: CloudKitError) -> Bool {
        error.serverErrorCode == .badRequest || error.serverErrorCode == .changeTokenExpired
    }

    func apply(_ key: ListKey, _ records: [RecordResult], syncToken: String?, marker: String?, more: Bool) throws -> PageOutcome {
        guard let cache else {
            return PageOutcome(total: records.count, syncToken: syncToken, continuationMarker: marker, moreComing: more, received: records.count)
        }
        let state = try cache.apply(key, records: records, syncToken: syncToken, continuationMarker: marker, moreComing: more)
        var outcome = PageOutcome(total: state.count, syncToken: syncToken, continuationMarker: marker, moreComing: more, received: records.count)
        outcome.deleted = state.deleted
        return outcome
    }

    /// Reads a window of a list from the cache, with its field columns: the view's, else the ones
    /// remembered for the record type of the first row, else per type the STRING field at least half
    /// of the window's records of that type have (none: no field column, the system columns instead).
    public static func window(
        _ cache: RecordCache, _ key: ListKey, filter: String?, start: Int, count: Int, generation: Int, request: Int, view: ListView
    ) -> [BrowserEvent] {
        do {
            if let columns = view.columns {
                let window = try cache.window(key, filter: filter, start: start, count: count, fields: columns, sort: view.sort)
                return [.windowLoaded(generation: generation, request: request, start: start, rows: window.rows, matching: window.matching, columns: columns)]
            }
            var window = try cache.window(key, filter: filter, start: start, count: count, sort: view.sort, labels: view.labels)
            // Columns remembered for the first type shown win; else each type's label field.
            let types = Set(window.rows.filter { !$0.deleted }.compactMap(\.recordType))
            if let first = window.rows.first(where: { !$0.deleted && $0.recordType != nil })?.recordType, let remembered = try cache.columns(for: first) {
                window = try cache.window(key, filter: filter, start: start, count: count, fields: remembered, sort: view.sort)
                return [.windowLoaded(generation: generation, request: request, start: start, rows: window.rows, matching: window.matching, columns: remembered)]
            }
            var labels = view.labels
            for type in types.sorted() where labels[type] == nil {
                // The STRING field most of this type's rows in the window have (a server that writes
                // fields in name order would otherwise offer a mostly blank `notes`).
                let names = window.rows.filter { !$0.deleted && $0.recordType == type }.map(\.recordName)
                labels[type] = try ListView.labelField(among: cache.fields(key, names: names)) ?? ""
            }
            if labels != view.labels {
                window = try cache.window(key, filter: filter, start: start, count: count, sort: view.sort, labels: labels)
            }
            return [.windowLoaded(generation: generation, request: request, start: start, rows: window.rows, matching: window.matching, labels: labels)]
        } catch {
            return [.windowLoaded(generation: generation, request: request, start: start, rows: [], matching: 0),
                    .notice(.cache(.unreadable(reason: "\(error)")))]
        }
    }

    /// The server's schema (`ckbrowse serve`'s endpoint), else the one the cached records show.
    /// Apple's service has no schema endpoint: it is not asked.
    func loadSchema() async -> Result<KnownSchema, BrowserFailure> {
        let environment = client.configuration.environment
        if ServerID.url(normalizing: client.configuration.serverURL) != ServerID.appleDefault {
            do {
                let text = try await client.schemaText()
                let schema = try SchemaLanguage.parse(text)
                let counts = (try? cache?.inferredSchema(limit: 0).counts) ?? [:]
                var known = KnownSchema(schema: schema, origin: .server, environment: environment, counts: counts)
                // Development's queries are also judged by production's indexes (best effort).
                if environment == .development, let text = try? await client.schemaText(environment: .production) {
                    known.production = try? SchemaLanguage.parse(text)
                }
                return .success(known)
            } catch let error as CloudKitError where error.httpStatus == 404 {
                // A server without the endpoint: infer, as for Apple's.
            } catch let error as SchemaLanguage.ParseError {
                return .failure(BrowserFailure(message: "the server's schema does not parse: \(error)"))
            } catch {
                return .failure(BrowserFailure(error))
            }
        }
        do {
            let (schema, counts) = try cache?.inferredSchema() ?? (CloudKitSchema(), [:])
            return .success(KnownSchema(schema: schema, origin: .inferred, environment: environment, counts: counts))
        } catch {
            return .failure(BrowserFailure(message: "the local cache could not be read: \(error)"))
        }
    }
}
