import CloudKitLocal
import CloudKitWeb
import Foundation
import Testing

@Suite struct ZonesAndChangesTests {
    @Test func zonesListLookupModifyAndDatabaseChanges() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        #expect(try await db.listZones().compactMap(\.zone).map(\.zoneID.zoneName) == ["_defaultZone"])
        #expect(try await server.client().database(.public).listZones().first?.zone?.zoneID.ownerRecordName == "_defaultOwner")
        let start = try await db.databaseChanges()
        let created = try #require(try await db.createZone("Notes").zone)
        #expect(created.zoneID.zoneType == .regularCustomZone && created.atomic == true)
        #expect(try await db.createZone("Notes").zone?.zoneID.zoneName == "Notes", "creating an existing zone is a no-op")
        let lookup = try await db.lookupZones([ZoneID(zoneName: "Notes"), ZoneID(zoneName: "Nope")])
        #expect(lookup[0].zone != nil && lookup[1].error?.serverErrorCode == .zoneNotFound)
        // Custom zones only in the private database.
        let publicZone = try await server.raw(.post, server.path("public", "zones/modify"), body: #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"X"}}}]}"#)
        let publicError = try ErrorResponse.decode(from: publicZone.body)
        #expect(publicZone.status == 400 && publicError.info.serverErrorCode == .badRequest)
        #expect(try await db.modifyZones([ZoneOperation(.delete, .default)])[0].error?.serverErrorCode == .badRequest)
        _ = try await db.modify([.create(record("n"))], zone: "Notes")
        let changes = try await db.databaseChanges(syncToken: start.syncToken)
        #expect(changes.zones.map(\.zoneID.zoneName) == ["Notes"])
        // Deleting a zone deletes its records and shows up as a zone tombstone.
        let deleted = try await db.modifyZones([ZoneOperation(.delete, ZoneID(zoneName: "Notes"))])
        #expect(deleted[0].zone?.deleted == true)
        let after = try await db.databaseChanges(syncToken: changes.syncToken)
        #expect(after.zones.map(\.deleted) == [true])
        await #expect(throws: CloudKitError.self) { try await db.lookup("n", zone: "Notes") }
        try await db.createZone("Notes")
        #expect(try await db.lookup("n", zone: "Notes").error?.serverErrorCode == .notFound, "a recreated zone starts empty")
    }

    @Test func changeFeedsNeverSkipOrRepeatWhileWritesHappen() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("Feed")
        _ = try await db.modify((0..<50).map { .create(record("r\($0)", ["v": .int64(0)])) }, zone: "Feed")
        var seen: [String: Int] = [:]
        var token: String?
        var pages = 0
        var wrote = false
        for try await page in db.recordChangePages(zoneID: ZoneID(zoneName: "Feed"), resultsLimit: 7) {
            pages += 1
            for name in page.records.compactMap(\.recordName) { seen[name, default: 0] += 1 }
            token = page.syncToken
            if !wrote {
                // Writes between pages: a new record, an update of one not yet returned, a delete.
                _ = try await db.modify([.create(record("late")), RecordOperation(.forceUpdate, record("r40", ["v": .int64(1)])), .forceDelete(recordName: "r45")], zone: "Feed")
                wrote = true
            }
        }
        #expect(pages == 8)
        #expect(Set(seen.keys) == Set((0..<50).map { "r\($0)" } + ["late"]))
        #expect(seen.values.allSatisfy { $0 == 1 }, "each changed record exactly once, in its latest state")
        // From the final token: nothing new. After one more write: exactly that record.
        let empty = try await db.recordChanges(RecordChangesRequest(zoneID: ZoneID(zoneName: "Feed"), syncToken: token))
        #expect(empty.records.isEmpty && !empty.moreComing && empty.syncToken == token)
        _ = try await db.modify([.forceDelete(recordName: "r1")], zone: "Feed")
        let one = try await db.recordChanges(RecordChangesRequest(zoneID: ZoneID(zoneName: "Feed"), syncToken: token))
        #expect(one.records == [.deleted(recordName: "r1", zoneID: nil)])
    }

    @Test func changesZoneRefusesTheDefaultZoneBadTokensAndBigLimits() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("A")
        await #expect { try await db.recordChanges(RecordChangesRequest(zoneID: .default)) } throws: {
            ($0 as? CloudKitError)?.reason == "cannot get changes in default zone"
        }
        await #expect { try await db.recordChanges(RecordChangesRequest(zoneID: ZoneID(zoneName: "A"), syncToken: "garbage")) } throws: {
            ($0 as? CloudKitError)?.reason == "Unknown sync continuation type"
        }
        await #expect { try await db.recordChanges(RecordChangesRequest(zoneID: ZoneID(zoneName: "A"), resultsLimit: 500)) } throws: {
            ($0 as? CloudKitError)?.serverErrorCode == .badRequest
        }
        await #expect { try await db.recordChanges(RecordChangesRequest(zoneID: ZoneID(zoneName: "Missing"))) } throws: {
            ($0 as? CloudKitError)?.serverErrorCode == .zoneNotFound
        }
        await #expect { try await server.client().database(.public).recordChanges(RecordChangesRequest(zoneID: .default)) } throws: { _ in true }
        // changes/zone: per-zone errors inline, desiredRecordTypes honoured.
        _ = try await db.modify([.create(record("n1")), .create(record("a1", "Artist"))], zone: "A")
        let response = try await db.zoneChanges(ZoneChangesRequest(zones: [
            ZoneChangesEntry(zoneID: ZoneID(zoneName: "A"), desiredRecordTypes: ["Artist"]), ZoneChangesEntry(zoneID: ZoneID(zoneName: "Nope")),
        ]))
        guard case .page(let page) = response.zones[0], case .failure(let error) = response.zones[1] else {
            Issue.record("expected a page and an error")
            return
        }
        #expect(page.records.compactMap(\.recordName) == ["a1"] && page.zoneID?.zoneName == "A")
        #expect(error.serverErrorCode == .zoneNotFound)
    }
}

private func items(_ json: JSON?) -> [JSON] { (try? json?.array()) ?? [] }

extension ZonesAndChangesTests {
    /// Change pages copy each record's stored fields text into the answer: the bytes must say exactly
    /// what records/lookup (which encodes the parsed fields) says, for every field type and for text
    /// that needs escaping; desiredKeys and numbersAsStrings still reshape the fields.
    @Test func changePagesSayWhatLookupSays() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("Z")
        let fields: [String: FieldValue] = [
            "s": .string("quote \" backslash \\ newline \n tab \t nul-ish \u{1} 漢字 🙂"), "n": .int64(-9_007_199_254_740_993),
            "d": .double(0.1), "t": .timestamp(1_700_000_000_123), "b": .bytes(Data([0, 255, 10])),
            "r": .reference(Reference(recordName: "other", action: .deleteSelf)), "l": .location(Location(latitude: 1.5, longitude: -2.25)),
            "sl": .stringList(["a", "\"b\""]), "il": .int64List([1, 2]),
        ]
        var rich = record("rich", "Thing", fields)
        rich.parent = RecordLink(recordName: "other")
        rich.createShortGUID = true
        _ = try await db.modify([.create(record("other")), .create(rich)], zone: "Z")
        let body = #"{"zoneID":{"zoneName":"Z"}}"#
        let changes = try await server.raw(.post, server.path("private", "records/changes"), body: body)
        let lookup = try await server.raw(.post, server.path("private", "records/lookup"), body: #"{"zoneID":{"zoneName":"Z"},"records":[{"recordName":"rich"}]}"#)
        #expect(changes.status == 200 && lookup.status == 200)
        let fromChanges = items(try JSON(parsing: changes.body)["records"]).first { $0["recordName"]?.stringValue == "rich" }
        let fromLookup = items(try JSON(parsing: lookup.body)["records"]).first
        let a = try #require(fromChanges), b = try #require(fromLookup)
        #expect(a["fields"] == b["fields"], "the same field dictionary, byte for byte after parsing")
        // Every key lookup answers with (but zoneID, which pages leave out), in the same order.
        let keys = try a.object().pairs.map(\.key), lookupKeys = try b.object().pairs.map(\.key).filter { $0 != "zoneID" }
        #expect(keys == lookupKeys && keys.contains("parent") && keys.contains("shortGUID"))
        for key in lookupKeys { #expect(a[key] == b[key], "\(key)") }
        #expect(try Record(json: a).fields == fields)
        // desiredKeys and numbersAsStrings reshape the page's fields.
        let shaped = try await server.raw(.post, server.path("private", "records/changes"), body: #"{"zoneID":{"zoneName":"Z"},"desiredKeys":["n"],"numbersAsStrings":true}"#)
        let reshaped = items(try JSON(parsing: shaped.body)["records"]).first { $0["recordName"]?.stringValue == "rich" }
        #expect((try? reshaped?["fields"]?.object())?.pairs.map(\.key) == ["n"])
        #expect(reshaped?["fields"]?["n"]?["value"] == .string("-9007199254740993"))
        // changes/zone carries the same spliced records after its zoneID.
        let zoneChanges = try await server.raw(.post, server.path("private", "changes/zone"), body: #"{"zones":[{"zoneID":{"zoneName":"Z"}}]}"#)
        let zonePage = items(try JSON(parsing: zoneChanges.body)["zones"]).first
        #expect((try? zonePage?.object())?.pairs.first?.key == "zoneID")
        #expect(items(zonePage?["records"]).first { $0["recordName"]?.stringValue == "rich" }?["fields"] == b["fields"])
        // records/modify answers with the fields text it has just stored: the same keys, values and
        // order as a lookup afterwards (zoneID included), for a partial update merged into the record.
        let modified = try await server.raw(.post, server.path("private", "records/modify"), body: #"{"zoneID":{"zoneName":"Z"},"operations":[{"operationType":"forceUpdate","record":{"recordName":"rich","fields":{"views":{"value":7,"type":"INT64"}}}}]}"#)
        let after = try await server.raw(.post, server.path("private", "records/lookup"), body: #"{"zoneID":{"zoneName":"Z"},"records":[{"recordName":"rich"}]}"#)
        let saved = try #require(items(try JSON(parsing: modified.body)["records"]).first)
        let looked = try #require(items(try JSON(parsing: after.body)["records"]).first)
        let savedKeys = try saved.object().pairs.map(\.key), lookedKeys = try looked.object().pairs.map(\.key)
        #expect(modified.status == 200 && savedKeys == lookedKeys && savedKeys.contains("zoneID"))
        #expect(saved == looked && saved["fields"]?["views"]?["value"] == .int(7) && saved["fields"]?["s"] == b["fields"]?["s"])
        // The reference index followed the writes: deleting the target cascades to "rich" (DELETE_SELF);
        // after "rich" dropped its reference, deleting the target again leaves it alone.
        _ = try await db.modify([RecordOperation(.forceUpdate, record("rich", "Thing", ["r": .null]))], zone: "Z")
        _ = try await db.modify([.forceDelete(recordName: "other")], zone: "Z")
        #expect(try await db.lookup("rich", zone: "Z").record != nil, "no stale reference row after the update")
        _ = try await db.modify([.create(record("target")), .create(record("src", "Thing", ["r": .reference(Reference(recordName: "target", action: .deleteSelf))]))], zone: "Z")
        // An update that leaves the reference alone keeps it indexed.
        _ = try await db.modify([RecordOperation(.forceUpdate, record("src", "Thing", ["s": .string("touched")]))], zone: "Z")
        _ = try await db.modify([.forceDelete(recordName: "target")], zone: "Z")
        #expect(try await db.lookup("src", zone: "Z").error?.serverErrorCode == .notFound, "the reference stayed indexed through the update")
        // A record created again after its deletion, with another type, reuses its row in place: the
        // type index follows the new type.
        _ = try await db.modify([.create(record("target", "Reborn", ["v": .int64(1)]))], zone: "Z")
        // Unfiltered queries need `___recordID` QUERYABLE, which just-in-time creation does not give (as on CloudKit).
        try await server.service.addSystemIndexes(container: LiveServer.container, environment: .development)
        let reborn = try await db.query(QueryRequest(query: Query(recordType: "Reborn"), zoneID: ZoneID(zoneName: "Z")))
        #expect(reborn.records.compactMap(\.recordName) == ["target"])
        let asBefore = try await db.query(QueryRequest(query: Query(recordType: "Thing"), zoneID: ZoneID(zoneName: "Z")))
        #expect(!asBefore.records.compactMap(\.recordName).contains("target"))
    }
}

@Suite struct QueryTests {
    static func seed(_ db: CloudKitDatabase) async throws {
        try await db.createZone("Q")
        _ = try await db.modify([
            .create(record("a", "Item", ["name": .string("Apple pie"), "n": .int64(1), "price": .double(2.5), "tags": .stringList(["red", "sweet"]),
                "when": .timestamp(1000), "at": .location(Location(latitude: 37.33, longitude: -122.03)), "owner": .reference(Reference(recordName: "u1", action: .noAction))])),
            .create(record("b", "Item", ["name": .string("Banana bread"), "n": .int64(2), "price": .double(1.0), "tags": .stringList(["yellow", "sweet"]),
                "when": .timestamp(2000), "at": .location(Location(latitude: 37.40, longitude: -122.10)), "owner": .reference(Reference(recordName: "u2", action: .noAction))])),
            .create(record("c", "Item", ["name": .string("Cherry tart"), "n": .int64(3), "price": .double(4.0), "tags": .stringList(["red"]),
                "when": .timestamp(3000), "at": .location(Location(latitude: 40.71, longitude: -74.0))])),
            .create(record("d", "Item", ["name": .string("Dates"), "n": .int64(4)])),
        ], zone: "Q")
    }

    static let cases: [(Filter, [String])] = [
        (Filter("n", .equals, .int64(2)), ["b"]), (Filter("n", .notEquals, .int64(2)), ["a", "c", "d"]),
        (Filter("n", .lessThan, .int64(3)), ["a", "b"]), (Filter("n", .lessThanOrEquals, .int64(3)), ["a", "b", "c"]),
        (Filter("price", .greaterThan, .double(2.5)), ["c"]), (Filter("when", .greaterThanOrEquals, .timestamp(2000)), ["b", "c"]),
        (Filter("name", .beginsWith, .string("Ba")), ["b"]), (Filter("name", .notBeginsWith, .string("Ba")), ["a", "c", "d"]),
        (Filter("name", .containsAllTokens, .string("apple PIE")), ["a"]), (Filter("name", .containsAnyTokens, .string("tart bread")), ["b", "c"]),
        (Filter("n", .in, .int64List([1, 4])), ["a", "d"]), (Filter("n", .notIn, .int64List([1, 4])), ["b", "c"]),
        (Filter("tags", .listContains, .string("red")), ["a", "c"]), (Filter("tags", .notListContains, .string("red")), ["b"]),
        (Filter("tags", .listContainsAny, .stringList(["yellow", "red"])), ["a", "b", "c"]),
        (Filter("tags", .notListContainsAny, .stringList(["yellow"])), ["a", "c"]),
        (Filter("tags", .listContainsAll, .stringList(["red", "sweet"])), ["a"]),
        (Filter("tags", .notListContainsAll, .stringList(["red", "sweet"])), ["b", "c"]),
        (Filter("tags", .listMemberBeginsWith, .string("ye")), ["b"]), (Filter("tags", .notListMemberBeginsWith, .string("ye")), ["a", "c"]),
        (Filter("at", .near, .location(Location(latitude: 37.33, longitude: -122.03)), distance: 20_000), ["a", "b"]),
        (Filter("owner", .equals, .reference(Reference(recordName: "u2", action: nil))), ["b"]),
        (Filter(system: .recordName, .equals, .reference(Reference(recordName: "c", action: nil))), ["c"]),
        (Filter(system: .createdTimestamp, .greaterThan, .timestamp(0)), ["a", "b", "c", "d"]),
    ]

    @Test func everyComparator() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await Self.seed(db)
        // Filters on recordName and createdTimestamp need their indexes (just-in-time creation gives none).
        try await server.service.addSystemIndexes(container: LiveServer.container, environment: .development)
        #expect(Set(Self.cases.map(\.0.comparator)) == Set(Comparator.all))
        for (filter, expected) in Self.cases {
            let response = try await db.query(QueryRequest(query: Query(recordType: "Item", filterBy: [filter]), zoneID: ZoneID(zoneName: "Q")))
            #expect(response.records.compactMap(\.recordName).sorted() == expected, "\(filter.comparator) \(filter.fieldName ?? filter.systemFieldName?.rawValue ?? "")")
        }
    }

    @Test func sortingPagingAndZoneWide() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await Self.seed(db)
        // Unfiltered queries need `___recordID` QUERYABLE, which just-in-time creation does not give (as on CloudKit).
        try await server.service.addSystemIndexes(container: LiveServer.container, environment: .development)
        let byPrice = try await db.query(QueryRequest(query: Query(recordType: "Item", sortBy: [SortDescriptor("price", ascending: false)]), zoneID: ZoneID(zoneName: "Q")))
        #expect(byPrice.records.compactMap(\.recordName) == ["c", "a", "b", "d"], "missing values sort last")
        let byDistance = try await db.query(QueryRequest(query: Query(recordType: "Item", sortBy: [SortDescriptor("at", relativeLocation: Location(latitude: 40.7, longitude: -74))]), zoneID: ZoneID(zoneName: "Q")))
        #expect(byDistance.records.compactMap(\.recordName).prefix(3) == ["c", "a", "b"])
        var names: [String] = []
        var pages = 0
        for try await page in db.queryPages(QueryRequest(query: Query(recordType: "Item", sortBy: [SortDescriptor("n")]), zoneID: ZoneID(zoneName: "Q"), resultsLimit: 3)) {
            pages += 1
            names += page.records.compactMap(\.recordName)
        }
        #expect(names == ["a", "b", "c", "d"] && pages == 2)
        _ = try await db.modify([.create(record("z", "Item", ["n": .int64(9)]))])
        let wide = try await db.query(QueryRequest(query: Query(recordType: "Item", filterBy: [Filter("n", .greaterThan, .int64(3))]), zoneWide: true))
        #expect(Set(wide.records.compactMap { $0.record.map { "\($0.zoneID?.zoneName ?? "?")/\($0.recordName)" } }) == ["Q/d", "_defaultZone/z"])
        await #expect { try await db.query(QueryRequest(query: Query(recordType: "NoSuchType"))) } throws: {
            ($0 as? CloudKitError)?.reason?.contains("Did not find record type") == true
        }
        await #expect { try await db.query(QueryRequest(query: Query(recordType: "Item"), zoneID: ZoneID(zoneName: "Q"), continuationMarker: "bogus")) } throws: {
            ($0 as? CloudKitError)?.serverErrorCode == .badRequest
        }
    }
}
