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
    /// Staged ops on disk; nil when it could not be opened (then staging works, unsaved, and the user is told).
    private var journal: StagingJournal?
    private var journalProblem: String?
    private var inputSource: (any DispatchSourceRead)?
    private var terminal: CursesTerminal?
    private var sources: [any DispatchSourceProtocol] = []
    private var continuation: CheckedContinuation<Int32, Never>?
    private var renderScheduled = false
    private var emptyWakeups = 0
    private var tasks: [Int: Task<Void, Never>] = [:]
    private var nextTaskID = 0
    private var listener: Task<Void, Never>?
    /// A journal of the earlier layout, to put to the user at start.
    private let legacy: LegacyJournal?

    init(
        client: CloudKitClient, cache: RecordCache?, journal: Result<StagingJournal, any Error>, legacy: LegacyJournal?, connection: ConnectionInfo,
        readOnlyReason: String?
    ) {
        self.client = client
        self.cache = cache
        self.legacy = legacy
        switch journal {
        case .success(let j): self.journal = j
        case .failure(let error): journalProblem = "the staging journal could not be opened (\(BrowserFailure(error).message)): staged edits will not survive a crash"
        }
        self.state = BrowserState(connection: connection)
        self.state.readOnlyReason = readOnlyReason
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
        perform(Browser.start(&state))
        restoreJournal()
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
        let before = state.staged
        let effects = Browser.update(&state, event)
        persist(after: event, before: before)
        perform(effects)
    }

    /// Staged ops from the last session, and a commit that was in flight when it ended.
    private func restoreJournal() {
        if let journalProblem { state.message = journalProblem }
        if let dropped = cache?.droppedLegacyFile {
            state.message = "removed the cache of an earlier version (\((dropped as NSString).lastPathComponent)): it did not record its server, so zones are fetched again"
        }
        if let legacy {
            send(.legacyJournalFound(legacy))
            if let unreadable = legacy.unreadable {
                state.legacyJournal = nil
                state.message = "the earlier journal \(legacy.path) could not be read (\(unreadable)); it is left untouched"
            }
        }
        guard let journal else { return }
        do {
            let batch = try journal.load()
            let inflight = try journal.inflight()
            if !batch.isEmpty || !inflight.isEmpty { send(.journalRestored(batch, inflight: inflight)) }
        } catch {
            // A damaged journal is kept as it is (not overwritten) for the user to inspect.
            self.journal = nil
            state.message = "the staging journal \(journal.path) could not be read (\(error)); it is left untouched and this session's edits are not journaled"
        }
    }

    /// Mirrors the staged batch to the journal after every change; a commit's answer clears its
    /// in-flight record in the same transaction.
    private func persist(after event: BrowserEvent, before: StagedBatch) {
        guard let journal else { return }
        do {
            switch event {
            case .commitFinished(let outcomes) where !outcomes.contains(where: { if case .unknown = $0.answer { return true } else { return false } }):
                try journal.finishCommit(remaining: state.staged)
            case .commitVerified(_, let failure) where failure == nil:
                try journal.finishCommit(remaining: state.staged)
            default:
                if state.staged != before { try journal.save(state.staged) }
            }
        } catch {
            state.message = "the staging journal could not be written: \(error)"
        }
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
            case .startNotifications:
                guard listener == nil else { break }
                let listen = NotificationListener(client: client)
                listener = Task { @MainActor [weak self] in
                    await listen.run { event in await MainActor.run { self?.deliver(event) } }
                }
            case .removeLegacyJournal(let path):
                StagingJournal.removeLegacy(path: path)
            case .editJSON(let edit):
                // After this frame (an error reopens the editor from within an event).
                DispatchQueue.main.async { MainActor.assumeIsolated { self.editJSON(edit) } }
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

    /// `$VISUAL` / `$EDITOR` (vi if neither is set) on a private temporary file, with curses suspended.
    private func editJSON(_ edit: JSONEdit) {
        guard let terminal, terminal.active else { return }
        let directory = StagingJournal.defaultDirectory()
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = (directory as NSString).appendingPathComponent("edit-\(UUID().uuidString).json")
        guard FileManager.default.createFile(atPath: path, contents: Data(edit.text.utf8), attributes: [.posixPermissions: 0o600]) else {
            send(.notice("could not write \(path) for the editor: nothing staged"))
            render()
            return
        }
        let env = ProcessInfo.processInfo.environment
        let editor = [env["VISUAL"], env["EDITOR"]].compactMap { $0 }.first { !$0.isEmpty } ?? "vi"
        let command = "\(editor) '\(path.replacingOccurrences(of: "'", with: "'\\''"))'"
        var status: Int32 = 0
        inputSource?.suspend()
        terminal.suspend { status = clibc_run_shell(command) }
        inputSource?.resume()
        let edited = try? String(contentsOfFile: path, encoding: .utf8)
        unlink(path)
        let size = terminal.size
        send(.resized(width: size.width, height: size.height))
        send(.jsonEdited(edit, edited: edited, status: status))
        render()
    }

    private func run(_ effect: BrowserEffect) {
        let runner = EffectRunner(client: client, cache: cache, journal: journal, account: state.connection.account)
        // Fault injection for the reliability tests: a crash inside a network task must still leave
        // the terminal restored (tests/reliability/terminal.sh).
        if ProcessInfo.processInfo.environment["CKBROWSE_FAULT"] == "crash-in-network-task" {
            Task.detached { fatalError("injected fault: crash in a network task") }
        }
        // Each task drops itself from the list when it is done (the list used to keep every task of
        // the session). The entry is added before the task can run: both happen on the main actor.
        let id = nextTaskID
        nextTaskID += 1
        tasks[id] = Task { @MainActor [weak self] in
            for event in await runner.execute(effect) { self?.deliver(event) }
            self?.tasks[id] = nil
        }
    }

    /// Restores the terminal and ends the process with `code`.
    private func finish(_ code: Int32) {
        listener?.cancel()
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
