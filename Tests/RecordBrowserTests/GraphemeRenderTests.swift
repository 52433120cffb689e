import CloudKitWeb
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// Issue 30: a record row and the record detail draw grapheme clusters whole, at their real width.
@Suite(.serialized) struct GraphemeRenderTests {
    static let clusters = [
        "👩\u{200D}👩\u{200D}👧\u{200D}👦", "🇯🇵", "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}", "👍🏽",
        "1\u{FE0F}\u{20E3}", "e\u{301}", "\u{1112}\u{1161}\u{11AB}", "\u{2764}\u{FE0F}",
    ]
    static let title = "Family " + clusters.joined(separator: " ") + " क्ष"

    static var record: Record {
        var r = Record(recordName: "graphemes-👍🏽-🇯🇵", recordType: "Artwork", recordChangeTag: "g1")
        r.fields = ["title": .string(title), "tags": .stringList(["🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}", "1\u{FE0F}\u{20E3}"])]
        r.modified = RecordStamp(timestamp: 1_709_294_400_000, userRecordName: Harness.owner, deviceID: "2")
        return r
    }

    /// Every cluster of `text` that the frame shows is held whole by one cell of the right width.
    func expectWhole(_ screen: CellGrid, _ clusters: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        for cluster in clusters {
            let cells = screen.cells.filter { $0.text == cluster }
            #expect(!cells.isEmpty, "\(cluster) drawn whole", sourceLocation: sourceLocation)
            #expect(cells.allSatisfy { Int($0.width) == TextWidth.width(cluster) }, sourceLocation: sourceLocation)
        }
        // Nothing split: no cell holds a piece of a cluster (a lone regional indicator, a dangling joiner,
        // a skin tone without its hand).
        for cell in screen.cells where !cell.text.isEmpty {
            #expect(cell.text.count == 1, "one cluster per cell: \(cell.text.unicodeScalars.map { String($0.value, radix: 16) })", sourceLocation: sourceLocation)
            #expect(!cell.text.unicodeScalars.contains { $0.value == 0x200D } || cell.text.unicodeScalars.count > 2, sourceLocation: sourceLocation)
        }
        for y in 0..<screen.height {
            #expect(TextWidth.width(screen.line(y)) == screen.width, "row \(y) is the screen's width", sourceLocation: sourceLocation)
        }
    }

    @Test func aRecordRowAndTheDetailDrawClustersWhole() throws {
        var h = Harness(width: 100, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page([.record(Self.record)], token: "t", more: false)
        h.send(.key(.char(":")))
        h.type("columns title")
        h.keys(.enter)
        try assertSnapshot(h.screen, "graphemes-records-100x30")
        expectWhole(h.screen, ["👍🏽", "🇯🇵"])
        h.keys(.enter)
        let key = RecordKey(zone: h.state.list!.zone, recordName: Self.record.recordName)
        h.send(.recordLoaded(key, .success((.record(Self.record), Self.record.json))))
        try assertSnapshot(h.screen, "graphemes-detail-100x30")
        expectWhole(h.screen, Self.clusters)
    }
}
