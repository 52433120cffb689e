import CloudKitWeb
import Foundation
import Testing

/// Golden fixtures written from the reference: each decodes with the fast decoder and with
/// Foundation's JSONDecoder to the same value, and re-encodes to equivalent JSON.
@Suite struct FixtureTests {
    static let cases: [(String, any JSONConvertible.Type)] = [
        ("zone-id", ZoneID.self), ("zone", Zone.self), ("zone-tombstone", Zone.self),
        ("zones-list", ZonesResponse.self), ("zones-lookup-response", ZonesResponse.self),
        ("zones-lookup-request", LookupZonesRequest.self), ("zones-modify-request", ModifyZonesRequest.self),
        ("record-typical", Record.self), ("record-tombstone", Record.self), ("record-all-types", Record.self),
        ("record-share", Record.self), ("record-share-request", Record.self),
        ("query-request", QueryRequest.self), ("query-response", QueryResponse.self),
        ("notification-info", NotificationInfo.self), ("subscription-query", Subscription.self),
        ("subscription-zone", Subscription.self), ("subscriptions-list", SubscriptionsResponse.self),
        ("subscriptions-modify-request", ModifySubscriptionsRequest.self),
        ("subscriptions-lookup-request", LookupSubscriptionsRequest.self),
        ("modify-request", ModifyRecordsRequest.self), ("modify-response", RecordsResponse.self),
        ("modify-response-atomic-failure", RecordsResponse.self),
        ("lookup-request", LookupRecordsRequest.self), ("lookup-response", RecordsResponse.self),
        ("records-changes-request", RecordChangesRequest.self), ("records-changes-response", RecordChangesPage.self),
        ("changes-zone-request", ZoneChangesRequest.self), ("changes-zone-response", ZoneChangesResponse.self),
        ("changes-database-request", DatabaseChangesRequest.self),
        ("changes-database-response", DatabaseChangesResponse.self),
        ("error-top-level", ErrorResponse.self), ("error-auth-required", ErrorResponse.self),
        ("error-throttled", ErrorResponse.self), ("record-error", RecordError.self), ("zone-error", ZoneError.self),
        ("subscription-error", SubscriptionError.self), ("share-participant", ShareParticipant.self),
        ("user", User.self), ("user-identity", UserIdentity.self), ("shortguid", ShortGUID.self),
        ("shortguid-result", ShortGUIDResult.self), ("apns-token", APNsToken.self),
    ]

    @Test("decode, re-encode, compare", arguments: cases.map(\.0))
    func roundTrip(name: String) throws {
        let type = Self.cases.first { $0.0 == name }!.1
        try check(type, name)
    }

    private func check<T: JSONConvertible>(_ type: T.Type, _ name: String) throws {
        let bytes = try fixture(name)
        let original = try JSON(parsing: bytes)
        let fast = try T.decode(from: bytes)
        let reencoded = fast.json
        #expect(reencoded.isEquivalent(to: original), "\(name) re-encoded differs:\n\(reencoded.prettyPrinted())")
        // Foundation's decoder agrees with the fast one.
        let viaFoundation = try JSONDecoder().decode(T.self, from: Data(bytes))
        #expect(viaFoundation.json == reencoded, "\(name): JSONDecoder and the fast decoder disagree")
        // And JSONEncoder's output decodes back to the same value.
        let encoded = try JSONEncoder().encode(fast)
        #expect(try T.decode(from: Array(encoded)).json == reencoded)
    }

    @Test func everyFieldTypeDecodesToItsCase() throws {
        let record = try Record.decode(from: fixture("record-all-types"))
        #expect(record.fields["i"] == .int64(9_007_199_254_740_993))  // beyond 2^53, exact
        #expect(record.fields["neg"] == .int64(.min))
        #expect(record.fields["d"] == .double(3.5))
        #expect(record.fields["dWhole"] == .double(2))
        #expect(record.fields["t"] == .timestamp(1_709_294_400_000))
        #expect(record.fields["b"] == .bytes(Data([0, 1, 2, 3, 4, 5, 255])))
        #expect(record.fields["eb"] == .encryptedBytes(Data("secret".utf8)))
        #expect(record.fields["r"] == .reference(Reference(recordName: "folder-1", zoneID: ZoneID(zoneName: "Notes"), action: .deleteSelf)))
        guard case .asset(let asset)? = record.fields["a"] else { Issue.record("asset"); return }
        #expect(asset.size == 123_456 && asset.downloadURL?.contains("${f}") == true)
        guard case .location(let location)? = record.fields["l"] else { Issue.record("location"); return }
        #expect(location.latitude == 37.33182 && location.course == 90 && location.timestamp == 1_709_290_000_000)
        #expect(record.fields["sl"] == .stringList(["a", "b"]))
        #expect(record.fields["il"] == .int64List([1, -2, 9_007_199_254_740_993]))
        #expect(record.fields["dl"] == .doubleList([0.5, 1.25]))
        #expect(record.fields["tl"] == .timestampList([1_709_294_400_000, 1_709_294_400_001]))
        #expect(record.fields["bl"] == .bytesList([Data([0]), Data([1, 2])]))
        #expect(record.fields["rl"]?.listCount == 2)
        #expect(record.fields["al"]?.listCount == 1)
        #expect(record.fields["ll"] == .locationList([Location(latitude: 1.5, longitude: 2.5)]))
        #expect(record.fields["el"] == .stringList([]))
        #expect(record.fields["ul"] == .unknownList([]))
        #expect(record.fields["s"] == .string("東京 🇯🇵 café\nline two"))
        #expect(record.encryptedFieldNames == ["enc"])
        #expect(record.shortGUID == "0AbCdEfGhIjKlMnOpQrStUvWx")
        #expect(record.parent?.recordName == "parent-1" && record.share?.recordName == "share-1")
        #expect(record.zoneID?.zoneType == .regularCustomZone)
        #expect(Set(FieldType.scalars + FieldType.lists).isSubset(of: Set(record.fields.values.map(\.type))))
    }

    @Test func untypedValuesAreInferredAsTheReferenceSays() throws {
        let input = try JSON(parsing: fixture("fields-untyped"))
        let expected = try JSON(parsing: fixture("fields-untyped-expected"))
        let record = try Record(json: ["recordName": "x", "fields": input])
        let fields = try #require(record.json["fields"])
        #expect(fields.isEquivalent(to: expected), "\(fields.prettyPrinted())")
    }

    @Test func numbersAsStringsDecode() throws {
        let input = try JSON(parsing: fixture("fields-numbers-as-strings"))
        let expected = try JSON(parsing: fixture("fields-numbers-as-strings-expected"))
        let record = try Record(json: ["recordName": "x", "fields": input])
        #expect(record.json["fields"]!.isEquivalent(to: expected))
        #expect(record.fields["i"] == .int64(.max))
    }

    @Test func unknownKeysTypesAndCodesDecode() throws {
        let response = try RecordsResponse.decode(from: fixture("unknown-keys-and-codes"))
        #expect(response.records.count == 2)
        guard case .other(let type, _)? = response.records[0].record?.fields["x"] else {
            Issue.record("unknown field type should decode as .other")
            return
        }
        #expect(type == "FUTURE_TYPE")
        let error = try #require(response.records[1].error)
        #expect(error.serverErrorCode.rawValue == "SOME_NEW_CODE")
        #expect(!ServerErrorCode.documented.contains(error.serverErrorCode))
    }

    @Test func resultItemsAreToldApart() throws {
        let changes = try RecordChangesPage.decode(from: fixture("records-changes-response"))
        #expect(changes.records[0].record?.recordName == "note-9")
        #expect(changes.records[1] == .deleted(recordName: "note-3", zoneID: nil))
        #expect(changes.moreComing && changes.syncToken == "HwoECJ...next")
        let atomic = try RecordsResponse.decode(from: fixture("modify-response-atomic-failure"))
        let result = ModifyRecordsResult(results: atomic.records, httpStatus: 400)
        #expect(result.isAtomicFailure)
        #expect(result.failures.map(\.serverErrorCode) == [.atomicError, .conflict, .atomicError])
        let zones = try ZoneChangesResponse.decode(from: fixture("changes-zone-response"))
        guard case .failure(let zoneError) = zones.zones[1] else { Issue.record("zone error"); return }
        #expect(zoneError.reason == "Unknown sync continuation type")
        let lookup = try ZonesResponse.decode(from: fixture("zones-lookup-response"))
        #expect(lookup.zones[1].error?.serverErrorCode == .zoneNotFound)
        let subs = try SubscriptionsResponse.decode(from: fixture("subscriptions-list"))
        #expect(subs.subscriptions[1].error?.serverErrorCode == .notFound)
        #expect(subs.subscriptions[0].subscription?.firesOnce == true)
    }

    @Test func allDocumentedErrorCodesHaveConstants() {
        #expect(ServerErrorCode.documented.count == 14)
        #expect(Set(ServerErrorCode.documented.map(\.rawValue)).count == 14)
        #expect(ServerErrorCode.authenticationRequired.httpStatus == 421)
        #expect(ServerErrorCode.validatingReferenceError.httpStatus == 412)
        #expect(Comparator.all.count == 21)
    }

    @Test("wrong types give typed errors with a path", arguments: [
        (#"{"recordName": 5}"#, "recordName"),
        (#"{"recordName": "a", "fields": {"n": {"value": "x", "type": "INT64"}}}"#, "fields.n.value"),
        (#"{"recordName": "a", "fields": {"n": {"value": 1.5, "type": "TIMESTAMP"}}}"#, "fields.n.value"),
        (#"{"recordName": "a", "fields": {"n": {"value": "!!", "type": "BYTES"}}}"#, "fields.n.value"),
        (#"{"recordName": "a", "fields": {"n": {"value": [1, "x"], "type": "INT64_LIST"}}}"#, "fields.n.value[1]"),
        (#"{"recordName": "a", "fields": []}"#, "fields"),
        (#"{"recordName": "a", "created": {"userRecordName": "u"}}"#, "created.timestamp"),
        (#"{"fields": {}}"#, ""),
    ])
    func wrongTypes(json: String, path: String) throws {
        #expect {
            _ = try Record.decode(from: Array(json.utf8))
        } throws: { error in
            guard let error = error as? JSONDecodingError else { return false }
            return error.pathString == path
        }
    }

    @Test func decodingErrorsNeverQuoteValues() {
        let secret = "TOPSECRET-VALUE"
        let json = #"{"recordName": "a", "fields": {"n": {"value": "\#(secret)", "type": "INT64"}}}"#
        do {
            _ = try Record.decode(from: Array(json.utf8))
            Issue.record("should fail")
        } catch {
            #expect(!String(describing: error).contains(secret))
        }
    }
}
