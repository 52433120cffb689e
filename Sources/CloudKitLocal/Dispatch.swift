import CloudKitWeb
import Foundation
import GRDB

/// What a handler needs to know about the request it serves.
struct RequestContext: Sendable {
    var route: Route
    var caller: LocalCloudKit.Caller
    var key: DatabaseKey
    var dbID: Int64
    var now: Int64
    /// In the shared database, once a zone is resolved: what the caller may reach in it (the
    /// context then points at the owner's private database). Nil: the caller's own database.
    var access: SharedAccess?
    /// The store's change stamp read before this request's transaction (nil: unknown). Facts read
    /// at a stamp hold for every request at that stamp (see `AnswerCache`).
    var stamp: Int64?
    /// Answered on the HTTP server's event loop (`answerOnEventLoop`): work that grows with a
    /// type's size must not run there, so it throws `NotBoundedWork()` (the full path then
    /// answers).
    var boundedOnly = false

    var environment: CloudKitEnvironment { route.environment }
    var container: String { route.container }
    var scope: DatabaseScope { route.scope }
    /// Zones of the caller's own databases are owned by the caller; the public database's by `_defaultOwner`.
    var zoneOwner: String { key.owner.isEmpty ? "_defaultOwner" : key.owner }

    func zoneID(_ name: String, type: Bool = true) -> ZoneID {
        ZoneID(
            zoneName: name, ownerRecordName: zoneOwner,
            zoneType: type ? (name == ZoneID.defaultZoneName ? .defaultZone : .regularCustomZone) : nil)
    }
}

extension LocalCloudKit {
    func dispatch(_ route: Route, caller: Caller, body: JSON, stamp: Int64? = nil) async throws -> (Int, Reply) {
        if route.endpoint == .usersCurrent {
            guard let user = caller.userName, let recordName = caller.userRecordName else {
                throw ServiceError(.authenticationFailed, "users endpoints need a signed-in user")
            }
            return (200, .json(["userRecordName": .string(recordName), "firstName": .string(user), "lastName": .null]))
        }
        if route.endpoint.operation.hasPrefix("users/") { return (200, .json(try await users(route.endpoint, caller: caller, body: body))) }
        if route.endpoint == .recordsResolve || route.endpoint == .recordsAccept {
            let answer = try await resolveShares(route, caller: caller, body: body, accept: route.endpoint == .recordsAccept)
            // An acceptance may have queued a push for the participant's database subscriptions.
            if route.endpoint == .recordsAccept { courier.wakeAll() }
            return (200, .json(answer))
        }
        let owner = route.scope == .public ? "" : (caller.userRecordName ?? "")
        let key = DatabaseKey(container: route.container, environment: route.environment, scope: route.scope, owner: owner)
        let dbID = try await databaseID(key)
        var request = RequestContext(
            route: route, caller: caller, key: key, dbID: dbID,
            now: Int64((configuration.now().timeIntervalSince1970 * 1000).rounded()))
        request.stamp = stamp
        let context = request
        if route.isWrite {
            let answer = try await store.pool.write { db in try self.write(route.endpoint, db, context, body) }
            if route.endpoint == .recordsModify || route.endpoint == .zonesModify { courier.wakeAll() }
            return answer
        }
        return try await store.pool.read { db in try self.read(route.endpoint, db, context, body) }
    }

    func databaseID(_ key: DatabaseKey) async throws -> Int64 {
        if let id = databaseIDs.withLock({ $0[key] }) { return id }
        let id = try await store.pool.write { db in try db.databaseID(key) }
        databaseIDs.withLock { $0[key] = id }
        return id
    }

    func write(_ endpoint: Endpoint, _ db: Database, _ context: RequestContext, _ body: JSON) throws -> (Int, Reply) {
        switch endpoint {
        case .recordsModify: return try modifyRecords(db, context, body)
        case .zonesModify: return (200, .json(try modifyZones(db, context, body)))
        case .subscriptionsModify: return (200, .json(try modifySubscriptions(db, context, body)))
        default: throw ServiceError(.internalError, "no write handler")
        }
    }

    func read(_ endpoint: Endpoint, _ db: Database, _ context: RequestContext, _ body: JSON) throws -> (Int, Reply) {
        switch endpoint {
        case .zonesList where context.scope == .shared: return (200, .json(try listSharedZones(db, context)))
        case .zonesLookup where context.scope == .shared: return (200, .json(try lookupSharedZones(db, context, body)))
        case .changesDatabase where context.scope == .shared: return (200, .json(try sharedDatabaseChanges(db, context, body)))
        case .zonesChanges: return (200, .json(try zonesChanges(db, context, body)))
        case .zonesList: return (200, .json(try listZones(db, context)))
        case .zonesLookup: return (200, .json(try lookupZones(db, context, body)))
        case .changesDatabase: return (200, .json(try databaseChanges(db, context, body)))
        case .changesZone: return (200, .encoded(try zoneChanges(db, context, body)))
        case .recordsChanges: return (200, .encoded(try recordChanges(db, context, body)))
        case .recordsQuery: return (200, try queryRecords(db, context, body))
        case .recordsLookup: return (200, .json(try lookupRecords(db, context, body)))
        case .subscriptionsList: return (200, .json(try listSubscriptions(db, context)))
        case .subscriptionsLookup: return (200, .json(try lookupSubscriptions(db, context, body)))
        case .assetsUpload: return (200, .json(try requestAssetUploads(db, context, body)))
        case .assetsRereference: return (200, .json(try rereferenceAssets(db, context, body)))
        default: throw ServiceError(.internalError, "no read handler")
        }
    }

    /// Decodes a request body into its wire model; shape errors are BAD_REQUEST naming the place.
    func decodeBody<T: JSONConvertible>(_ type: T.Type, _ body: JSON) throws -> T {
        do {
            return try T(json: body)
        } catch let error as JSONDecodingError {
            throw ServiceError.badRequest("BadRequestException: \(error.description)")
        }
    }

    func checkLimit(_ value: Int?, name: String = "resultsLimit") throws -> Int {
        guard let value else { return 200 }
        guard (1...200).contains(value) else {
            throw ServiceError.badRequest("\(name) must be between 1 and 200 (got \(value))")
        }
        return value
    }
}
