import CloudKitLocal
import CloudKitWeb
import Foundation
import Testing

/// Subscriptions that fire, over a real loopback server: tokens/create, writes through the API, and
/// the webcourier long-poll read until it answers with a keep-alive.
@Suite struct NotificationTests {
    static let zone = ZoneID(zoneName: "Z")
    static let big = Filter("n", .greaterThan, .int64(5))

    /// A server with zone Z, a subscription, and alice's push token.
    struct Setup {
        let server: LiveServer
        let alice: CloudKitClient
        let db: CloudKitDatabase
        let webcourierURL: String

        /// Every queued notification, oldest first (the poll answers at once while one is queued).
        func drain() async throws -> [PushNotification] {
            var all: [PushNotification] = []
            while let n = try await alice.pollWebcourier(webcourierURL, timeout: 10).notification { all.append(n) }
            return all
        }
    }

    static func setUp(_ subscriptions: [Subscription], settings: NotificationSettings = NotificationSettings(), seed: [Record] = []) async throws -> Setup {
        var settings = settings
        settings.holdSeconds = min(settings.holdSeconds, 0.2)
        let server = try await LiveServer.start(notifications: settings)
        let alice = server.client()
        let db = alice.database(.private)
        try await db.createZone("Z")
        if !seed.isEmpty { _ = try await db.modify(seed.map { .create($0) }, zone: "Z") }
        let saved = try await db.modifySubscriptions(subscriptions.map { SubscriptionOperation(.create, $0) })
        for result in saved { #expect(result.subscription != nil, "subscription refused: \(result)") }
        let token = try await alice.createToken(apnsEnvironment: .development)
        let url = try #require(token.webcourierURL)
        return Setup(server: server, alice: alice, db: db, webcourierURL: url)
    }

    static func note(_ name: String, n: Int64, tag: String? = nil) -> Record { record(name, tag: tag, ["n": .int64(n), "title": .string("t-\(name)")]) }

    /// What a write must produce, per subscription kind and write.
    struct Case: CustomTestStringConvertible {
        var name: String
        var subscription: Subscription
        var settings = NotificationSettings()
        var seed: [Record] = [note("small", n: 1), note("large", n: 10)]
        /// The write, given the seeded records' change tags.
        var write: @Sendable ([String: String]) -> (ops: [RecordOperation], zone: String?, atomic: Bool?)
        /// (kind, reason, record name) of each notification, in order.
        var expected: [String]
        var testDescription: String { name }
    }

    static let query = Subscription.query("q", Query(recordType: "Note", filterBy: [big]), firesOn: [.create, .update, .delete], zoneID: zone)

    static let cases: [Case] = [
        Case(name: "create matching", subscription: query, write: { _ in ([.create(note("new", n: 9))], "Z", nil) }, expected: ["query created new"]),
        Case(name: "create not matching", subscription: query, write: { _ in ([.create(note("new", n: 2))], "Z", nil) }, expected: []),
        Case(name: "update into the predicate (an update, not a create)", subscription: query,
             write: { t in ([.update(note("small", n: 20, tag: t["small"]))], "Z", nil) }, expected: ["query updated small"]),
        Case(name: "update out of the predicate (default: after)", subscription: query,
             write: { t in ([.update(note("large", n: 0, tag: t["large"]))], "Z", nil) }, expected: []),
        Case(name: "update out of the predicate (before_or_after)", subscription: query, settings: { var s = NotificationSettings(); s.updateMatch = .beforeOrAfter; return s }(),
             write: { t in ([.update(note("large", n: 0, tag: t["large"]))], "Z", nil) }, expected: ["query updated large"]),
        Case(name: "update within the predicate", subscription: query,
             write: { t in ([.update(note("large", n: 11, tag: t["large"]))], "Z", nil) }, expected: ["query updated large"]),
        Case(name: "delete matching", subscription: query, write: { t in ([.delete(recordName: "large", recordChangeTag: t["large"])], "Z", nil) },
             expected: ["query deleted large"]),
        Case(name: "delete not matching", subscription: query, write: { t in ([.delete(recordName: "small", recordChangeTag: t["small"])], "Z", nil) },
             expected: []),
        Case(name: "atomic batch rolled back fires nothing", subscription: query,
             write: { _ in ([.create(note("new", n: 9)), .update(note("large", n: 12, tag: "stale"))], "Z", true) }, expected: []),
        Case(name: "a batch: one per record", subscription: query,
             write: { t in ([.create(note("a", n: 9)), .create(note("b", n: 1)), RecordOperation(.forceUpdate, note("large", n: 30))], "Z", nil) },
             expected: ["query created a", "query updated large"]),
        Case(name: "firesOn create only ignores updates", subscription: .query("c", Query(recordType: "Note"), firesOn: [.create], zoneID: zone),
             write: { t in ([.update(note("large", n: 13, tag: t["large"])), .create(note("new", n: 0))], "Z", false) }, expected: ["query created new"]),
        Case(name: "another record type does not fire", subscription: query,
             write: { _ in ([.create(record("x", "Other", ["n": .int64(50)]))], "Z", nil) }, expected: []),
        Case(name: "zone subscription: any change in its zone", subscription: .zone("z", zone),
             write: { t in ([.create(note("new", n: 0)), .delete(recordName: "small", recordChangeTag: t["small"])], "Z", nil) },
             expected: ["recordZone - -", "recordZone - -"]),
        Case(name: "zone subscription: other zones do not fire", subscription: .zone("z", zone),
             write: { _ in ([.create(note("elsewhere", n: 0))], nil, nil) }, expected: []),
        Case(name: "database subscription: custom zones", subscription: Subscription(subscriptionID: "d", subscriptionType: .database),
             write: { _ in ([.create(note("new", n: 0))], "Z", nil) }, expected: ["database - -"]),
        Case(name: "database subscription: not the default zone", subscription: Subscription(subscriptionID: "d", subscriptionType: .database),
             write: { _ in ([.create(note("elsewhere", n: 0))], nil, nil) }, expected: []),
        Case(name: "own writes are notified by default (origin exclusion none)", subscription: query,
             write: { _ in ([.create(note("mine", n: 9))], "Z", nil) }, expected: ["query created mine"]),
        Case(name: "origin exclusion session skips the writer's own token", subscription: query,
             settings: { var s = NotificationSettings(); s.originExclusion = .session; return s }(),
             write: { _ in ([.create(note("mine", n: 9))], "Z", nil) }, expected: []),
    ]

    @Test(arguments: cases) func firesExactlyAsSpecified(_ c: Case) async throws {
        let setup = try await Self.setUp([c.subscription], settings: c.settings, seed: c.seed)
        defer { Task { await setup.server.stop() } }
        var tags: [String: String] = [:]
        for r in c.seed { tags[r.recordName] = try await setup.db.lookup(r.recordName, zone: "Z").record?.recordChangeTag }
        #expect(try await setup.drain().isEmpty, "the seed was written before the subscription")
        let (ops, zone, atomic) = c.write(tags)
        _ = try await setup.db.modify(ops, zone: zone, atomic: atomic)
        let got = try await setup.drain().map { n in
            "\(n.kind.rawValue) \(n.reason?.word ?? "-") \(n.recordName ?? "-")"
        }
        #expect(got == c.expected)
    }

    @Test func databaseSubscriptionsFireOnZoneCreationAndDeletion() async throws {
        let setup = try await Self.setUp([Subscription(subscriptionID: "d", subscriptionType: .database)])
        defer { Task { await setup.server.stop() } }
        try await setup.db.createZone("New")
        _ = try await setup.db.modifyZones([ZoneOperation(.delete, ZoneID(zoneName: "New"))])
        let got = try await setup.drain()
        #expect(got.map(\.kind) == [.database, .database] && got.allSatisfy { $0.subscriptionID == "d" && $0.database == .private })
    }

    @Test func thePayloadFollowsNotificationInfo() async throws {
        let info = NotificationInfo(alertBody: "A note changed", alertLocalizationKey: "NOTE_%@", alertLocalizationArgs: ["title", "n"],
                                    soundName: "ping.aiff", shouldBadge: true, shouldSendContentAvailable: true, additionalFields: ["title", "n", "missing"], category: "NOTE")
        let s = Subscription.query("q", Query(recordType: "Note"), firesOn: [.create, .update, .delete], zoneID: Self.zone, notificationInfo: info)
        let setup = try await Self.setUp([s])
        defer { Task { await setup.server.stop() } }
        _ = try await setup.db.modify([.create(Self.note("a", n: 7))], zone: "Z")
        _ = try await setup.db.modify([.forceDelete(recordName: "a")], zone: "Z")
        let got = try await setup.drain()
        #expect(got.count == 2)
        let created = try #require(got.first)
        #expect(created.alertBody == "A note changed" && created.alertLocalizationKey == "NOTE_%@")
        #expect(created.alertLocalizationArgs == ["t-a", "7"], "args are field names; the server fills in the values")
        #expect(created.soundName == "ping.aiff" && created.category == "NOTE" && created.contentAvailable)
        #expect(created.badge == 1 && got[1].badge == 2, "a per-user counter")
        #expect(created.recordFields == JSONObject(pairs: [(key: "title", value: .string("t-a")), (key: "n", value: .int(7))]))
        #expect(got[1].recordFields == nil, "no af for deletes")
        #expect(created.containerIdentifier == LiveServer.container && created.database == .private && created.zoneName == "Z")
        #expect(created.zoneOwner == "_defaultOwner" && created.subscriptionID == "q" && created.environmentCode == 1)
        #expect(created.notificationID != got[1].notificationID && created.notificationID?.count == 36)
        #expect(!created.isPruned)
    }

    @Test func largePayloadsArePrunedInOrderAndMarked() async throws {
        var settings = NotificationSettings()
        settings.payloadLimit = 400
        let info = NotificationInfo(alertBody: "Changed", additionalFields: ["title"])
        let s = Subscription.query("q", Query(recordType: "Note"), firesOn: [.create], zoneID: Self.zone, notificationInfo: info)
        let setup = try await Self.setUp([s], settings: settings)
        defer { Task { await setup.server.stop() } }
        _ = try await setup.db.modify([.create(record("a", ["title": .string(String(repeating: "x", count: 2000))]))], zone: "Z")
        let n = try #require(try await setup.drain().first)
        #expect(n.isPruned && n.notificationID != nil && n.subscriptionID == "q")
        #expect(n.recordFields == nil && n.containerIdentifier == nil && n.recordName == nil, "cid, record id, reason and af go first")
        #expect(n.alertBody == "Changed", "the alert stays when removing those was enough")
        #expect(n.payload.bytes.count <= 400)
    }

    @Test func firesOnceDeletesTheSubscriptionWithItsFirstNotification() async throws {
        let s = Subscription.query("once", Query(recordType: "Note"), firesOn: [.create], firesOnce: true, zoneID: Self.zone)
        let setup = try await Self.setUp([s])
        defer { Task { await setup.server.stop() } }
        _ = try await setup.db.modify([.create(Self.note("a", n: 1)), .create(Self.note("b", n: 1))], zone: "Z")
        #expect(try await setup.drain().map(\.recordName) == ["a"])
        #expect(try await setup.db.listSubscriptions().isEmpty)
        #expect(try await setup.db.lookupSubscriptions(["once"]).first?.error?.serverErrorCode == .notFound)
    }

    @Test func aWaitingPollGetsAWriteAtOnceAndQueuesAreBounded() async throws {
        var settings = NotificationSettings()
        // A hold well above the bound keeps the two cases apart on a loaded machine (the figure itself
        // belongs in a benchmark, not here).
        settings.holdSeconds = 10
        settings.maxQueued = 3
        let server = try await LiveServer.start(notifications: settings)
        defer { Task { await server.stop() } }
        let alice = server.client()
        let db = alice.database(.private)
        try await db.createZone("Z")
        _ = try await db.modifySubscriptions([SubscriptionOperation(.create, .zone("z", Self.zone))])
        let url = try #require(try await alice.createToken(apnsEnvironment: .development).webcourierURL)
        let started = Date()
        let waiting = Task { try await alice.pollWebcourier(url, timeout: 30) }
        try await Task.sleep(nanoseconds: 200_000_000)
        _ = try await server.client(user: LiveServer.alice).database(.private).modify([.create(Self.note("a", n: 1))], zone: "Z")
        let answer = try await waiting.value
        #expect(answer.notification?.kind == .recordZone)
        #expect(Date().timeIntervalSince(started) < 6, "answered when the write committed, not at the end of the hold")
        // Five notifications while nobody polls: the oldest two are dropped and counted.
        for i in 0..<5 { _ = try await db.modify([.create(Self.note("q\(i)", n: 1))], zone: "Z") }
        let first = try await alice.pollWebcourier(url)
        #expect(first.dropped == 2)
        // An unknown token is 404.
        await #expect(throws: CloudKitError.self) { try await alice.pollWebcourier(server.url + "/webcourier/1/nope") }
        // Bob's token never sees alice's notifications.
        let bob = server.client(user: LiveServer.bob)
        let bobURL = try #require(try await bob.createToken(apnsEnvironment: .development).webcourierURL)
        _ = try await db.modify([.create(Self.note("more", n: 1))], zone: "Z")
        let bobAnswer = try await bob.pollWebcourier(bobURL, timeout: 30)
        #expect(bobAnswer.notification == nil)
    }

    @Test func originExclusionHeaderSkipsTheNamedToken() async throws {
        var settings = NotificationSettings()
        settings.originExclusion = .header
        let setup = try await Self.setUp([Self.query], settings: settings)
        defer { Task { await setup.server.stop() } }
        let named = try await setup.alice.createToken(apnsEnvironment: .development)
        let token = try #require(named.apnsToken)
        let body = #"{"zoneID":{"zoneName":"Z"},"operations":[{"operationType":"create","record":{"recordName":"h","recordType":"Note","fields":{"n":{"value":9,"type":"INT64"}}}}]}"#
        let answer = try await setup.server.raw(.post, setup.server.path("private", "records/modify"), body: body, headers: [("X-CK-Device-Token", token)])
        #expect(answer.status == 200)
        // The setup's first token was not named: it is notified; the named one is not.
        #expect(try await setup.drain().map(\.recordName) == ["h"])
        #expect(try await setup.alice.pollWebcourier(named.webcourierURL!).notification == nil)
    }

    @Test func tokensNeedAUserAndRegisterBindsAnotherContainer() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let anonymous = server.client(user: nil)
        await #expect(throws: CloudKitError.self) { try await anonymous.createToken(apnsEnvironment: .development) }
        let alice = server.client()
        let token = try await alice.createToken(apnsEnvironment: .development)
        #expect(token.apnsToken?.isEmpty == false && token.webcourierURL?.hasPrefix(server.url + "/webcourier/1/") == true)
        let other = CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: server.url, container: "iCloud.com.example.Other", requestTimeout: 20, retryPolicy: .none),
            credentials: .apiToken(LiveServer.apiToken, webAuthToken: LiveServer.alice.token), transport: AsyncHTTPTransport())
        await #expect(throws: CloudKitError.self) { try await other.registerToken(APNsToken(apnsEnvironment: "development", apnsToken: "unknown")) }
        try await other.registerToken(APNsToken(apnsEnvironment: "development", apnsToken: token.apnsToken))
        let otherDB = other.database(.private)
        try await otherDB.createZone("Z")
        _ = try await otherDB.modifySubscriptions([SubscriptionOperation(.create, .zone("z", Self.zone))])
        _ = try await otherDB.modify([.create(Self.note("a", n: 1))], zone: "Z")
        let answer = try await alice.pollWebcourier(token.webcourierURL!)
        #expect(answer.notification?.containerIdentifier == "iCloud.com.example.Other")
        // The documented /database/ path is not where tokens live.
        let wrong = try await server.raw(.post, "/database/1/\(LiveServer.container)/development/public/tokens/create", body: "{\"apnsEnvironment\":\"development\"}")
        #expect(wrong.status == 404 || wrong.status == 405)
        // A container identifier that cannot be one is refused, as on /database/: no token is stored for it.
        let bad = try await server.raw(.post, "/device/1/garbage/development/tokens/create", body: "{\"apnsEnvironment\":\"development\"}")
        let badText = String(decoding: bad.body, as: UTF8.self)
        #expect(bad.status == 400 && badText.contains(#""serverErrorCode":"BAD_REQUEST""#), "\(bad.status) \(badText)")
    }
}
