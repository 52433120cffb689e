import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

extension Harness {
    /// Opens Gallery with `count` Artworks (`art-0000`…, year 1800 + i) loaded from its change feed.
    mutating func openGallery(_ count: Int, more: Bool = false) {
        send(.zonesLoaded(.private, .success(Harness.zones)))
        keys(.char("j"), .enter)
        page(Harness.artworks(0..<count), token: "t1", more: more)
    }

    static func artworks(_ range: Range<Int>) -> [RecordResult] {
        range.map { i in
            var r = Record(recordName: String(format: "art-%04d", i), recordType: "Artwork", recordChangeTag: "t\(i)")
            r.fields = ["title": .string("Work \(i)"), "year": .int64(1800 + Int64(i))]
            return .record(r)
        }
    }

    /// Answers the effects the local cache answers (marks, bulk reads, windows) as the runner does.
    mutating func answerFromCache() {
        var guardCount = 0
        while let i = effects.firstIndex(where: { EffectRunner.answer($0, from: cache) != nil }), guardCount < 50 {
            guardCount += 1
            let effect = effects.remove(at: i)
            let rest = effects
            effects = []
            for event in EffectRunner.answer(effect, from: cache) ?? [] {
                effects += Browser.update(&state, event)
            }
            drain()
            effects = rest + effects
        }
    }

    var marked: Set<String> { Browser.marks(state).names }
}

@Suite(.serialized) struct BulkTests {
    @Test func spaceMarksAndMovesOnVMarksARangeStarMarksTheFilterAndEscUnmarks() throws {
        var h = Harness()
        h.openGallery(30)
        h.keys(.char(" "), .char(" "))
        #expect(h.marked == ["art-0000", "art-0001"] && h.state.list?.selection == 2)
        #expect(h.screen.line(2).hasPrefix(" *") && h.screen.line(3).hasPrefix(" *") && !h.screen.line(4).hasPrefix(" *"))
        #expect(h.screen.line(23).contains("2 marked"))
        // Space on a marked record unmarks it.
        h.keys(.char("k"), .char(" "))
        #expect(h.marked == ["art-0000"])
        // V: from the last mark (row 1) to the selection.
        h.keys(.char("j"), .char("j"), .char("j"), .char("V"))
        h.answerFromCache()
        #expect(h.marked == ["art-0000", "art-0001", "art-0002", "art-0003", "art-0004", "art-0005"])
        // Esc unmarks all, and only then goes back.
        h.keys(.escape)
        #expect(h.marked.isEmpty && h.state.pane == .records && h.state.message == "unmarked 6 records")
        // *: every loaded record the filter shows.
        h.keys(.char("/"))
        h.type("work 1")
        h.keys(.enter, .char("*"))
        h.answerFromCache()
        #expect(h.marked.count == 11, "Work 1, Work 10…19")
        #expect(h.state.message?.contains("marked 11 more records") == true)
        try assertSnapshot(h.screen, "records-marked-80x24")
        h.keys(.escape)
        h.keys(.escape)
        #expect(h.state.pane == .zones || h.state.filter == nil, "with no marks Esc does what it did")
    }

    @Test func starSaysWhatIsNotLoaded() {
        var h = Harness()
        h.openGallery(30, more: true)
        h.keys(.char("*"))
        h.answerFromCache()
        #expect(h.marked.count == 30)
        #expect(h.state.message?.contains("not loaded yet are not marked") == true)
    }

    @Test func dOnMarksStagesEveryDeletionInOneRead() throws {
        var h = Harness()
        h.openGallery(30)
        h.keys(.char(" "), .char(" "), .char(" "), .char("d"))
        guard case .loadMarked(_, let names, .delete)? = h.effects.first else {
            Issue.record("expected one read of the marked records: \(h.effects)")
            return
        }
        #expect(names == ["art-0000", "art-0001", "art-0002"])
        h.answerFromCache()
        #expect(h.state.staged.operations.map(\.kind) == [.delete, .delete, .delete])
        #expect(h.state.staged.operations.map(\.baseTag) == ["t0", "t1", "t2"])
        #expect(h.marked.isEmpty && h.state.message?.contains("staged the deletion of 3 records") == true)
        #expect(h.screen.line(2).hasPrefix("D"))
    }

    /// `:set artist artist-b` changes the target and keeps each record's action unless the value names
    /// one (a new user's DELETE_SELF became NONE).
    @Test func setOnAReferenceKeepsTheActionUnlessOneIsTyped() throws {
        var h = Harness()
        h.openGallery(2)
        let key = try #require(h.state.list?.key)
        let records = ["a", "b"].map { name -> Record in
            var r = Record(recordName: name, recordType: "Artwork", recordChangeTag: "t")
            r.fields = ["artist": .reference(Reference(recordName: "artist-a", action: name == "a" ? .deleteSelf : .validate))]
            return r
        }
        h.send(.markedLoaded(key, .set(field: "artist", value: "artist-b"), records: records, missing: []))
        #expect(h.state.staged.operations.map { $0.changes["artist"] } == [
            .reference(Reference(recordName: "artist-b", action: .deleteSelf)), .reference(Reference(recordName: "artist-b", action: .validate))])
        h.send(.markedLoaded(key, .set(field: "artist", value: "artist-c none"), records: records, missing: []))
        #expect(h.state.staged.operations.allSatisfy { $0.changes["artist"] == .reference(Reference(recordName: "artist-c", action: .noAction)) })
    }

    @Test func setStagesOneTypedFieldChangeOnEveryMarkOrNothing() throws {
        var h = Harness()
        h.openGallery(30)
        h.keys(.char("*"))
        h.answerFromCache()
        #expect(h.marked.count == 30)
        // A value that does not parse for the field's type: refused, nothing staged, the line kept.
        h.keys(.char(":"))
        h.type("set year twenty")
        h.keys(.enter)
        h.answerFromCache()
        #expect(h.state.staged.isEmpty)
        #expect(h.state.input?.text == "set year twenty" && h.state.input?.refused == true)
        #expect(h.inputNote?.contains("INT64") == true)
        h.keys(.escape)
        h.keys(.char(":"))
        h.type("set year 1900")
        h.keys(.enter)
        h.answerFromCache()
        #expect(h.state.staged.operations.count == 30)
        #expect(h.state.staged.operations.allSatisfy { $0.changes == ["year": .int64(1900)] && $0.kind == .update })
        #expect(h.state.message?.contains("staged year = 1900 on 30 records") == true)
        // A field with no type known anywhere is refused too.
        h.keys(.char("*"))
        h.answerFromCache()
        h.keys(.char(":"))
        h.type("set mood calm")
        h.keys(.enter)
        h.answerFromCache()
        #expect(h.inputNote?.contains("type of 'mood' is unknown") == true)
        // With the schema loaded, the refusal names the type that lacks the field (not "load the schema").
        h.send(.schemaLoaded(.success(SchemaScreenTests.known())))
        h.keys(.escape, .char(":"))
        h.type("set mood calm")
        h.keys(.enter)
        h.answerFromCache()
        #expect(h.inputNote?.contains("has no field 'mood' in the schema") == true && h.inputNote?.contains("load the schema") == false, "\(h.inputNote ?? "")")
        // With no marks, :set says how to mark.
        h.keys(.escape, .escape)
        h.keys(.char(":"))
        h.type("set year 1")
        h.keys(.enter)
        #expect(h.inputNote?.contains("no record is marked") == true)
    }

    /// Stages the deletion of `count` Gallery records.
    func staged(_ count: Int, environment: CloudKitEnvironment = .development) -> Harness {
        var h = Harness(width: 80, height: 24, environment: environment)
        let zone = h.state.connection.zone(Harness.gallery)
        h.state.staged.stage(all: (0..<count).map { i in
            StagedOperation(kind: .delete, zone: zone, base: Record(recordName: String(format: "art-%04d", i), recordType: "Artwork", recordChangeTag: "t\(i)"))
        })
        return h
    }

    @Test func aBatchOverTwoHundredGoesOutInSeveralAtomicRequestsWithTheCountTyped() throws {
        var h = staged(450)
        h.keys(.char("c"))
        let plan = try #require(h.state.commit?.plan)
        #expect(plan.requests.map(\.body.operations.count) == [200, 200, 50] && plan.requests.allSatisfy(\.atomic))
        #expect(plan.notes.contains { $0.contains("450 operations in zone Gallery go out as 3 atomic requests") && $0.contains("atomicity holds within each request only") })
        #expect(Browser.previewText(h.state).contains("Type 450 to send: the 450 operations, sent as 3 requests."))
        try assertSnapshot(h.screen, "commit-split-80x24")
        h.keys(.char("y"))
        #expect(h.commitPlans.isEmpty, "y is not enough: the count must be typed")
        h.type("45")
        h.keys(.enter)
        #expect(h.commitPlans.isEmpty && h.state.message?.contains("type 450") == true)
        h.type("0")
        #expect(h.screen.line(22).contains("type 450 to send") && h.screen.beforeCursor.hasSuffix("Esc cancels: 450") && h.screen.cursor?.y == 22)
        h.keys(.enter)
        #expect(h.commitPlans.count == 1)
    }

    @Test func twoHundredExactlyIsOneRequestAndYSends() throws {
        var h = staged(200)
        h.keys(.char("c"))
        #expect(h.state.commit?.plan.requests.count == 1 && h.state.commit?.plan.split.isEmpty == true)
        h.keys(.char("y"))
        #expect(h.commitPlans.count == 1)
    }

    func cascading(_ h: inout Harness, _ count: Int) {
        let zone = h.state.connection.zone(Harness.gallery)
        let key = RecordKey(zone: zone, recordName: "art-0000")
        let referrers = (0..<count).map { i in
            Referrer(key: RecordKey(zone: zone, recordName: "child-\(i)"), recordType: "Artwork", field: "parent", action: .deleteSelf, target: "art-0000")
        }
        h.send(.referrersFound([key: DeleteImpact(referrers: referrers)]))
    }

    /// A whole zone marked and deleted: what refers to a deleted record and is deleted by the batch
    /// itself is neither "also deleted" nor "left referring to nothing"; the preview and the batch say
    /// how many such there were, and the count to type holds only the cascade's own records.
    @Test func referrersTheBatchDeletesItselfAreNotACascadeNorDangling() throws {
        var h = staged(3)
        let zone = h.state.connection.zone(Harness.gallery)
        let key = RecordKey(zone: zone, recordName: "art-0000")
        func ref(_ name: String, _ action: ReferenceAction) -> Referrer {
            Referrer(key: RecordKey(zone: zone, recordName: name), recordType: "Artwork", field: "parent", action: action, target: "art-0000")
        }
        h.keys(.char("c"))
        h.send(.referrersFound([key: DeleteImpact(referrers: [ref("art-0001", .deleteSelf), ref("child-1", .deleteSelf), ref("art-0002", .noAction)])]))
        let preview = Browser.previewText(h.state).joined(separator: "\n")
        #expect(preview.contains("deleting art-0000 also deletes 1 record: 1 Artwork (parent → DELETE_SELF)"))
        #expect(preview.contains("2 records referring to it are deleted by this batch too"))
        #expect(!preview.contains("will refer to nothing"))
        #expect(Browser.recordBatchLines(h.state, width: Layout(h.state).textWidth).contains { $0.text.contains("2 records referring to it are deleted by this batch too") })
    }

    @Test func aCascadeNeedsItsCountTyped() throws {
        var h = staged(1)
        h.keys(.char("c"))
        cascading(&h, 85)
        #expect(Browser.previewText(h.state).contains("Type 85 to send: the 85 records the cascade also deletes."))
        h.keys(.char("y"))
        #expect(h.commitPlans.isEmpty)
        h.type("85")
        h.keys(.enter)
        #expect(h.commitPlans.count == 1)
    }

    @Test func aSplitBatchThatCascadesNeedsTheSumTypedAndSaysWhatItIs() throws {
        var h = staged(250)
        h.keys(.char("c"))
        cascading(&h, 5)
        #expect(Browser.previewText(h.state).contains("Type 255 to send: 250 operations in 2 requests + 5 records the cascade deletes."))
        h.type("250")
        h.keys(.enter)
        #expect(h.commitPlans.isEmpty)
        h.keys(.backspace, .backspace, .backspace)
        h.type("255")
        h.keys(.enter)
        #expect(h.commitPlans.count == 1)
    }

    @Test func productionWithACountNeedsBoth() throws {
        var h = staged(201, environment: .production)
        h.keys(.char("c"))
        h.type("iCloud.com.example.Gallery")
        h.keys(.enter)
        #expect(h.commitPlans.isEmpty)
        h.type(" 201")
        h.keys(.enter)
        #expect(h.commitPlans.count == 1)
    }

    @Test func exportWithMarksChecksThePathThenWrites() throws {
        var h = Harness()
        h.openGallery(30)
        h.keys(.char(" "), .char(" "), .char(":"))
        h.type("export /tmp/marked.csv")
        h.keys(.enter)
        guard case .checkExportPath(let request)? = h.effects.first else {
            Issue.record("expected the path checked first: \(h.effects)")
            return
        }
        #expect(request.names == ["art-0000", "art-0001"] && request.format == .csv)
        h.send(.exportPathChecked(request, refused: nil))
        #expect(h.effects == [.export(request)])
        h.send(.exported(request, .success(ExportResult(records: 2, path: "/tmp/marked.csv"))))
        #expect(h.state.message == "exported 2 records to /tmp/marked.csv (CSV)")
        // Refused: the line opens again with the text and why.
        h.send(.exportPathChecked(request, refused: "the directory /nope does not exist"))
        #expect(h.state.input?.text == "export /tmp/marked.csv" && h.inputNote?.contains("/nope") == true)
    }

    @Test func exportWithoutMarksLoadsTheRestOfTheZoneFirst() throws {
        var h = Harness()
        h.openGallery(30, more: true)
        _ = h.effects
        h.keys(.char(":"))
        h.type("export all.jsonl")
        h.keys(.enter)
        guard case .checkExportPath(let request)? = h.effects.first else {
            Issue.record("expected the path checked first: \(h.effects)")
            return
        }
        #expect(request.names == nil && request.format == .jsonLines)
        h.send(.exportPathChecked(request, refused: nil))
        #expect(h.state.list?.loadingToEnd == true && h.state.message?.contains("for the export") == true)
        #expect(!h.effects.contains(.export(request)))
        h.page(Harness.artworks(30..<60), token: "t2", more: true)
        #expect(h.state.message?.contains("60 loaded") == true && !h.effects.contains(.export(request)))
        h.page(Harness.artworks(60..<70), token: "t3", more: false)
        #expect(h.effects.contains(.export(request)), "written once the last page is in")
    }
}
