import BrowserRuntime
import CloudKitWeb
import Foundation
import RecordBrowser
import Testing

/// Issue 32, "a delete that deletes 170": what a staged delete does to the cached records that refer
/// to it, the cascade counted recursively.
@Suite struct DeleteImpactTests {
    @Test func theCascadeIsCountedRecursivelyAndTheRestGrouped() throws {
        let cache = try RecordCache(directory: tempDirectory("impact"), account: testAccount())
        func ref(_ name: String, _ action: ReferenceAction?) -> FieldValue { .reference(Reference(recordName: name, action: action)) }
        var records: [RecordResult] = [.record(Record(recordName: "artist-1", recordType: "Artist"))]
        // 5 artworks go with the artist; each takes a caption with it (DELETE_SELF, two levels down).
        for i in 0..<5 {
            records.append(.record(Record(recordName: "work-\(i)", recordType: "Artwork", fields: ["artist": ref("artist-1", .deleteSelf)])))
            records.append(.record(Record(recordName: "caption-\(i)", recordType: "Caption", fields: ["work": ref("work-\(i)", .deleteSelf)])))
        }
        // An exhibition lists two works (NONE: left dangling), a loan refers to the artist with VALIDATE.
        records.append(.record(Record(recordName: "show-1", recordType: "Exhibition", fields: ["works": .referenceList([Reference(recordName: "work-0", action: .noAction), Reference(recordName: "work-1", action: .noAction)])])))
        records.append(.record(Record(recordName: "loan-1", recordType: "Loan", fields: ["artist": ref("artist-1", .validate)])))
        // An artist of the same name in another zone's list is not this one's referrer's target.
        records.append(.record(Record(recordName: "other", recordType: "Artwork", fields: ["artist": ref("artist-10", .deleteSelf)])))
        try cache.apply(key, records: records, syncToken: "t", continuationMarker: nil, moreComing: false)
        // The same records in a query's list of the zone are counted once.
        try cache.apply(ListKey(zone: key.zone, query: "q"), records: Array(records.prefix(3)), syncToken: nil, continuationMarker: nil, moreComing: false)

        let impact = try cache.deleteImpact(of: RecordKey(zone: key.zone, recordName: "artist-1"))
        #expect(impact.cascade.count == 10, "5 works and their 5 captions")
        #expect(impact.blocking.map(\.key.recordName) == ["loan-1"])
        #expect(impact.dangling.map(\.key.recordName) == ["show-1"])
        let lines = impact.lines(deleting: "artist-1").map(\.text)
        #expect(lines.first == "deleting artist-1 also deletes 10 records: 5 Artwork (artist → DELETE_SELF), 5 Caption (work → DELETE_SELF)")
        #expect(lines.contains("1 record refer to it with VALIDATE: the server will refuse the delete (1 Loan (artist → VALIDATE))") || lines.contains { $0.contains("VALIDATE: the server will refuse the delete") })
        #expect(lines.contains("1 record will refer to nothing: 1 Exhibition (works → NONE)"))
        // A record nothing refers to: nothing to say.
        #expect(try cache.deleteImpact(of: RecordKey(zone: key.zone, recordName: "loan-1")).lines(deleting: "loan-1").isEmpty)
        // The cascade is followed so far only.
        #expect(try cache.deleteImpact(of: RecordKey(zone: key.zone, recordName: "artist-1"), limit: 3).truncatedAt == 3)
        // A bulk d reads the zone once for all its records, and says the same of each.
        let keys = ["artist-1", "work-0", "caption-0", "show-1", "loan-1", "other"].map { RecordKey(zone: key.zone, recordName: $0) }
        let all = try cache.deleteImpacts(of: keys)
        for k in keys {
            let one = try cache.deleteImpact(of: k)
            #expect(Set(all[k]?.cascade.map(\.key) ?? []) == Set(one.cascade.map(\.key)), "\(k.recordName)")
            #expect(Set(all[k]?.blocking.map(\.key) ?? []) == Set(one.blocking.map(\.key)) && Set(all[k]?.dangling.map(\.key) ?? []) == Set(one.dangling.map(\.key)))
        }
    }
}
