import CloudKitWeb
import TerminalUI

/// What the browser is connected to (shown in the status bar; never a token).
public struct ConnectionInfo: Sendable, Hashable {
    public var container: String
    public var environment: CloudKitEnvironment
    public var database: DatabaseScope
    /// e.g. "local demo (in-process)" or "api.apple-cloudkit.com".
    public var server: String

    public init(container: String, environment: CloudKitEnvironment, database: DatabaseScope, server: String) {
        self.container = container
        self.environment = environment
        self.database = database
        self.server = server
    }
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
}

/// A failure as the browser shows it: one line, plus the sign-in URL for AUTHENTICATION_REQUIRED.
public struct BrowserFailure: Error, Sendable, Hashable {
    public var message: String
    public var redirectURL: String?
    public var isAuthenticationRequired: Bool

    public init(message: String, redirectURL: String? = nil, isAuthenticationRequired: Bool = false) {
        self.message = message
        self.redirectURL = redirectURL
        self.isAuthenticationRequired = isAuthenticationRequired
    }

    public init(_ error: any Error) {
        if let error = error as? CloudKitError {
            self.init(message: error.description, redirectURL: error.redirectURL, isAuthenticationRequired: error.isAuthenticationRequired)
        } else {
            self.init(message: String(describing: error))
        }
    }
}

/// The records of the open zone, from its change feed or a query. Only a window of row summaries is
/// in memory; the rows live in the local cache, so memory stays flat however many records are loaded.
public struct RecordList: Sendable {
    public enum Source: Sendable, Hashable {
        case changes
        case query(QueryRequest)
    }

    public var key: ListKey
    public var zoneID: ZoneID
    public var source: Source
    /// Rows in the cache for this list.
    public var total = 0
    /// Rows matching the `/` filter (equals `total` without a filter).
    public var matching = 0
    /// Row summaries `windowStart ..< windowStart + window.count` (of the filtered order).
    public var window: [RecordSummary] = []
    public var windowStart = 0
    /// A window request is in flight.
    public var windowPending = false
    public var syncToken: String?
    public var continuationMarker: String?
    public var moreComing = true
    public var loading = false
    /// The cache has been opened (its rows and token are known).
    public var opened = false
    /// `G` was pressed: keep loading until the end (Esc cancels).
    public var loadingToEnd = false
    /// Bumped when the list is replaced, so late answers for an old list are ignored.
    public var generation = 0
    public var selection = 0
    public var scroll = 0

    public init(key: ListKey, zoneID: ZoneID, source: Source) {
        self.key = key
        self.zoneID = zoneID
        self.source = source
    }

    /// The summary of row `index`, if it is in the window.
    public func row(_ index: Int) -> RecordSummary? {
        let i = index - windowStart
        return window.indices.contains(i) ? window[i] : nil
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
    public var zoneID: ZoneID
    public var recordName: String
    public var record: Record?
    /// The record dictionary exactly as the server sent it.
    public var raw: JSON?
    public var showRaw = false
    public var loading = true
    public var error: BrowserFailure?
    public var selection = 0
    public var scroll = 0
}

/// Everything the browser shows. A value: `update` changes it, `render` draws it.
public struct BrowserState: Sendable {
    public var connection: ConnectionInfo
    public var stack: [Pane] = [.zones]
    public var size: (width: Int, height: Int) = (80, 24)

    public var zones: [ZoneResult] = []
    public var zonesLoading = false
    public var zoneSelection = 0
    /// Zones whose sync token is cached locally (filled in by the app's cache).
    public var cachedZones: Set<String> = []

    public var list: RecordList?
    public var detail: RecordDetail?
    /// Records opened by following references, to go back to.
    public var detailHistory: [RecordDetail] = []

    public var subscriptions: [SubscriptionResult] = []
    public var subscriptionsLoading = false
    public var subscriptionSelection = 0
    public var subscriptionScroll = 0

    /// `/` filter over the loaded list.
    public var filter: String?
    /// Text being typed after `/` or `:`.
    public var input: (prompt: Character, text: String)?
    public var showHelp = false
    public var message: String?
    public var lastError: BrowserFailure?
    /// Shown until dismissed when the database needs a signed-in user.
    public var signInNotice: BrowserFailure?
    public var requests: [RequestRecord] = []
    public var quitRequested = false

    /// Staged updates and deletes (mirrored to the journal by the app on every change).
    public var staged = StagedBatch()
    /// Why writes are refused (staging included), or nil when they are allowed.
    public var readOnlyReason: String?
    /// The inline field editor, when open.
    public var editor: FieldEditor?
    /// A yes/no question on the hint line.
    public var confirmation: Confirmation?
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
}
