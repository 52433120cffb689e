import BrowserRuntime
import BrowserRuntimeTesting
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

/// The browser core with the real effect runner and cache, without a terminal: for benchmarks. It
/// runs the app's own loop (`BrowserLoop`), effects to completion one at a time.
struct HeadlessBrowser {
    var runtime: BrowserLoop
    let host = HeadlessHost()

    var state: BrowserState {
        get { runtime.state }
        set { runtime.state = newValue }
    }

    init(client: CloudKitClient, cache: RecordCache?, database: DatabaseScope = .private, width: Int = 100, height: Int = 30) {
        let account = Self.account(of: client)
        var state = BrowserState(connection: ConnectionInfo(account: account, database: database))
        state.size = (width, height)
        runtime = BrowserLoop(state: state, runner: EffectRunner(client: client, cache: cache, account: account))
    }

    /// The account a benchmark's client browses as (no signed-in identity).
    static func account(of client: CloudKitClient) -> Account {
        Account(
            server: .url(normalizing: client.configuration.serverURL), container: client.configuration.container,
            environment: client.configuration.environment, identity: .none)
    }

    /// Feeds an event and runs every effect it causes (and theirs) to completion; `onEvent` sees each
    /// event the runner produces, before it is applied.
    mutating func send(_ event: BrowserEvent, onEvent: (BrowserEvent, BrowserState) -> Void = { _, _ in }) async {
        await runtime.settle([event], host: host, onEvent: onEvent)
    }

    mutating func start() async {
        await runtime.start(host: host)
    }

    /// Opens the zone named `zone` from the zones list.
    mutating func open(zone: String, onEvent: (BrowserEvent, BrowserState) -> Void = { _, _ in }) async {
        guard let index = state.zones.firstIndex(where: { $0.zone?.zoneID.zoneName == zone }) else { return }
        state.setSelection(.zones, index)
        await send(.key(.enter), onEvent: onEvent)
    }
}

/// Resident memory of this process in bytes (Linux: /proc/self/statm).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
