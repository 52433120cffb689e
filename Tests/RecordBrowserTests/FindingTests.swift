import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

@Suite struct FindingTests {
    /// `/` matches field values held in the cache, not only names and types.
    @Test func theRecordsFilterMatchesFieldValues() {
        var h = Harness(width: 100, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        let records: [RecordResult] = (1...30).map { i in
            var r = Record(recordName: String(format: "artwork-%04d", i), recordType: "Artwork", recordChangeTag: "t\(i)")
            r.fields = ["title": .string(i == 17 ? "Wave No. 1" : "Sunrise No. \(i)"), "tags": .stringList(["room-\(i)"])]
            return .record(r)
        }
        h.page(records, token: "t", more: false)
        h.keys(.char("/"))
        h.type("Wave No")
        #expect(h.state.list?.matching == 1 && h.state.list?.row(0)?.recordName == "artwork-0017")
        h.keys(.enter)
        #expect(h.screen.snapshot.contains("1 match") && !h.screen.snapshot.contains("1 matches"))
        h.keys(.escape)
        h.keys(.char("/"))
        h.type("ROOM-2")  // a list element, case-insensitively: room-2, room-20 … room-29
        #expect(h.state.list?.matching == 11)
    }

    /// Zones, subscriptions and a record's fields filter in memory; matches are marked; Esc clears.
    @Test func everyScreenFilters() throws {
        var h = Harness(width: 100, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        let total = h.state.zones.count
        h.keys(.char("/"))
        h.type("gal")
        h.keys(.enter)
        let visible = Browser.visibleZones(h.state)
        #expect(!visible.isEmpty && visible.count < total)
        #expect(h.state.position(.zones).selection == visible[0])
        let row = try #require(h.screen.snapshot.split(separator: "\n").firstIndex { $0.contains("Gallery") })
        let x = try #require(h.screen.line(row).range(of: "Gal")).lowerBound
        let column = TextWidth.width(String(h.screen.line(row)[..<x]))
        #expect(h.screen[column, row].style.underline, "the match is marked")
        #expect(h.screen.snapshot.contains("\(visible.count) of \(total) zones"))
        h.keys(.escape)
        #expect(Browser.visibleZones(h.state).count == total)
        // A record's fields.
        h.keys(.char("j"), .enter)
        h.page([.record(Harness.detailRecord)], token: "t", more: false)
        h.keys(.enter)
        h.send(.recordLoaded(RecordKey(zone: h.state.list!.zone, recordName: "artwork-7"), .success((.record(Harness.detailRecord), Harness.detailRecord.json))))
        h.keys(.char("/"))
        h.type("year")
        h.keys(.enter)
        let lines = Browser.detailPage(h.state)!.lines
        #expect(lines.filter { !$0.isHeading }.allSatisfy { $0.field == "year" || $0.owner == "year" })
        #expect(lines[h.state.detail!.selection].field == "year", "the selection is on the match")
        h.keys(.char("e"))
        #expect(h.state.editor?.field == "year", "e edits the field shown, not the one at that index unfiltered")
    }
}

@Suite struct NotificationFilterTests {
    @Test func theNotificationsPaneFilters() throws {
        var h = Harness(width: 100, height: 30)
        h.keys(.char("N"))
        for (i, name) in ["artwork-1", "artwork-2", "artist-3"].enumerated() {
            let payload = try JSON(parsing: #"{"ck":{"nid":"n\#(i)","qry":{"rid":"\#(name)","zid":"Gallery","sid":"sub-\#(i)","fo":1}}}"#)
            h.send(.notificationReceived(try PushNotification(payload: payload), dropped: 0, at: 1_700_000_000_000 + Int64(i)))
        }
        #expect(Browser.notificationRows(h.state).count == 3)
        h.keys(.char("/"))
        h.type("artist")
        h.keys(.enter)
        #expect(Browser.notificationRows(h.state).map { $0.notification.recordName } == ["artist-3"])
        h.keys(.escape)
        #expect(Browser.notificationRows(h.state).count == 3)
    }
}
