import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

@Suite struct ColumnTests {
    static func gallery(_ h: inout Harness) {
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        let records: [RecordResult] = (1...40).map { i in
            var r = Record(recordName: String(format: "artwork-%04d", i), recordType: "Artwork", recordChangeTag: "t\(i)")
            r.fields = ["title": .string("Work \(i)"), "year": .int64(Int64(1800 + (i * 37) % 200))]
            return .record(r)
        }
        h.page(records, token: "t", more: false)
    }

    /// Records can be told apart by content: the first STRING field by default, chosen fields with
    /// :columns (remembered per record type), and :sort orders the loaded rows.
    @Test func columnsAndSort() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ckb-columns-\(UUID().uuidString)").path
        var h = Harness(width: 100, height: 30, cacheDirectory: directory)
        Self.gallery(&h)
        #expect(h.screen.line(1).contains("TITLE") && h.screen.snapshot.contains("Work 1 "), "the first STRING field is a column")
        h.keys(.char(":"))
        h.type("columns year,title")
        h.keys(.enter)
        #expect(h.screen.line(1).contains("YEAR") && h.screen.line(1).contains("TITLE"))
        h.keys(.char(":"))
        h.type("sort year desc")
        h.keys(.enter)
        let years = (0..<40).compactMap { h.state.list?.row($0)?.columns.first }.compactMap { Int($0) }
        #expect(years.count >= 20 && years == years.sorted(by: >), "sorted by year, descending: \(years.prefix(5))")
        #expect(h.screen.line(1).contains("YEAR ↓"))
        // Another list of the same account: the columns of Artwork are remembered.
        var again = Harness(width: 100, height: 30, cacheDirectory: directory)
        Self.gallery(&again)
        #expect(again.state.list?.view.columns == ["year", "title"])
        again.keys(.char(":"))
        again.type("columns")
        again.keys(.enter)
        #expect(again.state.list?.view.columns == nil && again.screen.line(1).contains("TITLE") && !again.screen.line(1).contains("YEAR"))
    }

    /// Packed columns grow as wider rows scroll in and do not shrink back when they scroll out.
    @Test func packedColumnsDoNotJumpWhileScrolling() {
        var h = Harness(width: 100, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        let records: [RecordResult] = (1...200).map { i in
            var r = Record(recordName: "r\(i)", recordType: "Note", recordChangeTag: "t\(i)")
            r.fields = ["title": .string(i <= 5 ? "a much longer title \(i)" : "t\(i)")]
            return .record(r)
        }
        h.page(records, token: "t", more: false)
        let typeColumn = { h.screen.line(1).range(of: "TYPE").map { h.screen.line(1).distance(from: h.screen.line(1).startIndex, to: $0.lowerBound) } }
        let before = typeColumn()
        h.keys(.char("G"))
        #expect(h.state.list?.selection == 199)
        #expect(typeColumn() == before, "the TYPE column stays where it was")
    }
}
