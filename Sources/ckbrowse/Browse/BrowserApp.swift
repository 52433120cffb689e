import CLibc
import CloudKitWeb
import BrowserRuntime
import CursesBackend
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RecordBrowser
import TerminalUI

#if canImport(Glibc)
import Glibc
#endif

/// The event loop: keys from the terminal and results of network tasks meet on the main actor (the
/// only executor that calls curses); each event goes through the runtime's `LiveLoop` (`Browser.update`,
/// the journal, effects as tasks), and frames are drawn by the curses backend (input at once,
/// background updates at most 60 a second).
@MainActor
final class BrowserApp {
    /// The one loop (core update, journal, effect runner) this app shares with the benchmarks and tests.
    private let live: LiveLoop
    private var state: BrowserState {
        get { live.state }
        set { live.state = newValue }
    }
    private let cache: RecordCache?
    private var journalProblem: Notice?
    private var inputSource: (any DispatchSourceRead)?
    private var terminal: CursesTerminal?
    private var sources: [any DispatchSourceProtocol] = []
    private var continuation: CheckedContinuation<Int32, Never>?
    private var renderScheduled = false
    /// When a background result last drew a frame: they draw at most one per `frameInterval`.
    private var lastBackgroundFrame: DispatchTime?
    static let frameInterval = DispatchTimeInterval.milliseconds(16)
    private var emptyWakeups = 0
    /// A journal of the earlier layout, to put to the user at start.
    private let legacy: LegacyJournal?

    init(
        client: CloudKitClient, cache: RecordCache?, journal: Result<StagingJournal, any Error>, legacy: LegacyJournal?, connection: ConnectionInfo,
        readOnlyReason: String?
    ) {
        self.cache = cache
        self.legacy = legacy
        var opened: StagingJournal?
        switch journal {
        case .success(let j): opened = j
        case .failure(let error): journalProblem = .journal(.cannotOpen(reason: BrowserFailure(error).message))
        }
        var state = BrowserState(connection: connection)
        state.readOnlyReason = readOnlyReason
        let host = AppHost()
        live = LiveLoop(BrowserLoop(state: state, runner: EffectRunner(client: client, cache: cache, journal: opened, account: connection.account)), host: host)
        host.app = self
        // The schema's background load starts once the frame showing the zones is on screen.
        live.holdsUntilFrame = true
        // Background results: applied while the terminal is up, drawn soon.
        live.onEvent = { [weak self] event, _ in self?.deliver(event) }
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
        inputSource = input

        state.size = terminal.size
        // Fault injection for the reliability tests: a crash in a task while the browser runs must still
        // leave the terminal restored (tests/reliability/terminal.sh).
        if ProcessInfo.processInfo.environment["CKBROWSE_FAULT"] == "crash-in-network-task" {
            Task.detached { fatalError("injected fault: crash in a network task") }
        }
        live.start()
        restoreJournal()
        render()
        return await withCheckedContinuation { self.continuation = $0 }
    }

    private func readInput(fromStdin: Bool) {
        guard let terminal else { return }
        let keys = terminal.readKeys()
        if keys.isEmpty && fromStdin && !terminal.holdsEscape {
            // A readable stdin that yields nothing, again and again, is a closed terminal (SSH dropped).
            emptyWakeups += 1
            if emptyWakeups > 200 { finish(129) }
            return
        }
        emptyWakeups = 0
        deliverKeys(keys)
        // An ESC that ended the read may start a sequence split across reads: if nothing follows
        // within the escape delay, it was the Esc key.
        if terminal.holdsEscape {
            DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(40)) {
                MainActor.assumeIsolated {
                    guard let terminal = self.terminal, terminal.holdsEscape else { return }
                    self.deliverKeys(terminal.flushEscape())
                }
            }
        }
    }

    private func deliverKeys(_ keys: [Key]) {
        guard let terminal else { return }
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
        live.send(event)
    }

    /// Staged ops from the last session, a commit that was in flight when it ended, an earlier
    /// layout's journal, and what could not be opened.
    private func restoreJournal() {
        if let journalProblem { state.say(journalProblem) }
        if let dropped = cache?.droppedLegacyFile {
            state.say(.cacheDropped(file: Paths.lastComponent(dropped)))
        }
        live.restoreJournal()
        live.restoreHistory()
        if let legacy {
            if let unreadable = legacy.unreadable {
                state.say(.journal(.legacyUnreadable(path: legacy.path, reason: unreadable)))
            } else {
                send(.legacyJournalFound(legacy))
            }
        }
    }

    /// Background results: update now, draw soon (coalesced). The frame is drawn once the main queue
    /// has taken what else arrived with this result, and no sooner than `frameInterval` after the
    /// last frame a background result drew: a lone answer (the demo's zones, a record) shows at once,
    /// a burst of pages draws at most one frame per interval. A result that changes nothing on screen
    /// (a request inspector's entry, the screen elsewhere) draws nothing and leaves the interval
    /// alone. (Always waiting the interval put 16 ms before the demo's first frame.)
    fileprivate func deliver(_ event: BrowserEvent) {
        guard terminal?.active == true else { return }
        send(event)
        guard !renderScheduled else { return }
        renderScheduled = true
        let now = DispatchTime.now()
        let due = lastBackgroundFrame.map { $0 + Self.frameInterval } ?? now
        DispatchQueue.main.asyncAfter(deadline: max(due, now)) {
            MainActor.assumeIsolated { self.drawBackgroundFrame() }
        }
    }

    private func drawBackgroundFrame() {
        renderScheduled = false
        guard let terminal, terminal.active else { return }
        let frame = Browser.render(state)
        defer { live.framePresented() }
        guard !terminal.shows(frame) else { return }
        lastBackgroundFrame = DispatchTime.now()
        terminal.present(frame)
    }

    private func render() {
        guard let terminal, terminal.active else { return }
        terminal.present(Browser.render(state))
        live.framePresented()
    }

    /// OSC 52: the terminal (or tmux with set-clipboard) puts the text on the clipboard, also over SSH.
    fileprivate func copy(_ text: String) {
        let sequence = "\u{1B}]52;c;\(Data(text.utf8).base64EncodedString())\u{07}"
        _ = sequence.withCString { clibc_write_all(1, $0, Int(strlen($0))) }
    }

    /// `$VISUAL` / `$EDITOR` (vi if neither is set) on a private temporary file, with curses suspended.
    /// Returns the event to apply (nil when the terminal is gone).
    fileprivate func editJSON(_ edit: JSONEdit) -> BrowserEvent? {
        guard let terminal, terminal.active else { return nil }
        let directory = StagingJournal.defaultDirectory()
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = Paths.join(directory, "edit-\(UUID().uuidString).json")
        guard FileManager.default.createFile(atPath: path, contents: Data(edit.text.utf8), attributes: [.posixPermissions: 0o600]) else {
            return .notice(.nothingStaged(.editorFileNotWritten(path: path)))
        }
        let env = ProcessInfo.processInfo.environment
        let editor = [env["VISUAL"], env["EDITOR"]].compactMap { $0 }.first { !$0.isEmpty } ?? "vi"
        let command = "\(editor) '\(path.replacing("'", with: "'\\''"))'"
        var status: Int32 = 0
        let written = Self.modified(path)
        inputSource?.suspend()
        terminal.suspend { status = clibc_run_shell(command) }
        inputSource?.resume()
        let edited = try? String(contentsOfFile: path, encoding: .utf8)
        let saved = Self.modified(path) != written
        unlink(path)
        let size = terminal.size
        send(.resized(width: size.width, height: size.height))
        render()
        // A shell's "not found": the editor named is not there (said by name, not as a status).
        if status == 127 { return .notice(.nothingStaged(.editorNotFound(editor))) }
        // Quit without saving (`:q!`) cancels, even where the file as it came is something to stage
        // (a new subscription's template).
        if status == 0, !saved { return .notice(.nothingStaged(.notSaved)) }
        return .jsonEdited(edit, edited: edited, status: status)
    }

    /// When a file was last written (nanoseconds), to tell a save from a quit.
    private static func modified(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        return Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        #else
        return Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        #endif
    }

    /// Restores the terminal and ends the process with `code`.
    fileprivate func finish(_ code: Int32) {
        live.cancelAll()
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

/// The app as the effect runner's host: isolated to the main actor, where curses lives, so every
/// call hops there.
@MainActor
private final class AppHost: EffectHost {
    weak var app: BrowserApp?

    func copy(_ text: String) async { app?.copy(text) }
    func edit(_ edit: JSONEdit) async -> BrowserEvent? { app?.editJSON(edit) }
    func quit() async { app?.finish(0) }
    func deliver(_ event: BrowserEvent) async { app?.deliver(event) }
}
