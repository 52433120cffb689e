import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI
import BrowserRuntime

extension Harness {
    static let gallery = ZoneID(zoneName: "Gallery", ownerRecordName: owner, zoneType: .regularCustomZone)

    /// Opens the Gallery zone with `records` and shows `record`'s detail.
    mutating func openDetail(_ record: Record = Harness.detailRecord, records: [RecordResult]? = nil) {
        send(.zonesLoaded(.private, .success(Harness.zones)))
        keys(.char("j"), .enter)
        page(records ?? [.record(record)], token: "t", more: false)
        while let list = state.list, list.row(list.selection)?.recordName != record.recordName, list.selection < list.matching - 1 { keys(.char("j")) }
        keys(.enter)
        send(.recordLoaded(RecordKey(zone: state.list!.zone, recordName: record.recordName), .success((.record(record), record.json))))
    }

    /// Moves the detail selection to the line of `field`.
    mutating func select(field: String) {
        let lines = Browser.detailLines(state.detail!, staged: Browser.detailOperation(state))
        guard let index = lines.firstIndex(where: { $0.field == field }) else { return }
        while state.detail!.selection < index { keys(.char("j")) }
        while state.detail!.selection > index { keys(.char("k")) }
    }

    var commitPlans: [CommitPlan] { effects.compactMap { if case .commit(let plan) = $0 { return plan } else { return nil } } }
}

@Suite(.serialized) struct StagingFlowTests {
    @Test func theInlineEditorValidatesInPlaceAndStagesTypedValues() throws {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.select(field: "year")
        h.keys(.char("e"))
        #expect(h.state.editor?.string == "1831" && h.state.editor?.type == .int64)
        h.keys(.ctrl("u"))
        h.type("99999999999999999999")
        h.keys(.enter)
        #expect(h.state.editor?.error?.contains("outside INT64's range") == true, "the error is shown in place")
        #expect(h.state.staged.isEmpty, "nothing is staged from invalid input")
        try assertSnapshot(h.screen, "editor-error-100x30")
        h.keys(.ctrl("u"))
        h.type("1832")
        h.keys(.enter)
        #expect(h.state.editor == nil)
        let op = try #require(h.state.staged.operations.first)
        #expect(op.kind == .update && op.baseTag == "4trx" && op.changes == ["year": .int64(1832)])
        // A multi-line STRING: Ctrl-O inserts a new line.
        h.select(field: "title")
        // Ctrl-U cuts to the line start, as in readline: twice (with the line break between) for two lines.
        h.keys(.char("e"), .ctrl("u"), .backspace, .ctrl("u"))
        #expect(h.state.editor?.text.isEmpty == true)
        h.type("Line one")
        h.keys(.ctrl("o"))
        h.type("Line two")
        h.keys(.enter)
        #expect(h.state.staged.operations[0].changes["title"] == .string("Line one\nLine two"))
        // Clear a field, and add a new one.
        h.select(field: "price")
        h.keys(.char("x"))
        h.keys(.char("a"))
        h.type("rating INT64")
        h.keys(.enter)
        #expect(h.state.editor?.field == "rating")
        h.type("5")
        h.keys(.enter)
        #expect(h.state.staged.operations[0].changes == ["year": .int64(1832), "title": .string("Line one\nLine two"), "price": .null, "rating": .int64(5)])
        try assertSnapshot(h.screen, "detail-staged-100x30")
        // u unstages the selected field's change only; U the record.
        h.select(field: "year")
        h.keys(.char("u"))
        #expect(h.state.staged.operations.first?.changes == ["title": .string("Line one\nLine two"), "price": .null, "rating": .int64(5)])
        h.keys(.char("U"))
        #expect(h.state.staged.isEmpty)
    }

    @Test func editorRejectsUneditableFieldsAndBadNames() {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.select(field: "image")
        h.keys(.char("e"))
        #expect(h.state.editor == nil && h.state.input?.mode == .assetFile(field: "image"), "an asset is replaced by a file, not typed")
        h.keys(.escape)
        h.keys(.char("a"))
        h.type("9lives INT64")
        h.keys(.enter)
        #expect(h.state.editor == nil && h.inputNote?.contains("not a valid field name") == true && h.state.input?.text == "9lives INT64")
        h.keys(.escape)
        h.keys(.char("a"))
        h.type("year STRING")
        h.keys(.enter)
        #expect(h.state.editor == nil && h.inputNote?.contains("exists as INT64") == true)
    }

    @Test func readOnlyRefusesStagingAndCommit() {
        var h = Harness(width: 100, height: 30)
        h.state.readOnlyReason = "--read-only was given"
        h.openDetail()
        h.select(field: "year")
        h.keys(.char("d"))
        #expect(h.state.staged.isEmpty && h.state.message?.contains("read-only") == true)
        h.state.staged.stage(StagedOperation(kind: .delete, database: .private, zoneID: Harness.gallery, base: Harness.detailRecord))
        h.keys(.char("c"))
        #expect(h.state.commit == nil && h.commitPlans.isEmpty && h.state.message?.contains("Nothing sent") == true)
    }

    @Test func listsMarkStagedRecordsAndTheBatchShowsDiffs() throws {
        var h = Harness(width: 100, height: 30)
        let records = Harness.records(0..<6)
        h.openDetail(Harness.detailRecord, records: records + [.record(Harness.detailRecord)])
        h.select(field: "year")
        h.keys(.char("e"), .ctrl("u"))
        h.type("1900")
        h.keys(.enter, .escape)
        #expect(h.state.pane == .records)
        // d in the list reads the record from the cache and stages its deletion.
        h.keys(.char("g"), .char("j"))
        h.keys(.char("d"))
        guard case .loadRecordToDelete(_, let name)? = h.effects.first else {
            Issue.record("expected a cache read, got \(h.effects)")
            return
        }
        #expect(name == "artwork-1")
        var cached = Record(recordName: "artwork-1", recordType: "Artwork", recordChangeTag: "1")
        cached.fields = ["title": .string("One")]
        h.send(.recordToDelete(recordKey(.private, Harness.gallery, name), cached))
        #expect(h.state.staged.operations.map(\.kind) == [.update, .delete])
        try assertSnapshot(h.screen, "records-staged-marks-100x30")
        h.keys(.char("b"))
        #expect(h.state.pane == .batch)
        try assertSnapshot(h.screen, "batch-100x30")
        h.keys(.char("j"), .char("u"))
        #expect(h.state.staged.operations.map(\.recordName) == ["artwork-7"])
        h.keys(.char("X"))
        #expect(h.state.confirmation == .discardAll)
        h.keys(.char("n"))
        #expect(h.state.staged.operations.count == 1, "anything but y keeps them")
        h.keys(.char("X"), .char("y"))
        #expect(h.state.staged.isEmpty)
    }

    /// Stages an update of artwork-7 and a delete of artwork-1 in Gallery, and opens the preview.
    func stagedCommit(environment: CloudKitEnvironment = .development) -> Harness {
        var h = Harness(width: 100, height: 30, environment: environment)
        h.openDetail()
        h.select(field: "year")
        h.keys(.char("e"), .ctrl("u"))
        h.type("1900")
        h.keys(.enter)
        var other = Record(recordName: "artwork-1", recordType: "Artwork", recordChangeTag: "1")
        other.fields = ["title": .string("One")]
        h.state.staged.stage(StagedOperation(kind: .delete, zone: h.state.connection.zone(Harness.gallery), base: other))
        h.keys(.char("c"))
        return h
    }

    @Test func commitPreviewsTheExactRequestAndSendsOneAtomicBatch() throws {
        var h = stagedCommit()
        #expect(h.state.pane == .commit && h.commitPlans.isEmpty, "nothing is sent before confirming")
        try assertSnapshot(h.screen, "commit-preview-100x30")
        h.keys(.char("y"))
        let plan = try #require(h.commitPlans.first)
        #expect(plan.requests.count == 1 && plan.requests[0].atomic)
        #expect(plan.requests[0].body.operations == [
            .update(Record(recordName: "artwork-7", recordType: "Artwork", recordChangeTag: "4trx", fields: ["year": .int64(1900)])),
            .delete(recordName: "artwork-1", recordChangeTag: "1"),
        ])
        // The server applies both.
        var saved = Harness.detailRecord
        saved.recordChangeTag = "4try"
        saved.fields["year"] = .int64(1900)
        h.send(.commitFinished([CommitOutcome(request: plan.requests[0], answer: .answered([.record(saved), .deleted(recordName: "artwork-1", zoneID: Harness.gallery)]))]))
        #expect(h.state.staged.isEmpty)
        #expect(h.state.detail?.record?.recordChangeTag == "4try" && h.state.detail?.record?.fields["year"] == .int64(1900))
        #expect(h.state.message == "committed 2 operations (1 saved, 1 deleted)")
        // The cache is told, so the list shows the new change tag.
        guard case .storeRecords(let key, let rows, _)? = h.effects.first else {
            Issue.record("expected the list to be updated: \(h.effects)")
            return
        }
        _ = try h.cache.store(key, records: rows)
        #expect(try h.cache.record(key, name: "artwork-7")?.recordChangeTag == "4try")
        h.keys(.enter)
        #expect(h.state.pane == .recordDetail && h.state.commit == nil)
    }

    @Test func productionCommitsNeedTheContainerNameTyped() throws {
        var h = stagedCommit(environment: .production)
        h.keys(.char("y"))
        #expect(h.commitPlans.isEmpty, "y is not enough in production")
        h.keys(.backspace)
        try assertSnapshot(h.screen, "commit-production-100x30")
        h.type("iCloud.com.example.Galler")
        h.keys(.enter)
        #expect(h.commitPlans.isEmpty && h.state.message?.contains("exactly") == true)
        h.type("y")
        h.keys(.backspace)
        h.type("y")
        h.keys(.enter)
        #expect(h.commitPlans.count == 1)
    }

    @Test func defaultZoneAndPublicOpsAskBeforeGoingOutNonAtomically() throws {
        var h = Harness(width: 100, height: 30)
        h.state.staged.stage(StagedOperation(kind: .delete, database: .private, zoneID: .default, base: Record(recordName: "n", recordType: "Note", recordChangeTag: "1")))
        h.keys(.char("c"))
        let plan = try #require(h.state.commit?.plan)
        #expect(plan.requests.map(\.atomic) == [false] && plan.hasNonAtomic && plan.requests[0].body.atomic == false)
        #expect(Browser.previewText(h.state).contains { $0.contains("cannot apply") })
        #expect(h.screen.line(28).contains("NOT ATOMIC"))
    }

    /// A commit that came back with CONFLICT for artwork-7 and ATOMIC_ERROR for artwork-1.
    func conflicted() throws -> (Harness, CommitPlan) {
        var h = stagedCommit()
        h.keys(.char("y"))
        let plan = try #require(h.commitPlans.first)
        h.send(.commitFinished([CommitOutcome(request: plan.requests[0], answer: .answered([
            .failure(RecordError(recordName: "artwork-7", info: ServerErrorInfo(serverErrorCode: .conflict, reason: "oplock error"))),
            .failure(RecordError(recordName: "artwork-1", info: ServerErrorInfo(serverErrorCode: .atomicError, reason: "Atomic failure"))),
        ]))]))
        return (h, plan)
    }

    static var serverVersion: Record {
        var r = Harness.detailRecord
        r.recordChangeTag = "5abc"
        r.fields["year"] = .int64(1833)
        r.fields["price"] = .double(99)
        return r
    }

    @Test func aConflictShowsBaseMineAndServerAndRebasesOnKeepMine() throws {
        var (h, _) = try conflicted()
        #expect(h.state.pane == .conflict && h.state.staged.operations.count == 2, "nothing was applied, everything stays staged")
        #expect(h.effects == [.lookupConflicts(zoneKey(.private, Harness.gallery), ["artwork-7"]), .commitSettled])
        #expect(h.state.commit?.innocent == [recordKey(.private, Harness.gallery, "artwork-1")])
        h.send(.conflictVersions(zoneKey(.private, Harness.gallery), .success([.record(Self.serverVersion)])))
        try assertSnapshot(h.screen, "conflict-100x30")
        h.keys(.char("m"))
        // All resolved: the new preview, on the server's tag; the innocent delete unchanged.
        #expect(h.state.pane == .commit && h.state.commit?.phase == .preview)
        let op = try #require(h.state.staged.operations.first)
        #expect(op.baseTag == "5abc" && op.changes == ["year": .int64(1900)] && op.mode == .conditional)
        #expect(h.state.staged.operations[1].baseTag == "1")
        #expect(Browser.previewText(h.state).contains { $0.contains("keep mine, re-based") })
        h.keys(.char("y"))
        let again = try #require(h.commitPlans.first)
        #expect(again.requests[0].atomic && again.requests[0].body.operations.count == 2)
        // Another writer is still active: CONFLICT again loops back into the prompt.
        h.send(.commitFinished([CommitOutcome(request: again.requests[0], answer: .answered([
            .failure(RecordError(recordName: "artwork-7", info: ServerErrorInfo(serverErrorCode: .conflict, reason: "oplock error"))),
            .failure(RecordError(recordName: "artwork-1", info: ServerErrorInfo(serverErrorCode: .atomicError, reason: "Atomic failure"))),
        ]))]))
        #expect(h.state.pane == .conflict && h.state.staged.operations.count == 2)
    }

    /// A conflict over more fields than the screen holds: the table says what is below and scrolls
    /// (PgDn), and in merge mode the field being chosen is always in view and highlighted.
    @Test func aConflictTallerThanTheScreenScrollsAndKeepsTheMergeSelectionInView() throws {
        var (h, _) = try conflicted()
        h.state.size = (80, 24)
        let long = String(repeating: "a long new title ", count: 6)
        let mine: [String: FieldValue] = ["price": .double(1), "title": .string(long), "place": .string("x"), "thumbnail": .string("y"),
                                          "tags": .stringList(["a", "b", "c", "d", "e"]), "acquired": .string("z")]
        h.state.staged.stage(StagedOperation(kind: .update, database: .private, zoneID: Harness.gallery, base: Harness.detailRecord, changes: mine))
        var server = Self.serverVersion
        for (field, _) in mine { server.fields[field] = .string("their " + long) }
        h.send(.conflictVersions(zoneKey(.private, Harness.gallery), .success([.record(server)])))
        var text = h.screen.snapshot
        #expect(text.contains("more fields below") && text.contains("PgDn/PgUp scroll"), "\(text)")
        #expect(!text.contains(" year "), "year is below the fold")
        for _ in 0..<6 { h.keys(.pageDown) }
        text = h.screen.snapshot
        #expect(text.contains(" year ") && text.contains("above"), "\(text)")
        for _ in 0..<6 { h.keys(.pageUp) }
        #expect(!h.screen.snapshot.contains("above"))
        // Merge: j to the last field, which scrolls into view, highlighted, the cursor on it.
        h.keys(.char("g"))
        for _ in 0..<10 { h.keys(.char("j")) }
        let screen = h.screen
        let y = try #require(screen.cursor?.y)
        #expect(screen.line(y).hasPrefix(" year"), "\(screen.snapshot)")
        #expect(screen[1, y].style.reverse)
    }

    @Test func takeTheServersForceAndMerge() throws {
        // Take the server's: my op is dropped and the view shows the server's version.
        var (h, _) = try conflicted()
        h.send(.conflictVersions(zoneKey(.private, Harness.gallery), .success([.record(Self.serverVersion)])))
        h.keys(.char("t"))
        #expect(h.state.staged.operations.map(\.recordName) == ["artwork-1"])
        #expect(h.state.detail?.record?.recordChangeTag == "5abc")
        // Force: forceUpdate without a tag, said in the preview.
        (h, _) = try conflicted()
        h.send(.conflictVersions(zoneKey(.private, Harness.gallery), .success([.record(Self.serverVersion)])))
        h.keys(.char("f"))
        #expect(h.state.staged.operations[0].recordOperation.operationType == .forceUpdate)
        #expect(h.state.staged.operations[0].recordOperation.record.recordChangeTag == nil)
        #expect(Browser.previewText(h.state).contains { $0.contains("FORCED") })
        // Merge: two fields of mine, keep one, take the server's for the other.
        (h, _) = try conflicted()
        h.state.staged.stage(StagedOperation(kind: .update, database: .private, zoneID: Harness.gallery, base: Harness.detailRecord, changes: ["price": .double(1)]))
        h.send(.conflictVersions(zoneKey(.private, Harness.gallery), .success([.record(Self.serverVersion)])))
        h.keys(.char("g"))
        try assertSnapshot(h.screen, "conflict-merge-100x30")
        h.keys(.char(" "))  // price (first, sorted) → the server's
        h.keys(.enter)
        let op = try #require(h.state.staged.operations.first)
        #expect(op.baseTag == "5abc" && op.changes == ["year": .int64(1900)])
    }

    @Test func deletedOnTheServerAndAbort() throws {
        var (h, _) = try conflicted()
        h.send(.conflictVersions(zoneKey(.private, Harness.gallery), .success([.failure(RecordError(recordName: "artwork-7", info: ServerErrorInfo(serverErrorCode: .notFound, reason: "Record not found")))])))
        #expect(h.screen.snapshot.contains("DELETED on the server"))
        h.keys(.char("m"))
        #expect(h.state.pane == .conflict, "keep mine is not a choice for a record that is gone")
        h.keys(.char("r"))
        let op = try #require(h.state.staged.operations.first)
        #expect(op.recordOperation.operationType == .create && op.recordOperation.record.fields["year"] == .int64(1900)
                && op.recordOperation.record.fields["title"] == Harness.detailRecord.fields["title"])
        // Abort: nothing changes, everything stays staged on its original tags.
        (h, _) = try conflicted()
        h.send(.conflictVersions(zoneKey(.private, Harness.gallery), .success([.record(Self.serverVersion)])))
        h.keys(.char("a"))
        #expect(h.state.pane == .batch && h.state.commit == nil)
        #expect(h.state.staged.operations.map(\.baseTag) == ["4trx", "1"])
    }

    @Test func editAgainRebasesAndOpensTheServersVersion() throws {
        var (h, _) = try conflicted()
        h.send(.conflictVersions(zoneKey(.private, Harness.gallery), .success([.record(Self.serverVersion)])))
        h.keys(.char("e"))
        #expect(h.state.pane == .recordDetail && h.state.detail?.record?.recordChangeTag == "5abc")
        #expect(h.state.staged.operations[0].baseTag == "5abc" && h.state.staged.operations[0].changes == ["year": .int64(1900)])
    }

    @Test func aLostAnswerIsCheckedInsteadOfResent() throws {
        var h = stagedCommit()
        h.keys(.char("y"))
        let plan = try #require(h.commitPlans.first)
        h.send(.commitFinished([CommitOutcome(request: plan.requests[0], answer: .unknown(BrowserFailure(message: "connection reset")))]))
        #expect(h.state.commit?.phase == .verifying && h.effects == [.verifyCommit(plan.requests)])
        let verdicts = [
            CommitVerdict(key: recordKey(.private, Harness.gallery, "artwork-7"), applied: .yes, evidence: .holdsSentValues(tag: "9")),
            CommitVerdict(key: recordKey(.private, Harness.gallery, "artwork-1"), applied: .yes, evidence: .gone),
        ]
        h.send(.commitVerified(verdicts, failure: nil))
        #expect(h.state.staged.isEmpty && h.state.commit?.phase == .done && h.state.message?.contains("WAS applied") == true)
    }

    @Test func theJournalIsRestoredWithANotice() {
        var h = Harness()
        var batch = StagedBatch()
        batch.stage(StagedOperation(kind: .delete, database: .private, zoneID: Harness.gallery, base: Harness.detailRecord))
        h.send(.journalRestored(batch, inflight: []))
        #expect(h.state.staged == batch && h.state.message?.contains("restored 1 staged operation") == true)
        let request = CommitPlan.Request(database: .private, body: ModifyRecordsRequest(operations: [.delete(recordName: "x", recordChangeTag: "1")], zoneID: Harness.gallery))
        h.send(.journalRestored(batch, inflight: [request]))
        #expect(h.effects == [.verifyCommit([request])] && h.state.message?.contains("in flight") == true)
    }

    @Test func judgingWhetherALostCommitWasApplied() {
        let zone = ZoneID(zoneName: "Z")
        let update = RecordOperation.update(Record(recordName: "a", recordChangeTag: "t1", fields: ["n": .int64(2), "gone": .null]))
        func judge(_ op: RecordOperation, _ server: RecordResult) -> CommitVerdict.Applied {
            CommitVerdict.judge(op, zone: zoneKey(.private, zone), server: server).applied
        }
        #expect(judge(update, .record(Record(recordName: "a", recordChangeTag: "t1", fields: ["n": .int64(1), "gone": .int64(1)]))) == .no)
        #expect(judge(update, .record(Record(recordName: "a", recordChangeTag: "t2", fields: ["n": .int64(2)]))) == .yes)
        #expect(judge(update, .record(Record(recordName: "a", recordChangeTag: "t3", fields: ["n": .int64(3)]))) == .unclear)
        let delete = RecordOperation.delete(recordName: "a", recordChangeTag: "t1")
        #expect(judge(delete, .deleted(recordName: "a", zoneID: zone)) == .yes)
        #expect(judge(delete, .failure(RecordError(recordName: "a", info: ServerErrorInfo(serverErrorCode: .notFound, reason: nil)))) == .yes)
        #expect(judge(delete, .record(Record(recordName: "a", recordChangeTag: "t1"))) == .no)
        #expect(judge(delete, .record(Record(recordName: "a", recordChangeTag: "t2"))) == .unclear)
    }
}

@Suite struct FieldsJSONTests {
    static let base: [String: FieldValue] = ["title": .string("Wave"), "year": .int64(1831), "image": .asset(Asset(fileChecksum: "x", size: 1))]

    @Test func changesAreRelativeToTheBaseAndRemovedFieldsAreCleared() throws {
        let text = """
            // a header
            // ERROR: old error
            {"title": {"value": "Great Wave"}, "image": {"value": {"fileChecksum": "x", "size": 1}, "type": "ASSET"}, "rating": {"value": 5, "type": "INT64"}}
            """
        let changes = try FieldsJSON.changes(from: text, base: Self.base)
        #expect(changes == ["title": .string("Great Wave"), "year": .null, "rating": .int64(5)])
        #expect(try FieldsJSON.changes(from: "// only comments\n\n", base: Self.base) == nil, "an emptied file cancels")
    }

    @Test func errorsNameTheFieldAndTheTextIsKept() {
        #expect(throws: FieldInputError.self) { try FieldsJSON.changes(from: "{\"title\": ", base: Self.base) }
        do {
            _ = try FieldsJSON.changes(from: "{\"year\": {\"value\": \"soon\", \"type\": \"STRING\"}}", base: Self.base)
            Issue.record("a type change must be refused")
        } catch { #expect(error.description.contains("'year' is INT64")) }
        do {
            _ = try FieldsJSON.changes(from: "{\"year\": {\"value\": \"x\"}}", base: Self.base)
            Issue.record("a wrong-typed value must be refused")
        } catch { #expect(error.description == #"year: "x" is not an integer (INT64)"#) }
        do {
            _ = try FieldsJSON.changes(from: "{\"image\": {\"value\": {\"fileChecksum\": \"y\", \"size\": 2}, \"type\": \"ASSET\"}}", base: Self.base)
            Issue.record("assets cannot be edited")
        } catch { #expect(error.description.contains("assets")) }
        let userText = "// header\n{\"title\": oops}\n"
        let reopened = FieldsJSON.reopen(userText, record: Record(recordName: "a", recordType: "T"), error: "invalid JSON: at 10")
        #expect(reopened.hasPrefix("// ERROR: invalid JSON: at 10") && reopened.hasSuffix("{\"title\": oops}\n"))
        #expect(!reopened.contains("// header"), "the old header is replaced, the user's JSON kept exactly")
    }

    @Test func theEditorRoundTripStagesAndReopensOnError() throws {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.keys(.char("E"))
        guard case .editJSON(let edit)? = h.effects.first else {
            Issue.record("expected the editor: \(h.effects)")
            return
        }
        #expect(edit.text.contains("\"year\"") && edit.text.hasPrefix("// ckbrowse"))
        let broken = edit.text.replacingOccurrences(of: "1831", with: "18x31")
        h.send(.jsonEdited(edit, edited: broken, status: 0))
        guard case .editJSON(let again)? = h.effects.first else {
            Issue.record("an error reopens the editor: \(h.effects)")
            return
        }
        #expect(again.text.hasPrefix("// ERROR:") && again.text.contains("18x31"), "the user's text is kept, the error on top")
        #expect(h.state.staged.isEmpty)
        h.send(.jsonEdited(again, edited: edit.text.replacingOccurrences(of: "1831", with: "1900"), status: 0))
        #expect(h.state.staged.operations.first?.changes == ["year": .int64(1900)])
        h.send(.jsonEdited(edit, edited: "x", status: 1))
        #expect(h.state.message?.contains("status 1") == true && h.state.staged.operations.first?.changes == ["year": .int64(1900)])
        // Fields left out of the file are cleared: the message says how many.
        let onlyYear = "{\"year\": {\"value\": 1900, \"type\": \"INT64\"}, \"title\": {\"value\": \"Wave\", \"type\": \"STRING\"}}"
        h.send(.jsonEdited(edit, edited: onlyYear, status: 0))
        let cleared = Harness.detailRecord.fields.keys.filter { !["year", "title"].contains($0) }.count
        let changes = h.state.staged.operations.first?.changes ?? [:]
        #expect(changes.values.filter { $0 == .null }.count == cleared && cleared > 0)
        #expect(h.state.message?.contains("staged \(changes.count) field changes to 'artwork-7', \(cleared) of them clearing fields") == true, "\(h.state.message ?? "")")
    }
}

extension StagingFlowTests {
    /// The conflict prompt: ? shows its keys, Esc asks before dropping chosen resolutions, merge mode
    /// starts with its first row selected and drawn so.
    @Test func theConflictPromptExplainsItselfAndAsksBeforeThrowingAway() throws {
        var (h, _) = try conflicted()
        h.send(.conflictVersions(zoneKey(.private, Harness.gallery), .success([.record(Self.serverVersion)])))
        h.keys(.char("?"))
        #expect(h.state.showHelp && h.screen.snapshot.contains("keep mine, re-based"))
        h.keys(.char("x"))
        h.keys(.char("g"))
        let conflict = try #require(h.state.commit?.conflicts.first)
        #expect(conflict.merge != nil && conflict.fieldSelection == 0)
        let screen = h.screen
        let selected = (0..<screen.height).filter { y in (0..<screen.width).contains { screen[$0, y].style.reverse } && y < screen.height - 2 }
        #expect(selected.count == 1 && screen.line(selected[0]).contains("year"), "the first merge row is drawn selected")
        h.keys(.escape)  // leaves merge mode
        h.keys(.escape)  // nothing chosen yet: aborts at once
        #expect(h.state.pane == .batch && h.state.staged.operations.count == 2)
    }

    /// A commit that comes back with CONFLICT for a record the server already holds with exactly my
    /// change (another browser committed the same journal) is cleared, not shown as a conflict.
    @Test func aConflictOfIdenticalValuesClearsItself() throws {
        var (h, _) = try conflicted()
        var same = Self.serverVersion
        same.fields["year"] = .int64(1900)  // my staged change
        same.fields["price"] = Harness.detailRecord.fields["price"]
        _ = Browser.update(&h.state, .conflictVersions(zoneKey(.private, Harness.gallery), .success([.record(same)])))
        #expect(h.state.staged.operation(for: recordKey(.private, Harness.gallery, "artwork-7")) == nil, "my op is dropped: the server has it")
        #expect(h.state.pane == .commit, "the rest (the innocent delete) is previewed again")
        #expect(Browser.previewText(h.state).contains { $0.contains("already held exactly my change") })
    }
}
