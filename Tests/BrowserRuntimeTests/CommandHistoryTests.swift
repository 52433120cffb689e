import BrowserRuntime
import BrowserRuntimeTesting
import CloudKitWeb
import Foundation
import RecordBrowser
import Testing
import TerminalUI

/// The `:` line's history is the account's: kept in its cache file, read back at the next start.
@Suite struct CommandHistoryTests {
    @Test func linesRunAreKeptPerAccountAndRestored() async throws {
        let directory = tempDirectory("history")
        let cache = try RecordCache(directory: directory, account: testAccount())
        let client = try CommitRoundTripTests.client()
        var loop = BrowserLoop(state: BrowserState(connection: ConnectionInfo(account: testAccount(), database: .private)), runner: EffectRunner(client: client, cache: cache))
        for key in ":db public".map(Key.char) + [.enter] + ":db private".map(Key.char) + [.enter] + ":db public".map(Key.char) + [.enter] {
            _ = loop.apply(.key(key))
        }
        #expect(try cache.commandHistory() == ["db private", "db public"], "once each, the newest last")
        // The next session on the same account finds them; another account has none.
        let again = try RecordCache(directory: directory, account: testAccount())
        var next = BrowserLoop(state: BrowserState(connection: ConnectionInfo(account: testAccount(), database: .private)), runner: EffectRunner(client: client, cache: again))
        _ = next.restoreHistory()
        #expect(next.state.session.commandHistory == ["db private", "db public"])
        let other = try RecordCache(directory: directory, account: testAccount(.production))
        #expect(try other.commandHistory() == [])
        // At most the limit, the newest kept.
        for i in 0..<210 { try again.rememberCommand("open r\(i)") }
        let kept = try again.commandHistory()
        #expect(kept.count == 200 && kept.last == "open r209" && kept.first == "open r10")
    }
}
