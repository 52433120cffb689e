import CloudKitLocal
import CloudKitWeb
import Foundation
import Testing

/// records/modify, lookup and fields against a live server on a loopback port.
@Suite struct RecordsTests {
    @Test func changeTagsChangeOnEverySaveAndStaleWritesConflict() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("Z")
        let created = try #require(try await db.modify([.create(record("n1", ["title": .string("a")]))], zone: "Z").results[0].record)
        let tag1 = try #require(created.recordChangeTag)
        let updated = try #require(try await db.modify([.update(record("n1", tag: tag1, ["title": .string("b")]))], zone: "Z").results[0].record)
        #expect(updated.recordChangeTag != tag1 && updated.fields["title"] == .string("b"))
        // update, replace and delete with the old tag: CONFLICT, nothing changes.
        for op in [RecordOperation.update(record("n1", tag: tag1, ["title": .string("x")])), .replace(record("n1", tag: tag1)), .delete(recordName: "n1", recordChangeTag: tag1)] {
            let result = try await db.modify([op], zone: "Z")
            #expect(result.failures.first?.serverErrorCode == .conflict, "\(op.operationType)")
        }
        // A conditional write without a tag is treated as stale (documented choice), and the reason
        // says what is missing rather than that the record changed.
        let untagged = try await db.modify([.update(record("n1", ["title": .string("x")]))], zone: "Z").failures.first
        #expect(untagged?.serverErrorCode == .conflict)
        #expect(untagged?.reason == "oplock error: record 'n1' exists (change tag \(updated.recordChangeTag ?? "?")) and this update sends no recordChangeTag; send the tag you read, or use forceUpdate")
        let stale = try await db.modify([.update(record("n1", tag: tag1, ["title": .string("x")]))], zone: "Z").failures.first
        #expect(stale?.reason?.hasPrefix("oplock error: record 'n1' was changed") == true)
        #expect(try await db.lookup("n1", zone: "Z").record?.fields["title"] == .string("b"))
        // create of an existing name: EXISTS.
        #expect(try await db.modify([.create(record("n1"))], zone: "Z").failures.first?.serverErrorCode == .exists)
    }

    @Test func forceVariantsIgnoreTagsAndCreateMissingRecords() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("Z")
        let a = try await db.modify([RecordOperation(.forceUpdate, record("fu", ["n": .int64(1)])), RecordOperation(.forceReplace, record("fr", ["n": .int64(2)]))], zone: "Z")
        #expect(a.isCompleteSuccess)
        let b = try await db.modify([RecordOperation(.forceUpdate, record("fu", tag: "stale", ["m": .int64(3)]))], zone: "Z")
        #expect(b.results[0].record?.fields == ["n": .int64(1), "m": .int64(3)], "forceUpdate merges")
        let c = try await db.modify([RecordOperation(.forceReplace, record("fu", tag: "stale", ["m": .int64(4)]))], zone: "Z")
        #expect(c.results[0].record?.fields == ["m": .int64(4)], "forceReplace replaces")
        #expect(try await db.modify([.forceDelete(recordName: "fu")], zone: "Z").results[0] == .deleted(recordName: "fu", zoneID: nil))
        #expect(try await db.modify([.forceDelete(recordName: "fu")], zone: "Z").failures.first?.serverErrorCode == .notFound)
        #expect(try await db.lookup("fu", zone: "Z").error?.serverErrorCode == .notFound)
        // update / replace of a missing record: NOT_FOUND; a force write without recordType: BAD_REQUEST.
        #expect(try await db.modify([.update(record("missing", tag: "1"))], zone: "Z").failures.first?.serverErrorCode == .notFound)
        #expect(try await db.modify([RecordOperation(.forceUpdate, Record(recordName: "untyped"))], zone: "Z").failures.first?.serverErrorCode == .badRequest)
    }

    @Test func replaceClearsUnlistedFieldsAndUpdateMerges() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("Z")
        let r = try #require(try await db.modify([.create(record("r", ["a": .int64(1), "b": .int64(2)]))], zone: "Z").results[0].record)
        let u = try #require(try await db.modify([.update(record("r", tag: r.recordChangeTag, ["b": .null, "c": .int64(3)]))], zone: "Z").results[0].record)
        #expect(u.fields == ["a": .int64(1), "c": .int64(3)], "null clears, others merge")
        let p = try #require(try await db.modify([.replace(record("r", tag: u.recordChangeTag, ["d": .int64(4)]))], zone: "Z").results[0].record)
        #expect(p.fields == ["d": .int64(4)])
    }

    @Test func atomicBatchesAreAllOrNothingWithHTTP400() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("Z")
        let base = try #require(try await db.modify([.create(record("a", ["v": .int64(1)])), .create(record("b", ["v": .int64(1)]))], zone: "Z").results[0].record)
        _ = base
        let result = try await db.modify(
            [.create(record("new")), .update(record("a", tag: "stale", ["v": .int64(2)])), .forceDelete(recordName: "b")], zone: "Z", atomic: true)
        #expect(result.httpStatus == 400 && result.isAtomicFailure)
        #expect(result.failures.map(\.serverErrorCode) == [.atomicError, .conflict, .atomicError])
        #expect(try await db.lookup("new", zone: "Z").error?.serverErrorCode == .notFound, "nothing applied")
        #expect(try await db.lookup("b", zone: "Z").record != nil)
        // Two culprits each carry their own code (the operations ran again, each in a savepoint).
        let two = try await db.modify(
            [.update(record("a", tag: "stale")), .create(record("c")), .create(record("b"))], zone: "Z", atomic: true)
        #expect(two.failures.map(\.serverErrorCode) == [.conflict, .atomicError, .exists], "\(two.failures)")
        // What the undone pass wrote is gone from the change feed too; a later batch is all there.
        #expect(try await db.modify([.create(record("c")), .create(record("d"))], zone: "Z", atomic: true).isCompleteSuccess)
        let feed = try await db.recordChanges(RecordChangesRequest(zoneID: ZoneID(zoneName: "Z"))).records.compactMap { $0.record?.recordName }.sorted()
        #expect(feed == ["a", "b", "c", "d"])
        // Non-atomic: the good operations apply; the failure is inline; HTTP 200.
        let partial = try await db.modify([.create(record("new")), .update(record("a", tag: "stale")), .forceDelete(recordName: "b")], zone: "Z", atomic: false)
        #expect(partial.httpStatus == 200 && !partial.isAtomicFailure)
        #expect(partial.results[0].record != nil && partial.results[1].error?.serverErrorCode == .conflict && partial.results[2] == .deleted(recordName: "b", zoneID: nil))
        // The public database's default zone is not atomic: a failure there is inline.
        let pub = try await server.client().database(.public).modify([.create(record("p1")), .update(record("missing", tag: "x"))])
        #expect(pub.httpStatus == 200 && pub.results[0].record != nil)
    }

    @Test func operationsApplyInOrderAndReferencesAreChecked() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("Z")
        // A VALIDATE reference to a record created earlier in the same batch works: operations apply in order.
        let ok = try await db.modify([
            .create(record("target")),
            .create(record("source", ["ref": .reference(Reference(recordName: "target", action: .validate))])),
            .create(record("child", ["parent": .reference(Reference(recordName: "target", action: .deleteSelf))])),
        ], zone: "Z")
        #expect(ok.isCompleteSuccess)
        let bad = try await db.modify([.create(record("dangling", ["ref": .reference(Reference(recordName: "nope", action: .validate))]))], zone: "Z")
        #expect(bad.failures.first?.serverErrorCode == .validatingReferenceError)
        #expect(try await db.modify([.forceDelete(recordName: "target")], zone: "Z").failures.first?.serverErrorCode == .validatingReferenceError)
        _ = try await db.modify([.forceDelete(recordName: "source")], zone: "Z")
        #expect(try await db.modify([.forceDelete(recordName: "target")], zone: "Z").isCompleteSuccess)
        #expect(try await db.lookup("child", zone: "Z").error?.serverErrorCode == .notFound, "DELETE_SELF cascades")
    }

    @Test func everyFieldTypeRoundTripsExactly() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("Z")
        let fixture = try Record.decode(from: Array(Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("CloudKitWebTests/Fixtures/record-all-types.json"))))
        var fields = fixture.fields
        fields["enc"] = nil
        fields["ul"] = nil
        fields["r"] = .reference(Reference(recordName: "folder-1", action: .noAction))
        fields["rl"] = .referenceList([Reference(recordName: "x", action: .noAction)])
        // Assets are saved with the receipts of real uploads; answers carry a download URL and no receipt.
        let zone = ZoneID(zoneName: "Z")
        fields["a"] = .asset(try await db.uploadAsset([1, 2, 3], recordType: "Kitchen", recordName: "all", fieldName: "a", zoneID: zone).asset)
        fields["al"] = .assetList([try await db.uploadAsset([4, 5], recordType: "Kitchen", recordName: "all", fieldName: "al", zoneID: zone).asset])
        func comparable(_ fields: [String: FieldValue]) -> [String: FieldValue] {
            func plain(_ a: Asset) -> Asset { Asset(fileChecksum: a.fileChecksum, size: a.size, referenceChecksum: a.referenceChecksum, wrappingKey: a.wrappingKey) }
            return fields.mapValues { value in
                switch value {
                case .asset(let a): return .asset(plain(a))
                case .assetList(let list): return .assetList(list.map(plain))
                default: return value
                }
            }
        }
        let saved = try #require(try await db.modify([.create(record("all", "Kitchen", fields))], zone: "Z").results[0].record)
        #expect(comparable(saved.fields) == comparable(fields))
        let fetched = try #require(try await db.lookup("all", zone: "Z").record)
        #expect(comparable(fetched.fields) == comparable(fields))
        if case .asset(let a)? = fetched.fields["a"] { #expect(a.receipt == nil && a.downloadURL?.hasSuffix("${f}") == true) }
        #expect(fetched.fields["i"] == .int64(9_007_199_254_740_993))
        // numbersAsStrings and desiredKeys.
        let raw = try await server.raw(.post, server.path("private", "records/lookup"),
            body: #"{"zoneID":{"zoneName":"Z"},"records":[{"recordName":"all"}],"numbersAsStrings":true,"desiredKeys":["i","d","t","il","s"]}"#)
        let json = try JSON(parsing: raw.body)
        let f = try #require(json["records"].flatMap { if case .array(let a) = $0 { return a.first } else { return nil } }?["fields"])
        #expect(f["i"]?["value"] == "9007199254740993" && f["d"]?["value"] == "3.5" && f["t"]?["value"] == "1709294400000")
        #expect(f["il"]?["value"] == ["1", "-2", "9007199254740993"] && f["s"]?["value"] == "東京 🇯🇵 café\nline two")
        if case .object(let object) = f { #expect(Set(object.keys) == ["i", "d", "t", "il", "s"]) }
        let empty = try #require(try await db.lookupRecords(["all"], zoneID: ZoneID(zoneName: "Z"), desiredKeys: [])[0].record)
        #expect(empty.fields.isEmpty && empty.recordChangeTag == saved.recordChangeTag)
    }

    @Test func untypedValuesAreInferredAndTypeContradictionsRefused() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let body = #"{"zoneID":{"zoneName":"_defaultZone"},"operations":[{"operationType":"create","record":{"recordName":"u","recordType":"T","fields":{"s":{"value":"x"},"i":{"value":5},"d":{"value":1.5},"l":{"value":{"latitude":1,"longitude":2}},"sl":{"value":["a"]}}}}]}"#
        let response = try await server.raw(.post, server.path("private", "records/modify"), body: body)
        #expect(response.status == 200)
        let saved = try RecordsResponse.decode(from: response.body).records[0].record
        #expect(saved?.fields["i"] == .int64(5) && saved?.fields["d"] == .double(1.5) && saved?.fields["sl"] == .stringList(["a"]))
        #expect(saved?.fields["l"]?.type == .location)
        let db = server.client().database(.private)
        let clash = try await db.modify([.create(record("u2", "T", ["i": .string("not a number")]))])
        #expect(clash.failures.first?.serverErrorCode == .badRequest)
        #expect(clash.failures.first?.reason?.contains("defined to be: INT64") == true)
        // An untyped value that cannot be read as the field's type says what it found.
        let seven = #"{"zoneID":{"zoneName":"_defaultZone"},"operations":[{"operationType":"create","record":{"recordName":"u3","recordType":"T","fields":{"i":{"value":"seven"}}}}]}"#
        let sevenAnswer = String(decoding: try await server.raw(.post, server.path("private", "records/modify"), body: seven).body, as: UTF8.self)
        #expect(sevenAnswer.contains("expected an integer, found a string that is not one") && !sevenAnswer.contains("seven"), "\(sevenAnswer)")
        // A container identifier that is not one says what one looks like.
        let badContainer = try await server.raw(.get, "/database/1/com.bad/development/public/zones/list")
        #expect(badContainer.status == 400 && String(decoding: badContainer.body, as: UTF8.self).contains("'com.bad' is not valid: it must begin with iCloud."))
        // Production enforces its schema, which only a deploy changes: a new field or type is refused.
        let prod = server.client(environment: .production).database(.private)
        #expect(try await prod.modify([.create(record("p", "T", ["i": .int64(1)]))]).failures.first?.reason == "Cannot create new type T in production schema")
        try await server.service.deploySchema(container: LiveServer.container)
        #expect(try await prod.modify([.create(record("p", "T", ["brandNew": .int64(1)]))]).failures.first?.reason
            == "Cannot create or modify field 'brandNew' in record 'T' in production schema")
        #expect(try await prod.modify([.create(record("p", "NoSuchType"))]).failures.first?.reason == "Cannot create new type NoSuchType in production schema")
        #expect(try await prod.modify([.create(record("p", "T", ["i": .int64(1)]))]).isCompleteSuccess)
    }

    @Test func fractionalTimestampsAndBadShapesAreBadRequests() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let cases = [
            #"{"operations":[{"operationType":"create","record":{"recordName":"a","recordType":"T","fields":{"t":{"value":1.5,"type":"TIMESTAMP"}}}}]}"#,
            #"{"operations":[{"operationType":"explode","record":{"recordName":"a"}}]}"#,
            #"{"operations":"nope"}"#, #"{"operations":[]}"#, #"[1,2]"#, #"{"#, "",
        ]
        for body in cases {
            let response = try await server.raw(.post, server.path("private", "records/modify"), body: body)
            let error = try? ErrorResponse.decode(from: response.body)
            #expect(response.status == 400 && error?.info.serverErrorCode == .badRequest && error?.info.uuid != nil, "\(body)")
        }
        let ops = (0..<201).map { #"{"operationType":"forceDelete","record":{"recordName":"r\#($0)"}}"# }.joined(separator: ",")
        let tooMany = try await server.raw(.post, server.path("private", "records/modify"), body: #"{"operations":[\#(ops)]}"#)
        #expect(tooMany.status == 400 && String(decoding: tooMany.body, as: UTF8.self).contains("at most 200"))
        let dup = try await server.raw(.post, server.path("private", "records/modify"),
            body: #"{"operations":[{"operationType":"forceDelete","record":{"recordName":"x"}},{"operationType":"forceDelete","record":{"recordName":"x"}}]}"#)
        #expect(dup.status == 400 && String(decoding: dup.body, as: UTF8.self).contains("one operation per record"))
        let huge = try await server.raw(.post, server.path("private", "records/modify"), body: String(repeating: " ", count: 17 << 20))
        #expect(huge.status == 400)
        // And the server is still serving.
        #expect(try await server.client().database(.private).listZones().count == 1)
    }

    @Test func acknowledgedWritesSurviveARestart() async throws {
        let first = try await LiveServer.start()
        let db = first.client().database(.private)
        try await db.createZone("Keep")
        let saved = try #require(try await db.modify([.create(record("k", ["v": .int64(42)]))], zone: "Keep").results[0].record)
        await first.stop(keepingData: true)
        let second = try await LiveServer.start(directory: first.directory)
        defer { Task { await second.stop(); try? FileManager.default.removeItem(atPath: first.directory) } }
        let again = try #require(try await second.client().database(.private).lookup("k", zone: "Keep").record)
        #expect(again == saved)
    }

    @Test func recordNamesAreAssignedWhenOmittedOnCreate() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let response = try await server.raw(.post, server.path("private", "records/modify"),
            body: #"{"operations":[{"operationType":"create","record":{"recordType":"T","fields":{}}}]}"#)
        let name = try #require(try RecordsResponse.decode(from: response.body).records[0].record?.recordName)
        #expect(UUID(uuidString: name) != nil && name == name.uppercased())
    }

    /// Partial updates edit the stored text without decoding it (`FieldsText`) unless something needs
    /// the decoded fields: the answers must not tell the paths apart, and clearing a REFERENCE field
    /// must still update the reference index.
    @Test func partialUpdatesAnswerAsLookupDoesAndKeepTheReferenceIndex() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("Z")
        _ = try await db.modify([.create(record("target", ["n": .int64(1)]))], zone: "Z")
        let fields: [String: FieldValue] = [
            "title": .string("Tōkyō \"quoted\""), "n": .int64(5), "d": .double(2.5), "tags": .stringList(["a", "b"]),
            "ref": .reference(Reference(recordName: "target", action: .validate)),
        ]
        var current = try #require(try await db.modify([.create(record("source", fields))], zone: "Z").results[0].record)
        // An update that sets one field, removes one and adds one: the answer is the whole record.
        let updated = try #require(
            try await db.modify([.update(record("source", tag: current.recordChangeTag, ["n": .int64(6), "d": .null, "added": .string("new")]))], zone: "Z")
                .results[0].record)
        var expected = fields
        expected["n"] = .int64(6)
        expected["d"] = nil
        expected["added"] = .string("new")
        #expect(updated.fields == expected)
        #expect(try await db.lookup("source", zone: "Z").record?.fields == expected)
        current = updated
        // While the VALIDATE reference stands, its target cannot be deleted...
        let refused = try await db.modify([.forceDelete(recordName: "target")], zone: "Z").results[0]
        #expect(refused.error?.serverErrorCode == .validatingReferenceError)
        // ...and once an update clears the field, it can.
        let cleared = try await db.modify([.update(record("source", tag: current.recordChangeTag, ["ref": .null]))], zone: "Z").results[0]
        #expect(cleared.record?.fields["ref"] == nil && cleared.record?.fields["title"] == fields["title"])
        #expect(try await db.modify([.forceDelete(recordName: "target")], zone: "Z").results[0].error == nil)
    }
}
