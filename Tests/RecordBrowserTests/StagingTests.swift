import CloudKitWeb
import Testing
@testable import RecordBrowser

@Suite struct StagingTests {
    static let gallery = ZoneID(zoneName: "Gallery")
    static var base: Record {
        Record(recordName: "a", recordType: "Artwork", recordChangeTag: "t1", fields: ["title": .string("Wave"), "year": .int64(1831)])
    }

    @Test func updatesMergeKeepTheirBaseAndDiff() {
        var batch = StagedBatch()
        batch.stage(StagedOperation(kind: .update, database: .private, zoneID: Self.gallery, base: Self.base, changes: ["title": .string("Great Wave")]))
        var newer = Self.base
        newer.recordChangeTag = "t2"
        batch.stage(StagedOperation(kind: .update, database: .private, zoneID: Self.gallery, base: newer, changes: ["year": .null]))
        #expect(batch.operations.count == 1)
        let op = batch.operations[0]
        #expect(op.baseTag == "t1", "the tag the user first edited from")
        #expect(op.diff == [FieldDiff(field: "title", old: .string("Wave"), new: .string("Great Wave")), FieldDiff(field: "year", old: .int64(1831), new: .null)])
        #expect(op.recordOperation == .update(Record(recordName: "a", recordType: "Artwork", recordChangeTag: "t1", fields: ["title": .string("Great Wave"), "year": .null])))
        // Changing a field back to its base value unstages it; nothing left unstages the record.
        batch.stage(StagedOperation(kind: .update, database: .private, zoneID: Self.gallery, base: Self.base, changes: ["title": .string("Wave"), "year": .int64(1831)]))
        #expect(batch.isEmpty)
    }

    @Test func deleteReplacesAnUpdateAndUnstageRemoves() {
        var batch = StagedBatch()
        batch.stage(StagedOperation(kind: .update, database: .private, zoneID: Self.gallery, base: Self.base, changes: ["title": .string("x")]))
        batch.stage(StagedOperation(kind: .delete, database: .private, zoneID: Self.gallery, base: Self.base))
        #expect(batch.operations.map(\.kind) == [.delete] && batch.operations[0].recordOperation == .delete(recordName: "a", recordChangeTag: "t1"))
        batch.unstage(batch.operations[0].key)
        #expect(batch.isEmpty)
    }

    @Test func commitPlanIsOneAtomicRequestPerZoneAndSplitsOnlyPastTwoHundred() throws {
        var batch = StagedBatch()
        for name in ["a", "b"] {
            var r = Self.base
            r.recordName = name
            batch.stage(StagedOperation(kind: .delete, database: .private, zoneID: Self.gallery, base: r))
        }
        let one = try CommitPlan.make(batch)
        #expect(one.requests.count == 1 && one.requests[0].atomic && one.notes.isEmpty)
        #expect(one.requests[0].body.zoneID?.zoneName == "Gallery" && one.requests[0].body.operations.count == 2)
        batch.stage(StagedOperation(kind: .delete, database: .private, zoneID: ZoneID(zoneName: "Drafts"), base: Self.base))
        batch.stage(StagedOperation(kind: .delete, database: .public, zoneID: .default, base: Self.base))
        let three = try CommitPlan.make(batch)
        #expect(three.requests.map(\.atomic) == [true, true, false])
        #expect(three.notes.first?.contains("within each zone only") == true && three.notes.contains { $0.contains("cannot apply") })
        var big = StagedBatch()
        for i in 0..<201 {
            var r = Self.base
            r.recordName = "r\(i)"
            big.stage(StagedOperation(kind: .delete, database: .private, zoneID: Self.gallery, base: r))
        }
        // More than one request allows: split in order, each atomic, and the preview says so.
        let split = try CommitPlan.make(big)
        #expect(split.requests.map(\.body.operations.count) == [200, 1] && split.requests.allSatisfy(\.atomic))
        #expect(split.requests.flatMap(\.body.operations).map(\.record.recordName) == (0..<201).map { "r\($0)" })
        #expect(split.split == [CommitPlan.SplitZone(zone: zoneKey(.private, Self.gallery), operations: 201, requests: 2)])
    }
}
