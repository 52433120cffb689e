import CloudKitModels
import TerminalUI

/// The Subscriptions screen as a workbench: `n` a new subscription, `E` edit one, `d` delete,
/// `u` unstage, `R` re-create a `firesOnce` subscription that fired. Each is staged like a record
/// edit: it joins the batch, the journal, the exact-request preview and the commit.
extension Browser {
    /// The screen's rows: the server's subscriptions (with what is staged for each), then those
    /// staged for creation, then the `firesOnce` ones that fired this session.
    public static func subscriptionList(_ state: BrowserState) -> [SubscriptionRow] {
        let scope = state.connection.scope
        let staged = state.staged.subscriptionOperations.filter { $0.key.scope == scope }
        var rows: [SubscriptionRow] = []
        var listed = Set<String>()
        for result in state.subscriptions {
            let id = result.subscription?.subscriptionID ?? result.error?.subscriptionID
            if let id { listed.insert(id) }
            rows.append(.listed(result, staged: id.flatMap { id in staged.first { $0.subscriptionID == id } }))
        }
        rows += staged.filter { $0.kind == .create && !listed.contains($0.subscriptionID) }.map(SubscriptionRow.new)
        rows += state.known.firedOnce.filter { s in
            guard let id = s.subscriptionID else { return false }
            return !listed.contains(id) && !staged.contains { $0.subscriptionID == id }
        }.map(SubscriptionRow.fired)
        return rows
    }

    /// The selected row, when the selection is on one.
    static func selectedSubscriptionRow(_ state: BrowserState) -> SubscriptionRow? {
        let rows = subscriptionList(state)
        return rows.indices.contains(state.position(.subscriptions).selection) ? rows[state.position(.subscriptions).selection] : nil
    }

    /// What the checks of a subscription know of the open database.
    static func subscriptionContext(_ state: BrowserState) -> SubscriptionTemplate.Context {
        // The subscriptions as the commit would leave them: those listed, staged changes applied,
        // staged deletions gone.
        var others: [String: Subscription] = [:]
        for s in state.subscriptions.compactMap(\.subscription) { if let id = s.subscriptionID { others[id] = s } }
        for op in state.staged.subscriptionOperations where op.database == state.connection.database {
            others[op.subscriptionID] = op.kind == .delete ? nil : op.subscription
        }
        return SubscriptionTemplate.Context(database: state.connection.database, environment: state.connection.environment, schema: state.schema,
                                            zones: state.zones.compactMap { $0.zone?.zoneID.zoneName }, others: others.keys.sorted().compactMap { others[$0] })
    }

    /// The staging keys of the Subscriptions screen (nil: not one of them).
    static func subscriptionStagingKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect]? {
        let row = selectedSubscriptionRow(state)
        switch key {
        case .char("n") where filterText(state, .subscriptions) == nil:
            // No filter: n makes a new subscription (with a filter, n and N step through the matches).
            guard writable(&state) else { return [] }
            if state.connection.environment == .production {
                state.say(.nothingStaged(.subscriptionsInDevelopmentOnly))
                return []
            }
            var effects: [BrowserEffect] = []
            if state.schema == nil && !state.schemaLoading { effects = loadSchema(&state) }
            var line = InputLine(.newSubscription, text: "query ")
            line.hint = "query TYPE [ZONE] · zone ZONE · database — Tab completes, Enter opens $EDITOR"
            state.input = line
            return effects
        case .char("E"), .char("e"):
            guard writable(&state) else { return [] }
            switch row {
            case .listed(let result, let staged)?:
                guard let server = result.subscription else {
                    state.say(.subscriptionRowIsError)
                    return []
                }
                if staged?.kind == .delete {
                    state.say(.subscriptionStagedForDeletion(staged!.subscriptionID))
                    return []
                }
                let shown = staged?.subscription ?? server
                return [.editJSON(JSONEdit(subject: .subscription(state.connection.scope, base: server),
                                           text: SubscriptionTemplate.text(shown, isNew: false, context: subscriptionContext(state), error: nil)))]
            case .new(let op)?:
                return [.editJSON(JSONEdit(subject: .subscription(state.connection.scope, base: nil),
                                           text: SubscriptionTemplate.text(op.subscription, isNew: true, context: subscriptionContext(state), error: nil)))]
            case .fired(let s)?:
                state.say(.firedOnceDeleted(s.subscriptionID ?? "?", fromPush: false))
                return []
            case nil:
                return []
            }
        case .char("d"):
            guard writable(&state) else { return [] }
            switch row {
            case .listed(let result, _)?:
                guard let server = result.subscription, let id = server.subscriptionID else { return [] }
                state.staged.stage(subscription: StagedSubscriptionOperation(kind: .delete, scope: state.connection.scope, subscription: server, base: server))
                state.say(.staged(.subscription(id, .delete), total: state.staged.count))
            case .new(let op)?:
                state.staged.unstage(subscription: op.key)
                clampSubscriptionSelection(&state)
                state.say(.subscriptionDropped(op.subscriptionID))
            case .fired(let s)?:
                state.say(.subscriptionFiredGone(s.subscriptionID ?? "?"))
            case nil: break
            }
            return []
        case .char("u"):
            guard let staged = row?.staged else {
                state.say(.nothingStaged(.subscription))
                return []
            }
            state.staged.unstage(subscription: staged.key)
            clampSubscriptionSelection(&state)
            state.say(.unstaged(.subscription(staged.subscriptionID, staged.kind), total: state.staged.count))
            return []
        case .char("R"):
            guard writable(&state) else { return [] }
            guard case .fired(let s)? = row else {
                state.say(.recreateNeedsFired)
                return []
            }
            if state.connection.environment == .production {
                state.say(.nothingStaged(.subscriptionsInDevelopmentOnly))
                return []
            }
            var op = StagedSubscriptionOperation(kind: .create, scope: state.connection.scope, subscription: s, base: nil)
            op.recreatesFired = true
            state.staged.stage(subscription: op)
            state.say(.staged(.subscriptionRecreated(op.subscriptionID), total: state.staged.count))
            return []
        default:
            return nil
        }
    }

    static func clampSubscriptionSelection(_ state: inout BrowserState) {
        state.setSelection(.subscriptions, min(state.position(.subscriptions).selection, max(0, subscriptionList(state).count - 1)))
    }

    /// `n`'s line: `query TYPE [ZONE]`, `zone ZONE` or `database` opens the editor on a template.
    static func newSubscription(_ text: String, _ state: inout BrowserState) -> [BrowserEffect] {
        let words = text.split(separator: " ").map(String.init)
        guard let kind = words.first.map({ SubscriptionType(rawValue: $0) }), [.query, .zone, .database].contains(kind) else {
            refuse(.newSubscriptionUsage, &state)
            return []
        }
        let context = subscriptionContext(state)
        let target = words.count > 1 ? words[1] : nil
        let zone = words.count > 2 ? words[2] : nil
        switch kind {
        case .query:
            guard let type = target else {
                refuse(.subscriptionQueryNeedsType, &state)
                return []
            }
            if let known = context.schema, known.schema.recordType(type) == nil {
                refuse(.unknownRecordType(type), &state)
                return []
            }
            // No ZONE: every zone (zoneWide, Apple's default), not whichever zone was open last.
            if let name = zone, !context.zones.isEmpty, !context.zones.contains(name) {
                refuse(.unknownZone(name, state.connection.database), &state)
                return []
            }
        case .zone:
            guard let name = target else {
                refuse(.subscriptionZoneNeedsZone, &state)
                return []
            }
            if !context.zones.isEmpty, !context.zones.contains(name) {
                refuse(.unknownZone(name, state.connection.database), &state)
                return []
            }
        default: break
        }
        // A readable ID not taken here yet: artwork-changes, artwork-changes-2, …
        let stem = kind == .query ? "\((target ?? "query").lowercased())-changes" : (kind == .zone ? "\((target ?? "zone").lowercased())-zone" : "database-changes")
        let taken = Set(subscriptionList(state).compactMap { $0.subscription?.subscriptionID })
        let id = taken.contains(stem) ? (2...).lazy.map { "\(stem)-\($0)" }.first { !taken.contains($0) }! : stem
        let subscription = SubscriptionTemplate.starting(kind: kind, target: target, zone: zone, id: id, context: context)
        return [.editJSON(JSONEdit(subject: .subscription(state.connection.scope, base: nil),
                                   text: SubscriptionTemplate.text(subscription, isNew: true, context: context, error: nil)))]
    }

    /// `$EDITOR` returned with a subscription: staged, or the editor opens again with the problem.
    static func subscriptionEdited(_ edit: JSONEdit, _ edited: String, scope: Scope, base: Subscription?, _ state: inout BrowserState) -> [BrowserEffect] {
        guard scope == state.connection.scope else {
            state.say(.nothingStaged(.databaseChanged))
            return []
        }
        let context = subscriptionContext(state)
        do throws(FieldInputError) {
            guard let subscription = try SubscriptionTemplate.parse(edited, context: context) else {
                state.say(.nothingStaged(.fileEmptied))
                return []
            }
            let id = subscription.subscriptionID ?? ""
            let listed = state.subscriptions.compactMap(\.subscription).first { $0.subscriptionID == id }
            if let base, base.subscriptionID == id {
                // An edit of a listed subscription (its ID kept): an update.
                guard subscription != base || state.staged.operation(for: SubscriptionKey(scope: scope, subscriptionID: id)) != nil else {
                    state.say(.nothingStaged(.noChange))
                    return []
                }
                state.staged.stage(subscription: StagedSubscriptionOperation(kind: .update, scope: scope, subscription: subscription, base: base))
                let staged = state.staged.operation(for: SubscriptionKey(scope: scope, subscriptionID: id))
                state.say(staged == nil ? .subscriptionAsOnServer(id) : .staged(.subscription(id, .update), total: state.staged.count))
            } else {
                // New (or renamed: a new one beside the old).
                if listed != nil {
                    throw FieldInputError("subscriptionID '\(id)' is taken in the \(scope.database.rawValue) database: choose another (E edits that one)")
                }
                if state.connection.environment == .production { throw FieldInputError("CloudKit creates subscriptions in development only") }
                state.staged.stage(subscription: StagedSubscriptionOperation(kind: .create, scope: scope, subscription: subscription, base: nil))
                if let index = subscriptionList(state).firstIndex(where: { $0.subscription?.subscriptionID == id }) { state.setSelection(.subscriptions, index) }
                state.say(.staged(.subscription(id, .create), total: state.staged.count))

            }
        } catch {
            // The editor opens again with the problem on top; the user's text is kept as it was.
            var again = edit
            again.text = SubscriptionTemplate.reopen(edited, base, isNew: base == nil, context: context, error: error.description)
            return [.editJSON(again)]
        }
        return []
    }
}
