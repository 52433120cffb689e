import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// Issue 32: a record's view lists what refers to it ("referenced by"), found once in the cache when
/// it opens, grouped by referring type and field with the action, each line opened with Enter.
@Suite struct ReferencedByTests {
    static func gallery() -> [RecordResult] {
        func ref(_ name: String, _ action: ReferenceAction) -> FieldValue { .reference(Reference(recordName: name, action: action)) }
        var records: [RecordResult] = [.record(Record(recordName: "artist-1", recordType: "Artist", fields: ["name": .string("Mei Chen")]))]
        for i in 0..<3 {
            records.append(.record(Record(recordName: "work-\(i)", recordType: "Artwork", fields: ["title": .string("Work \(i)"), "artist": ref("artist-1", .deleteSelf)])))
        }
        records.append(.record(Record(recordName: "show-1", recordType: "Exhibition", fields: ["artists": .referenceList([Reference(recordName: "artist-1", action: .noAction)])])))
        records.append(.record(Record(recordName: "loan-1", recordType: "Loan", fields: ["artist": ref("artist-1", .validate)])))
        return records
    }

    @Test func theRecordsViewListsItsReferrersAndEnterOpensOne() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        // More is coming: only the cached part of the zone was looked at, and the view says so.
        h.page(Self.gallery(), token: "t", more: true)
        let zone = h.state.list!.zone
        let artist = RecordKey(zone: zone, recordName: "artist-1")
        h.keys(.enter)
        #expect(h.effects.first == .lookupRecord(artist))
        // The cache is asked once, when the record has loaded; the answer is kept in the record's view.
        let record = try #require(Self.gallery()[0].record)
        let effects = Browser.update(&h.state, .recordLoaded(artist, .success((.record(record), record.json))))
        #expect(effects == [.findReferencedBy(artist)])
        let found = try h.cache.referencedBy(artist)
        #expect(found.referrers.map(\.key.recordName).sorted() == ["loan-1", "show-1", "work-0", "work-1", "work-2"])
        #expect(found.looked == 6 && !found.wholeZone)
        h.send(.referencedByFound(artist, found))
        let text = (0..<24).map { h.screen.line($0) }.joined(separator: "\n")
        #expect(text.contains("REFERENCED BY 5 records"))
        let lines = try #require(Browser.detailPage(h.state)?.lines)
        #expect(lines.contains { $0.text.contains("only the cached part of the zone was looked at (6 records)") })
        #expect(lines.contains { $0.isHeading && $0.field == " Artwork.artist → DELETE_SELF" && $0.text == "(3)" })
        #expect(lines.contains { $0.isHeading && $0.field == " Exhibition.artists → NONE" })
        #expect(lines.contains { $0.isHeading && $0.field == " Loan.artist → VALIDATE" })
        // Moving down reaches the referrers (the heading and the note are passed over); Enter opens one.
        let index = try #require(lines.firstIndex { $0.text == "work-1" })
        while h.state.detail!.selection < index { h.keys(.char("j")) }
        #expect(h.state.detail!.selection == index)
        try assertSnapshot(h.screen, "detail-referenced-by-80x24")
        h.keys(.enter)
        #expect(h.effects.first == .lookupRecord(RecordKey(zone: zone, recordName: "work-1")))
        #expect(h.state.detail?.recordName == "work-1")
        // Esc returns to the artist, its referrers still known (not asked again).
        h.keys(.escape)
        #expect(h.state.detail?.recordName == "artist-1" && h.state.detail?.referencedBy == found)
        #expect(h.effects.isEmpty)
    }

    @Test func aWholeZoneIsSaidToBeWholeAndNothingReferringIsSaid() throws {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Self.gallery(), token: "t", more: false)
        let loan = RecordKey(zone: h.state.list!.zone, recordName: "loan-1")
        let found = try h.cache.referencedBy(loan)
        #expect(found.referrers.isEmpty && found.wholeZone && found.looked == 6)
        var detail = RecordDetail(key: loan, record: Record(recordName: "loan-1", recordType: "Loan"), loading: false)
        detail.referencedBy = found
        let lines = Browser.referencedByLines(detail)
        #expect(lines.map(\.text) == ["no record", "every record of the zone is cached: 6 records looked at"])
    }

    @Test func aLongListIsCutAndCounted() {
        let zone = zoneKey(.private, ZoneID(zoneName: "Gallery"))
        let referrers = (0..<250).map { Referrer(key: RecordKey(zone: zone, recordName: "w\($0)"), recordType: "Artwork", field: "artist", action: .deleteSelf, target: "a") }
        var detail = RecordDetail(key: RecordKey(zone: zone, recordName: "a"), record: Record(recordName: "a", recordType: "Artist"), loading: false)
        detail.referencedBy = ReferencedBy(referrers: referrers, looked: 251, wholeZone: true)
        let lines = Browser.referencedByLines(detail)
        #expect(lines.filter { $0.reference != nil }.count == ReferencedBy.listed)
        #expect(lines.last?.text == "… 50 more not listed")
        #expect(lines.first?.text == "250 records")
    }
}
