import CLibc
import CloudKitWeb
import BrowserCache
import CursesBackend
import Dispatch
import Foundation
import RecordBrowser
import TerminalUI

#if canImport(Glibc)
import Glibc
#endif

/// The event loop: keys from the terminal and results of network tasks meet on the main actor (the
/// only executor that calls curses); each event goes through `Browser.update`, effects run as tasks,
/// and frames are drawn by the curses backend (input at once, background updates at most 60 a second).
@MainActor
final class BrowserApp {
    private var state: BrowserState
    private let client: CloudKitClient
    private let cache: RecordCache?
    private var terminal: CursesTerminal?
    private var sources: [any DispatchSourceProtocol] = []
    private var continuation: CheckedContinuation<Int32, Never>?
    private var renderScheduled = false
    private var emptyWakeups = 0
    private var tasks: [Task<Void, Never>] = []

    init(client: CloudKitClient, cache: RecordCache?, connection: ConnectionInfo) {
        self.client = client
        self.cache = cache
        self.state = BrowserState(connection: connection)
    }

    /// Runs until the user quits; returns the exit status.
    func run() async throws -> Int32 {
        for signalNumber in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
            source.setEventHandler { MainActor.assumeIsolated { self.finish(128 + signalNumber) } }
            source.resume()
            sources.append(source)
        }
        let noColor = ProcessInfo.processInfo.environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        let terminal = try CursesTerminal(colorMode: noColor ? .none : .automatic)
        self.terminal = terminal

        var fds: [Int32] = [0, 0]
        if pipe(&fds) == 0 {
            _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
            _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
            _ = clibc_install_winch_pipe(fds[1])
            let winch = DispatchSource.makeReadSource(fileDescriptor: fds[0], queue: .main)
            let readEnd = fds[0]
            winch.setEventHandler {
                MainActor.assumeIsolated {
                    var byte: UInt8 = 0
                    while read(readEnd, &byte, 1) > 0 {}
                    self.readInput(fromStdin: false)
                }
            }
            winch.resume()
            sources.append(winch)
        }
        let input = DispatchSource.makeReadSource(fileDescriptor: 0, queue: .main)
        input.setEventHandler { MainActor.assumeIsolated { self.readInput(fromStdin: true) } }
        input.resume()
        sources.append(input)

        state.size = terminal.size
        perform(Browser.start(&state))
        render()
        return await withCheckedContinuation { self.continuation = $0 }
    }

    private func readInput(fromStdin: Bool) {
        guard let terminal else { return }
        let keys = terminal.readKeys()
        if keys.isEmpty && fromStdin {
            // A readable stdin that yields nothing, again and again, is a closed terminal (SSH dropped).
            emptyWakeups += 1
            if emptyWakeups > 200 { finish(129) }
            return
        }
        emptyWakeups = 0
        for key in keys {
            if key == .resize {
                terminal.invalidate()
                let size = terminal.size
                send(.resized(width: size.width, height: size.height))
            } else {
                send(.key(key))
            }
            if state.quitRequested { return }
        }
        render()
    }

    private func send(_ event: BrowserEvent) {
        perform(Browser.update(&state, event))
    }

    /// Background results: update now, draw soon (coalesced).
    private func deliver(_ event: BrowserEvent) {
        guard terminal?.active == true else { return }
        send(event)
        guard !renderScheduled else { return }
        renderScheduled = true
        DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(16)) {
            MainActor.assumeIsolated {
                self.renderScheduled = false
                self.render()
            }
        }
    }

    private func render() {
        guard let terminal, terminal.active else { return }
        terminal.present(Browser.render(state))
    }

    private func perform(_ effects: [BrowserEffect]) {
        for effect in effects {
            switch effect {
            case .quit:
                finish(0)
                return
            case .copy(let text):
                copy(text)
            case .copyRecord(let key, let name):
                if let record = try? cache?.record(key, name: name) { copy(record.json.prettyPrinted()) }
            default:
                run(effect)
            }
        }
    }

    /// OSC 52: the terminal (or tmux with set-clipboard) puts the text on the clipboard, also over SSH.
    private func copy(_ text: String) {
        let sequence = "\u{1B}]52;c;\(Data(text.utf8).base64EncodedString())\u{07}"
        _ = sequence.withCString { clibc_write_all(1, $0, Int(strlen($0))) }
    }

    private func run(_ effect: BrowserEffect) {
        let runner = EffectRunner(client: client, cache: cache)
        let task = Task { @MainActor [weak self] in
            for event in await runner.execute(effect) { self?.deliver(event) }
        }
        tasks.append(task)
        tasks.removeAll { $0.isCancelled }
    }

    /// Restores the terminal and ends the process with `code`.
    private func finish(_ code: Int32) {
        terminal?.shutdown()
        for source in sources { source.cancel() }
        sources = []
        if code == 0, let continuation {
            self.continuation = nil
            continuation.resume(returning: 0)
        } else {
            exit(code)
        }
    }

    /// Called by the client's observer from any thread.
    func record(_ request: RequestRecord) {
        deliver(.requestFinished(request))
    }
}
