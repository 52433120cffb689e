import CloudKitModels

/// What a change will fire, before it is sent: the database's subscriptions (as the server lists
/// them) judged by the one evaluator the local server fires with (`FilterPredicate.evaluate`), so the
/// two cannot disagree. Against Apple's service the same evaluation runs on the subscriptions it lists.
///
/// Unconfirmed: whether CloudKit fires a query subscription for an update that takes the record out
/// of its predicate. The local server's default (`updateMatch` after-only) is what is forecast.
public struct FiringForecast: Sendable, Hashable {
    /// One subscription that fires, how (the change, for a query subscription), and how many times.
    public struct Firing: Sendable, Hashable {
        public var subscriptionID: String
        public var type: SubscriptionType
        /// For query subscriptions: the change that fires it.
        public var change: FilterPredicate.Change?
        public var count: Int
    }

    public var firings: [Firing]
    /// Query subscriptions a cascade's deletes may fire: their filter reads fields, and the records a
    /// cascade deletes are known by name and type only (the cache's or the server's referrers).
    public var mayFire: [Firing]
    /// The subscriptions the batch was judged against.
    public var judged: Int

    /// Every operation of the batch in the open database, against its subscriptions; with the records
    /// its deletes take with them (`cascade`), and the roots its new shares update (saving a share
    /// updates its root record, which fires the root's update subscriptions).
    public init(_ operations: [StagedOperation], cascade: [Referrer] = [], subscriptions: [Subscription]) {
        var firings: [Firing] = [], mayFire: [Firing] = []
        func add(_ s: Subscription, _ change: FilterPredicate.Change, to list: inout [Firing]) {
            guard let id = s.subscriptionID else { return }
            let shown: FilterPredicate.Change? = s.subscriptionType == .query ? change : nil
            if let i = list.firstIndex(where: { $0.subscriptionID == id && $0.change == shown }) {
                list[i].count += 1
            } else {
                list.append(Firing(subscriptionID: id, type: s.subscriptionType, change: shown, count: 1))
            }
        }
        for op in operations {
            let change = Self.change(op)
            let (before, after) = Self.states(op)
            for s in subscriptions
            where FilterPredicate.evaluate(s, change, before: change == .created ? nil : before, after: change == .deleted ? nil : after).fires {
                add(s, change, to: &firings)
            }
        }
        // A new share's root, unless the batch updates (or deletes) it itself: one save of the record.
        let touched = Set(operations.map(\.key))
        for op in operations where op.mode == .create {
            guard op.share?.forRecord != nil, let root = op.share?.root,
                !touched.contains(RecordKey(zone: op.key.zone, recordName: root.recordName))
            else { continue }
            let state = FilterPredicate.RecordState(root, zone: op.zoneID.zoneName)
            for s in subscriptions where FilterPredicate.evaluate(s, .updated, before: state, after: state).fires { add(s, .updated, to: &firings) }
        }
        // The cascade's records are deleted too: a subscription that needs no field of them fires; one
        // whose filter reads fields may.
        for referrer in cascade where !touched.contains(referrer.key) {
            let state = FilterPredicate.RecordState(
                Record(recordName: referrer.key.recordName, recordType: referrer.recordType), zone: referrer.key.zone.zoneName)
            for s in subscriptions {
                var unfiltered = s
                unfiltered.query?.filterBy = nil
                guard FilterPredicate.evaluate(unfiltered, .deleted, before: state, after: nil).fires else { continue }
                if (s.query?.filterBy ?? []).isEmpty { add(s, .deleted, to: &firings) } else { add(s, .deleted, to: &mayFire) }
            }
        }
        self.firings = firings
        self.mayFire = mayFire
        judged = subscriptions.count
    }

    /// What an operation does to its record, as a subscription sees it.
    public static func change(_ op: StagedOperation) -> FilterPredicate.Change {
        if op.kind == .delete { return .deleted }
        switch op.mode {
        case .create, .recreate: return .created
        case .conditional, .force: return .updated
        }
    }

    /// The record before and after the operation.
    static func states(_ op: StagedOperation) -> (before: FilterPredicate.RecordState, after: FilterPredicate.RecordState) {
        let zone = op.zoneID.zoneName
        let before = Record(recordName: op.recordName, recordType: op.recordType, fields: op.baseFields)
        let after = Record(recordName: op.recordName, recordType: op.recordType, fields: op.resultingFields)
        return (FilterPredicate.RecordState(before, zone: zone), FilterPredicate.RecordState(after, zone: zone))
    }

    /// For one record: each subscription, and what a create, an update (as staged, else as it is) or a
    /// delete of it would do: fire, or the first reason it would not.
    public static func verdicts(for record: Record, zone: String, staged: StagedOperation?, subscriptions: [Subscription])
        -> [(subscription: Subscription, update: FilterPredicate.Verdict, delete: FilterPredicate.Verdict)]
    {
        let now = FilterPredicate.RecordState(record, zone: zone)
        let after = staged.map { states($0).after } ?? now
        // A staged create (a new record, or one re-created) is a create to a subscription: nothing before.
        let creates = staged.map { change($0) == .created } ?? false
        return subscriptions.map { s in
            (s, creates ? FilterPredicate.evaluate(s, .created, before: nil, after: after) : FilterPredicate.evaluate(s, .updated, before: now, after: after),
             FilterPredicate.evaluate(s, .deleted, before: now, after: nil))
        }
    }

    /// "artwork-changes (update) × 3, gallery-zone (zone)".
    public var summary: String { Self.summary(firings) }

    /// "cheap-art (delete) × up to 170", for `mayFire`.
    public var mayFireSummary: String { Self.summary(mayFire, upTo: true) }

    static func summary(_ firings: [Firing], upTo: Bool = false) -> String {
        firings.map { f in
            let how = f.change.map { $0 == .created ? "create" : $0 == .updated ? "update" : "delete" } ?? f.type.rawValue
            return "\(f.subscriptionID) (\(how))" + (f.count > 1 ? " × \(upTo ? "up to " : "")\(f.count)" : "")
        }.joined(separator: ", ")
    }
}

extension Browser {
    /// The record view's section on subscriptions: for each of the database's, whether an update (as
    /// staged, else as the record is) and a delete of this record fire it, or the first reason not.
    static func subscriptionLines(_ detail: RecordDetail, _ state: BrowserState) -> [DetailLine] {
        guard let record = detail.record, state.known.subscriptions.loaded, detail.zone.scope == state.connection.scope else { return [] }
        let subscriptions = state.subscriptions.compactMap(\.subscription)
        guard !subscriptions.isEmpty else { return [] }
        var lines = [DetailLine(field: "SUBSCRIPTIONS", type: "", text: "what a change of this record fires", isHeading: true)]
        func said(_ verdict: FilterPredicate.Verdict) -> String {
            switch verdict {
            case .fires: return "fires"
            // "update, delete: no (it watches Note)": it read "not: it watches Note".
            case .doesNotFire(let why): return "no (" + why + ")"
            }
        }
        let staged = state.staged.operation(for: detail.key)
        for (s, update, delete) in FiringForecast.verdicts(for: record, zone: detail.zoneID.zoneName, staged: staged, subscriptions: subscriptions) {
            let updateWord: String
            switch staged.map(FiringForecast.change) {
            case nil: updateWord = "update"
            case .created?: updateWord = staged?.mode == .recreate ? "re-create as staged" : "create as staged"
            default: updateWord = "update as staged"
            }
            let text = update == delete ? "\(updateWord), delete: \(said(update))" : "\(updateWord): \(said(update)) · delete: \(said(delete))"
            lines.append(DetailLine(field: s.subscriptionID ?? "?", type: s.subscriptionType.rawValue, text: text, copyJSON: Format.copyJSON(s.json)))
        }
        return lines
    }

    /// The commit preview's line on subscriptions: what this batch fires in the open database, once its
    /// subscriptions are known.
    static func firingLine(_ state: BrowserState) -> (text: String, tone: Tone)? {
        let database = state.connection.database
        let operations = state.staged.operations.filter { $0.database == database }
        guard !operations.isEmpty else { return nil }
        guard state.known.subscriptions.loaded else {
            return state.subscriptionsLoading ? ("this commit fires: checking the \(database.rawValue) database's subscriptions…", .dim) : nil
        }
        // As they will be when the records go: the subscriptions of this commit are sent before them.
        let subscriptions = subscriptionsAfterCommit(state)
        // The records the deletes cascade to (DELETE_SELF, from the cache and the server), each once.
        var seen: Set<RecordKey> = []
        let cascade = operations.filter { $0.kind == .delete }.flatMap { state.known.impacts[$0.key]?.cascade ?? [] }
            .filter { seen.insert($0.key).inserted }
        let forecast = FiringForecast(operations, cascade: cascade, subscriptions: subscriptions)
        // A cascade followed only in part (the cache's or the server's count stopped) fires more.
        let partial = operations.contains { op in
            guard op.kind == .delete, let impact = state.known.impacts[op.key] else { return false }
            if impact.truncatedAt != nil { return true }
            if case .counted(_, let server) = impact.server, server.truncatedAt != nil { return true }
            return false
        }
        var may = forecast.mayFire.isEmpty ? "" : " · may fire: \(forecast.mayFireSummary) (the cascade's records' fields are not read)"
        if partial && !cascade.isEmpty { may += " · at least: the cascade was counted in part" }
        if forecast.firings.isEmpty {
            return ("this commit fires no subscription\(may.isEmpty ? "" : " for sure") (\(Format.plural(forecast.judged, "subscription")) of the \(database.rawValue) database checked)" + may,
                    forecast.mayFire.isEmpty ? .dim : .note)
        }
        return ("this commit fires: " + forecast.summary + may, .note)
    }

    /// The database's subscriptions with the staged subscription operations applied: changed ones as
    /// staged, deleted ones gone, new ones added.
    static func subscriptionsAfterCommit(_ state: BrowserState) -> [Subscription] {
        let staged = state.staged.subscriptionOperations.filter { $0.key.scope == state.connection.scope }
        var result: [Subscription] = state.subscriptions.compactMap(\.subscription).compactMap { s in
            guard let op = staged.first(where: { $0.subscriptionID == s.subscriptionID }) else { return s }
            return op.kind == .delete ? nil : op.subscription
        }
        let listed = Set(result.compactMap(\.subscriptionID))
        result += staged.filter { $0.kind == .create && !listed.contains($0.subscriptionID) }.map(\.subscription)
        return result
    }
}
