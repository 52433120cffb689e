import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB

/// Subscriptions that fire: evaluated on every committed records/modify, inside its transaction, so
/// a rolled-back batch fires nothing (spec `cloudkit-notifications.md` §2 and §6).
extension LocalCloudKit {
    struct StoredSubscription {
        var id: String
        var subscription: Subscription
        var owner: String
    }

    /// What a subscription fires as for one change.
    enum Firing {
        case query(reason: RecordChange.Kind)
        case zone
        case database
    }

    func fireSubscriptions(_ db: Database, _ context: RequestContext, _ changes: [RecordChange]) throws {
        guard !changes.isEmpty else { return }
        let subscriptions = try storedSubscriptions(db, context)
        guard !subscriptions.isEmpty else { return }
        let settings = configuration.notifications
        var recipients = Recipients()
        var gone = Set<String>()
        var readers: [String: (StoredRecord) -> Bool] = [:]
        for change in changes {
            for stored in subscriptions where !gone.contains(stored.id) {
                guard let firing = Self.fires(stored.subscription, change, settings) else { continue }
                // In the public database a notification tells of a record: only to an owner who may READ it.
                if context.scope == .public, case .query = firing, let record = change.after ?? change.before, let type = record.type {
                    let key = stored.owner + "\u{1F}" + type
                    if readers[key] == nil { readers[key] = try readableBy(stored.owner, type: type, db, context) }
                    if readers[key]?(record) == false { continue }
                }
                try notify(db, context, stored, change, firing, &recipients)
                // firesOnce: deleted when its first notification is generated (spec default).
                if stored.subscription.firesOnce == true {
                    try db.cachedStatement(sql: "DELETE FROM subscription WHERE db = ? AND id = ?").execute(arguments: [context.dbID, stored.id])
                    gone.insert(stored.id)
                }
            }
        }
    }

    /// Whether `owner` may READ records of `type` in the public database (by its grants; `_creator`
    /// when they created the record).
    func readableBy(_ owner: String, type: String, _ db: Database, _ context: RequestContext) throws -> (StoredRecord) -> Bool {
        guard !SchemaTables.isSystemType(type) else { return { _ in true } }
        let schema = try SchemaTables.type(db, container: context.container, environment: context.environment, name: type)
            ?? RecordTypeSchema(name: type, grants: RecordTypeSchema.defaultGrants)
        let roles = try SchemaTables.roles(db, container: context.container, environment: context.environment, user: owner.isEmpty ? nil : owner)
        if schema.permits(.read, roles: roles) { return { _ in true } }
        guard !owner.isEmpty, schema.permits(.read, roles: roles.union(["_creator"])) else { return { _ in false } }
        return { $0.created?.userRecordName == owner }
    }

    /// Zones created or deleted: one `met` notification per database subscription and zone.
    func fireDatabaseSubscriptions(_ db: Database, _ context: RequestContext, zones: [String]) throws {
        guard !zones.isEmpty else { return }
        var recipients = Recipients()
        for stored in try storedSubscriptions(db, context) where stored.subscription.subscriptionType == .database {
            for zone in zones {
                let change = RecordChange(kind: .updated, before: nil, after: StoredRecord(zone: zone, name: "", type: nil))
                try notify(db, context, stored, change, .database, &recipients)
            }
        }
    }

    /// The database's subscriptions, oldest first (unreadable rows are skipped).
    func storedSubscriptions(_ db: Database, _ context: RequestContext) throws -> [StoredSubscription] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT id, body, owner FROM subscription WHERE db = ? ORDER BY created_seq"), arguments: [context.dbID]).compactMap { row in
            guard let body: String = row["body"], let json = try? JSON(parsing: body), let s = try? Subscription(json: json) else { return nil }
            return StoredSubscription(id: row["id"], subscription: s, owner: row["owner"])
        }
    }

    /// The push tokens of each subscription owner, read once per request.
    struct Recipients {
        var byOwner: [String: [(token: String, session: String?)]] = [:]
    }

    /// Builds one payload and queues it for every token of the subscription's owner but the excluded.
    func notify(
        _ db: Database, _ context: RequestContext, _ stored: StoredSubscription, _ change: RecordChange, _ firing: Firing,
        _ recipients: inout Recipients
    ) throws {
        if recipients.byOwner[stored.owner] == nil {
            recipients.byOwner[stored.owner] = try Row.fetchAll(
                db, sql: "SELECT b.token, d.session FROM token_binding b JOIN device_token d ON d.token = b.token WHERE b.container = ? AND b.environment = ? AND b.user = ?",
                arguments: [context.container, context.environment.rawValue, stored.owner]
            ).map { (token: $0["token"], session: $0["session"]) }
        }
        let payload = try buildPayload(db, context, stored, change, firing)
        for r in recipients.byOwner[stored.owner]! where !isExcluded(token: r.token, session: r.session, context: context) {
            try enqueue(db, token: r.token, payload: payload, now: context.now)
        }
    }

    func isExcluded(token: String, session: String?, context: RequestContext) -> Bool {
        switch configuration.notifications.originExclusion {
        case .none: return false
        case .session: return session != nil && session == context.caller.session
        case .header: return context.caller.deviceToken == token
        }
    }

    /// Whether (and as what) a subscription fires for a change: the shared evaluator's verdict
    /// (`FilterPredicate.evaluate`, which the browser's "what will fire" reads too).
    static func fires(_ s: Subscription, _ change: RecordChange, _ settings: NotificationSettings) -> Firing? {
        func state(_ record: StoredRecord?) -> FilterPredicate.RecordState? {
            record.map { r in FilterPredicate.RecordState(recordType: r.type, zone: r.zone) { QueryMatcher.value(of: r, field: $0, system: $1) } }
        }
        let kind: FilterPredicate.Change = switch change.kind {
        case .created: .created
        case .updated: .updated
        case .deleted: .deleted
        }
        let verdict = FilterPredicate.evaluate(s, kind, before: state(change.before), after: state(change.after), beforeOrAfter: settings.updateMatch == .beforeOrAfter)
        guard verdict.fires else { return nil }
        switch s.subscriptionType {
        case .query: return .query(reason: change.kind)
        case .zone: return .zone
        case .database: return .database
        default: return nil
        }
    }

    /// The push payload (`aps` + `ck`, spec §3), pruned to the size limit.
    func buildPayload(_ db: Database, _ context: RequestContext, _ stored: StoredSubscription, _ change: RecordChange, _ firing: Firing) throws -> JSON {
        let settings = configuration.notifications
        let info = stored.subscription.notificationInfo ?? NotificationInfo()
        let record = change.record
        let values = change.after?.fields ?? change.before?.fields ?? [:]
        var payload = Payload()
        if let body = info.alertBody { payload.alert.set("body", body) }
        if let key = info.alertLocalizationKey { payload.alert.set("loc-key", key) }
        if let args = info.alertLocalizationArgs {
            // Field names: the server fills in their values from the record.
            payload.alert.set("loc-args", JSON.array(args.map { .string(values[$0].map(Self.argumentText) ?? "") }))
        }
        if let key = info.alertActionLocalizationKey { payload.alert.set("action-loc-key", key) }
        if let image = info.alertLaunchImage { payload.alert.set("launch-image", image) }
        if let sound = info.soundName { payload.aps.set("sound", sound) }
        if info.shouldBadge == true {
            try db.cachedStatement(sql: "INSERT INTO badge (container, user, count) VALUES (?, ?, 1) ON CONFLICT (container, user) DO UPDATE SET count = count + 1")
                .execute(arguments: [context.container, stored.owner])
            let count = try Int64.fetchOne(db.cachedStatement(sql: "SELECT count FROM badge WHERE container = ? AND user = ?"), arguments: [context.container, stored.owner]) ?? 1
            payload.aps.set("badge", JSON.int(count))
        }
        if info.shouldSendContentAvailable == true { payload.aps.set("content-available", JSON.int(1)) }
        if let category = info.category { payload.aps.set("category", category) }

        payload.ck.set("ce", JSON.int(Int64(settings.environmentCodes[context.environment] ?? 1)))
        payload.ck.set("cid", context.container)
        payload.ck.set("nid", UUID().uuidString.lowercased())
        // `dbs`: 0 public (what CloudKit JS reads), 1 private, 2 shared (unconfirmed; see
        // DatabaseScope.pushValue and SERVER.md). `ck.ckbrowse` says this numbering is in use, so a
        // client can tell these pushes from an older ckbrowse serve's (1 public, 2 private, 3 shared).
        let scope = Int64(context.scope.pushValue)
        payload.ck.set("ckbrowse", JSON.int(PushNotification.ckbrowseMarker))
        // The caller's own zones are owned by `_defaultOwner` in pushes (spec §3.3, unconfirmed).
        let zoneOwner = context.scope == .shared ? context.zoneOwner : "_defaultOwner"
        switch firing {
        case .query(let reason):
            payload.kind = "qry"
            payload.detail.set("rid", record.name)
            payload.detail.set("zid", record.zone)
            payload.detail.set("zoid", zoneOwner)
            payload.detail.set("dbs", JSON.int(scope))
            payload.detail.set("fo", JSON.int(Int64(reason.rawValue)))
            payload.detail.set("sid", stored.id)
            // Desired keys go with creates and updates, not deletes (spec §2.2).
            if reason != .deleted, let keys = info.additionalFields, !keys.isEmpty, let after = change.after {
                var af = JSONObject()
                for key in keys { if let value = after.fields[key] { af.set(key, value.wireValue) } }
                payload.detail.set("af", JSON.object(af))
            }
        case .zone:
            payload.kind = "fet"
            payload.detail.set("zid", record.zone)
            payload.detail.set("zoid", zoneOwner)
            payload.detail.set("dbs", JSON.int(scope))
            payload.detail.set("sid", stored.id)
        case .database:
            payload.kind = "met"
            payload.detail.set("dbs", JSON.int(scope))
            payload.detail.set("sid", stored.id)
        }
        payload.prune(to: settings.payloadLimit)
        return payload.json
    }

    static func argumentText(_ value: FieldValue) -> String {
        switch value {
        case .string(let s): return s
        case .int64(let i), .timestamp(let i): return String(i)
        case .double(let d): return d.description
        default: return value.wireValue.text
        }
    }

    /// Queues a payload for a token; beyond `maxQueued` the oldest are dropped and counted.
    func enqueue(_ db: Database, token: String, payload: JSON, now: Int64) throws {
        let settings = configuration.notifications
        try db.cachedStatement(sql: "INSERT INTO notification_queue (token, payload, created_at) VALUES (?, ?, ?)").execute(arguments: [token, payload.text, now])
        // Once committed (never for a rolled-back batch), the token's waiting poll, if any, wakes.
        db.afterNextTransaction(onCommit: { [courier] _ in courier.queued([token]) })
        let count = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM notification_queue WHERE token = ?"), arguments: [token]) ?? 0
        if count > settings.maxQueued {
            let excess = count - settings.maxQueued
            try db.cachedStatement(sql: "DELETE FROM notification_queue WHERE id IN (SELECT id FROM notification_queue WHERE token = ? ORDER BY id LIMIT ?)")
                .execute(arguments: [token, excess])
            try db.cachedStatement(sql: "UPDATE device_token SET dropped = dropped + ? WHERE token = ?").execute(arguments: [excess, token])
        }
    }
}

/// A push payload under construction, and its pruning.
struct Payload {
    var aps = JSONObject()
    var alert = JSONObject()
    var ck = JSONObject()
    /// `qry`, `fet` or `met`.
    var kind = "qry"
    var detail = JSONObject()

    var json: JSON {
        var aps = self.aps
        if !alert.pairs.isEmpty { aps.pairs.insert((key: "alert", value: .object(alert)), at: 0) }
        var ck = self.ck
        ck.set(kind, JSON.object(detail))
        return .object(JSONObject(pairs: [(key: "aps", value: .object(aps)), (key: "ck", value: .object(ck))]))
    }

    var size: Int { json.bytes.count }

    /// Removes data, least important first (the SDK header's order read from the bottom up: cid,
    /// record identity, reason, desired keys, then the alert parts and badge), until the payload fits.
    /// `nid`, `dbs`, `sid` and the `ckbrowse` marker always stay. A pruned payload carries `ck.p: true`.
    mutating func prune(to limit: Int) {
        guard size > limit else { return }
        ck.set("p", JSON.bool(true))
        let steps: [(inout Payload) -> Void] = [
            { $0.ck.remove("cid") },
            { $0.detail.remove("rid"); $0.detail.remove("zid"); $0.detail.remove("zoid") },
            { $0.detail.remove("fo") },
            { $0.detail.remove("af") },
            { $0.aps.remove("category") },
            { $0.aps.remove("content-available") },
            { $0.aps.remove("sound") },
            { $0.alert.remove("launch-image") },
            { $0.alert.remove("action-loc-key") },
            { $0.alert.remove("body") },
            { $0.alert.remove("loc-args") },
            { $0.alert.remove("loc-key") },
            { $0.aps.remove("badge") },
        ]
        for step in steps {
            step(&self)
            if size <= limit { return }
        }
    }
}

extension JSONObject {
    mutating func remove(_ key: String) { pairs.removeAll { $0.key == key } }
}
