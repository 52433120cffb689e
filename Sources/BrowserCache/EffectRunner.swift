import CloudKitWeb
import Foundation
import RecordBrowser

/// Runs the browser's effects against the service and the local cache, and turns each answer into
/// events. Pages are written to the cache before the core hears of them, so the core only ever reads
/// windows of rows.
public struct EffectRunner: Sendable {
    public let client: CloudKitClient
    public let cache: RecordCache?
    /// Records per change-feed page.
    public var pageSize = 200

    public init(client: CloudKitClient, cache: RecordCache?) {
        self.client = client
        self.cache = cache
    }

    public func execute(_ effect: BrowserEffect) async -> [BrowserEvent] {
        switch effect {
        case .loadZones(let scope):
            do {
                let zones = try await client.database(scope).listZones()
                var events: [BrowserEvent] = [.zonesLoaded(scope, .success(zones))]
                if let cache, let cached = try? cache.cachedZones(container: client.configuration.container, environment: client.configuration.environment, database: scope) {
                    events.append(.cachedZones(scope, cached))
                }
                return events
            } catch { return [.zonesLoaded(scope, .failure(BrowserFailure(error)))] }
        case .openList(let key, let generation):
            guard let cache else { return [.listOpened(generation: generation, total: 0, syncToken: nil, moreComing: true)] }
            do {
                let state = try cache.open(key)
                return [.listOpened(generation: generation, total: state.count, syncToken: state.syncToken, moreComing: state.moreComing)]
            } catch {
                return [.listOpened(generation: generation, total: 0, syncToken: nil, moreComing: true), .notice("the local cache could not be read: \(error)")]
            }
        case .loadChanges(let scope, let zoneID, let key, let token, let generation):
            return [.pageApplied(generation: generation, await loadChanges(scope, zoneID, key, token))]
        case .runQuery(let scope, let request, let key, let reset, let generation):
            do {
                if reset { try cache?.reset(key) }
                let page = try await client.database(scope).query(request)
                let outcome = try apply(key, page.records, syncToken: nil, marker: page.continuationMarker, more: page.continuationMarker != nil)
                return [.pageApplied(generation: generation, .success(outcome))]
            } catch { return [.pageApplied(generation: generation, .failure(BrowserFailure(error)))] }
        case .loadWindow(let key, let filter, let start, let count, let generation):
            guard let cache, let window = try? cache.window(key, filter: filter, start: start, count: count) else {
                return [.windowLoaded(generation: generation, start: start, rows: [], matching: 0)]
            }
            return [.windowLoaded(generation: generation, start: start, rows: window.rows, matching: window.matching)]
        case .lookupRecord(let scope, let zoneID, let name):
            do {
                let results = try await client.database(scope).lookupRecordsWithJSON(LookupRecordsRequest(recordNames: [name], zoneID: zoneID))
                guard let first = results.first else { return [.recordLoaded(name, .failure(BrowserFailure(message: "no result for \(name)")))] }
                return [.recordLoaded(name, .success(first))]
            } catch { return [.recordLoaded(name, .failure(BrowserFailure(error)))] }
        case .loadSubscriptions(let scope):
            do { return [.subscriptionsLoaded(scope, .success(try await client.database(scope).listSubscriptions()))] } catch {
                return [.subscriptionsLoaded(scope, .failure(BrowserFailure(error)))]
            }
        case .copy, .copyRecord, .quit:
            return []
        }
    }

    /// One page of the change feed into the cache. A token the server no longer understands starts a
    /// clean fetch (and says so) instead of failing.
    func loadChanges(_ scope: DatabaseScope, _ zoneID: ZoneID, _ key: ListKey, _ token: String?) async -> Result<PageOutcome, BrowserFailure> {
        let database = client.database(scope)
        do {
            let page = try await database.recordChanges(RecordChangesRequest(zoneID: zoneID, syncToken: token, resultsLimit: pageSize))
            return .success(try apply(key, page.records, syncToken: page.syncToken, marker: nil, more: page.moreComing))
        } catch let error as CloudKitError where token != nil && Self.isRefusedToken(error) {
            do {
                try cache?.reset(key)
                let page = try await database.recordChanges(RecordChangesRequest(zoneID: zoneID, syncToken: nil, resultsLimit: pageSize))
                var outcome = try apply(key, page.records, syncToken: page.syncToken, marker: nil, more: page.moreComing)
                outcome.tokenRefused = true
                return .success(outcome)
            } catch { return .failure(BrowserFailure(error)) }
        } catch {
            return .failure(BrowserFailure(error))
        }
    }

    static func isRefusedToken(_ error: CloudKitError) -> Bool {
        if error.serverErrorCode?.rawValue == "CHANGE_TOKEN_EXPIRED" { return true }
        return error.serverErrorCode == .badRequest && (error.reason?.localizedCaseInsensitiveContains("sync continuation") ?? false)
    }

    func apply(_ key: ListKey, _ records: [RecordResult], syncToken: String?, marker: String?, more: Bool) throws -> PageOutcome {
        guard let cache else {
            return PageOutcome(total: records.count, syncToken: syncToken, continuationMarker: marker, moreComing: more, received: records.count)
        }
        let state = try cache.apply(key, records: records, syncToken: syncToken, continuationMarker: marker, moreComing: more)
        return PageOutcome(total: state.count, syncToken: syncToken, continuationMarker: marker, moreComing: more, received: records.count)
    }
}
