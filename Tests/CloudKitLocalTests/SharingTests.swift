import CloudKitLocal
import CloudKitWeb
import Foundation
import Testing

/// Sharing against the loopback server with two users: alice owns, bob participates.
@Suite struct SharingTests {
    static let bobEmail = "bob@example.com"

    func record(_ result: RecordResult?) -> Record? { result?.record }

    /// users/caller, users/discover (GET and POST), users/lookup/email and users/lookup/id.
    @Test func usersAreFoundByEmailPhoneAndRecordName() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.public)
        let alice = LocalCloudKit.userRecordName(for: "alice"), bob = LocalCloudKit.userRecordName(for: "bob")
        let me = try #require(try await db.callerIdentity())
        #expect(me.userRecordName == alice && me.lookupInfo?.emailAddress == "alice@example.com")
        let found = try await db.discoverUsers([UserLookupInfo(emailAddress: "BOB@example.com"), UserLookupInfo(phoneNumber: "+15550100"), UserLookupInfo(emailAddress: "nobody@example.com")])
        #expect(found.map(\.userRecordName) == [bob, alice], "by email (any case) and by phone digits; unknown ones left out")
        #expect(try await db.discoverAllUsers().map(\.userRecordName) == [bob], "everyone but the caller")
        let byEmail = try await db.lookupUsers(emails: [Self.bobEmail])
        #expect(byEmail == [User(userRecordName: bob, firstName: "bob", emailAddress: Self.bobEmail)])
        #expect(try await db.lookupUsers(recordNames: [alice]).first?.emailAddress == nil, "id look-ups carry no email")
        // Not signed in: refused as the other users endpoints are.
        await #expect(throws: CloudKitError.self) { _ = try await server.client(user: nil).database(.public).callerIdentity() }
    }

    /// A zone-wide share: invited by email, resolved, accepted; READ_ONLY refuses every write (an
    /// atomic batch applies nothing); READ_WRITE edits show in the owner's feed; removing the
    /// participant revokes access at once.
    @Test func aZoneShareFromInvitationToRevocation() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let owner = server.client().database(.private)
        let guest = server.client(user: LiveServer.bob).database(.shared)
        let zone = ZoneID(zoneName: "Notes")
        _ = try await owner.modifyZones([ZoneOperation(.create, zone)])
        _ = try await owner.modifyRecords(ModifyRecordsRequest(operations: (1...3).map { .create(Record(recordName: "n\($0)", recordType: "Note", fields: ["text": .string("note \($0)")])) }, zoneID: zone))
        let created = try await owner.modifyRecords(ModifyRecordsRequest(
            operations: [.create(.share(of: nil, participants: [.invite(UserLookupInfo(emailAddress: Self.bobEmail), permission: .readOnly)]))], zoneID: zone))
        let share = try #require(record(created.results.first), "\(created)")
        #expect(share.recordName == Record.zoneShareName && share.isShare)
        let guid = try #require(share.shortGUID)
        #expect(share.owner?.type == .owner && share.owner?.userIdentity?.userRecordName == LocalCloudKit.userRecordName(for: "alice"))
        #expect(share.participants?.map(\.acceptanceStatus) == [.accepted, .invited])
        #expect(share.currentUserParticipant?.type == .owner && share.publicPermission == .noPermission)

        // Before accepting, bob's shared database is empty.
        #expect(try await guest.listZones().isEmpty)
        let resolved = try await guest.resolveShares([ShortGUID(value: guid, shouldFetchRootRecord: false)])
        guard case .result(let metadata)? = resolved.first else { Issue.record("resolve: \(resolved)"); return }
        #expect(metadata.databaseScope == "SHARED" && metadata.participantStatus == .invited && metadata.participantPermission == .readOnly)
        #expect(metadata.zoneID?.ownerRecordName == LocalCloudKit.userRecordName(for: "alice") && metadata.webpageURL == server.url + "/share/" + guid)
        let accepted = try await guest.acceptShares([ShortGUID(value: guid, shouldFetchRootRecord: false)])
        guard case .result(let after)? = accepted.first else { Issue.record("accept: \(accepted)"); return }
        #expect(after.participantStatus == .accepted)

        // The owner's zone, with its owner, in bob's shared database.
        let sharedZone = ZoneID(zoneName: "Notes", ownerRecordName: LocalCloudKit.userRecordName(for: "alice"))
        #expect(try await guest.listZones().compactMap(\.zone).map(\.zoneID.ownerRecordName) == [sharedZone.ownerRecordName])
        let dbChanges = try await guest.databaseChanges()
        #expect(dbChanges.zones.map(\.zoneID.zoneName) == ["Notes"])
        var names: [String] = []
        for try await page in guest.zoneChangePages(zoneID: sharedZone) { names += page.records.compactMap(\.recordName) }
        #expect(Set(names) == ["n1", "n2", "n3", Record.zoneShareName])
        let n1 = try #require(record(try await guest.lookupRecords(["n1"], zoneID: sharedZone).first))

        // READ_ONLY: each write refused with ACCESS_DENIED; the atomic batch applies nothing.
        let refused = try await guest.modifyRecords(ModifyRecordsRequest(operations: [
            .update(Record(recordName: "n1", recordChangeTag: n1.recordChangeTag, fields: ["text": .string("bob was here")])),
            .create(Record(recordName: "n4", recordType: "Note")),
        ], zoneID: sharedZone))
        #expect(refused.httpStatus == 400 && refused.results.allSatisfy { $0.error?.serverErrorCode == .accessDenied })
        #expect(record(try await owner.lookupRecords(["n1"], zoneID: zone).first)?.fields["text"] == .string("note 1"))

        // READ_WRITE: bob's edit lands, in the owner's feed, attributed to bob.
        let current = try #require(record(try await owner.lookupRecords([Record.zoneShareName], zoneID: zone).first))
        var upgraded = Record(recordName: Record.zoneShareName, recordType: Record.shareRecordType, recordChangeTag: current.recordChangeTag)
        upgraded.participants = [.invite(UserLookupInfo(emailAddress: Self.bobEmail), permission: .readWrite)]
        let saved = try await owner.modifyRecords(ModifyRecordsRequest(operations: [.update(upgraded)], zoneID: zone))
        #expect(record(saved.results.first)?.participants?.last.map { ($0.permission, $0.acceptanceStatus) }.map { $0 == (.readWrite, .accepted) } == true,
                "the accepted participant keeps their status: \(saved)")
        let edit = try await guest.modifyRecords(ModifyRecordsRequest(operations: [
            .update(Record(recordName: "n1", recordChangeTag: n1.recordChangeTag, fields: ["text": .string("bob was here")])),
        ], zoneID: sharedZone))
        #expect(edit.failures.isEmpty, "\(edit)")
        let seen = try #require(record(try await owner.lookupRecords(["n1"], zoneID: zone).first))
        #expect(seen.fields["text"] == .string("bob was here") && seen.modified?.userRecordName == LocalCloudKit.userRecordName(for: "bob"))
        // Bob cannot change the share itself.
        let hijack = try await guest.modifyRecords(ModifyRecordsRequest(operations: [.forceDelete(recordName: Record.zoneShareName)], zoneID: sharedZone))
        #expect(hijack.results.first?.error?.serverErrorCode == .accessDenied)

        // Removed: the zone goes from bob's shared database at once, and changes/database says so.
        var removed = Record(recordName: Record.zoneShareName, recordType: Record.shareRecordType, recordChangeTag: record(saved.results.first)?.recordChangeTag)
        removed.participants = []
        #expect(try await owner.modifyRecords(ModifyRecordsRequest(operations: [.update(removed)], zoneID: zone)).failures.isEmpty)
        #expect(try await guest.listZones().isEmpty)
        let gone = try await guest.databaseChanges(syncToken: dbChanges.syncToken)
        #expect(gone.zones.first?.zoneID.zoneName == "Notes" && gone.zones.first?.deleted == true)
        await #expect(throws: CloudKitError.self) { _ = try await guest.lookupRecords(["n1"], zoneID: sharedZone) }
    }

    /// A record share reaches its root's hierarchy only; a participant creates under a shared parent;
    /// deleting the root deletes its share; nobody else can resolve a private share.
    @Test func aRecordShareReachesItsHierarchyOnly() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let owner = server.client().database(.private)
        let guest = server.client(user: LiveServer.bob).database(.shared)
        let zone = ZoneID(zoneName: "Trips")
        _ = try await owner.modifyZones([ZoneOperation(.create, zone)])
        var day1 = Record(recordName: "day-1", recordType: "Day")
        day1.parent = RecordLink(recordName: "trip")
        let made = try await owner.modifyRecords(ModifyRecordsRequest(operations: [
            .create(Record(recordName: "trip", recordType: "Trip", fields: ["title": .string("Kyoto")])), .create(day1),
            .create(Record(recordName: "other", recordType: "Trip")),
        ], zoneID: zone))
        let trip = try #require(record(made.results.first))
        // The share needs the root's current tag (forRecord carries it).
        let stale = try await owner.modifyRecords(ModifyRecordsRequest(operations: [
            .create(.share(of: RecordLink(recordName: "trip", recordChangeTag: "stale"), participants: [.invite(UserLookupInfo(emailAddress: Self.bobEmail), permission: .readWrite)])),
        ], zoneID: zone))
        #expect(stale.results.first?.error?.serverErrorCode == .conflict)
        let created = try await owner.modifyRecords(ModifyRecordsRequest(operations: [
            .create(.share(of: RecordLink(recordName: "trip", recordChangeTag: trip.recordChangeTag), participants: [.invite(UserLookupInfo(emailAddress: Self.bobEmail), permission: .readWrite)])),
        ], zoneID: zone))
        let share = try #require(record(created.results.first), "\(created)")
        let root = try #require(record(try await owner.lookupRecords(["trip"], zoneID: zone).first))
        #expect(root.share?.recordName == share.recordName && root.shortGUID == share.shortGUID, "the root links its share and carries its shortGUID")
        // A second share of the same root is refused.
        let twice = try await owner.modifyRecords(ModifyRecordsRequest(operations: [.create(.share(of: RecordLink(recordName: "trip", recordChangeTag: root.recordChangeTag), recordName: "again"))], zoneID: zone))
        #expect(twice.results.first?.error?.serverErrorCode == .badRequest)

        let resolved = try await guest.acceptShares([ShortGUID(value: share.shortGUID!, shouldFetchRootRecord: true, rootRecordDesiredKeys: ["title"])])
        guard case .result(let metadata)? = resolved.first else { Issue.record("\(resolved)"); return }
        #expect(metadata.rootRecordName == "trip" && metadata.rootRecord?.fields["title"] == .string("Kyoto"))
        let shared = ZoneID(zoneName: "Trips", ownerRecordName: LocalCloudKit.userRecordName(for: "alice"))
        var names: [String] = []
        for try await page in guest.recordChangePages(zoneID: shared) { names += page.records.compactMap(\.recordName) }
        #expect(Set(names) == ["trip", "day-1", share.recordName], "the hierarchy and its share, not 'other': \(names)")
        #expect(try await guest.lookupRecords(["other"], zoneID: shared).first?.error?.serverErrorCode == .notFound)
        // Unfiltered queries need `___recordID` QUERYABLE, which just-in-time creation does not give (as on CloudKit).
        try await server.service.addSystemIndexes(container: LiveServer.container, environment: .development)
        let query = try await guest.query(QueryRequest(query: Query(recordType: "Trip"), zoneID: shared))
        #expect(query.records.map(\.recordName) == ["trip"])
        // New records join the hierarchy under a shared parent; elsewhere they are refused.
        var day2 = Record(recordName: "day-2", recordType: "Day")
        day2.parent = RecordLink(recordName: "trip")
        let writes = try await guest.modifyRecords(ModifyRecordsRequest(operations: [.create(day2), .create(Record(recordName: "loose", recordType: "Day"))], zoneID: shared, atomic: false))
        #expect(writes.results.first?.record != nil && writes.results.last?.error?.serverErrorCode == .accessDenied, "\(writes)")

        // Someone not invited to a private share cannot resolve it.
        let zone2 = ZoneID(zoneName: "Private")
        _ = try await owner.modifyZones([ZoneOperation(.create, zone2)])
        let secret = try await owner.modifyRecords(ModifyRecordsRequest(operations: [.create(.share(of: nil, participants: [.invite(UserLookupInfo(emailAddress: "carol@example.com"), permission: .readOnly)]))], zoneID: zone2))
        let denied = try await guest.resolveShares([ShortGUID(value: try #require(record(secret.results.first)?.shortGUID), shouldFetchRootRecord: false)])
        guard case .failure(let error)? = denied.first else { Issue.record("\(denied)"); return }
        #expect(error.serverErrorCode == .accessDenied)

        // Deleting the root deletes its share, and bob's access with it.
        let latest = try #require(record(try await owner.lookupRecords(["trip"], zoneID: zone).first))
        #expect(try await owner.modifyRecords(ModifyRecordsRequest(operations: [.delete(recordName: "trip", recordChangeTag: latest.recordChangeTag)], zoneID: zone)).failures.isEmpty)
        #expect(try await owner.lookupRecords([share.recordName], zoneID: zone).first?.error?.serverErrorCode == .notFound)
        #expect(try await guest.listZones().isEmpty)
    }

    /// A participant's database subscription, saved in their shared database, fires when the share
    /// is accepted and when the owner writes to the shared zone (dbs 3), and stops with the share.
    @Test func databaseSubscriptionsInTheSharedDatabaseFireForTheParticipant() async throws {
        var settings = NotificationSettings()
        settings.holdSeconds = 0.2
        let server = try await LiveServer.start(notifications: settings)
        defer { Task { await server.stop() } }
        let owner = server.client().database(.private)
        let bobClient = server.client(user: LiveServer.bob)
        let guest = bobClient.database(.shared)
        let saved = try await guest.modifySubscriptions([SubscriptionOperation(.create, Subscription(subscriptionID: "shared-db", subscriptionType: .database))])
        #expect(saved.first?.subscription != nil, "\(saved)")
        let url = try #require(try await bobClient.createToken(apnsEnvironment: .development).webcourierURL)
        func drain() async throws -> [PushNotification] {
            var all: [PushNotification] = []
            while let n = try await bobClient.pollWebcourier(url, timeout: 10).notification { all.append(n) }
            return all
        }
        let zone = ZoneID(zoneName: "Notes")
        _ = try await owner.modifyZones([ZoneOperation(.create, zone)])
        let made = try await owner.modifyRecords(ModifyRecordsRequest(operations: [.create(.share(of: nil, participants: [.invite(UserLookupInfo(emailAddress: Self.bobEmail), permission: .readOnly)]))], zoneID: zone))
        #expect(try await drain().isEmpty, "nothing yet: bob has not accepted")
        _ = try await guest.acceptShares([ShortGUID(value: try #require(record(made.results.first)?.shortGUID), shouldFetchRootRecord: false)])
        let accepted = try await drain()
        #expect(accepted.map(\.kind) == [.database] && accepted.first?.database == .shared && accepted.first?.subscriptionID == "shared-db")
        _ = try await owner.modifyRecords(ModifyRecordsRequest(operations: [.create(Record(recordName: "n1", recordType: "Note"))], zoneID: zone))
        #expect(try await drain().map(\.database) == [.shared], "the owner's write reaches the participant")
        // Unshared zones of the owner do not.
        let other = ZoneID(zoneName: "Mine")
        _ = try await owner.modifyZones([ZoneOperation(.create, other)])
        _ = try await owner.modifyRecords(ModifyRecordsRequest(operations: [.create(Record(recordName: "m1", recordType: "Note"))], zoneID: other))
        #expect(try await drain().isEmpty)
    }

    /// A public share: anyone signed in may resolve and accept it, as a PUBLIC_USER with the public
    /// permission; deleting the share revokes it at once.
    @Test func aPublicShareIsAcceptedByAnyoneAndEndsWithTheShare() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let owner = server.client().database(.private)
        let guest = server.client(user: LiveServer.bob).database(.shared)
        let zone = ZoneID(zoneName: "Open")
        _ = try await owner.modifyZones([ZoneOperation(.create, zone)])
        let made = try await owner.modifyRecords(ModifyRecordsRequest(operations: [.create(.share(of: nil, publicPermission: .readOnly))], zoneID: zone))
        let share = try #require(record(made.results.first))
        #expect(share.publicPermission == .readOnly && share.participants?.count == 1, "only the owner so far")
        let accepted = try await guest.acceptShares([ShortGUID(value: try #require(share.shortGUID), shouldFetchRootRecord: false)])
        guard case .result(let result)? = accepted.first else { Issue.record("\(accepted)"); return }
        #expect(result.participantType == .publicUser && result.participantPermission == .readOnly && result.participantStatus == .accepted)
        #expect(try await guest.listZones().compactMap(\.zone).map(\.zoneID.zoneName) == ["Open"])
        let current = try #require(record(try await owner.lookupRecords([Record.zoneShareName], zoneID: zone).first))
        #expect(current.participants?.contains { $0.type == .publicUser && $0.userIdentity?.userRecordName == LocalCloudKit.userRecordName(for: "bob") } == true)
        // Stop sharing: the share record deleted.
        #expect(try await owner.modifyRecords(ModifyRecordsRequest(operations: [.delete(recordName: Record.zoneShareName, recordChangeTag: current.recordChangeTag)], zoneID: zone)).failures.isEmpty)
        #expect(try await guest.listZones().isEmpty)
        let again = try await guest.resolveShares([ShortGUID(value: share.shortGUID!, shouldFetchRootRecord: false)])
        guard case .failure(let error)? = again.first else { Issue.record("\(again)"); return }
        #expect(error.serverErrorCode == .notFound)
    }
}
