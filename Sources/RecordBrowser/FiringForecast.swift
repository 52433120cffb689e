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
    /// The subscriptions the batch was judged against.
    public var judged: Int

    /// Every operation of the batch in the open database, against its subscriptions.
    public init(_ operations: [StagedOperation], subscriptions: [Subscription]) {
        var firings: [Firing] = []
        for op in operations {
            let change = Self.change(op)
            let (before, after) = Self.states(op)
            for s in subscriptions {
                let verdict = FilterPredicate.evaluate(s, change, before: change == .created ? nil : before, after: change == .deleted ? nil : after)
                guard verdict.fires, let id = s.subscriptionID else { continue }
                let shown: FilterPredicate.Change? = s.subscriptionType == .query ? change : nil
                if let i = firings.firstIndex(where: { $0.subscriptionID == id && $0.change == shown }) {
                    firings[i].count += 1
                } else {
                    firings.append(Firing(subscriptionID: id, type: s.subscriptionType, change: shown, count: 1))
                }
            }
        }
        self.firings = firings
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
    public var summary: String {
        firings.map { f in
            let how = f.change.map { $0 == .created ? "create" : $0 == .updated ? "update" : "delete" } ?? f.type.rawValue
            return "\(f.subscriptionID) (\(how))" + (f.count > 1 ? " × \(f.count)" : "")
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
            case .doesNotFire(let why): return "not: " + why
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
        let forecast = FiringForecast(operations, subscriptions: subscriptions)
        if forecast.firings.isEmpty {
            return ("this commit fires no subscription (\(Format.plural(forecast.judged, "subscription")) of the \(database.rawValue) database checked)", .dim)
        }
        return ("this commit fires: " + forecast.summary, .note)
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
