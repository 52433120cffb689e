import CloudKitModels

/// A subscription as the browser knows it: server, container, environment, signed-in identity and
/// database (the scope), and its ID. Two databases can each hold an `artwork-changes`.
public struct SubscriptionKey: Sendable, Hashable, CustomStringConvertible {
    public var scope: Scope
    public var subscriptionID: String

    public init(scope: Scope, subscriptionID: String) {
        self.scope = scope
        self.subscriptionID = subscriptionID
    }

    public var database: DatabaseScope { scope.database }
    public var description: String { "\(scope.database.rawValue)/\(subscriptionID)" }
}

/// One staged subscriptions/modify operation: a subscription to create (`n`, `R`), to change (`E`) or
/// to delete (`d`), with what it was (for the batch's old → new and the journal).
public struct StagedSubscriptionOperation: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case create, update, delete }

    public var kind: Kind
    public var key: SubscriptionKey
    /// The definition to send (create, update); for a delete, the one deleted.
    public var subscription: Subscription
    /// What it was on the server (update, delete); nil for a create.
    public var base: Subscription?
    /// Re-creating a `firesOnce` subscription that fired (`R`): said so in the batch.
    public var recreatesFired = false
    /// Why the last commit refused it (it stayed staged): shown on its row and in the batch.
    public var failure: FailedOperation?

    public init(kind: Kind, scope: Scope, subscription: Subscription, base: Subscription?) {
        self.kind = kind
        self.key = SubscriptionKey(scope: scope, subscriptionID: subscription.subscriptionID ?? base?.subscriptionID ?? "")
        self.subscription = subscription
        self.base = base
    }

    public var subscriptionID: String { key.subscriptionID }
    public var database: DatabaseScope { key.database }

    /// The operation as subscriptions/modify takes it.
    public var operation: SubscriptionOperation {
        switch kind {
        case .create: return SubscriptionOperation(.create, subscription)
        case .update: return SubscriptionOperation(.update, subscription)
        case .delete: return .delete(subscriptionID)
        }
    }

    /// Old → new per top-level key of the subscription's JSON (query keys one by one), in key order.
    public var diff: [(key: String, old: String?, new: String?)] {
        let old = base.map(Self.flattened) ?? [:]
        let new = kind == .delete ? [:] : Self.flattened(subscription)
        return Set(old.keys).union(new.keys).sorted().compactMap { key in
            old[key] == new[key] ? nil : (key, old[key], new[key])
        }
    }

    /// `query.recordType` → `"Artwork"`, `firesOn` → `["create","update"]`: each key's value as
    /// compact JSON, the query's and the notification info's keys one level down.
    static func flattened(_ subscription: Subscription) -> [String: String] {
        var out: [String: String] = [:]
        guard case .object(let object) = subscription.json else { return out }
        for (key, value) in object.pairs {
            if ["query", "notificationInfo"].contains(key), case .object(let inner) = value {
                for (k, v) in inner.pairs { out["\(key).\(k)"] = Format.compactJSON(v) }
            } else {
                out[key] = Format.compactJSON(value)
            }
        }
        return out
    }
}

extension StagedBatch {
    /// Stages a subscription operation; one per subscription. A later edit of a staged create stays a
    /// create (with the new definition); deleting a staged create drops it; a later operation on a
    /// staged update or delete keeps the first one's base.
    public mutating func stage(subscription operation: StagedSubscriptionOperation) {
        guard let index = subscriptionOperations.firstIndex(where: { $0.key == operation.key }) else {
            subscriptionOperations.append(operation)
            return
        }
        let existing = subscriptionOperations[index]
        switch (existing.kind, operation.kind) {
        case (.create, .delete):
            subscriptionOperations.remove(at: index)
        case (.create, _):
            var replacement = operation
            replacement.kind = .create
            replacement.base = nil
            replacement.recreatesFired = existing.recreatesFired
            subscriptionOperations[index] = replacement
        default:
            var replacement = operation
            replacement.base = existing.base ?? operation.base
            // Back to exactly what the server has: nothing to send.
            if replacement.kind == .update, replacement.base == replacement.subscription {
                subscriptionOperations.remove(at: index)
            } else {
                subscriptionOperations[index] = replacement
            }
        }
    }

    /// Keeps why a commit refused a staged subscription operation.
    public mutating func setFailure(_ failure: FailedOperation, for key: SubscriptionKey) {
        if let i = subscriptionOperations.firstIndex(where: { $0.key == key }) { subscriptionOperations[i].failure = failure }
    }

    public mutating func unstage(subscription key: SubscriptionKey) { subscriptionOperations.removeAll { $0.key == key } }

    public func operation(for key: SubscriptionKey) -> StagedSubscriptionOperation? { subscriptionOperations.first { $0.key == key } }
}

/// One row of the Subscriptions screen: what the server lists (with what is staged for it), a
/// subscription staged for creation, or a `firesOnce` subscription that fired (gone from the server,
/// kept here so `R` can make it again).
public enum SubscriptionRow: Sendable, Hashable {
    case listed(SubscriptionResult, staged: StagedSubscriptionOperation?)
    case new(StagedSubscriptionOperation)
    case fired(Subscription)

    /// The definition shown (the staged one for a create or an update).
    public var subscription: Subscription? {
        switch self {
        case .listed(let result, let staged):
            if let staged, staged.kind == .update { return staged.subscription }
            return result.subscription
        case .new(let op): return op.subscription
        case .fired(let s): return s
        }
    }

    /// The JSON of the row: the server's answer as received, else the definition.
    public var json: JSON {
        switch self {
        case .listed(let result, _): return result.json
        case .new(let op): return op.subscription.json
        case .fired(let s): return s.json
        }
    }

    public var staged: StagedSubscriptionOperation? {
        switch self {
        case .listed(_, let staged): return staged
        case .new(let op): return op
        case .fired: return nil
        }
    }
}
