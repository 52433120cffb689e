import Synchronization
@testable import CloudKitLocal
import CloudKitWeb
import Crypto
import Foundation
import Testing
import SQLiteDB

@Suite struct AuthTests {
    @Test func tokensAndUsersAreCheckedAsTheServiceChecksThem() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        await #expect { try await server.client(apiToken: "wrong").database(.public).listZones() } throws: {
            ($0 as? CloudKitError)?.serverErrorCode == .authenticationFailed && ($0 as? CloudKitError)?.httpStatus == 401
        }
        let missing = try await server.raw(.get, server.path("public", "zones/list"), query: "")
        #expect(missing.status == 401)
        // The public database reads with an API token only; private data and public writes need a user.
        #expect(try await server.client(user: nil).database(.public).listZones().count == 1)
        await #expect { try await server.client(user: nil).database(.private).listZones() } throws: { error in
            guard let error = error as? CloudKitError else { return false }
            return error.httpStatus == 421 && error.isAuthenticationRequired && error.redirectURL?.hasPrefix(server.url + "/signin") == true
        }
        await #expect { try await server.client(user: nil).database(.public).modify([.create(record("x"))]) } throws: {
            ($0 as? CloudKitError)?.serverErrorCode == .authenticationRequired
        }
        await #expect { try await server.client(user: (name: "mallory", token: "forged")).database(.private).listZones() } throws: {
            ($0 as? CloudKitError)?.serverErrorCode == .authenticationRequired
        }
        // ckSession is accepted as an alias of ckWebAuthToken.
        let session = try await server.raw(.get, server.path("private", "zones/list"), query: "ckAPIToken=\(LiveServer.apiToken)&ckSession=bob-web-token")
        #expect(session.status == 200)
    }

    @Test func rotatedTokensAreIssuedAndAccepted() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let client = server.client()
        _ = try await client.database(.private).listZones()
        let rotated = try #require(await client.webAuthToken)
        #expect(rotated != LiveServer.alice.token)
        _ = try await client.database(.private).modify([.create(record("after-rotation"))])
        // Old tokens keep working (observed live), and the rotated token names the same user.
        #expect(try await server.client().database(.private).lookup("after-rotation").record != nil)
    }

    @Test func usersNeverSeeEachOthersPrivateDatabases() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let alice = server.client().database(.private)
        let bob = server.client(user: LiveServer.bob).database(.private)
        try await alice.createZone("Secret")
        _ = try await alice.modify([.create(record("diary", ["text": .string("alice only")]))], zone: "Secret")
        _ = try await alice.modify([.create(record("plain"))])
        #expect(try await bob.listZones().compactMap(\.zone).map(\.zoneID.zoneName) == ["_defaultZone"])
        await #expect(throws: CloudKitError.self) { try await bob.lookup("diary", zone: "Secret") }
        #expect(try await bob.lookup("plain").error?.serverErrorCode == .notFound)
        #expect(try await bob.modify([RecordOperation(.forceUpdate, record("plain", ["x": .int64(1)]))]).isCompleteSuccess)
        #expect(try await alice.lookup("plain").record?.fields["x"] == nil, "bob's write landed in bob's own database")
    }

    @Test func serverToServerSignaturesAreVerified() async throws {
        let privateKey = P256.Signing.PrivateKey()
        let server = try await LiveServer.start(serverKeys: [(keyID: "KEY1", publicKeyPEM: privateKey.publicKey.pemRepresentation)])
        defer { Task { await server.stop() } }
        let key = ServerToServerKey(keyID: "KEY1", privateKey: privateKey)
        let s2s = server.client(credentials: .serverToServer(key)).database(.public)
        _ = try await s2s.modify([.create(record("by-key"))])
        let saved = try #require(try await s2s.lookup("by-key").record)
        #expect(saved.created?.userRecordName == LocalCloudKit.userRecordName(for: "server-key:KEY1"))
        #expect(try await s2s.listZones().count == 1, "GET with an empty body hash")
        await #expect { try await server.client(credentials: .serverToServer(key)).database(.private).listZones() } throws: { _ in true }
        let privateRaw = try await signed(server, key, "private", "zones/list", body: nil)
        #expect(privateRaw.status == 401)
        let sharedRaw = try await signed(server, key, "shared", "zones/list", body: nil)
        #expect(sharedRaw.status == 401, "server-to-server keys never reach the shared database either")
        #expect(try ErrorResponse.decode(from: sharedRaw.body).info.serverErrorCode == .authenticationFailed)
        // Forged (another key), replayed on another path, and stale signatures: 401 AUTHENTICATION_FAILED.
        let other = ServerToServerKey(keyID: "KEY1", privateKey: P256.Signing.PrivateKey())
        #expect(try await signed(server, other, "public", "zones/list", body: nil).status == 401)
        let headers = try key.headers(date: Date(), body: nil, subpath: server.path("public", "zones/list"))
        let replay = try await server.raw(.get, server.path("public", "subscriptions/list"), query: "", headers: headers)
        #expect(replay.status == 401)
        let stale = try await signed(server, key, "public", "zones/list", body: nil, date: Date().addingTimeInterval(-3600))
        #expect(stale.status == 401)
        #expect(try ErrorResponse.decode(from: stale.body).info.serverErrorCode == .authenticationFailed)
        // The hash-of-empty-body form of a GET is accepted too.
        let date = ISO8601.string(from: Date())
        let signature = try key.signature(date: date, body: [], subpath: server.path("public", "zones/list"))
        let alt = try await server.raw(.get, server.path("public", "zones/list"), query: "", headers: [
            ("X-Apple-CloudKit-Request-KeyID", "KEY1"), ("X-Apple-CloudKit-Request-ISO8601Date", date), ("X-Apple-CloudKit-Request-SignatureV1", signature),
        ])
        #expect(alt.status == 200)
    }

    func signed(_ server: LiveServer, _ key: ServerToServerKey, _ db: String, _ op: String, body: [UInt8]?, date: Date = Date()) async throws -> CloudKitWeb.HTTPResponse {
        let headers = try key.headers(date: date, body: body, subpath: server.path(db, op))
        return try await server.raw(body == nil ? .get : .post, server.path(db, op), query: "", body: body.map { String(decoding: $0, as: UTF8.self) }, headers: headers)
    }

    @Test func unknownEndpointsAndMethodsAnswerWithErrorDictionaries() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let unknown = try await server.raw(.post, server.path("private", "records/explode"), body: "{}")
        #expect(unknown.status == 404 && (try? ErrorResponse.decode(from: unknown.body))?.info.serverErrorCode == .notFound)
        let method = try await server.raw(.post, server.path("private", "zones/list"), body: "{}")
        #expect(method.status == 405 && method.header("Allow") == "GET")
        let env = try await server.raw(.get, "/database/1/\(LiveServer.container)/staging/private/zones/list")
        #expect(env.status == 400)
        let notAPI = try await server.raw(.get, "/favicon.ico")
        #expect(notAPI.status == 404)
    }
}

@Suite struct SubscriptionTests {
    @Test func listLookupModifyWithEveryKey() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("Z")
        _ = try await db.modify([.create(record("n", ["pinned": .int64(1)]))], zone: "Z")
        let info = NotificationInfo(alertBody: "b", alertLocalizationKey: "K", alertLocalizationArgs: ["pinned"], alertActionLocalizationKey: "A", alertLaunchImage: "i.png",
            soundName: "s", shouldBadge: true, shouldSendContentAvailable: true, additionalFields: ["pinned"], category: "C")
        let query = Subscription.query("q1", Query(recordType: "Note", filterBy: [Filter("pinned", .equals, .int64(1))], sortBy: [SortDescriptor("pinned")]),
            firesOn: [.create, .update], firesOnce: true, zoneID: ZoneID(zoneName: "Z"), notificationInfo: info)
        let zone = Subscription.zone("z1", ZoneID(zoneName: "Z"), notificationInfo: NotificationInfo(shouldSendContentAvailable: true))
        let created = try await db.modifySubscriptions([SubscriptionOperation(.create, query), SubscriptionOperation(.create, zone)])
        #expect(created.compactMap(\.subscription).count == 2)
        #expect(created[0].subscription?.notificationInfo == info && created[0].subscription?.zoneWide == true)
        let listed = try await db.listSubscriptions().compactMap(\.subscription)
        #expect(listed.map(\.subscriptionID) == ["q1", "z1"] && listed[0].query == query.query && listed[0].firesOnce == true)
        let lookup = try await db.lookupSubscriptions(["z1", "nope"])
        #expect(lookup[0].subscription?.zoneID?.zoneName == "Z" && lookup[1].error?.serverErrorCode == .notFound)
        // Same ID again returns the existing one; another ID with the same content fails as live does.
        #expect(try await db.modifySubscriptions([SubscriptionOperation(.create, query)])[0].subscription?.subscriptionID == "q1")
        var twin = query
        twin.subscriptionID = "q2"
        #expect(try await db.modifySubscriptions([SubscriptionOperation(.create, twin)])[0].error?.serverErrorCode == .internalError)
        twin.firesOn = [.create, .update, .delete]
        #expect(try await db.modifySubscriptions([SubscriptionOperation(.create, twin)])[0].subscription != nil, "different firesOn sets coexist")
        var updated = query
        updated.notificationInfo = NotificationInfo(alertBody: "changed")
        _ = try await db.modifySubscriptions([SubscriptionOperation(.update, updated)])
        #expect(try await db.lookupSubscriptions(["q1"])[0].subscription?.notificationInfo?.alertBody == "changed")
        let deleted = try await db.modifySubscriptions([.delete("z1"), .delete("nope")])
        #expect(deleted[0].subscription?.subscriptionID == "z1" && deleted[1].error?.serverErrorCode == .notFound)
        #expect(try await db.listSubscriptions().count == 2)
        // Zone subscriptions need an existing zone; not in the public database; not created in production.
        #expect(try await db.modifySubscriptions([SubscriptionOperation(.create, .zone("bad", ZoneID(zoneName: "Missing")))])[0].error?.serverErrorCode == .zoneNotFound)
        let prod = try await server.client(environment: .production).database(.private).modifySubscriptions([SubscriptionOperation(.create, zone)])
        #expect(prod[0].error?.reason?.contains("production") == true)
    }
}

@Suite struct ConcurrencyTests {
    /// 50 concurrent writers update the same records with the change tag they read: every stale write
    /// gets CONFLICT and no successful update is lost.
    @Test func fiftyWritersLoseNoUpdate() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let setup = server.client().database(.private)
        try await setup.createZone("C")
        let names = ["c0", "c1", "c2"]
        _ = try await setup.modify(names.map { .create(record($0, ["count": .int64(0)])) }, zone: "C")
        let outcomes = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for writer in 0..<50 {
                group.addTask {
                    let db = server.client().database(.private)
                    var ok = 0, conflicts = 0
                    for attempt in 0..<6 {
                        let name = names[(writer + attempt) % names.count]
                        guard let current = try await db.lookup(name, zone: "C").record, case .int64(let count)? = current.fields["count"] else { continue }
                        let result = try await db.modify([.update(record(name, tag: current.recordChangeTag, ["count": .int64(count + 1)]))], zone: "C")
                        if result.isCompleteSuccess { ok += 1 } else if result.failures.first?.serverErrorCode == .conflict { conflicts += 1 }
                    }
                    return (ok, conflicts)
                }
            }
            var total = (0, 0)
            for try await (ok, conflicts) in group { total = (total.0 + ok, total.1 + conflicts) }
            return total
        }
        var sum: Int64 = 0
        for name in names {
            if case .int64(let count)? = try await setup.lookup(name, zone: "C").record?.fields["count"] { sum += count }
        }
        #expect(outcomes.0 + outcomes.1 == 300, "every write either applied or got CONFLICT")
        #expect(sum == Int64(outcomes.0), "no lost update: \(outcomes.0) applied, \(outcomes.1) conflicts, counters sum to \(sum)")
        #expect(outcomes.1 > 0, "with 50 writers on 3 records some writes must be stale")
    }
}

@Suite struct InProcessTests {
    /// The embedded default: the same service through the in-process transport, with the demo seed.
    @Test func demoSeedThroughTheInProcessTransport() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ckl-demo-\(UUID().uuidString)").path
        var configuration = LocalServerConfiguration()
        DemoSeed.configure(&configuration)
        let service = try LocalCloudKit(store: try Store(directory: directory), configuration: configuration)
        #expect(try await DemoSeed.seedIfNeeded(service))
        #expect(try await DemoSeed.seedIfNeeded(service) == false, "seeding happens once")
        // A seed killed half-way (its data written, not marked complete) is written again from nothing at
        // the next start, not refused record by record (EXISTS) forever.
        _ = try await service.store.pool.write { db in try db.execute(sql: "DELETE FROM setting WHERE key = 'seed:demo'") }
        let said = Mutex(false)
        #expect(try await DemoSeed.seedIfNeeded(service, seeding: { said.withLock { $0 = true } }), "seeded again over the half-written demo")
        #expect(said.withLock { $0 }, "the caller is told a seed is starting (ckbrowse says so on the terminal)")
        let client = CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: "http://in-process", container: DemoSeed.container),
            credentials: .apiToken(DemoSeed.apiToken, webAuthToken: DemoSeed.webAuthToken), transport: InProcessTransport(service: service))
        let zones = try await client.database(.private).listZones().compactMap(\.zone).map(\.zoneID.zoneName)
        #expect(zones == ["_defaultZone", "Drafts", "Gallery"])
        var records = 0, tombstones = 0, types = Set<String>(), fieldTypes = Set<FieldType>()
        for try await page in client.database(.private).recordChangePages(zoneID: ZoneID(zoneName: "Gallery")) {
            for result in page.records {
                switch result {
                case .record(let r):
                    records += 1
                    types.insert(r.recordType ?? "")
                    fieldTypes.formUnion(r.fields.values.map(\.type))
                case .deleted: tombstones += 1
                case .failure: Issue.record("error item in the feed")
                }
            }
        }
        #expect(records >= 2_000 && tombstones > 0 && types.count >= 4)
        #expect(Set(FieldType.scalars + FieldType.lists).isSubset(of: fieldTypes), "every field type appears: \(fieldTypes)")
        let mei = try await client.database(.public).query(QueryRequest(query: Query(recordType: "Artist", filterBy: [Filter("firstName", .beginsWith, .string("Me"))])))
        #expect(mei.records.compactMap { $0.record?.fields["name"] } == [.string("Mei Chen")])
        let subs = try await client.database(.private).listSubscriptions().compactMap(\.subscription)
        #expect(subs.contains { $0.firesOnce == true } && subs.contains { $0.subscriptionType == .zone } && Set(subs.compactMap(\.firesOn).map(Set.init)).count >= 3)
    }
}
