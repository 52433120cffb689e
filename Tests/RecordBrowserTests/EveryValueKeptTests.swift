import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// Issue 32, "every value kept unless changed": the editors lose nothing they were not told to change,
/// references say what they do, a VALIDATE reference to nothing is flagged before commit, and the
/// batch shows lists element by element.
@Suite(.serialized) struct EveryValueKeptTests {
    /// The reference's example record with every field type (the wire fixture CloudKitWebTests decodes).
    static func allTypes() throws -> Record {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CloudKitWebTests/Fixtures/record-all-types.json")
        return try Record(json: try JSON(parsing: Array(try Data(contentsOf: url))))
    }

    /// Values beyond the fixture's: a reference without an action, one to another owner's zone, list
    /// elements that one-per-line text would lose, a location with only some parts.
    static let extraFields: [String: FieldValue] = [
        "bare": .reference(Reference(recordName: "x", action: nil)),
        "far": .reference(Reference(recordName: "y", zoneID: ZoneID(zoneName: "Other", ownerRecordName: "_owner", zoneType: .regularCustomZone), action: .validate)),
        "odd": .stringList(["", "two\nlines", " edge ", "[not json"]),
        "bracket": .stringList(["[x]", "y"]),
        "vonly": .location(Location(latitude: -0.5, longitude: 179.25, verticalAccuracy: 2, speed: 0, timestamp: -1)),
        "tiny": .doubleList([1e-300, -0.0, 123456789.125]),
        "empty": .bytes(Data()),
        "rlBare": .referenceList([Reference(recordName: "a", action: nil), Reference(recordName: "b", action: .deleteSelf)]),
    ]

    /// Every editable value: its text parses back to itself (the whole value, and each list element).
    @Test func everyEditableValueRoundTripsThroughItsText() throws {
        var record = try Self.allTypes()
        record.fields.merge(Self.extraFields) { a, _ in a }
        var checked = 0
        for (name, value) in record.fields.sorted(by: { $0.key < $1.key }) where FieldInput.isEditable(value.type) {
            let text = FieldInput.text(of: value)
            #expect(try FieldInput.parse(text, as: value.type, original: value).get() == value, "\(name): \(text)")
            for (i, element) in value.listElements.enumerated() {
                let elementText = FieldInput.text(of: element)
                #expect(try FieldInput.parse(elementText, as: element.type, original: element).get() == element, "\(name)[\(i)]: \(elementText)")
            }
            checked += 1
        }
        #expect(checked >= 20, "the fixture's editable fields and the extra ones were all checked (\(checked))")
    }

    /// The `$EDITOR` form left untouched is no change, for every field (assets, encrypted bytes and
    /// an UNKNOWN_LIST included), and parses back to exactly the record's values.
    @Test func theEditorFormUntouchedChangesNothing() throws {
        var record = try Self.allTypes()
        record.fields.merge(Self.extraFields) { a, _ in a }
        let text = FieldsJSON.text(record: record, operation: nil, error: nil)
        #expect(try FieldsJSON.changes(from: text, base: record.fields) == [:])
        guard case .object(let object) = try JSON(parsing: FieldsJSON.body(of: text)) else { Issue.record("not an object"); return }
        for (name, value) in record.fields {
            #expect(try FieldValue(json: object[name] ?? .null) == value, "\(name)")
        }
    }

    /// Through the browser: e then Enter on every editable field (each element of a list) stages nothing.
    @Test func theInlineEditorUntouchedStagesNothing() throws {
        var record = try Self.allTypes()
        record.fields.merge(Self.extraFields) { a, _ in a }
        var h = Harness(width: 100, height: 30)
        h.openDetail(record)
        var opened = 0
        for (name, value) in record.fields.sorted(by: { $0.key < $1.key }) where FieldInput.isEditable(value.type) {
            let lines = Browser.detailPage(h.state)!.lines
            let targets = value.isList ? lines.indices.filter { lines[$0].owner == name && lines[$0].element != nil } : lines.indices.filter { lines[$0].field == name }
            for index in targets {
                while h.state.detail!.selection < index { h.keys(.char("j")) }
                while h.state.detail!.selection > index { h.keys(.char("k")) }
                h.keys(.char("e"))
                #expect(h.state.editor != nil, "\(name): the editor opens")
                h.keys(.enter)
                #expect(h.state.editor == nil && h.state.staged.isEmpty, "\(name): \(h.state.message ?? "") \(h.state.staged.operations.first?.changes ?? [:])")
                opened += 1
            }
        }
        #expect(opened >= 25)
    }

    @Test func aLocationKeepsAltitudeAndTimeAndTheyCanBeChanged() throws {
        let demo = Location(latitude: 48.8619, longitude: 2.3376, horizontalAccuracy: 5, altitude: 35, timestamp: 1_709_294_400_000)
        let text = FieldInput.text(of: .location(demo))
        #expect(text == "48.8619, 2.3376 ± 5.0 alt 35.0 at 2024-03-01T12:00:00Z")
        // Only the coordinates changed: the rest is kept.
        let moved = try FieldInput.parse(text.replacingOccurrences(of: "2.3376", with: "2.34"), as: .location).get()
        #expect(moved == .location(Location(latitude: 48.8619, longitude: 2.34, horizontalAccuracy: 5, altitude: 35, timestamp: 1_709_294_400_000)))
        // Every part can be written, in any order after the coordinates; units may be given.
        let all = try FieldInput.parse("1.5, -2.5 ± 3m alt 12.25m ± 4 speed 1.5m/s course 90° at 1709290000000", as: .location).get()
        #expect(all == .location(Location(latitude: 1.5, longitude: -2.5, horizontalAccuracy: 3, verticalAccuracy: 4, altitude: 12.25, speed: 1.5, course: 90, timestamp: 1_709_290_000_000)))
        // A part taken out is cleared; the old short form still parses.
        #expect(try FieldInput.parse("48.8619, 2.3376 ± 5.0", as: .location).get() == .location(Location(latitude: 48.8619, longitude: 2.3376, horizontalAccuracy: 5)))
        #expect(try FieldInput.parse("48.8619, 2.3376, 5", as: .location).get() == .location(Location(latitude: 48.8619, longitude: 2.3376, horizontalAccuracy: 5)))
        // Mistakes are said.
        #expect(FieldInput.parse("48, 2 alt", as: .location).failureText?.contains("the altitude is missing") == true)
        #expect(FieldInput.parse("48, 2 height 3", as: .location).failureText?.contains("'height' is not part of a location") == true)
        #expect(FieldInput.parse("48, 2 alt 1 alt 2", as: .location).failureText?.contains("given twice") == true)
        #expect(FieldInput.parse("48, 2 ± -1", as: .location).failureText?.contains("cannot be negative") == true)
        #expect(FieldInput.parse("48, 2 at yesterday", as: .location).failureText?.contains("ISO-8601") == true)
    }

    @Test func theEditorShowsAllKeptPartsAndStagesAChangedAltitude() throws {
        var record = Harness.detailRecord
        record.fields["place"] = .location(Location(latitude: 48.8619, longitude: 2.3376, horizontalAccuracy: 5, altitude: 35, timestamp: 1_709_294_400_000))
        var h = Harness(width: 80, height: 24)
        h.openDetail(record)
        h.select(field: "place")
        h.keys(.char("e"))
        #expect(h.state.editor?.string == "48.8619, 2.3376 ± 5.0 alt 35.0 at 2024-03-01T12:00:00Z")
        #expect(h.screen.snapshot.contains("48.8619, 2.3376 ± 5.0 alt 35.0 at 2024-03-01T12:00:00Z"))
        h.keys(.ctrl("a"))
        for _ in 0..<"48.8619, 2.3376 ± 5.0 alt ".count { h.keys(.right) }
        h.keys(.delete, .delete)
        h.type("40")
        h.keys(.enter)
        #expect(h.state.staged.operations.first?.changes["place"] == .location(Location(latitude: 48.8619, longitude: 2.3376, horizontalAccuracy: 5, altitude: 40, timestamp: 1_709_294_400_000)))
    }

    @Test func aReferenceSaysItsTargetAndAction() throws {
        // No action stays no action; a zone named as before keeps its owner and type.
        let far = Reference(recordName: "y", zoneID: ZoneID(zoneName: "Other", ownerRecordName: "_owner", zoneType: .regularCustomZone), action: .validate)
        #expect(FieldInput.text(of: .reference(far)) == "y VALIDATE zone Other owner _owner")
        #expect(try FieldInput.parse("z VALIDATE zone Other owner _owner", as: .reference, original: .reference(far)).get()
                == .reference(Reference(recordName: "z", zoneID: far.zoneID, action: .validate)))
        #expect(try FieldInput.parse("x", as: .reference, original: .reference(Reference(recordName: "x", action: nil))).get() == .reference(Reference(recordName: "x", action: nil)))
        #expect(try FieldInput.parse("x", as: .reference).get() == .reference(Reference(recordName: "x", action: .noAction)), "a new reference says NONE")
        #expect(FieldInput.parse("x NONE VALIDATE", as: .reference).failureText?.contains("REFERENCE is") == true)
        // The editor says what the typed reference does.
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.select(field: "artist")
        h.keys(.char("e"))
        #expect(h.screen.snapshot.contains("→ target artist-hokusai (DELETE_SELF): deleting the target deletes this record too"))
        h.keys(.ctrl("u"))
        h.type("artist-nobody VALIDATE")
        #expect(h.screen.snapshot.contains("→ target artist-nobody (VALIDATE): the target must exist"))
    }

    /// A VALIDATE reference to a record nobody knows is looked up when staged; the batch and the
    /// commit preview say it will be refused before anything is sent.
    @Test func aValidateReferenceToNothingIsFlaggedBeforeCommit() throws {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.select(field: "artist")
        h.keys(.char("e"), .ctrl("u"))
        h.type("artist-nobody VALIDATE")
        h.keys(.enter)
        let target = RecordKey(zone: h.state.staged.operations[0].zone, recordName: "artist-nobody")
        #expect(h.effects == [.checkTargets([target])])
        h.keys(.char("b"))
        #expect(h.screen.snapshot.contains("artist: artist-hokusai (DELETE_SELF) → artist-nobody (VALIDATE)"))
        #expect(h.screen.snapshot.contains("artist → artist-nobody: checking that it exists…"))
        h.send(.targetsChecked([target: false], failure: nil))
        #expect(h.state.message == "artwork-7.artist → artist-nobody does not exist: VALIDATE will refuse")
        #expect(h.screen.snapshot.contains("✗ artist → artist-nobody does not exist: VALIDATE will refuse"))
        try assertSnapshot(h.screen, "batch-validate-missing-100x30")
        h.keys(.char("c"))
        #expect(!h.effects.contains { if case .checkTargets = $0 { return true } else { return false } }, "a known answer is not asked again")
        #expect(Browser.previewText(h.state).contains("    ✗ artist → artist-nobody does not exist: VALIDATE will refuse"))
        // A target that exists says nothing.
        h.send(.targetsChecked([target: true], failure: nil))
        #expect(!Browser.previewText(h.state).contains { $0.contains("artist-nobody does not exist") })
    }

    @Test func listsAreComparedElementByElement() {
        func s(_ xs: String...) -> [FieldValue] { xs.map(FieldValue.string) }
        #expect(ChangeWords.elements(s("gallery", "print", "room-1"), s("gallery", "print", "room-2", "sale"))
                == [.changed(old: 2, new: 2, from: .string("room-1"), to: .string("room-2")), .added(index: 3, .string("sale"))])
        #expect(ChangeWords.elements(s("a", "b", "c"), s("a", "c")) == [.removed(index: 1, .string("b"))])
        #expect(ChangeWords.elements(s("a", "b", "c"), s("c", "a", "b")) == [.moved(from: 2, to: 0, .string("c"))])
        #expect(ChangeWords.elements(s(), s("x")) == [.added(index: 0, .string("x"))])
        #expect(ChangeWords.elements(s("a", "b"), s("a", "b")) == [])
        let lines = ChangeWords.lines(FieldDiff(field: "tags", old: .stringList(["gallery", "print", "room-1"]), new: .stringList(["gallery", "print", "room-2", "sale"])))
        #expect(lines == ["tags: [3 items] → [4 items]", "  ~ [2] room-1 → room-2", "  + [3] sale added"])
    }

    @Test func theBatchShowsAnAddedElementAndTheCommitItsChanges() throws {
        var h = Harness(width: 80, height: 24)
        h.openDetail()
        let lines = Browser.detailPage(h.state)!.lines
        let index = lines.firstIndex { $0.owner == "tags" && $0.element == 1 }!
        while h.state.detail!.selection < index { h.keys(.char("j")) }
        h.keys(.char("a"))
        h.type("sale")
        h.keys(.enter)
        h.keys(.char("b"))
        #expect(h.screen.snapshot.contains("tags: [2 items] → [3 items]"))
        #expect(h.screen.snapshot.contains("+ [2] sale added"))
        h.keys(.char("c"))
        #expect(Browser.previewText(h.state).contains("What changes:"))
        #expect(Browser.previewText(h.state).contains("      + [2] sale added"))
    }

    /// After a commit, the requests shown are those sent: the upload's receipt, not the local file.
    @Test func theCommitResultShowsTheRequestsAsSent() throws {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        let zone = h.state.detail!.zone
        let file = Asset(size: 2_048, downloadURL: "file:///w/new.png")
        h.state.staged.stage(StagedOperation(kind: .update, zone: zone, base: Harness.detailRecord, changes: ["image": .asset(file)]))
        h.keys(.char("c"))
        #expect(Browser.previewText(h.state).contains { $0.contains("file:///w/new.png") })
        h.keys(.char("y"))
        guard let plan = h.commitPlans.first else { Issue.record("no commit: \(h.effects)"); return }
        var sent = plan.requests[0]
        sent.body.operations[0].record.fields["image"] = .asset(Asset(fileChecksum: "c1", size: 2_048, receipt: "receipt-1"))
        var saved = Harness.detailRecord
        saved.recordChangeTag = "5abc"
        h.send(.commitFinished([CommitOutcome(request: sent, answer: .answered([.record(saved)]))]))
        let text = Browser.previewText(h.state)
        #expect(text.contains("The requests that were sent:"))
        #expect(text.contains { $0.contains("\"receipt\" : \"receipt-1\"") || $0.contains("\"receipt\": \"receipt-1\"") })
        #expect(!text.contains { $0.contains("file://") }, "no local file URL in what was sent")
    }
}

extension Result where Failure == FieldInputError {
    var failureText: String? { if case .failure(let e) = self { return e.description } else { return nil } }
}

@Suite(.serialized) struct DeleteImpactViewTests {
    @Test func aStagedDeleteSaysWhatItTakesWithIt() throws {
        var h = Harness(width: 100, height: 30)
        h.answersReferrers = false
        h.openDetail()
        h.keys(.char("d"))
        let key = h.state.staged.operations[0].key
        #expect(h.effects == [.findReferrers([key])])
        let works = (0..<170).map { Referrer(key: RecordKey(zone: key.zone, recordName: "work-\($0)"), recordType: "Artwork", field: "artist", action: .deleteSelf, target: "artwork-7") }
        let show = Referrer(key: RecordKey(zone: key.zone, recordName: "show-1"), recordType: "Exhibition", field: "works", action: .noAction, target: "work-3")
        h.send(.referrersFound([key: DeleteImpact(referrers: works + [show])]))
        #expect(h.state.message == "deleting artwork-7 also deletes 170 records: 170 Artwork (artist → DELETE_SELF)")
        h.keys(.char("b"))
        #expect(h.screen.snapshot.contains("✗ deleting artwork-7 also deletes 170 records: 170 Artwork (artist → DELETE_SELF)"))
        #expect(h.screen.snapshot.contains("1 record will refer to nothing: 1 Exhibition (works → NONE)"))
        h.keys(.char("c"))
        #expect(Browser.previewText(h.state).contains("    ✗ deleting artwork-7 also deletes 170 records: 170 Artwork (artist → DELETE_SELF)"))
        #expect(!h.effects.contains(.findReferrers([key])), "looked for once")
    }
}
