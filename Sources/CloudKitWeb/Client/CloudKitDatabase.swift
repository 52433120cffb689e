/// The endpoints of one database (public, private or shared) of a container.
public struct CloudKitDatabase: Sendable {
    public let client: CloudKitClient
    public let scope: DatabaseScope

    // MARK: Zones

    /// `GET zones/list`.
    public func listZones() async throws -> [ZoneResult] {
        try await call(.zonesList, nil, ZonesResponse.self).zones
    }

    /// `zones/lookup`: one result per ID, ZONE_NOT_FOUND inline.
    public func lookupZones(_ zoneIDs: [ZoneID]) async throws -> [ZoneResult] {
        try await call(.zonesLookup, LookupZonesRequest(zones: zoneIDs).json, ZonesResponse.self).zones
    }

    /// `zones/modify`: create or delete custom zones.
    public func modifyZones(_ operations: [ZoneOperation]) async throws -> [ZoneResult] {
        try checkCount(operations.count, .zonesModify)
        return try await call(.zonesModify, ModifyZonesRequest(operations: operations).json, ZonesResponse.self).zones
    }

    /// `changes/database`: which zones changed since `syncToken`.
    public func databaseChanges(syncToken: String? = nil, resultsLimit: Int? = nil) async throws -> DatabaseChangesResponse {
        try await call(
            .changesDatabase, DatabaseChangesRequest(syncToken: syncToken, resultsLimit: resultsLimit).json,
            DatabaseChangesResponse.self)
    }

    // MARK: Records

    /// `records/changes`: one page of a custom zone's change feed.
    public func recordChanges(_ request: RecordChangesRequest) async throws -> RecordChangesPage {
        try await call(.recordsChanges, request.json, RecordChangesPage.self)
    }

    /// `changes/zone`: one page for each requested zone.
    public func zoneChanges(_ request: ZoneChangesRequest) async throws -> ZoneChangesResponse {
        try await call(.changesZone, request.json, ZoneChangesResponse.self)
    }

    /// `records/query`: one page.
    public func query(_ request: QueryRequest) async throws -> QueryResponse {
        try await call(.recordsQuery, request.json, QueryResponse.self)
    }

    /// `records/lookup`: one result per name, NOT_FOUND inline.
    public func lookupRecords(_ request: LookupRecordsRequest) async throws -> [RecordResult] {
        try await call(.recordsLookup, request.json, RecordsResponse.self).records
    }

    /// `records/lookup`, each result with its record dictionary exactly as the server sent it (for a
    /// raw-JSON view).
    public func lookupRecordsWithJSON(_ request: LookupRecordsRequest) async throws -> [(RecordResult, JSON)] {
        let answer = try await client.perform(.recordsLookup, database: scope, body: request.json)
        let response = try client.decode(RecordsResponse.self, answer.json, .recordsLookup)
        guard case .array(let items)? = answer.json["records"], items.count == response.records.count else {
            return response.records.map { ($0, $0.json) }
        }
        return Array(zip(response.records, items))
    }

    /// `records/lookup` by names in a zone.
    public func lookupRecords(_ names: [String], zoneID: ZoneID? = nil, desiredKeys: [String]? = nil) async throws -> [RecordResult] {
        try await lookupRecords(LookupRecordsRequest(recordNames: names, zoneID: zoneID, desiredKeys: desiredKeys))
    }

    /// `records/modify`. Per-record failures are results, not thrown errors; a failed atomic batch
    /// (HTTP 400 with a `records` array) comes back with `isAtomicFailure`. More than 200 operations
    /// are refused before sending: an atomic batch is never split silently.
    public func modifyRecords(_ request: ModifyRecordsRequest) async throws -> ModifyRecordsResult {
        try checkCount(request.operations.count, .recordsModify)
        var seen = Set<String>()
        for operation in request.operations where !seen.insert(operation.record.recordName).inserted {
            throw CloudKitError(
                kind: .invalidRequest, operation: Endpoint.recordsModify.operation,
                reason: "record '\(operation.record.recordName)' appears in more than one operation (one per record per request)")
        }
        let answer = try await client.perform(.recordsModify, database: scope, body: request.json, itemErrorsOn400: true)
        let response = try client.decode(RecordsResponse.self, answer.json, .recordsModify)
        if response.records.count != request.operations.count {
            throw CloudKitError(
                kind: .invalidResponse, operation: Endpoint.recordsModify.operation, httpStatus: answer.status,
                reason: "\(response.records.count) results for \(request.operations.count) operations")
        }
        return ModifyRecordsResult(results: response.records, httpStatus: answer.status)
    }

    // MARK: Subscriptions

    /// `GET subscriptions/list`.
    public func listSubscriptions() async throws -> [SubscriptionResult] {
        try await call(.subscriptionsList, nil, SubscriptionsResponse.self).subscriptions
    }

    /// `subscriptions/lookup`: NOT_FOUND inline.
    public func lookupSubscriptions(_ ids: [String]) async throws -> [SubscriptionResult] {
        try await call(.subscriptionsLookup, LookupSubscriptionsRequest(subscriptionIDs: ids).json, SubscriptionsResponse.self)
            .subscriptions
    }

    /// `subscriptions/modify`.
    public func modifySubscriptions(_ operations: [SubscriptionOperation]) async throws -> [SubscriptionResult] {
        try checkCount(operations.count, .subscriptionsModify)
        return try await call(
            .subscriptionsModify, ModifySubscriptionsRequest(operations: operations).json, SubscriptionsResponse.self
        ).subscriptions
    }

    // MARK: Users

    /// `GET users/current` (needs a web auth token).
    public func currentUser() async throws -> User {
        try await call(.usersCurrent, nil, User.self)
    }

    /// `GET users/caller`: the signed-in user's identity, read from the top-level keys (as CloudKit JS
    /// reads the answer) or from `users[0]` (the reference page's shape).
    public func callerIdentity() async throws -> UserIdentity? {
        try await call(.usersCaller, nil, CallerIdentityResponse.self).identity
    }

    /// `POST users/discover`: the identities of users found by email, phone or record name.
    public func discoverUsers(_ lookupInfos: [UserLookupInfo]) async throws -> [UserIdentity] {
        try await call(.usersDiscover, .object(["lookupInfos": .array(lookupInfos.map(\.json))]), UserIdentitiesResponse.self).users
    }

    /// `GET users/discover`: every identity the caller can discover.
    public func discoverAllUsers() async throws -> [UserIdentity] {
        try await call(.usersDiscoverAll, nil, UserIdentitiesResponse.self).users
    }

    /// `users/lookup/email` (legacy).
    public func lookupUsers(emails: [String]) async throws -> [User] {
        try await call(.usersLookupEmail, .object(["users": .array(emails.map { UserLookupInfo(emailAddress: $0).json })]), UsersResponse.self).users
    }

    /// `users/lookup/id` (legacy).
    public func lookupUsers(recordNames: [String]) async throws -> [User] {
        try await call(.usersLookupID, .object(["users": .array(recordNames.map { UserLookupInfo(userRecordName: $0).json })]), UsersResponse.self).users
    }

    // MARK: Sharing (always on the public path)

    /// `records/resolve`: share metadata for each shortGUID (or why not).
    public func resolveShares(_ shortGUIDs: [ShortGUID]) async throws -> [ShortGUIDResultItem] {
        let answer = try await client.perform(.recordsResolve, database: .public, body: .object(["shortGUIDs": .array(shortGUIDs.map(\.json))]))
        return try client.decode(ShortGUIDResponse.self, answer.json, .recordsResolve).results
    }

    /// `records/accept`: accepts share invitations; each accepted share's zone then appears in the
    /// caller's shared database.
    public func acceptShares(_ shortGUIDs: [ShortGUID]) async throws -> [ShortGUIDResultItem] {
        let answer = try await client.perform(.recordsAccept, database: .public, body: .object(["shortGUIDs": .array(shortGUIDs.map(\.json))]))
        return try client.decode(ShortGUIDResponse.self, answer.json, .recordsAccept).results
    }

    // MARK: Paging

    /// The change feed of a custom zone as pages (records/changes), from `syncToken` (nil: from the
    /// beginning) until `moreComing` is false. Save each page's `syncToken` to resume.
    public func recordChangePages(
        zoneID: ZoneID, syncToken: String? = nil, resultsLimit: Int? = nil, desiredKeys: [String]? = nil
    ) -> ChangePages {
        ChangePages(
            database: self,
            request: RecordChangesRequest(zoneID: zoneID, syncToken: syncToken, resultsLimit: resultsLimit, desiredKeys: desiredKeys),
            useZoneChanges: false)
    }

    /// The same feed through `changes/zone` (the non-deprecated endpoint).
    public func zoneChangePages(
        zoneID: ZoneID, syncToken: String? = nil, resultsLimit: Int? = nil, desiredKeys: [String]? = nil
    ) -> ChangePages {
        ChangePages(
            database: self,
            request: RecordChangesRequest(zoneID: zoneID, syncToken: syncToken, resultsLimit: resultsLimit, desiredKeys: desiredKeys),
            useZoneChanges: true)
    }

    /// A query's pages, following `continuationMarker` (the same query is resent with each marker).
    public func queryPages(_ request: QueryRequest) -> QueryPages {
        QueryPages(database: self, request: request)
    }

    // MARK: Helpers

    func call<T: JSONConvertible>(_ endpoint: Endpoint, _ body: JSON?, _ type: T.Type) async throws -> T {
        let answer = try await client.perform(endpoint, database: scope, body: body)
        return try client.decode(type, answer.json, endpoint)
    }

    func checkCount(_ count: Int, _ endpoint: Endpoint) throws {
        if count > ModifyRecordsRequest.maximumOperations {
            throw CloudKitError(
                kind: .invalidRequest, operation: endpoint.operation,
                reason: "\(count) operations; one request allows at most \(ModifyRecordsRequest.maximumOperations)")
        }
    }
}

/// The pages of a zone's change feed. Ends after the page with `moreComing == false`; a page whose
/// token did not advance while `moreComing` is true ends the sequence with a `.stalledPaging` error.
public struct ChangePages: AsyncSequence, Sendable {
    public typealias Element = RecordChangesPage
    let database: CloudKitDatabase
    let request: RecordChangesRequest
    let useZoneChanges: Bool

    public func makeAsyncIterator() -> Iterator {
        Iterator(database: database, request: request, useZoneChanges: useZoneChanges)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let database: CloudKitDatabase
        var request: RecordChangesRequest
        let useZoneChanges: Bool
        var finished = false

        public mutating func next() async throws -> RecordChangesPage? {
            guard !finished else { return nil }
            let endpoint: Endpoint = useZoneChanges ? .changesZone : .recordsChanges
            var page: RecordChangesPage
            do {
                page = try await fetch()
            } catch {
                finished = true
                throw error
            }
            if page.moreComing {
                if page.syncToken == request.syncToken {
                    finished = true
                    throw CloudKitError(
                        kind: .stalledPaging, operation: endpoint.operation,
                        reason: "moreComing is true but the sync token did not advance")
                }
            } else {
                finished = true
            }
            request.syncToken = page.syncToken
            page.zoneID = page.zoneID ?? request.zoneID
            return page
        }

        private func fetch() async throws -> RecordChangesPage {
            guard useZoneChanges else { return try await database.recordChanges(request) }
            let response = try await database.zoneChanges(
                ZoneChangesRequest(
                    zones: [ZoneChangesEntry(zoneID: request.zoneID, syncToken: request.syncToken)],
                    desiredKeys: request.desiredKeys, resultsLimit: request.resultsLimit))
            switch response.zones.first {
            case .page(let page)?: return page
            case .failure(let error)?:
                throw CloudKitError(server: error.info, operation: Endpoint.changesZone.operation, httpStatus: 200)
            case nil:
                throw CloudKitError(kind: .invalidResponse, operation: Endpoint.changesZone.operation, reason: "no result for the zone")
            }
        }
    }
}

/// The pages of a query, following `continuationMarker`.
public struct QueryPages: AsyncSequence, Sendable {
    public typealias Element = QueryResponse
    let database: CloudKitDatabase
    let request: QueryRequest

    public func makeAsyncIterator() -> Iterator { Iterator(database: database, request: request) }

    public struct Iterator: AsyncIteratorProtocol {
        let database: CloudKitDatabase
        var request: QueryRequest
        var finished = false

        public mutating func next() async throws -> QueryResponse? {
            guard !finished else { return nil }
            let page: QueryResponse
            do {
                page = try await database.query(request)
            } catch {
                finished = true
                throw error
            }
            if let marker = page.continuationMarker {
                if marker == request.continuationMarker {
                    finished = true
                    throw CloudKitError(
                        kind: .stalledPaging, operation: Endpoint.recordsQuery.operation,
                        reason: "the continuation marker did not advance")
                }
                request.continuationMarker = marker
            } else {
                finished = true
            }
            return page
        }
    }
}
