import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RecordBrowser

/// What only the program around the browser can do: the terminal's clipboard, `$EDITOR` with the
/// screen suspended, quitting, and taking events that arrive later (pushes).
public protocol EffectHost: Sendable {
    /// Puts text on the clipboard (the terminal app: OSC 52).
    func copy(_ text: String) async
    /// Edits the fields in `$EDITOR`; the event it produced (nil: none).
    func edit(_ edit: JSONEdit) async -> BrowserEvent?
    func quit() async
    /// An event that arrives on its own, after its effect was started (a push, the long-poll's state).
    func deliver(_ event: BrowserEvent) async
}

/// The browser's one loop, shared by the terminal app, the benchmarks and the tests: an event goes
/// through `Browser.update`, the staged batch is mirrored to the journal, and every effect runs through
/// the `EffectRunner`, whose results come back as events. Headless runs drive it with `settle` (effects
/// one at a time, to completion); the app and the network benchmark through a `LiveLoop` (every effect
/// a task, results applied as they come).
public struct BrowserLoop: Sendable {
    public var state: BrowserState
    public let runner: EffectRunner
    /// Why the journal is not in use (it could not be opened, read or written), for the hint line.
    public private(set) var journalProblem: Notice?
    private var journal: StagingJournal?

    public init(state: BrowserState, runner: EffectRunner) {
        self.state = state
        self.runner = runner
        self.journal = runner.journal
    }

    /// Applies one event: the core's update, then the journal. Returns the effects to run.
    public mutating func apply(_ event: BrowserEvent) -> [BrowserEffect] {
        state.now = Int64(Date().timeIntervalSince1970 * 1000)
        let before = state.staged
        let history = state.session.commandHistory.last
        let effects = Browser.update(&state, event)
        persist(settled: effects.contains(.commitSettled), before: before)
        // A `:` line run is kept for the account (best effort: a cache that cannot be written loses only ↑).
        if let line = state.session.commandHistory.last, line != history { try? runner.cache?.rememberCommand(line) }
        return effects.filter { $0 != .commitSettled }
    }

    /// The account's `:` history from the cache.
    public mutating func restoreHistory() -> [BrowserEffect] {
        guard let lines = try? runner.cache?.commandHistory(), !lines.isEmpty else { return [] }
        return apply(.historyRestored(lines))
    }

    /// Staged ops from the last session, and a commit that was in flight when it ended. A damaged
    /// journal is left as it is (not overwritten) for the user to inspect.
    public mutating func restoreJournal() -> [BrowserEffect] {
        guard let journal else { return [] }
        do {
            let batch = try journal.load()
            let inflight = try journal.inflight()
            if !batch.isEmpty || !inflight.isEmpty { return apply(.journalRestored(batch, inflight: inflight)) }
        } catch {
            self.journal = nil
            journalProblem = .journal(.unreadable(path: journal.path, reason: "\(error)"))
            state.say(journalProblem!)
        }
        return []
    }

    /// Mirrors the staged batch to the journal after every change; a commit's answer clears its
    /// in-flight record in the same transaction.
    mutating func persist(settled: Bool, before: StagedBatch) {
        guard let journal else { return }
        do {
            if settled {
                try journal.finishCommit(remaining: state.staged)
            } else if state.staged != before {
                try journal.save(state.staged)
            }
        } catch {
            journalProblem = .journal(.cannotWrite(reason: "\(error)"))
            state.say(journalProblem!)
        }
    }

    /// Runs events and everything they cause to completion, effects one at a time in order (headless
    /// runs and tests). `onEvent` sees each event an effect produced, before it is applied.
    public mutating func settle(
        _ events: [BrowserEvent], host: any EffectHost, onEvent: (BrowserEvent, BrowserState) -> Void = { _, _ in }
    ) async {
        var pending: [BrowserEffect] = []
        for event in events { pending += apply(event) }
        await drain(&pending, host: host, onEvent: onEvent)
    }

    /// Runs the start effects to completion.
    public mutating func start(host: any EffectHost) async {
        var pending = Browser.start(&state)
        await drain(&pending, host: host, onEvent: { _, _ in })
    }

    private mutating func drain(_ pending: inout [BrowserEffect], host: any EffectHost, onEvent: (BrowserEvent, BrowserState) -> Void) async {
        while !pending.isEmpty {
            let effect = pending.removeFirst()
            // A long-poll never ends by itself: headless runs do not start it.
            if case .startNotifications = effect { continue }
            for produced in await runner.execute(effect, host: host) {
                onEvent(produced, state)
                pending += apply(produced)
            }
        }
    }
}

/// The loop as the terminal app runs it: every effect a task on the main actor, the events each
/// produces applied as they come. The app and the network benchmark run this one; headless runs (the
/// other benchmarks, the tests) run `BrowserLoop.settle`, effects one at a time to completion.
@MainActor
public final class LiveLoop {
    public private(set) var loop: BrowserLoop
    public let host: any EffectHost
    /// Where the events an effect produced go (the app: applied only while the terminal is up, then a
    /// frame scheduled). Nil: straight back into the loop.
    public var onEvent: (@MainActor (_ event: BrowserEvent, _ from: BrowserEffect) -> Void)?
    /// Effects in flight (the long-poll among them), each dropping itself when done.
    private var tasks: [Int: Task<Void, Never>] = [:]
    private var nextTaskID = 0
    /// Effects that wait for the next frame (`BrowserEffect.waitsForFrame`) when the app draws one
    /// (`framePresented`); off (the default: headless runs, tests), every effect starts at once.
    public var holdsUntilFrame = false
    /// Effects held for a frame and not started yet.
    public private(set) var waitingForFrame: [BrowserEffect] = []

    public init(_ loop: BrowserLoop, host: any EffectHost) {
        self.loop = loop
        self.host = host
    }

    public var state: BrowserState {
        get { loop.state }
        set { loop.state = newValue }
    }

    /// Effects started and not finished yet.
    public var running: Int { tasks.count }

    /// Applies an event (core, journal) and starts the effects it causes.
    public func send(_ event: BrowserEvent) { run(loop.apply(event)) }

    /// Starts the browser's first effects (the zones, the schema).
    public func start() { run(Browser.start(&loop.state)) }

    /// Restores the last session's staged ops and in-flight commit (`BrowserLoop.restoreJournal`).
    public func restoreJournal() { run(loop.restoreJournal()) }
    public func restoreHistory() { run(loop.restoreHistory()) }

    /// The app has put a frame on screen: the effects held for it start.
    public func framePresented() {
        guard !waitingForFrame.isEmpty else { return }
        let effects = waitingForFrame
        waitingForFrame = []
        start(effects)
    }

    /// Runs each effect through the runner as a task; its events go to `onEvent`. With
    /// `holdsUntilFrame`, those that wait for a frame are kept until `framePresented`.
    public func run(_ effects: [BrowserEffect]) {
        guard holdsUntilFrame else { return start(effects) }
        waitingForFrame += effects.filter(\.waitsForFrame)
        start(effects.filter { !$0.waitsForFrame })
    }

    private func start(_ effects: [BrowserEffect]) {
        let runner = loop.runner
        let host = self.host
        for effect in effects {
            // Each task drops itself from the list when it is done. The entry is added before the task
            // can run: both happen on the main actor.
            let id = nextTaskID
            nextTaskID += 1
            tasks[id] = Task { @MainActor [weak self] in
                for event in await runner.execute(effect, host: host) { self?.receive(event, from: effect) }
                self?.tasks[id] = nil
            }
        }
    }

    /// Cancels every effect in flight (the app, quitting).
    public func cancelAll() {
        for task in tasks.values { task.cancel() }
    }

    private func receive(_ event: BrowserEvent, from effect: BrowserEffect) {
        if let onEvent { onEvent(event, effect) } else { send(event) }
    }
}
