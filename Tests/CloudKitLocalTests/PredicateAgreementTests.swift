import CloudKitWeb
import Foundation
import SQLiteDB
import Testing

@testable import CloudKitLocal

/// Issue 31: the pure evaluator (`FilterPredicate`, which the browser's "what will fire" reads) and the
/// local server's firing agree. Random records of every field type and random filters of every
/// comparator go to a real server (subscriptions created, records created, replaced and deleted over
/// HTTP, the queued pushes read back); the pure evaluator, given the same wire records, must predict
/// exactly the subscriptions whose pushes were queued, change by change.
@Suite struct PredicateAgreementTests {
    struct Random {
        var generator: SplitMix64
        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }
        mutating func bool() -> Bool { int(0...1) == 1 }
        mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }
        mutating func subset<T>(_ items: [T]) -> [T] { items.filter { _ in bool() } }
    }

    static let words = ["alpha beta", "Alpha", "beta gamma", "delta", "al", "gamma-delta 7"]
    static let tags = ["red", "green", "blue", "re"]
    static let center = Location(latitude: 48.85, longitude: 2.35)

    func value(_ field: String, _ r: inout Random) -> FieldValue {
        switch field {
        case "s": return .string(r.pick(Self.words))
        case "n": return .int64(Int64(r.int(-3...3)))
        case "d": return .double(Double(r.int(-4...4)) / 2)
        case "t": return .timestamp(1_700_000_000_000 + Int64(r.int(0...3)) * 1000)
        case "tags": return .stringList(r.subset(Self.tags))
        case "nums": return .int64List((0..<r.int(0...3)).map { _ in Int64(r.int(0...4)) })
        case "loc": return .location(Location(latitude: 48.85 + Double(r.int(-20...20)) / 1000, longitude: 2.35 + Double(r.int(-20...20)) / 1000))
        default: return .reference(Reference(recordName: r.pick(["ref-1", "ref-2"]), action: nil))
        }
    }

    static let fields = ["s", "n", "d", "t", "tags", "nums", "loc", "r"]

    func filter(_ r: inout Random) -> Filter {
        let field = r.pick(Self.fields)
        let scalar = value(field, &r)
        switch field {
        case "s":
            let comparator = r.pick([Comparator.equals, .notEquals, .lessThan, .greaterThanOrEquals, .beginsWith, .notBeginsWith, .containsAllTokens, .containsAnyTokens, .in, .notIn])
            if comparator == .in || comparator == .notIn { return Filter("s", comparator, .stringList(r.subset(Self.words))) }
            if comparator == .beginsWith || comparator == .notBeginsWith { return Filter("s", comparator, .string(r.pick(["al", "Al", "beta", "d"]))) }
            return Filter("s", comparator, scalar)
        case "n", "d", "t":
            let comparator = r.pick([Comparator.equals, .notEquals, .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals, .in, .notIn])
            if comparator == .in || comparator == .notIn {
                return Filter(field, comparator, field == "n" ? .int64List([-1, 0, 2]) : field == "d" ? .doubleList([-1, 0.5, 2]) : .timestampList([1_700_000_001_000]))
            }
            return Filter(field, comparator, scalar)
        case "tags":
            let comparator = r.pick([Comparator.listContains, .notListContains, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll, .listMemberBeginsWith, .notListMemberBeginsWith])
            switch comparator {
            case .listContains, .notListContains, .listMemberBeginsWith, .notListMemberBeginsWith: return Filter("tags", comparator, .string(r.pick(Self.tags)))
            default: return Filter("tags", comparator, .stringList(r.subset(Self.tags)))
            }
        case "nums": return Filter("nums", r.pick([Comparator.listContains, .notListContains]), .int64(Int64(r.int(0...4))))
        case "loc": return Filter("loc", .near, .location(Self.center), distance: Double(r.int(200...2500)))
        default: return Filter("r", r.pick([Comparator.equals, .notEquals]), scalar)
        }
    }

    @Test func thePureEvaluatorAndTheServersFiringAgree() async throws {
        let server = try await LiveServer.start(configure: { $0.enforcesIndexes = false; $0.notifications.maxQueued = 1000 })
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        let zone = ZoneID(zoneName: "Z")
        try await db.createZone("Z")
        let created = try await server.raw(
            .post, "/device/1/\(LiveServer.container)/development/tokens/create", body: #"{"apnsEnvironment":"development"}"#)
        let pushToken = try #require(try JSON(parsing: created.body)["apnsToken"]?.stringValue)
        var r = Random(generator: SplitMix64(seed: 31))
        // Every field once, so the schema knows them all, then gone again.
        var full: [String: FieldValue] = [:]
        for field in Self.fields { full[field] = value(field, &r) }
        for type in ["A", "B"] {
            _ = try await db.modify([.create(record("schema-\(type)", type, full))], zone: "Z")
            _ = try await db.modify([.forceDelete(recordName: "schema-\(type)")], zone: "Z")
        }
        // Query subscriptions: per type, each non-empty firesOn set once (the service keeps one per
        // type and set), with one to three random filters; a zone and a database subscription.
        var subscriptions: [Subscription] = []
        for type in ["A", "B"] {
            for mask in 1...7 {
                let firesOn = [FiresOn.create, .update, .delete].enumerated().filter { mask >> $0.offset & 1 == 1 }.map(\.element)
                let filters = (0..<r.int(1...3)).map { _ in filter(&r) }
                subscriptions.append(.query("\(type)-\(mask)", Query(recordType: type, filterBy: filters), firesOn: firesOn, zoneID: zone))
            }
        }
        subscriptions.append(.zone("zone-Z", zone))
        subscriptions.append(Subscription(subscriptionID: "database", subscriptionType: .database))
        let made = try await db.modifySubscriptions(subscriptions.map { SubscriptionOperation(.create, $0) })
        #expect(made.allSatisfy { $0.subscription != nil }, "\(made)")
        func drained() async throws -> Set<String> {
            try await server.service.store.pool.write { db in
                let payloads = try String.fetchAll(db, sql: "SELECT payload FROM notification_queue WHERE token = ?", arguments: [pushToken])
                try db.execute(sql: "DELETE FROM notification_queue WHERE token = ?", arguments: [pushToken])
                return Set(try payloads.compactMap { text -> String? in
                    let ck = try JSON(parsing: Array(text.utf8))["ck"]
                    return (ck?["qry"] ?? ck?["fet"] ?? ck?["met"])?["sid"]?.stringValue
                })
            }
        }
        _ = try await drained()
        var current: [String: CloudKitWeb.Record] = [:]
        var fired = 0, quiet = 0
        for step in 0..<150 {
            let names = current.keys.sorted()
            let kind: FilterPredicate.Change = names.count < 3 ? .created : r.pick([.created, .updated, .updated, .deleted])
            let name = kind == .created ? "r-\(step)" : r.pick(names)
            let before = kind == .created ? nil : current[name]
            var after: CloudKitWeb.Record?
            switch kind {
            case .created, .updated:
                var fields: [String: FieldValue] = [:]
                for field in r.subset(Self.fields) { fields[field] = value(field, &r) }
                let type = before?.recordType ?? r.pick(["A", "B"])
                var wire = record(name, type, fields)
                wire.recordChangeTag = before?.recordChangeTag
                let result = try await db.modify([kind == .created ? .create(wire) : .replace(wire)], zone: "Z")
                after = try #require(result.results.first?.record, "step \(step): \(result)")
                current[name] = after
            case .deleted:
                _ = try await db.modify([.forceDelete(recordName: name)], zone: "Z")
                current[name] = nil
            }
            let state = { (record: CloudKitWeb.Record?) in record.map { FilterPredicate.RecordState($0, zone: "Z") } }
            let expected = Set(subscriptions.filter { FilterPredicate.evaluate($0, kind, before: state(before), after: state(after)).fires }.compactMap(\.subscriptionID))
            let actual = try await drained()
            #expect(expected == actual, "step \(step): \(kind) \(name) \(after?.fields ?? before?.fields ?? [:])")
            fired += actual.count
            quiet += subscriptions.count - actual.count
        }
        #expect(fired > 100 && quiet > 500, "both outcomes were exercised (\(fired) pushes, \(quiet) not)")
    }
}
