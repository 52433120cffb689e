import CursesBackend
import Foundation
import Testing
import TerminalUI

/// What the terminal receives for grapheme clusters curses cannot hold in one cell (issue 30): a
/// headless ncursesw screen writing to a file. Serialized: curses and the LINES/COLUMNS it reads are
/// process-global.
@Suite(.serialized) @MainActor struct CursesGraphemeTests {
    static let clusters = [
        "👩\u{200D}👩\u{200D}👧\u{200D}👦", "🇯🇵", "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}", "👍🏽",
        "1\u{FE0F}\u{20E3}", "e\u{301}", "\u{1112}\u{1161}\u{11AB}", "\u{2764}\u{FE0F}",
    ]

    func output(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    @Test func everyClusterReachesTheTerminalWholeAndOnlyChangedRowsAreSent() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ckb-graphemes-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let terminal = try CursesTerminal(termType: "xterm-256color", outputPath: path, width: 40, height: 6)
        defer { terminal.shutdown() }
        var screen = CellGrid(width: 40, height: 6)
        screen.put(Self.clusters.joined(separator: " "), x: 0, y: 1)
        screen.put("row two " + "🇯🇵", x: 0, y: 3, style: Style().bolded)
        terminal.present(screen)
        let first = terminal.bytesWritten
        let bytes = try output(path)
        for cluster in Self.clusters {
            #expect(bytes.range(of: Data(cluster.utf8)) != nil, "\(cluster.unicodeScalars.map { String($0.value, radix: 16) }) written whole")
        }
        // One changed row: only it is sent (and its clusters again), not the frame.
        screen.put("x", x: 0, y: 4)
        terminal.present(screen)
        let second = terminal.bytesWritten - first
        #expect(second > 0 && second < 40, "one cell changed: \(second) bytes")
        // A flag replaced by another flag in the same place is rewritten.
        let before = terminal.bytesWritten
        screen.put("🇫🇷", x: 8, y: 3, style: Style().bolded)
        terminal.present(screen)
        let tail = try output(path).dropFirst(before)
        #expect(tail.range(of: Data("🇫🇷".utf8)) != nil)
        #expect(tail.range(of: Data("👍🏽".utf8)) == nil, "row 1 unchanged, not sent again")
    }
}
