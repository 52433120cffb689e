import CloudKitModels

/// A place in a list: the selected row and the first row shown.
public struct ListPosition: Sendable, Hashable {
    public var selection = 0
    public var scroll = 0
    public init() {}
}

/// Rows that arrive from the network: the last ones received and whether newer ones are awaited.
public struct Loadable<Value: Sendable>: Sendable {
    public var value: Value
    public var loading = false
    /// An answer has come (the value is the server's, not the empty start).
    public var loaded = false
    public init(_ value: Value, loading: Bool = false) {
        self.value = value
        self.loading = loading
    }
}

/// A list-shaped screen whose rows live elsewhere (the zones, subscriptions and schema the browser
/// knows; the requests; the batch; the pushes): where it is, and its `/` filter.
public struct ListScreen: Sendable, Hashable {
    public var position = ListPosition()
    public var filter: String?
    public init() {}
}

/// The staged batch (`b`): a list's position and filter, and the batch's lines as last built.
public struct BatchScreen: Sendable {
    public var position = ListPosition()
    public var filter: String?
    /// Kept from one key to the next (`Browser.keepBatchLines`): 10,000 staged operations are not
    /// worded again on every key.
    var kept: BatchLines?
    public init() {}
}

/// A zone's records (or a query's).
public struct RecordsScreen: Sendable {
    public var list: RecordList
    /// `/` over the loaded list.
    public var filter: String?
    /// The lists a `:query` replaced, newest last, each with its own query (nil: a zone's changes):
    /// back on screen with Esc, or when the query fails before anything came back.
    public var beforeQuery: [(list: RecordList, query: String?)] = []
    /// The `:query` this list shows, as typed (shown in the title).
    public var query: String?
    /// The screen the query was started from, when it was not a zone's records: Esc goes back there,
    /// and so does a query that fails before anything came back.
    public var startedFrom: Pane?
    /// Records marked for a bulk action (Space, `V`, `*`): `d`, `:set`, `:export` act on them.
    public var marks = Marks()
    /// `:export` with no marks while the rest of the zone loads: written once the last page is in.
    public var pendingExport: ExportRequest?
    /// Records `d` asked the cache for, to stage their deletion: keys typed meanwhile (`c` included)
    /// wait for them, so a fast `d c` commits what the `d` staged.
    public var stagingReads = 0

    public init(list: RecordList) { self.list = list }
}

/// The records marked on a zone's records screen, by name (rows live in the cache, not in memory, so
/// a mark is a name), and the row last marked (`V` marks from there to the selection).
public struct Marks: Sendable, Hashable {
    public private(set) var names: Set<String> = []
    /// The row (in the list's filtered order) last marked with Space.
    public var anchor: Int?

    public init() {}

    public var count: Int { names.count }
    public var isEmpty: Bool { names.isEmpty }
    public func contains(_ name: String) -> Bool { names.contains(name) }

    /// Marks a row, or unmarks it when it was marked; true when it is marked now.
    @discardableResult
    public mutating func toggle(_ name: String, row: Int) -> Bool {
        anchor = row
        if names.remove(name) != nil { return false }
        names.insert(name)
        return true
    }

    /// Marks these records; how many were not marked before.
    @discardableResult
    public mutating func add<S: Sequence>(_ more: S) -> Int where S.Element == String {
        var added = 0
        for name in more where names.insert(name).inserted { added += 1 }
        return added
    }

    public mutating func clear() {
        names = []
        anchor = nil
    }

    /// The names, sorted (what effects carry: deterministic, and the order a bulk op is staged in).
    public var sorted: [String] { names.sorted() }
}

/// One record, and the records it was reached from by following references (to go back to).
public struct DetailScreen: Sendable {
    public var detail: RecordDetail
    public var history: [RecordDetail] = []
    public var filter: String?

    public init(_ detail: RecordDetail) { self.detail = detail }
}

/// One subscription's definition: its summary, or (`v`) its JSON.
public struct SubscriptionDetailScreen: Sendable, Hashable {
    public var raw = false
    public var scroll = 0
    public init() {}
}

/// One request's whole exchange.
public struct InspectorScreen: Sendable {
    public var record: RequestRecord
    public var scroll = 0
    public var filter: String?
    public init(_ record: RequestRecord) { self.record = record }
}

/// The share records of the database (`:shares`).
public struct SharesScreen: Sendable {
    public var shares = Loadable<[Record]>([])
    public var position = ListPosition()
    public init() {}
}

/// A screen on the navigation stack, carrying its own state: a screen cannot be on the stack without
/// what it shows (a record's view without the record, the commit screen without a commit, the
/// inspector with nothing inspected).
public enum Screen: Sendable {
    case zones(ListScreen)
    case records(RecordsScreen)
    case detail(DetailScreen)
    case subscriptions(ListScreen)
    case subscriptionDetail(SubscriptionDetailScreen)
    /// The requests of this session (`D`).
    case requests(ListScreen)
    /// The staged batch (`b`).
    case batch(BatchScreen)
    /// The commit preview, confirmation and outcome (`c`).
    case commit(CommitSession)
    /// The conflict prompt after a commit came back with CONFLICT.
    case conflict(CommitSession)
    /// Live notifications from the webcourier long-poll (`N`).
    case notifications(ListScreen)
    /// One push in full.
    case push(PushScreen)
    /// The recent errors in full (`!`): text that scrolls.
    case errors(scroll: Int)
    case inspector(InspectorScreen)
    case shares(SharesScreen)
    case schema(ListScreen)

    /// Which kind of screen this is.
    public var pane: Pane {
        switch self {
        case .zones: return .zones
        case .records: return .records
        case .detail: return .recordDetail
        case .subscriptions: return .subscriptions
        case .subscriptionDetail: return .subscriptionDetail
        case .requests: return .debug
        case .batch: return .batch
        case .commit: return .commit
        case .conflict: return .conflict
        case .notifications: return .notifications
        case .push: return .push
        case .errors: return .errors
        case .inspector: return .inspector
        case .shares: return .shares
        case .schema: return .schema
        }
    }

    /// A new screen of a kind that needs nothing to be shown (the others are made with their data).
    static func empty(_ pane: Pane) -> Screen? {
        switch pane {
        case .zones: return .zones(ListScreen())
        case .subscriptions: return .subscriptions(ListScreen())
        case .subscriptionDetail: return .subscriptionDetail(SubscriptionDetailScreen())
        case .debug: return .requests(ListScreen())
        case .batch: return .batch(BatchScreen())
        case .notifications: return .notifications(ListScreen())
        case .errors: return .errors(scroll: 0)
        case .shares: return .shares(SharesScreen())
        case .schema: return .schema(ListScreen())
        case .records, .recordDetail, .commit, .conflict, .inspector, .push: return nil
        }
    }

    /// The screen's `/` filter (nil when none is set, or the screen has none).
    public var filter: String? {
        get {
            switch self {
            case .zones(let s), .subscriptions(let s), .requests(let s), .notifications(let s), .schema(let s): return s.filter
            case .batch(let s): return s.filter
            case .records(let s): return s.filter
            case .detail(let s): return s.filter
            case .inspector(let s): return s.filter
            case .subscriptionDetail, .commit, .conflict, .errors, .shares, .push: return nil
            }
        }
        set {
            switch self {
            case .zones(var s): s.filter = newValue; self = .zones(s)
            case .subscriptions(var s): s.filter = newValue; self = .subscriptions(s)
            case .requests(var s): s.filter = newValue; self = .requests(s)
            case .batch(var s): s.filter = newValue; self = .batch(s)
            case .notifications(var s): s.filter = newValue; self = .notifications(s)
            case .schema(var s): s.filter = newValue; self = .schema(s)
            case .records(var s): s.filter = newValue; self = .records(s)
            case .detail(var s): s.filter = newValue; self = .detail(s)
            case .inspector(var s): s.filter = newValue; self = .inspector(s)
            case .subscriptionDetail, .commit, .conflict, .errors, .shares, .push: break
            }
        }
    }

    /// The position of a list screen whose rows live elsewhere.
    var listPosition: ListPosition? {
        get {
            switch self {
            case .zones(let s), .subscriptions(let s), .requests(let s), .notifications(let s), .schema(let s): return s.position
            case .batch(let s): return s.position
            case .shares(let s): return s.position
            default: return nil
            }
        }
        set {
            guard let newValue else { return }
            switch self {
            case .zones(var s): s.position = newValue; self = .zones(s)
            case .subscriptions(var s): s.position = newValue; self = .subscriptions(s)
            case .requests(var s): s.position = newValue; self = .requests(s)
            case .batch(var s): s.position = newValue; self = .batch(s)
            case .notifications(var s): s.position = newValue; self = .notifications(s)
            case .schema(var s): s.position = newValue; self = .schema(s)
            case .shares(var s): s.position = newValue; self = .shares(s)
            default: break
            }
        }
    }
}

extension Screen {
    /// The same screen with its list drawn `delta` rows further down (what render does while a message
    /// wrapped over the body's last rows would hide the selection).
    func scrolled(by delta: Int) -> Screen {
        var screen = self
        switch screen {
        case .records(var s):
            s.list.scroll += delta
            screen = .records(s)
        case .detail(var s):
            s.detail.scroll += delta
            screen = .detail(s)
        default:
            if var position = screen.listPosition {
                position.scroll += delta
                screen.listPosition = position
            }
        }
        return screen
    }

    /// Still the screen `other` was, not another of its kind put in its place: a zone's records are
    /// replaced by a new list (a query, the list before it) with a new generation, a record's view by
    /// another record's.
    func isStill(_ other: Screen) -> Bool {
        switch (self, other) {
        case (.records(let a), .records(let b)): return a.list.generation == b.list.generation
        case (.detail(let a), .detail(let b)): return a.detail.key == b.detail.key && a.history.count == b.history.count
        default: return pane == other.pane
        }
    }

    /// The zone's records screen's own state, when this is it.
    var records: RecordsScreen? { if case .records(let s) = self { return s } else { return nil } }
    /// The record's view's own state, when this is it.
    var detail: DetailScreen? { if case .detail(let s) = self { return s } else { return nil } }
    /// The commit of the commit screen or of its conflict prompt, when this is one.
    var commit: CommitSession? {
        switch self {
        case .commit(let c), .conflict(let c): return c
        default: return nil
        }
    }
}

extension BrowserState {
    /// Hands the top screen's own state to its key handler, with the rest of the state, and writes
    /// it back where it was: the screen stays put while its keys are handled (a screen the handler
    /// opens goes above it; one that took it off the stack, or put another in its place, is not put
    /// back). The handler changes its screen through `inout`, never through the stack: while it runs,
    /// the stack holds the screen as it was before the key, so what the handler calls is handed the
    /// screen too.
    mutating func onTop<S, T>(_ screen: S, _ embed: (S) -> Screen, _ handler: (inout S, inout BrowserState) -> T) -> T {
        let index = stack.count - 1
        let original = stack.top
        var screen = screen
        let result = handler(&screen, &self)
        if index < stack.count, stack[index].isStill(original) { stack.set(index, embed(screen)) }
        return result
    }

    /// Hands the newest screen of a kind (shown, under others, or set aside) to `body` with the rest of
    /// the state, and writes it back where it is, unless `body` put another in its place; nil when
    /// there is none. For results that arrive for a screen wherever it is.
    mutating func withScreen<S, T>(_ pane: Pane, _ extract: (Screen) -> S?, _ embed: (S) -> Screen,
                                   _ body: (inout S, inout BrowserState) -> T) -> T? {
        guard let original = stack.find(pane), var screen = extract(original) else { return nil }
        let result = body(&screen, &self)
        stack.modify(pane) { if $0.isStill(original) { $0 = embed(screen) } }
        return result
    }

    /// The zone's records screen, wherever it is (`withScreen`).
    @discardableResult
    mutating func withRecords<T>(_ body: (inout RecordsScreen, inout BrowserState) -> T) -> T? {
        withScreen(.records, \.records, Screen.records, body)
    }

    /// The record's view, wherever it is (`withScreen`).
    @discardableResult
    mutating func withDetail<T>(_ body: (inout DetailScreen, inout BrowserState) -> T) -> T? {
        withScreen(.recordDetail, \.detail, Screen.detail, body)
    }

    /// The commit's screen (the commit screen, or its conflict prompt), wherever it is (`withScreen`).
    @discardableResult
    mutating func withCommit<T>(_ body: (inout CommitSession, inout BrowserState) -> T) -> T? {
        let pane: Pane = stack.contains(.conflict) ? .conflict : .commit
        return withScreen(pane, \.commit, pane == .conflict ? Screen.conflict : Screen.commit, body)
    }

    /// The commit being previewed, sent or resolved (its screen's), to read.
    public var commitSession: CommitSession? { stack.screens.last { $0.pane == .commit || $0.pane == .conflict }?.commit }

    /// The zone's records screen's own state (on the stack, else set aside), to read.
    public var recordsScreen: RecordsScreen? { stack.find(.records)?.records }
    /// The record's view's own state, to read.
    public var detailScreen: DetailScreen? { stack.find(.recordDetail)?.detail }
}

/// The navigation stack: the zones at the bottom, always; the screen shown on top. Screens taken off
/// by a jump (`z`, Tab) are kept aside, so coming back to a zone's records or to the subscriptions
/// finds them where they were.
public struct ScreenStack: Sendable {
    public private(set) var screens: [Screen] = [.zones(ListScreen())]
    /// Screens taken off by a jump, newest last; one per kind.
    private var aside: [Screen] = []

    public init() {}

    public var top: Screen { screens[screens.count - 1] }
    public var pane: Pane { top.pane }
    public var panes: [Pane] { screens.map(\.pane) }
    public var count: Int { screens.count }
    public func contains(_ pane: Pane) -> Bool { screens.contains { $0.pane == pane } }

    /// The newest screen of a kind on the stack, else the one set aside.
    public func find(_ pane: Pane) -> Screen? {
        screens.last { $0.pane == pane } ?? aside.last { $0.pane == pane }
    }

    /// Changes the newest screen of a kind (on the stack, else aside); false when there is none.
    @discardableResult
    public mutating func modify(_ pane: Pane, _ body: (inout Screen) -> Void) -> Bool {
        if let i = screens.lastIndex(where: { $0.pane == pane }) {
            body(&screens[i])
            return true
        }
        if let i = aside.lastIndex(where: { $0.pane == pane }) {
            body(&aside[i])
            return true
        }
        return false
    }

    /// Shows a screen on top: any screen of its kind goes first (a zone's records are set aside, to
    /// be found again).
    public mutating func push(_ screen: Screen) {
        aside.removeAll { $0.pane == screen.pane }
        if screen.pane == .records, let old = screens.last(where: { $0.pane == .records }) { aside.append(old) }
        screens.removeAll { $0.pane == screen.pane && $0.pane != .zones }
        if screen.pane == .zones { screens[0] = screen } else { screens.append(screen) }
    }

    /// Shows a screen of a kind: the one there (brought back from aside), else a new empty one.
    public mutating func open(_ pane: Pane) {
        if let i = screens.lastIndex(where: { $0.pane == pane }) {
            if i == screens.count - 1 || pane == .zones { return }
            let screen = screens.remove(at: i)
            screens.append(screen)
            return
        }
        if let i = aside.lastIndex(where: { $0.pane == pane }) {
            screens.append(aside.remove(at: i))
        } else if let screen = Screen.empty(pane) {
            screens.append(screen)
        }
    }

    /// Takes the top screen off (never the zones); a zone's records and the subscriptions are set
    /// aside, to be found again (Tab, `:open`).
    public mutating func pop() {
        guard screens.count > 1 else { return }
        let screen = screens.removeLast()
        if Self.keptAside.contains(screen.pane) { setAside(screen) }
    }

    /// The screens a jump or Esc sets aside rather than forgets.
    static let keptAside: Set<Pane> = [.records, .subscriptions]

    /// Takes every screen of these kinds off the stack (and from aside).
    public mutating func remove(_ panes: Set<Pane>) {
        screens.removeAll { panes.contains($0.pane) && $0.pane != .zones }
        aside.removeAll { panes.contains($0.pane) }
    }

    /// Jumps to the zones (`z`, Tab): the screens above are set aside, the zones' records and the
    /// subscriptions to be found again.
    public mutating func jumpToZones() {
        for screen in screens.dropFirst() where Self.keptAside.contains(screen.pane) { setAside(screen) }
        screens = [screens[0]]
    }

    /// Replaces the newest screen of a kind by another (the commit becoming its conflict prompt).
    public mutating func replace(_ pane: Pane, with screen: Screen) {
        if let i = screens.lastIndex(where: { $0.pane == pane }) { screens[i] = screen } else { push(screen) }
    }

    /// Keeps a screen aside (replacing one of its kind there), to be shown by `open`.
    public mutating func setAside(_ screen: Screen) {
        aside.removeAll { $0.pane == screen.pane }
        aside.append(screen)
    }

    /// Replaces the screen at a place of the stack by one of the same kind.
    mutating func set(_ index: Int, _ screen: Screen) {
        guard screens.indices.contains(index), index > 0 || screen.pane == .zones else { return }
        screens[index] = screen
    }

    /// Drops a screen of a kind (and aside).
    public mutating func discard(_ pane: Pane) { remove([pane]) }

    /// The screens as panes, for tests and breadcrumbs.
    public subscript(index: Int) -> Screen { screens[index] }
}
