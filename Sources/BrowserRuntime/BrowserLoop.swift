import CloudKitWeb
import Foundation
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

/// The browser's one loop, shared by the terminal app, the headless benchmarks and the tests: an event
/// goes through `Browser.update`, the staged batch is mirrored to the journal, and every effect runs
/// through the `EffectRunner`, whose results come back as events.
public struct BrowserLoop: Sendable {
    public var state: BrowserState
    public let runner: EffectRunner
    /// Why the journal is not in use (it could not be opened, read or written), for the hint line.
    public private(set) var journalProblem: String?
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
        let effects = Browser.update(&state, event)
        persist(after: event, before: before)
        return effects
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
            journalProblem = "the staging journal \(journal.path) could not be read (\(error)); it is left untouched and this session's edits are not journaled"
            state.message = journalProblem
        }
        return []
    }

    /// Mirrors the staged batch to the journal after every change; a commit's answer clears its
    /// in-flight record in the same transaction.
    mutating func persist(after event: BrowserEvent, before: StagedBatch) {
        guard let journal else { return }
        do {
            switch event {
            case .commitFinished(let outcomes, let zones)
                where !outcomes.contains(where: { if case .unknown = $0.answer { return true } else { return false } })
                && !zones.contains(where: { if case .unknown = $0.answer { return true } else { return false } }):
                try journal.finishCommit(remaining: state.staged)
            case .commitVerified(_, let failure) where failure == nil:
                try journal.finishCommit(remaining: state.staged)
            default:
                if state.staged != before { try journal.save(state.staged) }
            }
        } catch {
            journalProblem = "the staging journal could not be written: \(error)"
            state.message = journalProblem
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
