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

/// The screens, as a navigation stack.
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

    /// A plain message, or a progress report: both go when the user moves on.
    var goesWithAMove: Bool {
        switch self {
        case .plain, .progress: return true
        case .subscriptionFiredOnce, .outcome: return false
        }
    }
}

/// What a progress message reports on.
public enum MessageProgress: Sendable, Hashable {
    /// `G`: a list loading page after page to its end.
    case loadingToEnd
    /// `o`: an asset downloading, by its label (`'image' of artwork-0011`).
    case download(String)
}

extension BrowserState {
    /// Shows a message of a kind other than plain.
    public mutating func show(_ text: String, kind: MessageKind) {
        message = text
        messageKind = kind
    }
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
        /// `n` in a zone's records: `TYPE [NAME]` of a record to create (`types`: those seen here).
        case newRecord(types: [String])
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

    /// The text with the cursor drawn as `▏`.
    public var display: String {
        var shown = characters
        shown.insert("▏", at: max(0, min(cursor, shown.count)))
        return String(shown)
    }

    /// What stands before the text.
    public var prompt: String {
        switch mode {
        case .command: return ":"
        case .filter: return "/"
        case .addField: return "add field (NAME TYPE): "
        case .newZone: return "new zone (NAME): "
        case .deleteZone(let zone): return "delete zone \(zone.zoneName) and every record in it? type its name: "
        case .invite: return "invite (EMAIL [READ_ONLY|READ_WRITE]): "
        case .assetFile(let field): return "upload a file into '\(field)' on commit (PATH): "
        case .saveAsset(let download): return "save \(download.label) to (PATH): "
        case .newRecord(let types):
            return "new record (TYPE [NAME]" + (types.isEmpty ? "" : "; here: " + types.prefix(4).joined(separator: ", ")) + "): "
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

/// Everything the browser shows. A value: `update` changes it, `render` draws it.
public struct BrowserState: Sendable {
    public var connection: ConnectionInfo
    public var stack: [Pane] = [.zones]
    public var size: (width: Int, height: Int) = (80, 24)

    public var zones: [ZoneResult] = []
    public var zonesLoading = false
    public var zoneSelection = 0
    /// The first zone row shown (kept by the keys, used as is by the renderer).
    public var zoneScroll = 0
    /// Zones whose sync token is cached locally (filled in by the app's cache).
    public var cachedZones: Set<ZoneKey> = []

    public var list: RecordList?
    public var detail: RecordDetail?
    /// Records opened by following references, to go back to.
    public var detailHistory: [RecordDetail] = []

    public var subscriptions: [SubscriptionResult] = []
    public var subscriptionsLoading = false
    public var subscriptionSelection = 0
    public var subscriptionListScroll = 0
    /// `v` in a subscription's detail: its JSON instead of the summary.
    public var subscriptionRaw = false
    public var subscriptionScroll = 0

    /// `/` filter over the loaded list.
    public var filter: String?
    /// `/` on a screen whose rows are in memory (zones, subscriptions, requests, a record's fields).
    public var paneFilter: PaneFilter?
    /// The one modal open now (input line, inline editor, confirmation, help, sign-in, the earlier
    /// journal's question): keys go to it first. When it closes, the next queued one opens.
    public var modal: Modal? {
        didSet { if modal == nil, !queuedModals.isEmpty { modal = queuedModals.removeFirst() } }
    }
    /// Modals the program opened while the user was busy in another (typed text is never replaced).
    public var queuedModals: [Modal] = []

    /// The input line: a `:` command, a `/` filter, or a field to add.
    public var input: InputLine? {
        get { if case .input(let line)? = modal { return line } else { return nil } }
        set { setModal(newValue.map(Modal.input), isThis: { if case .input = $0 { return true } else { return false } }) }
    }
    public var showHelp: Bool {
        get { if case .help? = modal { return true } else { return false } }
        set { setModal(newValue ? .help : nil, isThis: { if case .help = $0 { return true } else { return false } }) }
    }
    /// The hint line's message. Setting it makes it an ordinary message (`messageKind` `.plain`).
    public var message: String? { didSet { messageKind = .plain } }
    /// What the message is, for decisions that must not read its words.
    public private(set) var messageKind: MessageKind = .plain
    /// The error shown in the status bar (short); cleared when the user moves to another screen.
    public var lastError: BrowserFailure?
    /// Recent errors, oldest first, each in full (`!` shows them).
    public var errorLog: [LoggedError] = []
    public var errorScroll = 0
    /// The first line of the help shown (a help taller than the screen scrolls).
    public var helpScroll = 0
    /// The debug pane's selected request (a row of the newest-first list) and scroll.
    public var debugSelection = 0
    public var debugScroll = 0
    /// The request open in the inspector, and its scroll.
    public var inspected: RequestRecord?
    public var inspectorScroll = 0
    /// The time of the event being handled, in ms since 1970 (set by the runtime; 0 in pure tests).
    public var now: Int64 = 0
    /// The list shown before a `:query` replaced it: back on screen if the query fails.
    public var listBeforeQuery: RecordList?
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
    public var requests: [RequestRecord] = []
    public var quitRequested = false
    /// Records made with `n` this session (part of the names made up for them).
    public var newRecordCount = 0
    /// Keys typed ahead while the screen waits for a result; replayed in order when it arrives.
    public var waitingKeys: [Key] = []

    /// Staged updates and deletes (mirrored to the journal by the app on every change).
    public var staged = StagedBatch()
    /// Why writes are refused (staging included), or nil when they are allowed.
    public var readOnlyReason: String?
    /// The share records of the database (`:shares`), the selection and scroll over them.
    public var shares: [Record] = []
    public var sharesLoading = false
    public var shareSelection = 0
    public var shareScroll = 0
    /// The container's schema for this environment (`:schema`), once loaded: Tab completes `:query`
    /// from it and a query it says CloudKit will refuse is questioned before it is sent.
    public var schema: KnownSchema?
    public var schemaLoading = false
    public var schemaSelection = 0
    public var schemaScroll = 0
    /// Users' names by record name, as discovered (owners of shared zones).
    public var userNames: [String: String] = [:]
    /// The signed-in user's permission on zones of the shared database, from their shares.
    public var sharePermissions: [ZoneKey: SharePermission] = [:]
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
    public var batchSelection = 0
    public var batchScroll = 0
    /// The commit being previewed, sent or resolved.
    public var commit: CommitSession?
    /// Pushes received this session.
    public var notifications = NotificationFeed()

    public init(connection: ConnectionInfo) {
        self.connection = connection
    }

    public var pane: Pane { stack.last ?? .zones }

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
        default: queuedModals.append(new)
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
