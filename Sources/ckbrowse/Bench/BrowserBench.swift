import ArgumentParser
import BrowserRuntime
import CloudKitLocal
import CloudKitWeb
import CursesBackend
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

/// A container served in-process with one bulk-filled zone, for the browser benchmarks.
struct BenchContainer {
    let service: LocalCloudKit
    let client: CloudKitClient
    let directory: String
    /// Requests and bytes the client received (from its request observer).
    let traffic: Counter

    final class Counter: @unchecked Sendable {
        private let lock = Lock()
        private var _requests = 0, _bytes = 0
        func add(_ record: RequestRecord) { lock.withLock { _requests += 1; _bytes += record.bytesReceived } }
        var snapshot: (requests: Int, bytes: Int) { lock.withLock { (_requests, _bytes) } }
        func reset() { lock.withLock { _requests = 0; _bytes = 0 } }
    }

    static func make(records: Int) async throws -> BenchContainer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ckbrowse-bench-\(getpid())-\(UUID().uuidString.prefix(8))").path
        var configuration = LocalServerConfiguration()
        configuration.apiTokens = ["bench"]
        configuration.users = [(name: "bench", token: "bench-user")]
        // As the embedded demo runs: the server shares the browser's process (and its memory figure).
        configuration.answerCacheBytes = LocalServerConfiguration.embeddedAnswerCacheBytes
        let service = try LocalCloudKit(store: try Store(directory: directory + "/server"), configuration: configuration)
        try await BulkSeed.fill(service, container: "iCloud.bench", userName: "bench", zoneName: "Big", count: records)
        let counter = Counter()
        let client = CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: "http://in-process", container: "iCloud.bench"),
            credentials: .apiToken("bench", webAuthToken: "bench-user"), transport: InProcessTransport(service: service),
            observer: { counter.add($0) })
        return BenchContainer(service: service, client: client, directory: directory, traffic: counter)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// Changes `count` of the zone's `records` records, spread evenly (a title each).
    func change(_ count: Int, of records: Int) async throws {
        let db = client.database(.private)
        for chunk in stride(from: 0, to: count, by: 200) {
            let ops = (chunk..<min(chunk + 200, count)).map { i in
                RecordOperation(.forceUpdate, Record(recordName: String(cFormat: "item-%07d", i * (records / max(count, 1))), fields: ["title": .string("changed \(i)")]))
            }
            _ = try await db.modifyRecords(ModifyRecordsRequest(operations: ops, zoneID: ZoneID(zoneName: "Big")))
        }
    }

    /// A headless browser on this container with a fresh (or the given) cache, zones loaded.
    func browser(cache: RecordCache? = nil, width: Int = 100, height: Int = 30) async throws -> (HeadlessBrowser, RecordCache) {
        let cache = try cache ?? RecordCache(directory: directory + "/cache", account: benchAccount)
        var browser = HeadlessBrowser(client: client, cache: cache, width: width, height: height)
        await browser.start()
        return (browser, cache)
    }
}

/// Memory after paging 10 k, 100 k and 1 M records through the browser (core + cache + runner).
struct MemoryBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "memory", abstract: "Resident memory after paging 10k, 100k and 1M records in the browser.")

    @Option(help: "Records in the zone.") var records = 1_000_000

    func run() async throws {
        print("filling a zone with \(records) records…")
        let container = try await BenchContainer.make(records: records)
        defer { container.remove() }
        var (browser, _) = try await container.browser()
        let before = residentBytes()
        print(String(cFormat: "resident before opening the zone: %.1f MB", Double(before) / 1e6))
        var marks = [10_000, 100_000, 1_000_000].filter { $0 <= records }
        let started = Date()
        await browser.open(zone: "Big")
        await browser.send(.key(.char("G"))) { event, _ in
            if case .pageApplied(_, .success(let outcome)) = event, let mark = marks.first, outcome.total >= mark {
                marks.removeFirst()
                let rss = residentBytes()
                print(String(cFormat: "after %9d records: resident %7.1f MB (%+.1f MB since opening), %.1f s", outcome.total, Double(rss) / 1e6, Double(rss - before) / 1e6, Date().timeIntervalSince(started)))
            }
        }
        let list = browser.state.list
        print("loaded \(list?.total ?? 0) records; rows held by the browser core: \(list?.window.count ?? 0)")
    }
}

/// Reopening a 100 k-record zone with 1 % changed, against a cold open: requests and bytes fetched.
struct ReopenBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "reopen", abstract: "Reopen a 100k-record zone with 1% changed: requests and bytes against a cold open.")

    @Option(help: "Records in the zone.") var records = 100_000
    @Option(help: "Percent of records changed before the reopen.") var changedPercent = 1.0

    func run() async throws {
        print("filling a zone with \(records) records…")
        let container = try await BenchContainer.make(records: records)
        defer { container.remove() }
        var (cold, cache) = try await container.browser()
        container.traffic.reset()
        var start = Date()
        await cold.open(zone: "Big")
        await cold.send(.key(.char("G")))
        let coldTraffic = container.traffic.snapshot
        let coldTime = Date().timeIntervalSince(start)
        print(String(cFormat: "cold open to the end: %d records, %d requests, %.1f MB, %.1f s", cold.state.list?.total ?? 0, coldTraffic.requests, Double(coldTraffic.bytes) / 1e6, coldTime))

        let changes = Int(Double(records) * changedPercent / 100)
        try await container.change(changes, of: records)
        var (warm, _) = try await container.browser(cache: cache)
        container.traffic.reset()
        start = Date()
        await warm.open(zone: "Big")
        await warm.send(.key(.char("G")))
        let warmTraffic = container.traffic.snapshot
        print(String(cFormat: "reopen with %d changed: %d records shown, %d requests, %.3f MB, %.2f s", changes, warm.state.list?.total ?? 0, warmTraffic.requests, Double(warmTraffic.bytes) / 1e6, Date().timeIntervalSince(start)))
        print(String(cFormat: "reopen / cold: requests %.4f, bytes %.4f (target: bytes ≤ 1/50 = 0.02)", Double(warmTraffic.requests) / Double(max(1, coldTraffic.requests)), Double(warmTraffic.bytes) / Double(max(1, coldTraffic.bytes))))
    }
}

/// Bytes the terminal receives: first paint, a highlight move, a one-line scroll, a full redraw.
struct TerminalBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "terminal", abstract: "Bytes written to the terminal for a one-line scroll and for a full redraw.")

    @Option(help: "Terminal type (terminfo entry).") var term = "xterm-256color"
    @Option var width = 100
    @Option var height = 30
    @Flag(help: "Print the bytes of the one-line scroll, escaped.") var showBytes = false

    @MainActor
    func run() async throws {
        let container = try await BenchContainer.make(records: 2_000)
        defer { container.remove() }
        var (browser, _) = try await container.browser(width: width, height: height)
        await browser.open(zone: "Big")
        let output = container.directory + "/terminal.out"
        let terminal = try CursesTerminal(termType: term, outputPath: output, width: width, height: height)
        defer { terminal.shutdown() }
        func measure(_ label: String, _ action: () async -> Void) async -> Int {
            let before = terminal.bytesWritten
            await action()
            terminal.present(Browser.render(browser.state))
            let bytes = terminal.bytesWritten - before
            print(label.padded(toLength: 46) + String(cFormat: "%6d bytes", bytes))
            return bytes
        }
        _ = await measure("first paint") {}
        let rows = height - 4
        for _ in 0..<(rows - 2) { await browser.send(.key(.char("j"))); terminal.present(Browser.render(browser.state)) }
        let move = await measure("j: highlight moves one row") { await browser.send(.key(.char("j"))) }
        let offset = terminal.bytesWritten
        let scroll = await measure("j at the bottom: the list scrolls one line") { await browser.send(.key(.char("j"))) }
        if showBytes, let data = FileManager.default.contents(atPath: output) {
            let bytes = data.dropFirst(offset).prefix(scroll)
            print(bytes.map { $0 == 0x1B ? "\\e" : ($0 < 0x20 || $0 > 0x7E ? String(cFormat: "\\x%02x", $0) : String(UnicodeScalar($0))) }.joined())
        }
        let full = await measure("full redraw (as Ctrl-L)") { terminal.forceFullRedraw() }
        print(String(cFormat: "one-line scroll / full redraw: %.3f (target ≤ 0.100); highlight move / full redraw: %.3f", Double(scroll) / Double(full), Double(move) / Double(full)))
    }
}

/// Work per key press in the browser core at a list size: K `j` presses (update, cache window reads,
/// render) over a cache holding N records, timed (median of runs). The measured region is the stable
/// symbol `ckbrowse_bench_keypresses`, for callgrind's --toggle-collect (`scripts/bench-callgrind.sh`
/// counts instructions with the static build: valgrind 3.19 crashes on the shared Swift runtime).
struct KeypressBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keypress", abstract: "Key presses in the browser core over a cache of N records (for callgrind).")

    @Option(help: "Records in the list.") var records = 1_000
    @Option(help: "Key presses to make.") var presses = 300
    @Option(help: "Cache directory to fill (once) and reuse.") var cacheDirectory: String?
    @Flag(help: "Only fill the cache.") var prepareOnly = false

    func run() async throws {
        let directory = cacheDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("ckbrowse-keypress-\(records)").path
        let cache = try RecordCache(directory: directory, account: benchAccount)
        let key = ListKey(zone: ZoneKey(scope: Scope(account: benchAccount, database: .private), owner: "", zoneName: "Big"))
        var listState = try cache.open(key)
        if listState.count < records {
            var next = listState.count
            while next < records {
                let chunk = (next..<min(records, next + 5_000)).map { i -> RecordResult in
                    var r = Record(recordName: String(cFormat: "R%07d", i), recordType: "Item", recordChangeTag: String(i, radix: 36))
                    r.fields = ["title": .string("Item \(i)"), "n": .int64(Int64(i))]
                    r.modified = RecordStamp(timestamp: 1_700_000_000_000 + Int64(i), userRecordName: "_bench", deviceID: "1")
                    return .record(r)
                }
                listState = try cache.apply(key, records: chunk, syncToken: "t", continuationMarker: nil, moreComing: false)
                next = listState.count
            }
        }
        if prepareOnly {
            print("cache with \(listState.count) records at \(directory)")
            return
        }
        var state = BrowserState(connection: ConnectionInfo(account: benchAccount, database: .private))
        state.size = (100, 30)
        var list = RecordList(key: key, source: .changes)
        list.opened = true
        list.total = listState.count
        list.matching = listState.count
        list.moreComing = false
        state.stack.push(.records(RecordsScreen(list: list)))
        _ = benchKeypresses(&state, cache, 0)  // the first window, outside the count
        var rows = 0
        let start = state
        let seconds = await medianSeconds(5) {
            state = start
            rows = benchKeypresses(&state, cache, presses)
        }
        print(String(cFormat: "%d key presses over %d records: %.1f µs per press (median of 5); %d rows drawn", presses, listState.count, seconds / Double(presses) * 1e6, rows))
    }
}

/// The measured region (a stable symbol for callgrind's --toggle-collect): each press goes through
/// `Browser.update`, the cache reads it asks for (`EffectRunner.settle`, no runner, no await), and
/// `Browser.render`.
@_silgen_name("ckbrowse_bench_keypresses")
@inline(never)
func benchKeypresses(_ state: inout BrowserState, _ cache: RecordCache, _ count: Int) -> Int {
    var drawn = 0
    var pending: [BrowserEffect] = count == 0 ? Browser.update(&state, .resized(width: 100, height: 30)) + [.loadWindow(state.list!.key, filter: nil, start: 0, count: 78, generation: state.list!.generation, request: 0)] : []
    for i in 0...count {
        if i > 0 { pending += Browser.update(&state, .key(.char("j"))) }
        // The cache's answers, as the runner gives them; nothing else is asked for here.
        _ = EffectRunner.settle(&state, pending, cache: cache)
        pending = []
        drawn += Browser.render(state).height
    }
    return drawn
}

/// The account of the benchmarks' in-process container (what `HeadlessBrowser` derives from its client).
let benchAccount = Account(server: .url(normalizing: "http://in-process"), container: "iCloud.bench", environment: .development, identity: .none)
