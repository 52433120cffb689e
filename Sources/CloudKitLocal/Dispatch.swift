import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB

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
        let key = databaseKey(route, caller: caller)
        let context = requestContext(route, caller: caller, key: key, dbID: try await databaseID(key), stamp: stamp)
        if route.isWrite {
            let answer = try await runWrite(route.endpoint, context, body)
            wroteAnswered(route.endpoint)
            return answer
        }
        return try await store.pool.read { db in try self.read(route.endpoint, db, context, body) }
    }

    /// The database a request reaches, as its caller names it.
    func databaseKey(_ route: Route, caller: Caller) -> DatabaseKey {
        let owner = route.scope == .public ? "" : (caller.userRecordName ?? "")
        return DatabaseKey(container: route.container, environment: route.environment, scope: route.scope, owner: owner)
    }

    func requestContext(_ route: Route, caller: Caller, key: DatabaseKey, dbID: Int64, stamp: Int64?) -> RequestContext {
        var context = RequestContext(
            route: route, caller: caller, key: key, dbID: dbID,
            now: Int64((configuration.now().timeIntervalSince1970 * 1000).rounded()))
        context.stamp = stamp
        return context
    }

    /// After a write's commit: long-polls waiting for a push learn of it.
    func wroteAnswered(_ endpoint: Endpoint) {
        if endpoint == .recordsModify || endpoint == .zonesModify { courier.wakeAll() }
    }

    /// The endpoints `answerWriteOnEventLoop` may answer: their work is one transaction on the store,
    /// bounded by the request's size (at most 200 operations).
    static let eventLoopWrites: Set<Endpoint> = [.recordsModify, .zonesModify, .subscriptionsModify]

    /// A write answered on the calling thread (the HTTP server's event loop) when
    /// `answersWritesOnEventLoop` is on: the same checks, transaction and answer as the full path
    /// (`answer`), without its hops. Nil when the full path must answer: anything but a POST to one
    /// of `eventLoopWrites` or a fixture reset, single-use web auth tokens (spent and given back by
    /// the full path only), a request its authentication refuses (the full path says why), or a
    /// database this server has not opened yet (its first write creates it there).
    public func answerWriteOnEventLoop(_ request: ServerRequest) -> ServerResponse? {
        guard configuration.answersWritesOnEventLoop, !configuration.singleUseWebAuthTokens, request.method == "POST",
            request.body.count <= configuration.maximumBodyBytes
        else { return nil }
        let uuid = Self.requestUUID()
        if request.path.hasPrefix(Self.adminPathPrefix) {
            guard requestPolicyRefusal(request) == nil, let (container, environment) = try? adminReset(request) else { return nil }
            answers.countSynchronousWrite()
            do {
                let report = try resetNow(container: container, environment: environment)
                return withCORS(respond(200, Self.resetAnswer(report), uuid: uuid, extra: []), request)
            } catch {
                return withCORS(ServiceError.from(error).response(uuid: uuid, extraHeaders: []), request)
            }
        }
        guard request.path.hasPrefix("/database/1/"), let route = try? Route.cached(path: request.path, method: request.method),
            route.isWrite, Self.eventLoopWrites.contains(route.endpoint), requestPolicyRefusal(request) == nil
        else { return nil }
        // Read before authentication and the transaction, as the full path does.
        let stamp = store.changeStamp()
        guard let caller = try? authenticate(request, route: route) else { return nil }
        let key = databaseKey(route, caller: caller)
        guard let dbID = databaseIDs.withLock({ $0[key] }) else { return nil }
        answers.countSynchronousWrite()
        let extra = nextTokenHeader(caller)
        do {
            let body = try parseBody(request.body)
            let context = requestContext(route, caller: caller, key: key, dbID: dbID, stamp: stamp)
            let (status, reply) = try runWriteNow(route.endpoint, context, body)
            wroteAnswered(route.endpoint)
            return withCORS(respond(status, reply, uuid: uuid, extra: extra), request)
        } catch {
            return withCORS(ServiceError.from(error).response(uuid: uuid, extraHeaders: extra), request)
        }
    }

    func databaseID(_ key: DatabaseKey) async throws -> Int64 {
        if let id = databaseIDs.withLock({ $0[key] }) { return id }
        let id = try await store.pool.write { db in try db.databaseID(key) }
        databaseIDs.withLock { $0[key] = id }
        return id
    }

    /// A writing request in one transaction of its own. An atomic records/modify whose operations do
    /// not all succeed (`AtomicBatchRetry`) is rolled back and run once more, each operation isolated,
    /// to answer each one's own error.
    func runWrite(_ endpoint: Endpoint, _ context: RequestContext, _ body: JSON) async throws -> (Int, Reply) {
        do {
            return try await store.pool.write { db in try self.write(endpoint, db, context, body) }
        } catch is AtomicBatchRetry {
            return try await store.pool.write { db in try self.write(endpoint, db, context, body, isolatingOperations: true) }
        }
    }

    /// `runWrite` on the calling thread (`answerWriteOnEventLoop`).
    func runWriteNow(_ endpoint: Endpoint, _ context: RequestContext, _ body: JSON) throws -> (Int, Reply) {
        do {
            return try store.pool.write { db in try self.write(endpoint, db, context, body) }
        } catch is AtomicBatchRetry {
            return try store.pool.write { db in try self.write(endpoint, db, context, body, isolatingOperations: true) }
        }
    }

    func write(_ endpoint: Endpoint, _ db: Database, _ context: RequestContext, _ body: JSON, isolatingOperations: Bool = false) throws -> (Int, Reply) {
        switch endpoint {
        case .recordsModify: return try modifyRecords(db, context, body, isolatingOperations: isolatingOperations)
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

/// Thrown by an atomic records/modify run without a savepoint per operation when one of them fails:
/// its transaction is rolled back, and the request runs again with each operation isolated
/// (`LocalCloudKit.runWrite`). Never answered.
struct AtomicBatchRetry: Error {}
