import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// Issue 28: record text never drives the terminal or hides in it, and what `y` copies is the
/// underlying text (not the screen's wrapped lines), JSON with invisible characters as `\uXXXX`.
@Suite(.serialized) struct TerminalSafetyTests {
    static let hostile = "\u{1B}]0;title\u{7}\u{1B}[2J\u{9B}1m abc\u{202E}fed zero\u{200B}width line\rover"

    static var hostileRecord: Record {
        var r = Record(recordName: "hostile", recordType: "Hostile", recordChangeTag: "1")
        r.fields = ["text": .string(hostile)]
        return r
    }

    /// Opens the hostile record's detail.
    static func detail() -> Harness {
        var h = Harness(width: 120, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page([.record(hostileRecord)], token: "t", more: false)
        h.keys(.enter)
        h.send(.recordLoaded(RecordKey(zone: h.state.list!.zone, recordName: "hostile"), .success((.record(hostileRecord), hostileRecord.json))))
        return h
    }

    @Test func theDetailShowsEscapesAndNoControlReachesACell() throws {
        let h = Self.detail()
        let screen = h.screen
        let text = screen.snapshot
        #expect(text.contains("\\e]0;title\\u{7}\\e[2J\\u{9B}1m abc\\u{202E}fed zero\\u{200B}width line\\rover"), "\(text)")
        #expect(screen.cells.allSatisfy { cell in
            cell.text.unicodeScalars.allSatisfy { $0.value >= 0x20 && !(0x7F...0x9F).contains($0.value) && $0.properties.generalCategory != .format }
        })
    }

    @Test func theRecordListShowsEscapes() {
        var h = Harness(width: 120, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        var r = Self.hostileRecord
        r.recordName = "name\u{202E}evil\u{1B}]0;x\u{7}"
        h.page([.record(r)], token: "t", more: false)
        #expect(h.screen.snapshot.contains("name\\u{202E}evil\\e]0;x\\u{7}"), "\(h.screen.snapshot)")
    }

    @Test func copiedJSONEscapesInvisibleCharacters() throws {
        var h = Self.detail()
        h.keys(.char("y"))
        guard case .copy(let field)? = h.effects.first else { Issue.record("no copy: \(h.effects)"); return }
        #expect(field.contains(#"\u001b]0;title\u0007\u001b[2J\u009b1m abc\u202efed zero\u200bwidth line\rover"#), "\(field)")
        #expect(!field.unicodeScalars.contains { $0.value == 0x202E || $0.value == 0x9B || $0.value == 0x200B || $0.value == 0x1B })
        #expect(try JSON(parsing: field)["text"]?["value"]?.stringValue == Self.hostile, "the same JSON value")
        // The whole record (raw view).
        h.keys(.char("v"), .char("y"))
        guard case .copy(let record)? = h.effects.first else { Issue.record("no copy: \(h.effects)"); return }
        #expect(record.contains(#"\u202e"#) && !record.unicodeScalars.contains { $0.value == 0x202E })
        #expect(try JSON(parsing: record)["fields"]?["text"]?["value"]?.stringValue == Self.hostile)
        #expect(h.screen.snapshot.contains(#"abc\u202efed"#), "the raw view shows JSON's own escape")
    }

    @Test func theInspectorCopiesTheExchangeNotTheScreensLines() throws {
        var h = Harness(width: 60, height: 20)
        let url = "http://127.0.0.1:8080/database/1/iCloud.com.example.Gallery/development/private/records/query?ckAPIToken=<redacted>&ckWebAuthToken=<redacted>"
        var exchange = RequestExchange(at: 1_709_294_400_000, url: url, requestHeaders: [.init(name: "X-Long", value: String(repeating: "v", count: 90))],
                                       requestBody: #"{"zoneID":{"zoneName":"Gallery"},"query":{"recordType":"Artwork"}}"#)
        exchange.responseBody = "{\"records\":[{\"recordName\":\"a\u{202E}b\"}]}"
        var record = RequestRecord(method: .post, operation: "records/query", database: .private, status: 200, serverErrorCode: nil, duration: 0.01,
                                   bytesSent: 10, bytesReceived: 20, attempt: 1)
        record.exchange = exchange
        h.send(.requestFinished(record))
        h.keys(.char("D"))
        h.keys(.enter)
        #expect(h.state.pane == .inspector)
        let wrapped = Browser.inspectorLines(record, width: 60).map(\.text)
        #expect(!wrapped.contains { $0.hasSuffix(url) }, "the screen wraps the URL")
        #expect(wrapped.contains("  ?ckAPIToken=<redacted>") && wrapped.contains("  &ckWebAuthToken=<redacted>"),
                "a parameter to a line: a redaction is never cut in two")
        #expect(!wrapped.contains { $0.hasSuffix("<r") || $0.hasSuffix("<redac") })
        h.keys(.char("y"))
        guard case .copy(let text)? = h.effects.first else { Issue.record("no copy: \(h.effects)"); return }
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("POST " + url), "the URL on one line, as sent")
        #expect(lines.contains("  X-Long: " + String(repeating: "v", count: 90)))
        #expect(text.contains(#""recordName": "a\u202eb""#), "JSON bodies with invisible characters as \\uXXXX")
        #expect(!text.unicodeScalars.contains { $0.value == 0x202E })
    }
}
