import BrowserRuntime
import BrowserRuntimeTesting
import CloudKitLocal
import CloudKitWeb
import Foundation
import RecordBrowser
import Testing
import TerminalUI

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

/// Issue 32: a staged delete's impact counted by the server where the schema makes the reference
/// field QUERYABLE (every page of records/query, the DELETE_SELF cascade followed), merged with the
/// cache's; a field without the index named as not asked; the typed count is the total.
@Suite struct ServerDeleteImpactTests {
    let zone = ZoneID(zoneName: "Z")

    @Test func theServerCountsTheCascadeTheCacheHasNotSeen() async throws {
        let (service, client) = try inProcessServer()
        let db = client.database(.private)
        _ = try await db.modifyZones([ZoneOperation(.create, zone)])
        func ref(_ name: String, _ action: ReferenceAction) -> FieldValue { .reference(Reference(recordName: name, action: action)) }
        var ops: [RecordOperation] = [.create(Record(recordName: "artist", recordType: "Artist", fields: ["name": .string("Mei")]))]
        // 250 works go with the artist (more than a page of a query); 5 captions go with their works.
        ops += (0..<250).map { .create(Record(recordName: String(format: "work-%03d", $0), recordType: "Artwork", fields: ["artist": ref("artist", .deleteSelf)])) }
        ops += (0..<5).map { .create(Record(recordName: "caption-\($0)", recordType: "Caption", fields: ["work": ref(String(format: "work-%03d", $0), .deleteSelf)])) }
        // An exhibition lists two works (NONE, a list); a loan names the artist (NONE) on a field that
        // loses its QUERYABLE index below: the server cannot be asked about it.
        ops.append(.create(Record(recordName: "show", recordType: "Exhibition", fields: ["works": .referenceList([Reference(recordName: "work-000", action: .noAction), Reference(recordName: "work-001", action: .noAction)])])))
        ops.append(.create(Record(recordName: "loan", recordType: "Loan", fields: ["artist": ref("artist", .noAction)])))
        for part in stride(from: 0, to: ops.count, by: 200) {
            _ = try await db.modifyRecords(ModifyRecordsRequest(operations: Array(ops[part..<min(ops.count, part + 200)]), zoneID: zone))
        }
        try await service.removeIndex(.queryable, recordType: "Loan", field: "artist", container: "iCloud.t", environment: .development)

        let cache = try RecordCache(directory: tempDirectory("cache"), account: testAccount())
        let journal = try StagingJournal(directory: tempDirectory("journal"), account: testAccount())
        let runner = EffectRunner(client: client, cache: cache, journal: journal)
        var runtime = BrowserLoop(state: BrowserState(connection: ConnectionInfo(account: testAccount(), database: .private)), runner: runner)
        runtime.state.size = (80, 24)
        // Start (zones and the schema), open the zone (its first page cached), then the artist.
        await runtime.start(host: HeadlessHost())
        #expect(runtime.state.schema?.indexesKnown == true)
        runtime.state.setSelection(.zones, try #require(runtime.state.zones.firstIndex { $0.zone?.zoneID.zoneName == "Z" }))
        await runtime.settle([.key(.enter)], host: HeadlessHost())
        await runtime.settle([.key(.char(":"))] + "open artist".map { .key(.char($0)) } + [.key(.enter)], host: HeadlessHost())
        #expect(runtime.state.detail?.record?.recordName == "artist", "\(runtime.state.message ?? "")")
        await runtime.settle([.key(.char("d"))], host: HeadlessHost())
        let key = try #require(runtime.state.staged.operations.first?.key)
        let impact = try #require(runtime.state.known.impacts[key])
        guard case .counted(let fields, let found) = impact.server else {
            Issue.record("the server was not asked: \(impact.server)")
            return
        }
        #expect(Set(fields.map(\.label)) == ["Artwork.artist", "Caption.work", "Exhibition.works"])
        #expect(found.failure == nil && found.truncatedAt == nil)
        #expect(impact.notQueryable == ["Loan.artist"])
        #expect(impact.cascade.count == 255, "250 works and 5 captions")
        // The exhibition was counted by the server; the loan (its field not QUERYABLE) only if cached.
        #expect(impact.dangling.map(\.key.recordName).contains("show"))
        let lines = impact.lines(deleting: "artist").map(\.text)
        #expect(lines.first == "deleting artist also deletes 255 records: 250 Artwork (artist → DELETE_SELF), 5 Caption (work → DELETE_SELF)")
        #expect(lines.contains("Loan.artist not QUERYABLE: not asked (only cached records counted)"))
        #expect(runtime.state.message == lines.first)

        // The typed count is the total; the server then holds exactly what was said.
        await runtime.settle([.key(.char("c"))], host: HeadlessHost())
        #expect(Browser.previewLines(runtime.state).contains { $0.text.hasPrefix("Type 255 to send") })
        await runtime.settle("255".map { .key(.char($0)) } + [.key(.enter)], host: HeadlessHost())
        #expect(runtime.state.commit?.phase == .done, "\(runtime.state.message ?? "")")
        var left: [String] = []
        let names = ops.map(\.record.recordName)
        for part in stride(from: 0, to: names.count, by: 200) {
            left += try await db.lookupRecords(Array(names[part..<min(names.count, part + 200)]), zoneID: zone).compactMap(\.record).map(\.recordName)
        }
        #expect(left.sorted() == ["loan", "show"])
    }
}
