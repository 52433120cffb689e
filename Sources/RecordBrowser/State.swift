import CloudKitModels
import TerminalUI

/// What the browser is connected to (shown in the status bar; never a token): the account (server,
/// container, environment, signed-in identity) and the database open now.
public struct ConnectionInfo: Sendable, Hashable {
    public var account: Account
    public var database: DatabaseScope

    public init(account: Account, database: DatabaseScope) {
        self.account = account
        self.database = database
    }

    public var container: String { account.container }
    public var environment: CloudKitEnvironment { account.environment }
    public var server: ServerID { account.server }
    /// The open database of the account.
    public var scope: Scope { Scope(account: account, database: database) }
    /// The key of a zone of the open database.
    public func zone(_ zoneID: ZoneID) -> ZoneKey { ZoneKey(scope: scope, zoneID: zoneID) }
}

/// The kinds of screen (the stack holds `Screen`s, which carry their state).
public enum Pane: Hashable, Sendable {
    case zones
    case records
    case recordDetail
    case subscriptions
    case subscriptionDetail
    case debug
    /// The staged batch (`b`).
    case batch
    /// The commit preview, confirmation and outcome (`c`).
    case commit
    /// The conflict prompt after a commit came back with CONFLICT.
    case conflict
    /// Live notifications from the webcourier long-poll (`N`).
    case notifications
    /// One push in full, its keys named (Enter on the Notifications pane).
    case push
    /// The recent errors in full (`!`).
    case errors
    /// One request's whole exchange, from the debug pane.
    case inspector
    /// Everything shared in the database (`:shares`): share records of every zone.
    case shares
    /// The container's schema (`:schema`): record types, fields, indexes and grants.
    case schema
}

/// A failure as the browser shows it: one line, plus the sign-in URL for AUTHENTICATION_REQUIRED.
/// Decisions read `error` (its kind, `serverErrorCode` and HTTP status), never `message`.
public struct BrowserFailure: Error, Sendable, Hashable {
    public var message: String
    public var redirectURL: String?
    public var isAuthenticationRequired: Bool
    /// The client's typed error, when the failure came from a request.
    public var error: CloudKitError?

    public init(message: String, redirectURL: String? = nil, isAuthenticationRequired: Bool = false) {
        self.message = message
        self.redirectURL = redirectURL
        self.isAuthenticationRequired = isAuthenticationRequired
    }

    public init(_ error: any Error) {
        if let error = error as? CloudKitError {
            self.init(message: error.description, redirectURL: error.redirectURL, isAuthenticationRequired: error.isAuthenticationRequired)
            self.error = error
        } else if let failure = error as? BrowserFailure {
            self = failure
        } else {
            // Not a request's failure (the local cache, the journal): its description is for reading only.
            self.init(message: String(describing: error))
        }
    }

    public var serverErrorCode: ServerErrorCode? { error?.serverErrorCode }
    public var httpStatus: Int? { error?.httpStatus }
}

/// The records of the open zone, from its change feed or a query. Only a window of row summaries is
/// in memory; the rows live in the local cache, so memory stays flat however many records are loaded.
public struct RecordList: Sendable {
    public enum Source: Sendable, Hashable {
        case changes
        case query(QueryRequest)
        /// The default zone has no change feed: nothing is listed until the user types `:query`.
        case awaitingQuery
    }

    public var key: ListKey
    public var source: Source
    /// Rows in the cache for this list (tombstones included).
    public var total = 0
    /// Of `total`, tombstones: records deleted since an earlier page, shown until the list is reopened.
    public var deleted = 0
    /// Rows matching the `/` filter (equals `total` without a filter).
    public var matching = 0
    /// Row summaries `windowStart ..< windowStart + window.count` (of the filtered order).
    public var window: [RecordSummary] = []
    public var windowStart = 0
    /// A window request is in flight.
    public var windowPending = false
    /// The latest window request (answers to earlier ones are ignored).
    public var windowRequest = 0
    /// Field columns and order (`:columns`, `:sort`).
    public var view = ListView()
    /// The widest name, column values and type seen in the windows since the columns were chosen:
    /// packed columns grow as wider rows scroll in and do not shrink back, so they do not jump.
    public var seenWidths: [Int] = []
    public var syncToken: String?
    public var continuationMarker: String?
    public var moreComing = true
    public var loading = false
    /// The cache has been opened (its rows and token are known).
    public var opened = false
    /// `G` was pressed: keep loading until the end (Esc cancels).
    public var loadingToEnd = false
    /// `G` was pressed: the selection stays on the last record as pages arrive (any move ends it).
    public var followEnd = false
    /// A far move (g, G, a page) waiting for its rows: the selection moves there when they arrive,
    /// so no placeholder row is ever drawn.
    public var jumpTo: Int?
    /// The scroll a page's move asked for along with `jumpTo` (nil: as little as shows the target).
    public var jumpScroll: Int?
    /// Bumped when the list is replaced, so late answers for an old list are ignored.
    public var generation = 0
    public var selection = 0
    public var scroll = 0

    public init(key: ListKey, source: Source) {
        self.key = key
        self.source = source
    }

    public var zone: ZoneKey { key.zone }
    /// The zone ID to send.
    public var zoneID: ZoneID { key.zone.zoneID }

    /// The summary of row `index`, if it is in the window.
    public func row(_ index: Int) -> RecordSummary? {
        let i = index - windowStart
        return window.indices.contains(i) ? window[i] : nil
    }
}

/// One error as `!` shows it.
public struct LoggedError: Sendable, Hashable {
    public var failure: BrowserFailure
    /// When it happened (ms since 1970; 0 when unknown).
    public var at: Int64
    /// The screen the user was on.
    public var pane: Pane
}

/// What a hint-line message is.
public enum MessageKind: Sendable, Hashable {
    case plain
    /// A firesOnce subscription fired and the server deleted it: a later push summary does not
    /// replace this message.
    case subscriptionFiredOnce
    /// What a commit did: it stays when the user closes the commit screen, and goes with the next move.
    case outcome
    /// Work under way reporting its progress: its next report replaces it, a move clears it as it
    /// clears a plain message, and nothing else takes it for a message the user must still read.
    case progress(MessageProgress)
    /// Why what was typed on the input line was refused: the line opens again with the text and this
    /// reason (never a message the text is lost behind).
    case refusal

    /// A plain message, or a progress report: both go when the user moves on.
    var goesWithAMove: Bool {
        switch self {
        case .plain, .progress, .refusal: return true
        case .subscriptionFiredOnce, .outcome: return false
        }
    }
}

/// What a progress message reports on.
public enum MessageProgress: Sendable, Hashable {
    /// `G`: a list loading page after page to its end.
    case loadingToEnd
    /// A zone's changes (or a query) asked for: the page that comes in ends it.
    case fetching
    /// `o`: an asset downloading, by its label (`'image' of artwork-0011`).
    case download(String)
}

/// Text typed on the hint line, and what it is for.
public struct InputLine: Sendable, Hashable {
    public enum Mode: Sendable, Hashable {
        /// `:` a command.
        case command
        /// `/` filters the list as it is typed.
        case filter
        /// `a` in a record: `NAME TYPE` of a field to add.
        case addField
        /// `n` in a zone's records: `TYPE [NAME]` of a record to create (`here`: the types seen in the
        /// loaded rows; `schema`: the schema's other record types).
        case newRecord(here: [String], schema: [String])
        /// `n` on the zones screen: the name of a zone to create.
        case newZone
        /// `d` on the zones screen: the zone's name, typed to confirm its deletion.
        case deleteZone(ZoneKey)
        /// `i` on a share: `EMAIL [READ_ONLY|READ_WRITE]` of a participant to invite.
        case invite
        /// `e` on an asset field (or `a NAME ASSETID`): the local file to upload into it on commit.
        case assetFile(field: String)
        /// `o` on an asset: the file to save it to.
        case saveAsset(AssetDownload)
        /// `:query` typed where no zone is open: the zone to run it in (`zones`: those known).
        case queryZone(command: String, zones: [String])
        /// `n` on the Subscriptions screen: `query TYPE [ZONE]`, `zone ZONE` or `database`.
        case newSubscription
    }

    public var mode: Mode
    public var characters: [Character]
    /// Insertion point, 0 ... characters.count.
    public var cursor: Int
    /// What Tab offered (the candidates, or why there are none), shown above the line until the next edit.
    public var hint: String?
    /// The whole text is selected (`/` opened again shows the last filter so): typing replaces it,
    /// Backspace or Delete clears it, a key that moves the cursor keeps it to edit.
    public var selected = false
    /// Why the text was refused (shown above the line as an error until the next edit).
    public var refusal: Notice.Refusal?
    public var refused: Bool { refusal != nil }
    /// ↑/↓ on a `:` line: the history entry shown, and the line as typed before the first ↑.
    public var recall: (index: Int, draft: String)? {
        get { recallIndex.map { (index: $0, draft: recallDraft) } }
        set {
            recallIndex = newValue?.index
            recallDraft = newValue?.draft ?? ""
        }
    }
    var recallIndex: Int?
    var recallDraft = ""

    public init(_ mode: Mode, text: String = "", selected: Bool = false) {
        self.mode = mode
        self.characters = Array(text)
        self.cursor = characters.count
        self.selected = selected && !text.isEmpty
    }

    /// Applies an editing key (`TextEditing`), the selection first: false when it is not one.
    mutating func edit(_ key: Key) -> Bool {
        if selected {
            switch key {
            case .char, .backspace, .delete, .ctrl("d"):
                characters = []
                cursor = 0
                selected = false
                if case .char = key { break }
                return true
            default:
                guard TextEditing.apply(key, &characters, &cursor) else { return false }
                selected = false
                return true
            }
        }
        return TextEditing.apply(key, &characters, &cursor)
    }

    public var text: String { String(characters) }

    /// What stands before the text.
    public var prompt: String {
        switch mode {
        case .command: return ":"
        case .filter: return "/"
        case .addField: return "add field (NAME TYPE): "
        case .newZone: return "new zone (NAME): "
        case .newSubscription: return "new subscription: "
        case .deleteZone(let zone): return "delete zone \(zone.zoneName) and every record in it? type its name: "
        case .invite: return "invite (EMAIL [READ_ONLY|READ_WRITE]): "
        case .assetFile(let field): return "upload a file into '\(field)' on commit (PATH): "
        case .saveAsset(let download): return "save \(download.label) to (PATH): "
        case .queryZone(_, let zones):
            if zones.count == 1 { return "run the query in which zone? (Enter: \(zones[0])): " }
            return "run the query in which zone? (" + zones.prefix(4).joined(separator: ", ") + (zones.count > 4 ? ", … Tab completes" : "") + "): "
        case .newRecord(let here, let schema):
            // At most four names: those seen here first, then the schema's others.
            let shownHere = Array(here.prefix(4)), shownSchema = Array(schema.prefix(4 - shownHere.count))
            var offer = shownHere.isEmpty ? "" : "; here: " + shownHere.joined(separator: ", ")
            if !shownSchema.isEmpty { offer += (shownHere.isEmpty ? "; " : "; also ") + shownSchema.joined(separator: ", ") }
            if here.count + schema.count > 4 { offer += ", … Tab completes" }
            return "new record (TYPE [NAME]" + offer + "): "
        }
    }
}

/// One line of the record detail view.
public struct DetailLine: Sendable, Hashable {
    public var field: String
    public var type: String
    public var text: String
    /// Enter follows this reference.
    public var reference: Reference?
    /// The JSON `y` copies for this line.
    public var copyJSON: String?
    public var isHeading = false
    /// The field this line shows (its value, list elements and continuation lines); nil for headings
    /// and system fields.
    public var owner: String?
    /// A staged change shown on this line.
    public var mark: StageMark?
    /// The element of a list field this line shows.
    public var element: Int?
}

/// How a detail line shows a staged change.
public enum StageMark: Sendable, Hashable {
    case changed
    /// The old value, under a changed field.
    case was
    case cleared
    case deleted
}

/// The open record.
public struct RecordDetail: Sendable {
    public var key: RecordKey
    public var record: Record?
    /// The record dictionary exactly as the server sent it.
    public var raw: JSON?
    public var showRaw = false
    public var loading = true
    public var error: BrowserFailure?
    public var selection = 0
    public var scroll = 0
    /// The records that refer to this one, as the cache answered when it was loaded (nil: not yet).
    public var referencedBy: ReferencedBy?

    public init(key: RecordKey, record: Record? = nil, raw: JSON? = nil, loading: Bool = true) {
        self.key = key
        self.record = record
        self.raw = raw
        self.loading = loading
    }

    public var zone: ZoneKey { key.zone }
    public var zoneID: ZoneID { key.zone.zoneID }
    public var recordName: String { key.recordName }
}

/// Everything the browser shows. A value: `update` changes it, `render` draws it. It keeps what is
/// global (the connection, the screen's size, the stack of screens, the modal, the messages, the
/// requests, the pushes, the staged batch, what is known of the container, the session); each screen
/// carries its own state on the stack (`Screen`).
public struct BrowserState: Sendable {
    public var connection: ConnectionInfo
    public var size: (width: Int, height: Int) = (80, 24)
    /// The screens, the zones at the bottom and the one shown on top, each with its own state.
    public var stack = ScreenStack()
    /// The one modal open now (input line, inline editor, confirmation, help, sign-in, the earlier
    /// journal's question), and those waiting to open.
    public var modals = Modals()
    /// The hint line's message and the errors.
    public var report = Reports()
    public var requests: [RequestRecord] = []
    /// Pushes received this session.
    public var notifications = NotificationFeed()
    /// Staged updates and deletes (mirrored to the journal by the app on every change).
    public var staged = StagedBatch()
    /// What is known of the open container and database: zones, subscriptions, schema, users.
    public var known = Knowledge()
    /// The session's clock, keys typed ahead, and whether it ends.
    public var session = Session()

    public init(connection: ConnectionInfo) {
        self.connection = connection
    }

    public var pane: Pane { stack.pane }
}

/// The modal open now, and those the program opened while the user was busy in another.
public struct Modals: Sendable {
    /// Keys go to it first. When it closes, the next queued one opens.
    public var open: Modal? {
        didSet { if open == nil, !queued.isEmpty { open = queued.removeFirst() } }
    }
    /// Modals the program opened while the user was busy in another (typed text is never replaced).
    public var queued: [Modal] = []
    /// The first line of the help shown (a help taller than the screen scrolls).
    public var helpScroll = 0
    public init() {}
}

/// The hint line's message and the errors of the session.
public struct Reports: Sendable {
    /// What the hint line reports (its words are made by `render`).
    public var notice: Notice?
    /// What the report is, for decisions that must not read its words (`Notice.kind`, but for a
    /// commit's outcome that has outlived its screen: plain from then on).
    public var kind: MessageKind = .plain
    /// The error shown in the status bar (short); cleared when the user moves to another screen.
    public var lastError: BrowserFailure?
    /// Recent errors, oldest first, each in full (`!` shows them).
    public var errorLog: [LoggedError] = []
    public init() {}
}

/// What the browser knows of the open container and database, whichever screen shows it.
public struct Knowledge: Sendable {
    public var zones = Loadable<[ZoneResult]>([])
    /// Zones whose sync token is cached locally (filled in by the app's cache).
    public var cachedZones: Set<ZoneKey> = []
    /// The subscriptions of the database (the Subscriptions screen, and what a change will fire).
    public var subscriptions = Loadable<[SubscriptionResult]>([])
    /// `firesOnce` subscriptions of the database that fired and were deleted by the server this
    /// session: listed (dim) on the Subscriptions screen so `R` can make them again.
    public var firedOnce: [Subscription] = []
    /// The container's schema for this environment, once loaded: Tab completes `:query` from it and a
    /// query it says CloudKit will refuse is questioned before it is sent.
    public var schema = Loadable<KnownSchema?>(nil)
    /// The start's schema load waits for the zones' answer (`Browser.start`).
    public var schemaAfterZones = false
    /// The `.ckdb` file `:schema load` is reading: a refusal reopens the command line with it.
    public var schemaFileLoading: String?
    /// Users' names by record name, as discovered (owners of shared zones).
    public var userNames: [String: String] = [:]
    /// The signed-in user's permission on zones of the shared database, from their shares.
    public var sharePermissions: [ZoneKey: SharePermission] = [:]
    /// Why writes are refused (staging included), or nil when they are allowed.
    public var readOnlyReason: String?
    /// Records staged `VALIDATE` references name: whether they exist (looked up when staged).
    public var targets: [RecordKey: TargetCheck] = [:]
    /// What staged deletes do to the cached records that refer to them (looked for when staged).
    public var impacts: [RecordKey: DeleteImpact] = [:]
    public init() {}
}

/// The session's clock and keys.
public struct Session: Sendable {
    /// The time of the event being handled, in ms since 1970 (set by the runtime; 0 in pure tests).
    public var now: Int64 = 0
    /// Keys typed ahead while the screen waits for a result; replayed in order when it arrives.
    public var waitingKeys: [Key] = []
    public var quitRequested = false
    /// Records made with `n` this session (part of the names made up for them).
    public var newRecordCount = 0
    /// The `:` lines run, oldest first (the account's, kept by the app in its cache): ↑/↓ recall them.
    public var commandHistory: [String] = []
    public init() {}
}

/// Shorthands over the state's parts, named as the screens and updates read them.
extension BrowserState {
    public var modal: Modal? {
        get { modals.open }
        set { modals.open = newValue }
    }
    public var queuedModals: [Modal] { modals.queued }

    /// The input line: a `:` command, a `/` filter, or a field to add.
    public var input: InputLine? {
        get { if case .input(let line)? = modal { return line } else { return nil } }
        set { setModal(newValue.map(Modal.input), isThis: { if case .input = $0 { return true } else { return false } }) }
    }
    public var showHelp: Bool {
        get { if case .help? = modal { return true } else { return false } }
        set { setModal(newValue ? .help : nil, isThis: { if case .help = $0 { return true } else { return false } }) }
    }
    public var helpScroll: Int {
        get { modals.helpScroll }
        set { modals.helpScroll = newValue }
    }
    /// Shown until dismissed when the database needs a signed-in user.
    public var signInNotice: BrowserFailure? {
        get { if case .signIn(let failure)? = modal { return failure } else { return nil } }
        set {
            if let newValue { present(.signIn(newValue)) } else if case .signIn? = modal { modal = nil }
        }
    }
    /// Entries of an earlier-layout journal waiting for the user's decision (keep here / discard).
    public var legacyJournal: LegacyJournal? {
        get { if case .legacyJournal(let legacy)? = modal { return legacy } else { return nil } }
        set {
            if let newValue { present(.legacyJournal(newValue)) } else if case .legacyJournal? = modal { modal = nil }
        }
    }
    /// The inline field editor, when open.
    public var editor: FieldEditor? {
        get { if case .editor(let editor)? = modal { return editor } else { return nil } }
        set { setModal(newValue.map(Modal.editor), isThis: { if case .editor = $0 { return true } else { return false } }) }
    }
    /// A yes/no question on the hint line.
    public var confirmation: Confirmation? {
        get { if case .confirmation(let c)? = modal { return c } else { return nil } }
        set { setModal(newValue.map(Modal.confirmation), isThis: { if case .confirmation = $0 { return true } else { return false } }) }
    }

    /// What the message is, for decisions that must not read its words.
    public var messageKind: MessageKind { report.kind }
    public var lastError: BrowserFailure? {
        get { report.lastError }
        set { report.lastError = newValue }
    }
    public var errorLog: [LoggedError] {
        get { report.errorLog }
        set { report.errorLog = newValue }
    }

    public var now: Int64 {
        get { session.now }
        set { session.now = newValue }
    }
    public var waitingKeys: [Key] {
        get { session.waitingKeys }
        set { session.waitingKeys = newValue }
    }
    public var quitRequested: Bool {
        get { session.quitRequested }
        set { session.quitRequested = newValue }
    }
    public var newRecordCount: Int {
        get { session.newRecordCount }
        set { session.newRecordCount = newValue }
    }

    public var zones: [ZoneResult] {
        get { known.zones.value }
        set { known.zones.value = newValue }
    }
    public var zonesLoading: Bool {
        get { known.zones.loading }
        set { known.zones.loading = newValue }
    }
    public var cachedZones: Set<ZoneKey> {
        get { known.cachedZones }
        set { known.cachedZones = newValue }
    }
    public var subscriptions: [SubscriptionResult] {
        get { known.subscriptions.value }
        set { known.subscriptions.value = newValue }
    }
    public var subscriptionsLoading: Bool {
        get { known.subscriptions.loading }
        set { known.subscriptions.loading = newValue }
    }
    public var schema: KnownSchema? {
        get { known.schema.value }
        set { known.schema.value = newValue }
    }
    public var schemaLoading: Bool {
        get { known.schema.loading }
        set { known.schema.loading = newValue }
    }
    public var userNames: [String: String] {
        get { known.userNames }
        set { known.userNames = newValue }
    }
    public var sharePermissions: [ZoneKey: SharePermission] {
        get { known.sharePermissions }
        set { known.sharePermissions = newValue }
    }
    public var readOnlyReason: String? {
        get { known.readOnlyReason }
        set { known.readOnlyReason = newValue }
    }

    // The screens' own state, read and written where the screen is (on the stack, else set aside).

    /// Where a list screen is (on the stack, else aside; the start when there is none).
    public func position(_ pane: Pane) -> ListPosition { stack.find(pane)?.listPosition ?? ListPosition() }

    /// Changes the selection and scroll of a list screen (on the stack, else aside) in one access.
    public mutating func withPosition<T>(_ pane: Pane, _ body: (inout Int, inout Int) -> T) -> T {
        var place = position(pane)
        let result = body(&place.selection, &place.scroll)
        setPosition(pane) { $0 = place }
        return result
    }
    /// Selects a row of a list screen (on the stack, else aside).
    public mutating func setSelection(_ pane: Pane, _ row: Int) { setPosition(pane) { $0.selection = row } }
    /// Sets the first row shown of a list screen (on the stack, else aside).
    public mutating func setScroll(_ pane: Pane, _ row: Int) { setPosition(pane) { $0.scroll = row } }
    private mutating func setPosition(_ pane: Pane, _ change: (inout ListPosition) -> Void) {
        stack.modify(pane) { screen in
            guard var position = screen.listPosition else { return }
            change(&position)
            screen.listPosition = position
        }
    }

    // The screens' own state, to read: drawing reads it here, and the tests. Keys reach their screen
    // through `onTop` and results through `withScreen` (Screens.swift); a screen opens only by `stack`.

    /// The open zone's records (on the stack, or set aside by a jump to the zones). Tests may change
    /// them where their screen is (nil takes it away); setting them never opens one.
    public var list: RecordList? {
        get { recordsScreen?.list }
        set {
            guard let newValue else { return stack.discard(.records) }
            withRecords { screen, _ in screen.list = newValue }
        }
    }
    /// `/` over the loaded list.
    public var filter: String? { recordsScreen?.filter }
    /// The open record.
    public var detail: RecordDetail? { detailScreen?.detail }
    /// The commit being previewed, sent or resolved (its screen's). Tests may change it where its
    /// screen is (nil closes it); setting it never opens one.
    public var commit: CommitSession? {
        get { commitSession }
        set {
            guard let newValue else { return stack.remove([.commit, .conflict]) }
            withCommit { commit, _ in commit = newValue }
        }
    }

    /// Opens a modal the user asked for (replacing any), or closes it when `modal` is nil and the open
    /// one is of this kind.
    mutating func setModal(_ new: Modal?, isThis: (Modal) -> Bool) {
        if let new {
            modal = new
        } else if let open = modal, isThis(open) {
            modal = nil
        }
    }

    /// Opens a modal the program raised: at once, unless the user is typing or answering in another,
    /// then when that one closes.
    public mutating func present(_ new: Modal) {
        switch modal {
        case nil, .help?: modal = new
        default: modals.queued.append(new)
        }
    }
}

/// What can be open over a screen; at most one at a time.
public enum Modal: Sendable {
    case input(InputLine)
    case editor(FieldEditor)
    case confirmation(Confirmation)
    case help
    case signIn(BrowserFailure)
    case legacyJournal(LegacyJournal)
}

extension BrowserState {
    /// A zone as people read it: its name, and in the shared database its owner's discovered name
    /// (else their record name).
    public func zoneName(_ key: ZoneKey) -> String {
        guard key.zoneID.ownerRecordName != nil, key.database == .shared else { return key.zoneID.zoneName }
        return "\(key.zoneID.zoneName) (owner \(Browser.ownerName(self, key.zoneID)))"
    }
}
