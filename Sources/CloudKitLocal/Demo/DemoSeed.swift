import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB

/// The demo container: `iCloud.com.example.Gallery` (the reference's own example app), filled through
/// the public API so seeding runs the same code paths as every client.
public enum DemoSeed {
    public static let container = "iCloud.com.example.Gallery"
    /// Local demo credentials (not secrets: they open a local demo database only).
    public static let apiToken = "ckbrowse-demo-api-token"
    public static let userName = "demo"
    public static let webAuthToken = "ckbrowse-demo-web-auth-token"
    public static let userEmail = "demo@example.com"
    /// A second user: `demo` shares the Drafts zone (read-write, accepted) and one exhibition
    /// (read-only, invited: accepting it is left to the guest) with them.
    public static let guestName = "guest"
    public static let guestWebAuthToken = "ckbrowse-demo-guest-token"
    public static let guestEmail = "guest@example.com"
    /// The exhibition shared with the guest, and its share record.
    public static let sharedRecordName = "exhibition-1"
    public static let sharedRecordShareName = "share-exhibition-1"

    /// Adds the demo credentials to a configuration.
    public static func configure(_ configuration: inout LocalServerConfiguration) {
        configuration.apiTokens.append(apiToken)
        configuration.credentialContainers[apiToken] = container
        configuration.users.append((name: userName, token: webAuthToken))
        configuration.users.append((name: guestName, token: guestWebAuthToken))
        configuration.userContacts[userName] = UserContact(email: userEmail)
        configuration.userContacts[guestName] = UserContact(email: guestEmail)
    }

    /// Seeds once; later calls see the marker and return false.
    @discardableResult
    /// `seeding` is called once, before anything is written, when the container is seeded now (a first
    /// start takes seconds: the caller says so).
    public static func seedIfNeeded(_ service: LocalCloudKit, environment: CloudKitEnvironment = .development,
                                    seeding: (@Sendable () -> Void)? = nil) async throws -> Bool {
        // The development seed keeps the key earlier versions wrote.
        let key = environment == .development ? "seed:demo" : "seed:demo:\(environment.rawValue)"
        let sharesKey = key + ":shares"
        // Both marks in one read: every start asks, and the browser's first frame waits for it.
        let marks = try await service.store.pool.read { db in
            Set(try String.fetchAll(db, sql: "SELECT key FROM setting WHERE key IN (?, ?)", arguments: [key, sharesKey]))
        }
        func mark(_ key: String) async throws {
            try await service.store.pool.write { db in
                try db.execute(sql: "INSERT OR REPLACE INTO setting (key, value) VALUES (?, '1')", arguments: [key])
            }
        }
        func client(_ token: String) -> CloudKitClient {
            CloudKitClient(
                configuration: CloudKitConfiguration(serverURL: "http://in-process", container: container, environment: environment),
                credentials: .apiToken(apiToken, webAuthToken: token), transport: InProcessTransport(service: service))
        }
        var didSeed = false
        if !marks.contains(key) {
            seeding?()
            // A seed stopped half-way (the process killed while it wrote) left some of the demo behind:
            // it is written again from nothing, not refused record by record (EXISTS) at every start.
            // Only the demo's own container and environment, and only while its seed is not complete.
            _ = try await service.store.pool.write { db in
                try LocalCloudKit.deleteData(db, container: container, environment: environment)
            }
            // Production takes the development schema by a deploy, as on CloudKit: seed development first.
            if environment != .development {
                try await seedIfNeeded(service, environment: .development)
                try await service.deploySchema(container: container)
            }
            try await seed(client(webAuthToken))
            // The browser lists a record type by an unfiltered query, which needs `___recordID`
            // QUERYABLE; a developer adds that index (and sorts by time) in the Console: so does the demo.
            if environment == .development {
                try await service.addSystemIndexes(container: container, environment: .development)
                // One reference field without its QUERYABLE index (Artwork.previousOwners), the others with
                // it: a staged delete's impact is counted by the server where it can be asked, and the
                // browser says what it could not ask.
                try await service.removeIndex(.queryable, recordType: "Artwork", field: "previousOwners", container: container, environment: .development)
            }
            try await mark(key)
            didSeed = true
        }
        // The shares came later: a demo seeded by an earlier version gets them on its next start.
        if didSeed || !marks.contains(sharesKey) {
            try await share(client(webAuthToken), client(guestWebAuthToken))
            try await mark(sharesKey)
            didSeed = true
        }
        return didSeed
    }

    static let artists: [(String, String, String)] = [
        ("mei-chen", "Mei Chen", "Shanghai"), ("hokusai", "葛飾 北斎", "Edo"), ("frida-kahlo", "Frida Kahlo", "Coyoacán"),
        ("yayoi-kusama", "草間 彌生", "Matsumoto"), ("georgia-okeeffe", "Georgia O'Keeffe", "Sun Prairie"),
        ("ai-weiwei", "艾未未", "Beijing"), ("claude-monet", "Claude Monet", "Paris"), ("lee-ufan", "이우환", "Haman"),
        ("bisa-butler", "Bisa Butler", "Orange"), ("olafur-eliasson", "Ólafur Elíasson", "Copenhagen"),
    ]

    static func seed(_ client: CloudKitClient) async throws {
        let start: Int64 = 1_700_000_000_000
        var rng = SeedRandom(seed: 7)

        // Public database: artists and some artworks in the default zone.
        let publicDB = client.database(.public)
        var publicOps: [RecordOperation] = artists.map { id, name, city in
            .create(Record(recordName: "artist-\(id)", recordType: "Artist", fields: [
                "name": .string(name), "firstName": .string(String(name.split(separator: " ").first ?? "")),
                "city": .string(city), "born": .timestamp(-1_000_000_000_000 + Int64(id.count) * 31_536_000_000),
            ]))
        }
        for i in 0..<40 {
            let artist = artists[i % artists.count]
            publicOps.append(.create(Record(recordName: "public-artwork-\(i)", recordType: "Artwork", fields: [
                "title": .string("Study \(i) by \(artist.1)"), "year": .int64(1850 + Int64(i * 4)),
                "artist": .reference(Reference(recordName: "artist-\(artist.0)", action: .noAction)),
            ])))
        }
        try check(await publicDB.modifyRecords(ModifyRecordsRequest(operations: publicOps, atomic: false)))

        // Private database of the demo user: zones Gallery and Drafts.
        let privateDB = client.database(.private)
        _ = try await privateDB.modifyZones([ZoneOperation(.create, ZoneID(zoneName: "Gallery")), ZoneOperation(.create, ZoneID(zoneName: "Drafts"))])
        let gallery = ZoneID(zoneName: "Gallery")
        var ops: [RecordOperation] = []
        for (id, name, city) in artists {
            ops.append(.create(Record(recordName: "artist-\(id)", recordType: "Artist", fields: [
                "name": .string(name), "city": .string(city),
                "studio": .location(Location(latitude: 35 + rng.unit() * 10, longitude: 100 + rng.unit() * 40, horizontalAccuracy: 10)),
                "aliases": .stringList([name.uppercased(), String(name.reversed())]),
            ])))
        }
        // Images and photos are real files, uploaded as a client does (assets/upload, then the bytes).
        let imageFor = (0..<1_700).filter { $0 % 11 == 0 }, photosFor = (0..<1_700).filter { $0 % 17 == 0 }
        var images: [Int: Asset] = [:], photos: [Int: Asset] = [:]
        let wanted = imageFor.map { (String(cFormat: "artwork-%04d", $0), "image", $0) } + photosFor.map { (String(cFormat: "artwork-%04d", $0), "photos", $0) }
        for chunk in stride(from: 0, to: wanted.count, by: 200) {
            let part = wanted[chunk..<min(chunk + 200, wanted.count)]
            let tokens = try await privateDB.requestAssetUploads(
                part.map { AssetUploadField(recordName: $0.0, recordType: "Artwork", fieldName: $0.1) }, zoneID: gallery)
            for (token, item) in zip(tokens, part) {
                let asset = try await client.uploadAssetBytes(Self.picture(item.2, photo: item.1 == "photos"), to: token.url)
                if item.1 == "image" { images[item.2] = asset } else { photos[item.2] = asset }
            }
        }
        let titles = ["Sunrise", "Wave", "Self-portrait", "Infinity Net", "Water Lilies", "Untitled", "夜の桜", "🌊 Great Wave", "Pumpkin 🎃", "Red Canna"]
        let longText = String(repeating: "A long description that keeps going so the detail view has to wrap it. ", count: 12)
        for i in 0..<1_700 {
            let artist = artists[i % artists.count]
            let created = start + Int64(i) * 3_600_000
            var fields: [String: FieldValue] = [
                "title": .string("\(titles[i % titles.count]) No. \(i)"),
                "year": .int64(1800 + Int64(i % 220)),
                "price": .double(Double(Int(rng.unit() * 1_000_000)) / 100),
                "acquired": .timestamp(created),
                "artist": .reference(Reference(recordName: "artist-\(artist.0)", action: .deleteSelf)),
                "tags": .stringList(["gallery", i % 2 == 0 ? "oil" : "print", "room-\(i % 12)"]),
                "dimensionsCm": .doubleList([Double(30 + i % 70), Double(40 + i % 50)]),
                "onDisplay": .int64(i % 3 == 0 ? 1 : 0),
            ]
            if i % 5 == 0 { fields["notes"] = .string("Line one of the condition report.\nLine two: 東京, 😀, café.\n\n" + longText) }
            if i % 7 == 0 { fields["thumbnail"] = .bytes(Data((0..<48).map { UInt8(($0 * 7 + i) % 256) })) }
            if i % 11 == 0 {
                fields["image"] = images[i].map(FieldValue.asset)
            }
            if i % 13 == 0 {
                fields["location"] = .location(Location(latitude: 48.8606 + Double(i) / 10_000, longitude: 2.3376, horizontalAccuracy: 5, altitude: 35, timestamp: created))
            }
            if i % 17 == 0 {
                fields["loans"] = .timestampList([created + 86_400_000, created + 172_800_000])
                fields["editions"] = .int64List([1, 2, 3, Int64(i)])
                fields["scans"] = .bytesList([Data([1, 2, 3]), Data([4, 5])])
                fields["previousOwners"] = .referenceList([Reference(recordName: "artist-\(artists[(i + 1) % artists.count].0)", action: .noAction)])
                fields["photos"] = photos[i].map { .assetList([$0]) }
                fields["sites"] = .locationList([Location(latitude: 35.68, longitude: 139.76), Location(latitude: 51.5, longitude: -0.12)])
            }
            ops.append(.create(Record(recordName: String(cFormat: "artwork-%04d", i), recordType: "Artwork", fields: fields)))
        }
        for i in 0..<150 {
            let works = (0..<4).map { Reference(recordName: String(cFormat: "artwork-%04d", (i * 11 + $0 * 3) % 1_700), action: .noAction) }
            ops.append(.create(Record(recordName: "exhibition-\(i)", recordType: "Exhibition", fields: [
                "name": .string(i % 4 == 0 ? "展覧会 \(i): 浮世絵と現代" : "Exhibition \(i)"),
                "opens": .timestamp(start + Int64(i) * 604_800_000), "works": .referenceList(works),
                "visitors": .int64(Int64(i) * 1_234_567_890_123), "rating": .double(Double(i % 50) / 10),
            ])))
        }
        for i in 0..<200 {
            ops.append(.create(Record(recordName: "note-\(i)", recordType: "Note", fields: [
                "text": .string(i % 3 == 0 ? "Call the framer ☎️ about frame \(i)\nThen update the catalogue." : "Note \(i): check lighting in room \(i % 12)"),
                "pinned": .int64(i % 9 == 0 ? 1 : 0),
            ])))
        }
        for chunk in stride(from: 0, to: ops.count, by: 200) {
            try check(await privateDB.modifyRecords(ModifyRecordsRequest(operations: Array(ops[chunk..<min(chunk + 200, ops.count)]), zoneID: gallery)))
        }
        // Some deleted records, so the change feed has tombstones.
        let deletions = (0..<40).map { RecordOperation.forceDelete(recordName: "note-\($0 * 5)") }
        try check(await privateDB.modifyRecords(ModifyRecordsRequest(operations: deletions, zoneID: gallery)))
        // Some updated records, so change tags and modified times differ from created ones.
        let updates = (0..<25).map { i in
            RecordOperation(.forceUpdate, Record(recordName: String(cFormat: "artwork-%04d", i * 3), fields: ["onDisplay": .int64(1)]))
        }
        try check(await privateDB.modifyRecords(ModifyRecordsRequest(operations: updates, zoneID: gallery)))

        let drafts = (0..<24).map { i in
            RecordOperation.create(Record(recordName: "draft-\(i)", recordType: "Note", fields: [
                "text": .string("Draft \(i) — ideas for the spring show"), "pinned": .int64(0),
            ]))
        }
        try check(await privateDB.modifyRecords(ModifyRecordsRequest(operations: drafts, zoneID: ZoneID(zoneName: "Drafts"))))

        // Subscriptions of every kind.
        let info = NotificationInfo(alertBody: "An artwork changed", soundName: "default", shouldBadge: true, shouldSendContentAvailable: true, additionalFields: ["title", "year"], category: "ARTWORK")
        let privateSubs: [SubscriptionOperation] = [
            SubscriptionOperation(.create, .query("artwork-changes", Query(recordType: "Artwork"), firesOn: [.create, .update, .delete], zoneID: gallery, notificationInfo: info)),
            SubscriptionOperation(.create, .query("pinned-notes", Query(recordType: "Note", filterBy: [Filter("pinned", .equals, .int64(1))], sortBy: [SortDescriptor("text")]), firesOn: [.update], zoneWide: true,
                notificationInfo: NotificationInfo(alertLocalizationKey: "NOTE_PINNED", alertLocalizationArgs: ["text"], alertActionLocalizationKey: "OPEN", shouldSendContentAvailable: false))),
            SubscriptionOperation(.create, .query("first-new-exhibition", Query(recordType: "Exhibition", filterBy: [Filter("rating", .greaterThanOrEquals, .double(4.5))]), firesOn: [.create], firesOnce: true, zoneID: gallery,
                notificationInfo: NotificationInfo(alertBody: "A highly rated exhibition was added", alertLaunchImage: "launch.png"))),
            SubscriptionOperation(.create, .query("artist-removed", Query(recordType: "Artist"), firesOn: [.delete], zoneID: gallery, notificationInfo: NotificationInfo(shouldSendContentAvailable: true))),
            SubscriptionOperation(.create, .zone("gallery-zone", gallery, notificationInfo: NotificationInfo(shouldSendContentAvailable: true))),
        ]
        _ = try await privateDB.modifySubscriptions(privateSubs)
        _ = try await publicDB.modifySubscriptions([
            SubscriptionOperation(.create, .query("new-artists", Query(recordType: "Artist", filterBy: [Filter("name", .beginsWith, .string("M"))]), firesOn: [.create, .update],
                notificationInfo: NotificationInfo(alertBody: "New artist", additionalFields: ["name"]))),
        ])
    }

    /// The shares: Drafts as a whole (read-write, accepted by the guest) and one exhibition
    /// (read-only, left invited). A demo the user has changed since may refuse one (its zone or
    /// record gone, already shared): that share is left out, never the demo.
    static func share(_ owner: CloudKitClient, _ guest: CloudKitClient) async throws {
        let privateDB = owner.database(.private)
        let invite = ShareParticipant.invite(UserLookupInfo(emailAddress: guestEmail), permission: .readWrite)
        let drafts = try? await privateDB.modifyRecords(ModifyRecordsRequest(
            operations: [.create(.share(of: nil, participants: [invite]))], zoneID: ZoneID(zoneName: "Drafts")))
        let gallery = ZoneID(zoneName: "Gallery")
        if let root = try? await privateDB.lookupRecords([sharedRecordName], zoneID: gallery).first?.record {
            let readOnly = ShareParticipant.invite(UserLookupInfo(emailAddress: guestEmail), permission: .readOnly)
            _ = try? await privateDB.modifyRecords(ModifyRecordsRequest(
                operations: [.create(.share(of: RecordLink(recordName: root.recordName, recordChangeTag: root.recordChangeTag), recordName: sharedRecordShareName, participants: [readOnly]))],
                zoneID: gallery))
        }
        if let guid = drafts?.results.first?.record?.shortGUID {
            _ = try? await guest.database(.shared).acceptShares([ShortGUID(value: guid, shouldFetchRootRecord: false)])
        }
    }

    /// A small SVG picture of artwork `i` (a few hundred bytes to a few KB), different for each.
    static func picture(_ i: Int, photo: Bool) -> [UInt8] {
        var rng = SeedRandom(seed: UInt64(i * 2 + (photo ? 1 : 0)))
        func color() -> String { String(cFormat: "#%02x%02x%02x", Int(rng.unit() * 255), Int(rng.unit() * 255), Int(rng.unit() * 255)) }
        var svg = #"<svg xmlns="http://www.w3.org/2000/svg" width="320" height="240" viewBox="0 0 320 240">"#
        svg += #"<rect width="320" height="240" fill="\#(color())"/>"#
        for _ in 0..<(3 + i % 20) {
            svg += #"<circle cx="\#(Int(rng.unit() * 320))" cy="\#(Int(rng.unit() * 240))" r="\#(5 + Int(rng.unit() * 60))" fill="\#(color())" opacity="0.7"/>"#
        }
        svg += #"<text x="10" y="230" font-family="sans-serif" font-size="14">\#(photo ? "Photo" : "Artwork") \#(i)</text></svg>"#
        return Array(svg.utf8)
    }

    static func check(_ result: ModifyRecordsResult) throws {
        if let failure = result.failures.first {
            throw CloudKitError(kind: .server, operation: "seed", serverErrorCode: failure.serverErrorCode, reason: failure.reason)
        }
    }
}

/// Deterministic randomness for the seed.
struct SeedRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func unit() -> Double {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Double(state % 1_000_000) / 1_000_000
    }
}
