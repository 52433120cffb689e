import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB

extension LocalCloudKit {
    func listSubscriptions(_ db: Database, _ context: RequestContext) throws -> JSON {
        let bodies = try String.fetchAll(db.cachedStatement(sql: "SELECT body FROM subscription WHERE db = ? ORDER BY created_seq"), arguments: [context.dbID])
        return .object(["subscriptions": .array(try bodies.map { try JSON(parsing: $0) })])
    }

    func lookupSubscriptions(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> JSON {
        let request = try decodeBody(LookupSubscriptionsRequest.self, body)
        try checkCount(request.subscriptionIDs.count, "subscriptions")
        var results: [JSON] = []
        for id in request.subscriptionIDs {
            if let body = try String.fetchOne(db.cachedStatement(sql: "SELECT body FROM subscription WHERE db = ? AND id = ?"), arguments: [context.dbID, id]) {
                results.append(try JSON(parsing: body))
            } else {
                results.append(subscriptionError(id, .notFound, "subscription not found"))
            }
        }
        return .object(["subscriptions": .array(results)])
    }

    func subscriptionError(_ id: String?, _ code: ServerErrorCode, _ reason: String) -> JSON {
        SubscriptionError(subscriptionID: id, info: ServerErrorInfo(serverErrorCode: code, reason: reason, uuid: UUID().uuidString.lowercased())).json
    }

    /// subscriptions/modify. As the live service: uniqueness is on the content (record type + firesOn
    /// set) — creating an existing ID returns the existing subscription; another ID with the same content
    /// fails with INTERNAL_ERROR. Subscriptions cannot be created directly in production.
    func modifySubscriptions(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> JSON {
        let request = try decodeBody(ModifySubscriptionsRequest.self, body)
        try checkCount(request.operations.count, "operations")
        var results: [JSON] = []
        for operation in request.operations {
            var subscription = operation.subscription
            let id = subscription.subscriptionID
            switch operation.operationType {
            case .delete:
                guard let id, try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM subscription WHERE db = ? AND id = ?"), arguments: [context.dbID, id]) ?? false else {
                    results.append(subscriptionError(id, .notFound, "subscription not found"))
                    continue
                }
                try db.cachedStatement(sql: "DELETE FROM subscription WHERE db = ? AND id = ?").execute(arguments: [context.dbID, id])
                // Delete result shape is unconfirmed; `{ subscriptionID }` as the reference suggests.
                results.append(.object(["subscriptionID": .string(id)]))
            case .create, .update:
                if let id, let problem = Self.nameProblem(id) {
                    results.append(subscriptionError(id, .badRequest, "subscriptionID \(Self.quoted(id)) is not valid: \(problem)"))
                    continue
                }
                if context.environment == .production && operation.operationType == .create {
                    results.append(subscriptionError(id, .badRequest, "subscriptions cannot be created in production; create them in development"))
                    continue
                }
                do {
                    if let problem = try validate(&subscription, db, context) {
                        results.append(subscriptionError(id, .badRequest, problem))
                        continue
                    }
                } catch let error as ServiceError {
                    results.append(subscriptionError(id, error.code, error.reason))  // e.g. ZONE_NOT_FOUND, per item
                    continue
                }
                let newID = id ?? UUID().uuidString
                subscription.subscriptionID = newID
                let existing = try String.fetchOne(db.cachedStatement(sql: "SELECT body FROM subscription WHERE db = ? AND id = ?"), arguments: [context.dbID, newID])
                if operation.operationType == .update {
                    guard existing != nil else {
                        results.append(subscriptionError(newID, .notFound, "subscription not found"))
                        continue
                    }
                } else if let existing {
                    results.append(try JSON(parsing: existing))
                    continue
                } else if try hasContentTwin(subscription, db, context) {
                    results.append(subscriptionError(newID, .internalError, "could not find subscription we just created"))
                    continue
                }
                let seq = try db.nextSeq(context.dbID)
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO subscription (db, id, body, owner, created_seq) VALUES (?, ?, ?, ?, ?)")
                    .execute(arguments: [context.dbID, newID, subscription.json.text, context.caller.actingRecordName ?? "", seq])
                results.append(subscription.json)
            default:
                results.append(subscriptionError(id, .badRequest, "unknown operationType '\(operation.operationType.rawValue)'"))
            }
        }
        return .object(["subscriptions": .array(results)])
    }

    /// Normalises and checks a subscription; returns a reason when it is invalid.
    func validate(_ subscription: inout Subscription, _ db: Database, _ context: RequestContext) throws -> String? {
        switch subscription.subscriptionType {
        case .query:
            guard let query = subscription.query else { return "a query subscription needs 'query'" }
            if query.recordType.isEmpty { return "query.recordType is required" }
            if let problem = Self.nameProblem(query.recordType) { return "query.recordType \(Self.quoted(query.recordType)) is not valid: \(problem)" }
            guard let firesOn = subscription.firesOn, !firesOn.isEmpty else { return "a query subscription needs 'firesOn'" }
            if let bad = firesOn.first(where: { ![FiresOn.create, .update, .delete].contains($0) }) {
                return "unknown firesOn value '\(bad.rawValue)'"
            }
            if context.scope == .shared { return "query subscriptions are not supported in the shared database" }
            if subscription.zoneWide == nil { subscription.zoneWide = true }  // Apple: default true on create
            if subscription.firesOnce == nil { subscription.firesOnce = false }
            if let zoneID = subscription.zoneID { _ = try requireZone(db, context, zoneID) }
            // A filter whose value is of another kind than its field would fire for every record or for
            // none (`FilterTypes`); refused as queries are (unconfirmed that CloudKit checks it here).
            if let type = try recordType(query.recordType, db, context), let mismatch = FilterTypes.problem(of: query, in: type) { return mismatch }
        case .zone:
            guard let zoneID = subscription.zoneID else { return "a zone subscription needs 'zoneID'" }
            if context.scope == .public { return "zone subscriptions are not supported in the public database" }
            let zone = try requireZone(db, context, zoneID)
            subscription.zoneID = ZoneID(zoneName: zone.name, ownerRecordName: zoneID.ownerRecordName ?? context.zoneOwner)
            if subscription.query != nil || subscription.firesOn != nil || subscription.firesOnce != nil {
                return "zone subscriptions take no query, firesOn or firesOnce"
            }
        case .database:
            if context.scope == .public { return "database subscriptions are not supported in the public database" }
        default:
            return "unknown subscriptionType '\(subscription.subscriptionType.rawValue)'"
        }
        return nil
    }

    /// Another query subscription with the same record type and exactly the same firesOn set exists.
    func hasContentTwin(_ subscription: Subscription, _ db: Database, _ context: RequestContext) throws -> Bool {
        guard subscription.subscriptionType == .query, let query = subscription.query else { return false }
        let mine = Set(subscription.firesOn ?? [])
        for body in try String.fetchAll(db.cachedStatement(sql: "SELECT body FROM subscription WHERE db = ?"), arguments: [context.dbID]) {
            let other = try Subscription(json: JSON(parsing: body))
            if other.subscriptionType == .query, other.query?.recordType == query.recordType, Set(other.firesOn ?? []) == mine {
                return true
            }
        }
        return false
    }
}
