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

/// The loaded records of the open zone: from its change feed, or from a query.
public struct RecordList: Sendable {
    public enum Source: Sendable, Hashable {
        case changes
        case query(QueryRequest)
    }

    public var zoneID: ZoneID
    public var source: Source
    public var records: [Record] = []
    var index: [String: Int] = [:]
    public var syncToken: String?
    public var continuationMarker: String?
    public var moreComing = true
    public var loading = false
    /// `G` was pressed: keep loading until the end (Esc cancels).
    public var loadingToEnd = false
    /// Bumped when the list is replaced, so late answers for an old list are ignored.
    public var generation = 0
    public var selection = 0
    public var scroll = 0

    public init(zoneID: ZoneID, source: Source) {
        self.zoneID = zoneID
        self.source = source
    }

    /// Adds changed records: a record already listed is replaced in place (its latest state), a new one
    /// is appended, a deletion marks the row as a tombstone.
    mutating func merge(_ results: [RecordResult]) {
        for result in results {
            switch result {
            case .record(let record):
                if let i = index[record.recordName] { records[i] = record } else {
                    index[record.recordName] = records.count
                    records.append(record)
                }
            case .deleted(let name, _):
                var tombstone = Record(recordName: name)
                tombstone.deleted = true
                if let i = index[name] {
                    tombstone.recordType = records[i].recordType
                    records[i] = tombstone
                } else {
                    index[name] = records.count
                    records.append(tombstone)
                }
            case .failure:
                continue
            }
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

    public init(connection: ConnectionInfo) {
        self.connection = connection
    }

    public var pane: Pane { stack.last ?? .zones }
}
