import ArgumentParser
import BrowserRuntime
import CloudKitLocal
import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import RecordBrowser
import TerminalUI

/// The browser as a user over a real network feels it: every answer delayed (as Apple's service
/// answers a page in 100–300 ms), effects running concurrently as in the terminal app, keys arriving
/// at a fixed rate. Prints PgDn held through the zone (frames showing a row not loaded yet, and the
/// rate of rows against the change feed's limit of one page of 200 per round trip) and the first
/// frame of a cached zone reopened with 1 % changed against the first answer from the server.
struct NetworkBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "network", abstract: "The browser with every answer delayed: PgDn held through a zone, and a cached zone reopened.")

    @Option(help: "Milliseconds added to every answer.") var delayMs = 150
    @Option(help: "Records in the zone.") var records = 10_000
    @Option(help: "PgDn presses a second.") var rate = 30.0

    func run() async throws {
        print("filling a zone with \(records) records…")
        let container = try await BenchContainer.make(records: records)
        defer { container.remove() }
        let delay = Double(delayMs) / 1000
        let client = CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: "http://in-process", container: "iCloud.bench"),
            credentials: .apiToken("bench", webAuthToken: "bench-user"),
            transport: DelayingTransport(inner: InProcessTransport(service: container.service), delay: delay))
        let cacheDirectory = container.directory + "/network-cache"

        // 1. PgDn held from the top of a zone never opened before.
        let first = await LiveBrowser(client: client, cacheDirectory: cacheDirectory)
        await first.openZone("Big")
        let started = Date()
        var frames = 0, unloadedFrames = 0, unloadedRows = 0, late = 0, longest = 0.0
        let interval = 1 / rate
        while Date().timeIntervalSince(started) < 600 {
            let pressed = Date()
            let before = await first.selection
            let (atEnd, missing) = await first.press(.pageDown)
            frames += 1
            if missing > 0 { unloadedFrames += 1; unloadedRows += missing }
            if atEnd { break }
            // How long the press waited to move the selection (keys typed ahead wait for their rows:
            // from the cache, or from the server when the next page is not loaded yet).
            await first.settle(until: pressed.addingTimeInterval(interval)) { ($0.list?.selection ?? 0) != before }
            let waited = await first.selection != before ? Date().timeIntervalSince(pressed) : interval
            longest = max(longest, waited)
            if waited > 1 / 30 { late += 1 }
            let left = interval - Date().timeIntervalSince(pressed)
            if left > 0 { try await Task.sleep(nanoseconds: UInt64(left * 1e9)) }
        }
        let elapsed = Date().timeIntervalSince(started)
        let reached = await first.selection
        let limit = 200 / delay
        print(String(cFormat: "PgDn held at %.0f/s with %d ms per answer: %d rows in %.1f s = %.0f rows/s (the feed's limit: 200 rows a round trip = %.0f/s; %.2f of it)",
                     rate, delayMs, reached + 1, elapsed, Double(reached + 1) / elapsed, limit, Double(reached + 1) / elapsed / limit))
        print(String(cFormat: "presses: %d; frames showing a row not loaded yet: %d (%d rows); presses whose move waited longer than a frame (33 ms): %d, the longest %.0f ms",
                     frames, unloadedFrames, unloadedRows, late, longest * 1000))
        await first.stop()

        // 2. Reopen with 1 % changed: the first frame with rows, against the first answer.
        let changes = max(1, records / 100)
        try await container.change(changes, of: records)
        let second = await LiveBrowser(client: client, cacheDirectory: cacheDirectory)
        let (firstRows, firstAnswer) = await second.openZoneTimed("Big")
        print(String(cFormat: "reopen with %d changed: first frame with rows after %.1f ms, first answer from the server after %.1f ms (",
                     changes, firstRows * 1000, firstAnswer * 1000) + (firstRows < firstAnswer ? "drawn before any round trip" : "NOT before the first round trip") + ")")
        await second.stop()
    }
}

/// Adds a fixed delay to every answer of an inner transport.
struct DelayingTransport: HTTPTransport {
    let inner: any HTTPTransport
    let delay: Double

    func send(_ request: CloudKitWeb.HTTPRequest) async throws -> CloudKitWeb.HTTPResponse {
        try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
        return try await inner.send(request)
    }
}

/// The browser's loop as the terminal app runs it (the runtime's `LiveLoop`: every effect a task, its
/// events applied as they come), without a terminal: what a user sees is read from the state after each
/// event.
@MainActor final class LiveBrowser {
    private let live: LiveLoop
    /// When the first effect answered (for the reopen figure).
    private var firstAnswerAt: Date?

    init(client: CloudKitClient, cacheDirectory: String) async {
        let account = HeadlessBrowser.account(of: client)
        var state = BrowserState(connection: ConnectionInfo(account: account, database: .private))
        state.size = (100, 30)
        let cache = try? RecordCache(directory: cacheDirectory, account: account)
        let host = LiveHost()
        live = LiveLoop(BrowserLoop(state: state, runner: EffectRunner(client: client, cache: cache, account: account)), host: host)
        host.browser = self
        live.onEvent = { [weak self] event, effect in
            guard let self else { return }
            if self.firstAnswerAt == nil, effect.isNetwork { self.firstAnswerAt = Date() }
            self.send(event)
        }
        // The start effects, as the app runs them (no long-poll: only `N` starts it).
        live.start()
        await settle { $0.zones.contains { $0.zone?.zoneID.zoneName != nil } }
    }

    var selection: Int { live.state.list?.selection ?? 0 }

    func send(_ event: BrowserEvent) { live.send(event) }

    /// Waits (polling each millisecond) until `condition` holds or 30 s pass.
    func settle(_ condition: (BrowserState) -> Bool) async {
        await settle(until: Date().addingTimeInterval(30), condition)
    }

    func settle(until deadline: Date, _ condition: (BrowserState) -> Bool) async {
        while !condition(live.state), Date() < deadline { try? await Task.sleep(nanoseconds: 1_000_000) }
    }

    func openZone(_ name: String) async {
        guard let index = live.state.zones.firstIndex(where: { $0.zone?.zoneID.zoneName == name }) else { return }
        live.state.setSelection(.zones, index)
        send(.key(.enter))
        await settle { ($0.list?.window.count ?? 0) > 0 }
    }

    /// Opens a zone; answers the seconds until the first frame showing rows and until the first
    /// answer from the server.
    func openZoneTimed(_ name: String) async -> (Double, Double) {
        firstAnswerAt = nil
        let start = Date()
        guard let index = live.state.zones.firstIndex(where: { $0.zone?.zoneID.zoneName == name }) else { return (0, 0) }
        live.state.setSelection(.zones, index)
        send(.key(.enter))
        await settle { ($0.list?.window.count ?? 0) > 0 }
        let rows = Date().timeIntervalSince(start)
        await settle { _ in self.firstAnswerAt != nil }
        return (rows, (firstAnswerAt ?? Date()).timeIntervalSince(start))
    }

    /// One key press; answers whether the selection is at the end of a fully loaded list, and how
    /// many rows on screen are not loaded yet.
    func press(_ key: Key) async -> (Bool, Int) {
        send(.key(key))
        _ = Browser.render(live.state)
        guard let list = live.state.list else { return (true, 0) }
        let height = Layout(live.state).bodyHeight
        let visible = list.scroll..<min(list.scroll + height, list.matching)
        let missing = visible.filter { list.row($0) == nil }.count
        return (!list.moreComing && list.selection >= list.matching - 1, missing)
    }

    func stop() async {
        await settle { _ in self.live.running == 0 }
    }
}

/// Delivers background events back to the browser's loop.
final class LiveHost: EffectHost, @unchecked Sendable {
    weak var browser: LiveBrowser?
    func copy(_ text: String) async {}
    func edit(_ edit: JSONEdit) async -> BrowserEvent? { nil }
    func quit() async {}
    func deliver(_ event: BrowserEvent) async { await MainActor.run { browser?.send(event) } }
}

extension BrowserEffect {
    /// Effects answered by the server (the rest read the local cache or the host).
    var isNetwork: Bool {
        switch self {
        case .loadZones, .loadChanges, .runQuery, .lookupRecord, .loadSubscriptions, .commit, .lookupConflicts, .verifyCommit,
             .discoverUsers, .loadSharePermission, .loadShares, .acceptShare, .loadSchema:
            return true
        default:
            return false
        }
    }
}
