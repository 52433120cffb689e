import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// Issue #32's smaller items, each as a new user reported it.
@Suite(.serialized) struct SmallItemsTests {
    // MARK: 1. number agreement wherever a count is said

    @Test func countsAgreeWithTheirWords() {
        let h = Harness()
        let zone = zoneKey(.private, Harness.gallery)
        func words(_ report: CommitReport) -> String { Browser.reportLines(report, h.state).map(\.text).joined(separator: "\n") }
        #expect(words(.request(zone: zone, atomic: true, .appliedAll(1))).contains("applied 1 operation atomically."))
        #expect(words(.request(zone: zone, atomic: true, .appliedAll(3))).contains("applied all 3 operations atomically."))
        #expect(words(.verified(applied: 0, notApplied: 1, unclear: 0))
                == "The commit was NOT applied: its 1 operation stays staged; c sends it again.")
        #expect(words(.verified(applied: 0, notApplied: 2, unclear: 0))
                == "The commit was NOT applied: its 2 operations stay staged; c sends them again.")
    }

    @Test func oneRestoredOrAbortedOperationIsSpokenOfInTheSingular() throws {
        var h = Harness()
        var batch = StagedBatch()
        batch.stage(StagedOperation(kind: .delete, database: .private, zoneID: Harness.gallery, base: Harness.detailRecord))
        h.send(.journalRestored(batch, inflight: []))
        #expect(h.state.message == "restored 1 staged operation from the journal, on the change tag it was based on — b reviews, c commits")
        h.keys(.char("b"), .char("X"))
        #expect(h.screen.snapshot.contains("Discard the staged operation? y discards · any other key keeps it"))
    }

    // MARK: 2. the $EDITOR form says what was wrong in the user's words

    @Test func editorFormErrorsSayWhatWasWrongPerType() {
        func error(_ fields: String, base: [String: FieldValue] = ["year": .int64(1831)]) -> String {
            do {
                _ = try FieldsJSON.changes(from: fields, base: base)
                return "no error"
            } catch { return error.description }
        }
        #expect(error(#"{"year": {"value": "twenty", "type": "INT64"}}"#) == #"year: "twenty" is not an integer (INT64)"#)
        #expect(error(#"{"year": {"value": "twenty"}}"#) == #"year: "twenty" is not an integer (INT64)"#, "the type kept from the record")
        #expect(error(#"{"year": {"value": 1.5}}"#) == "year: 1.5 is not an integer (INT64)")
        #expect(error(#"{"title": {"value": 42, "type": "STRING"}}"#) == "title: 42 is not a string (STRING)")
        #expect(error(#"{"price": {"value": "cheap", "type": "DOUBLE"}}"#) == #"price: "cheap" is not a number (DOUBLE)"#)
        #expect(error(#"{"at": {"value": "yesterday", "type": "TIMESTAMP"}}"#) == #"at: "yesterday" is not a time (whole milliseconds since 1970) (TIMESTAMP)"#)
        #expect(error(#"{"thumb": {"value": "not base64!", "type": "BYTES"}}"#) == #"thumb: "not base64!" is not base64 data (BYTES)"#)
        #expect(error(#"{"artist": {"value": {"name": "x"}, "type": "REFERENCE"}}"#)
                .hasPrefix(#"artist: {"name":"x"} is not a reference ({"recordName": …, "action": "NONE"}) (REFERENCE): "#))
        #expect(error(#"{"place": {"value": "Tokyo", "type": "LOCATION"}}"#).hasPrefix(#"place: "Tokyo" is not a location"#))
        #expect(error(#"{"tags": {"value": ["a", "b", 3], "type": "STRING_LIST"}}"#) == "tags[2]: 3 is not a string (STRING_LIST)")
        #expect(error(#"{"tags": {"value": "a", "type": "STRING_LIST"}}"#) == #"tags: "a" is not a list (STRING_LIST: a JSON array)"#)
        #expect(error(#"{"year": {"value": 1, "type": 3}}"#).hasPrefix(#"year: "type" names a type"#))
    }

    // MARK: 4. n offers the schema's record types too, those seen here first

    @Test func newRecordOffersTheSchemasTypesAfterThoseSeenHere() {
        var h = Harness(width: 120, height: 30)
        h.state.schema = KnownSchema(schema: CloudKitSchema(recordTypes: [
            RecordTypeSchema(name: "Artwork"), RecordTypeSchema(name: "Exhibition"), RecordTypeSchema(name: "Users"),
            RecordTypeSchema(name: "Artist"), RecordTypeSchema(name: "cloudkit.share"),
        ]), origin: .server, environment: .development)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<5), token: "t", more: false)
        h.keys(.char("n"))
        #expect(h.state.input?.prompt == "new record (TYPE [NAME]; here: Artist, Artwork; also Exhibition): ")
        h.type("Ex")
        h.keys(.tab)
        #expect(h.state.input?.text == "Exhibition ")
    }

    // MARK: 5. o offers a file name with the extension the download URL says

    @Test func theOfferedAssetFileNameHasTheDownloadURLsExtension() {
        func offered(_ url: String, recordName: String = "artwork-0011") -> String? {
            var record = Record(recordName: recordName, recordType: "Artwork", recordChangeTag: "1")
            record.fields = ["image": .asset(Asset(fileChecksum: "AXa", size: 10, downloadURL: url))]
            var h = Harness(width: 100, height: 30)
            h.openDetail(record)
            h.select(field: "image")
            h.keys(.char("o"))
            return h.state.input?.text
        }
        #expect(offered("https://cdn.example/B/abc/Great%20Wave.JPG?o=1&v=2") == "artwork-0011-image.jpg")
        #expect(offered("https://cvws.icloud-content.com/B/AQ/${f}?o=A&response-content-type=image%2Fpng") == "artwork-0011-image.png")
        #expect(offered("https://cvws.icloud-content.com/B/AQ/${f}?o=A&v=1") == "artwork-0011-image", "no name, no type: no extension")
        #expect(offered("http://127.0.0.1:8080/assets/1/tok/${f}") == "artwork-0011-image", "ckbrowse serve's URLs say neither")
        #expect(offered("https://x/a/file.p/ng?x") == "artwork-0011-image", "a separator never enters the extension")
        #expect(offered("https://x/a/b.tar.gz") == "artwork-0011-image.gz")
        #expect(offered("https://x/a/evil.j%0Ag") == "artwork-0011-image", "a control character is no extension")
        #expect(offered("https://x/a/b.png", recordName: "a/b\u{7}\u{202E}c") == "a_b__c-image.png", "the record's name kept safe")
    }

    // MARK: 6. owners and "by" lines say who, where the name is known

    @Test func ownersAndAuthorsAreNamedWhereKnownAndTheRecordNameIsCopied() throws {
        var h = Harness(width: 120, height: 30)
        h.state.connection.account.identity = .user(recordName: Harness.owner)
        let other = "_9f00aa11bb22cc33dd44ee55ff667788"
        h.send(.usersDiscovered([other: "Ada Lovelace <ada@example.com>"]))
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        #expect(h.screen.snapshot.contains("you"), "the signed-in user's zones: OWNER says you")
        #expect(!h.screen.snapshot.contains(String(Harness.owner.prefix(9))))
        // The records list's MODIFIED BY column too.
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<3), token: "t", more: false)
        #expect(h.screen.snapshot.contains("MODIFIED BY") && !h.screen.snapshot.contains(String(Harness.owner.prefix(9))))
        h = Harness(width: 120, height: 30)
        h.state.connection.account.identity = .user(recordName: Harness.owner)
        h.send(.usersDiscovered([other: "Ada Lovelace <ada@example.com>"]))
        var record = Harness.detailRecord
        record.modified = RecordStamp(timestamp: 1_709_294_500_000, userRecordName: other, deviceID: "3")
        h.openDetail(record)
        let lines = Browser.detailPage(h.state)!.lines
        #expect(lines.contains { $0.field == "  by" && $0.text == "you · device 2" }, "created by the signed-in user")
        #expect(lines.contains { $0.field == "  by" && $0.text == "Ada Lovelace <ada@example.com> · device 3" })
        // y on a by line copies the record name.
        let index = try #require(lines.firstIndex { $0.text.hasPrefix("Ada Lovelace") })
        while h.state.detail!.selection < index { h.keys(.char("j")) }
        h.keys(.char("y"))
        #expect(h.effects == [.copy(other)])
    }

    // MARK: 7. the default column is the STRING field most records of the window have, per type

    @Test func theDefaultColumnIsTheStringFieldMostRecordsHave() {
        var h = Harness(width: 120, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        // As `ckbrowse serve` writes them: fields in name order, so `notes` comes before `title`.
        let records: [RecordResult] = (0..<6).map { i in
            var r = Record(recordName: "artwork-\(i)", recordType: "Artwork", recordChangeTag: "\(i)")
            r.fields = ["title": .string("Title \(i)")]
            if i == 0 { r.fields["notes"] = .string("only this one") }
            if i == 1 { r.fields["notes"] = .string("") }
            return .record(r)
        } + [.record(Record(recordName: "artist-1", recordType: "Artist", recordChangeTag: "a", fields: ["name": .string("Hokusai")]))]
        h.page(records, token: "t", more: false)
        #expect(h.state.list?.view.labels == ["Artwork": "title", "Artist": "name"])
        #expect(h.screen.snapshot.contains("Title 3"))
    }

    @Test func labelFieldCountsNonEmptyStringsAndBreaksTiesByOrder() {
        func fields(_ pairs: [(String, JSON)]) -> JSONObject {
            var o = JSONObject()
            for (k, v) in pairs { o.set(k, v) }
            return o
        }
        let string: (String) -> JSON = { ["value": .string($0), "type": "STRING"] }
        #expect(ListView.labelField(among: []) == nil)
        #expect(ListView.labelField(among: [fields([("a", string("x")), ("b", string("y"))])]) == "a")
        #expect(ListView.labelField(among: [fields([("a", string("")), ("b", string("y"))])]) == "b")
        #expect(ListView.labelField(among: [fields([("n", ["value": 3, "type": "INT64"])])]) == nil)
        let none = fields([])
        #expect(ListView.labelField(among: [fields([("a", string("x"))]), none]) == "a", "half is enough")
        #expect(ListView.labelField(among: [fields([("a", string("x"))]), none, none]) == nil, "a mostly blank column is not chosen")
    }

    // MARK: 8. :shares reads the shares again after :accept

    @Test func sharesReloadAfterAnAccept() {
        var h = Harness()
        h.state.connection.database = .shared
        h.keys(.char(":"))
        h.type("shares")
        h.keys(.enter)
        #expect(h.effects == [.loadShares(.shared)])
        h.send(.sharesLoaded(.shared, .success([])))
        h.keys(.char(":"))
        h.type("accept 0AbCdEf")
        h.keys(.enter)
        #expect(h.effects == [.acceptShare("0AbCdEf")])
        var result = ShortGUIDResult()
        result.zoneID = ZoneID(zoneName: "Notes", ownerRecordName: "_alice")
        result.participantPermission = .readWrite
        h.send(.shareAccepted("0AbCdEf", .success(result)))
        #expect(h.effects.contains(.loadShares(.shared)), "the shares screen is read again: \(h.effects)")
        #expect({ if case .shares(let shares)? = h.state.stack.find(.shares) { shares.shares.loading } else { false } }())
        // Without a shares screen nothing more is read.
        var plain = Harness()
        plain.send(.shareAccepted("0AbCdEf", .success(result)))
        #expect(plain.effects.isEmpty)
    }
}

@Suite struct MistypedCommandTests {
    /// `:q extra` is a typo, not a quit: the line comes back with the reason.
    @Test func quitWithSomethingAfterItIsRefusedNotObeyed() {
        var h = Harness()
        h.keys(.char(":"))
        h.type("q extra")
        h.keys(.enter)
        #expect(!h.state.quitRequested && !h.effects.contains(.quit))
        #expect(h.state.input?.text == "q extra" && h.inputNote == ":q takes nothing after it")
        h.keys(.ctrl("u"))
        h.type("q")
        h.keys(.enter)
        #expect(h.state.quitRequested)
    }
}

@Suite struct ReferenceZoneTests {
    /// A REFERENCE typed with a zone the database does not have says so in the editor, before it is sent.
    @Test func aReferenceToAZoneTheDatabaseDoesNotHaveIsFlaggedInTheEditor() {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.keys(.char("a"))
        h.type("owner REFERENCE")
        h.keys(.enter)
        h.type("artist-1 NONE zone Gallery")
        #expect(!h.screen.snapshot.contains("has no zone"))
        h.keys(.ctrl("u"))
        h.type("artist-1 NONE zone Galery")
        #expect(h.screen.snapshot.contains("✗ the private database has no zone 'Galery' (its zones:"), "\(h.screen.snapshot)")
    }
}

@Suite struct FilterStepTests {
    /// With a `/` filter, n and N step through the matches (N is not the notifications then).
    @Test func capitalNIsThePreviousMatchWhileAFilterIsOn() {
        var h = Harness(width: 100, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<20), token: "t", more: false)
        h.keys(.char("/"))
        h.type("artwork")
        h.keys(.enter)
        h.keys(.char("n"), .char("n"))
        let after = h.state.list?.selection
        h.keys(.char("N"))
        #expect(h.state.pane == .records, "N did not open the notifications")
        #expect(h.state.list?.selection == (after ?? 0) - 1)
        // Without a filter, N opens the notifications as ever.
        h.keys(.escape)
        h.keys(.char("N"))
        #expect(h.state.pane == .notifications)
    }
}

@Suite struct AddOnAListTests {
    /// `a` on a list's own row adds a field (as the help says); on one of its elements, an element after it.
    @Test func aOnAListRowAddsAFieldAndOnAnElementAnElement() {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.select(field: "tags")
        h.keys(.char("a"))
        #expect(h.state.input?.mode == .addField && h.state.editor == nil)
        h.keys(.escape)
        h.keys(.char("j"))  // tags[0]
        h.keys(.char("a"))
        #expect(h.state.editor?.element == .insert(1) && h.state.input == nil)
    }
}

@Suite struct MarkNoteTests {
    /// `V` inside the loaded rows says nothing of rows not loaded; `*` (everything loaded) does.
    @Test func onlyAMarkReachingTheLastLoadedRowSaysTheRestIsNotMarked() {
        var h = Harness()
        h.openGallery(30, more: true)
        h.keys(.char(" "), .char("j"), .char("j"), .char("V"))
        h.answerFromCache()
        #expect(h.marked.count == 4)
        #expect(h.state.message?.contains("not loaded yet") == false, "\(h.state.message ?? "")")
        h.keys(.char("*"))
        h.answerFromCache()
        #expect(h.state.message?.contains("records not loaded yet are not marked") == true, "\(h.state.message ?? "")")
    }
}
