import CloudKitModels
import TerminalUI

/// Something the browser needs done outside the pure core; its result comes back as an event.
public enum BrowserEffect: Sendable, Hashable {
    case loadZones(DatabaseScope)
    /// Open a list in the local cache (cached rows and token, shown at once).
    case openList(ListKey, generation: Int)
    /// Fetch one page of a zone's change feed after `syncToken` into the cache.
    case loadChanges(ListKey, syncToken: String?, generation: Int)
    /// Fetch one page of a query into the cache (`reset`: a new query, forget earlier results).
    case runQuery(QueryRequest, ListKey, reset: Bool, generation: Int)
    /// Read rows `start ..< start + count` of a list (matching `filter`) from the cache.
    /// `request` is echoed in the answer: only the answer to the latest request is shown.
    case loadWindow(ListKey, filter: String?, start: Int, count: Int, generation: Int, request: Int, view: ListView = ListView())
    /// Remember the field columns of a record type (empty: forget them).
    case rememberColumns(recordType: String, columns: [String])
    /// Copy a cached record as JSON (OSC 52).
    case copyRecord(ListKey, String)
    case lookupRecord(RecordKey)
    case loadSubscriptions(DatabaseScope)
    /// Put text on the clipboard (OSC 52).
    case copy(String)
    case quit
    /// Read a cached record to stage its deletion from a list.
    case loadRecordToDelete(ListKey, String)
    /// Suspend the screen and edit the fields in `$EDITOR`.
    case editJSON(JSONEdit)
    /// Send the requests of a commit (recorded in the journal first).
    case commit(CommitPlan)
    /// Look up the server's current versions of conflicting records.
    case lookupConflicts(ZoneKey, [String])
    /// Find out, by looking the records up, whether requests whose answer was lost were applied.
    case verifyCommit([CommitPlan.Request])
    /// Write records (saved by a commit, or the server's versions) into a list of the cache.
    case storeRecords(ListKey, [RecordResult], generation: Int)
    /// Create a push token and long-poll its webcourier URL until the browser quits.
    case startNotifications
    /// Find the names (and emails) of users by record name: the owners of shared zones.
    case discoverUsers([String])
    /// Find out the signed-in user's permission on a zone of the shared database (from its shares).
    case loadSharePermission(ZoneKey)
    /// Every share record of a database (a zone-wide query of `cloudkit.share`).
    case loadShares(DatabaseScope)
    /// Accept a share by its shortGUID.
    case acceptShare(String)
    /// The schema of the account's container and environment: from the server's schema endpoint
    /// (`ckbrowse serve`), else inferred from the records in the local cache.
    case loadSchema
    /// A `.ckdb` file (`:schema load FILE`), e.g. one cktool exported.
    case loadSchemaFile(String)
    /// Remove a journal of the earlier layout: its entries were kept here (and are journaled anew), or
    /// the user discarded them.
    case removeLegacyJournal(path: String)
    /// Check a local file to stage it into an asset field (it is uploaded when the batch is committed).
    case checkAssetFile(RecordKey, field: String, path: String)
    /// Tab in a file prompt: the files and directories whose path starts with what was typed.
    case listPaths(String)
    /// The commit's outcome is known (every answer read, or a lost one checked): the journal drops the
    /// in-flight commit together with what stays staged, in one transaction. The core decides; the
    /// runtime, which owns the journal, performs it.
    case commitSettled
    /// Download an asset to a local file, reporting progress.
    case downloadAsset(AssetDownload)
    /// Find out whether records exist (targets of staged `VALIDATE` references): records/lookup.
    case checkTargets([RecordKey])
    /// The cached records that refer to records staged for deletion (the DELETE_SELF cascade followed).
    case findReferrers([RecordKey])
    /// Ask the server which records refer to records staged for deletion: records/query per QUERYABLE
    /// reference field (`field EQUALS <reference>`, LIST_CONTAINS for a list), every page, the
    /// DELETE_SELF cascade followed (bounded, each record once).
    case countReferrersOnServer([RecordKey], fields: [ReferenceField])
    /// The cached records of the record's zone that refer to it (its view's "referenced by").
    case findReferencedBy(RecordKey)
    /// The names of rows `start ..< start + count` of a list (matching `filter`, in `sort`'s order),
    /// tombstones left out: `V` and `*` mark them.
    case markRows(ListKey, filter: String?, sort: ListSort?, start: Int, count: Int, generation: Int)
    /// Read the marked records from the cache, all at once, for a bulk `d` or `:set`.
    case loadMarked(ListKey, names: [String], purpose: BulkPurpose)
    /// Check that an export's file can be written (before the rest of the zone is loaded for it).
    case checkExportPath(ExportRequest)
    /// Write records of a list to a file (JSON lines or CSV), whole or not at all.
    case export(ExportRequest)
}

extension BrowserEffect {
    /// Whether a terminal app starts this effect only once the frame drawn after it was asked for is
    /// on screen (`LiveLoop.holdsUntilFrame`): the schema's background load, which the zones' answer
    /// asks for. Started with the answer, its reading and parsing (17 % of the instructions counted
    /// before the demo's first frame) ran on the second core while that frame was drawn and the
    /// terminal took it in (scripts/bench-startup.sh).
    public var waitsForFrame: Bool {
        if case .loadSchema = self { return true }
        return false
    }
}

/// What the marked records are read for.
public enum BulkPurpose: Sendable, Hashable {
    case delete
    /// `:set FIELD VALUE`, as typed (the value is parsed per record, for the field's type).
    case set(field: String, value: String)
}

/// An `:export`: which records of which list, to which file, in which format.
public struct ExportRequest: Sendable, Hashable {
    public enum Format: String, Sendable, Hashable { case jsonLines = "JSON lines", csv = "CSV" }
    public var list: ListKey
    /// The marked records (nil: every record the filter shows).
    public var names: [String]?
    public var filter: String?
    public var sort: ListSort?
    /// As typed (`~` and relative paths allowed).
    public var path: String
    public var format: Format
    public var generation: Int

    public init(list: ListKey, names: [String]?, filter: String?, sort: ListSort?, path: String, generation: Int) {
        self.list = list
        self.names = names
        self.filter = filter
        self.sort = sort
        self.path = path
        self.format = path.lowercased().hasSuffix(".csv") ? .csv : .jsonLines
        self.generation = generation
    }
}

/// An asset to download: where to, and how the messages name it.
public struct AssetDownload: Sendable, Hashable {
    public var asset: Asset
    /// As typed (`~` and relative paths allowed).
    public var path: String
    /// `'image' of artwork-0000`.
    public var label: String

    public init(asset: Asset, path: String, label: String) {
        self.asset = asset
        self.path = path
        self.label = label
    }
}

/// A local file checked for upload: its absolute path and size.
public struct LocalAssetFile: Sendable, Hashable {
    public var path: String
    public var size: Int64

    public init(path: String, size: Int64) {
        self.path = path
        self.size = size
    }
}

/// Input to `update`: keys, terminal changes, and results of effects.
public enum BrowserEvent: Sendable {
    case key(Key)
    case resized(width: Int, height: Int)
    case zonesLoaded(DatabaseScope, Result<[ZoneResult], BrowserFailure>)
    /// The cache opened a list: what it already holds.
    case listOpened(generation: Int, total: Int, syncToken: String?, moreComing: Bool)
    /// A page was fetched and written to the cache. `tokenRefused`: the server refused the cached token,
    /// so the cache was cleared and the zone fetched from the start.
    case pageApplied(generation: Int, Result<PageOutcome, BrowserFailure>)
    case windowLoaded(generation: Int, request: Int, start: Int, rows: [RecordSummary], matching: Int, columns: [String] = [], labels: [String: String] = [:])
    /// A looked-up record (or its per-item error), with the record dictionary as the server sent it.
    case recordLoaded(RecordKey, Result<(RecordResult, JSON), BrowserFailure>)
    case subscriptionsLoaded(DatabaseScope, Result<[SubscriptionResult], BrowserFailure>)
    case requestFinished(RequestRecord)
    case notice(Notice)
    /// Zones of a database whose records and sync token are in the local cache.
    case cachedZones(Scope, Set<ZoneKey>)
    /// The cached record a list's `d` asked for (nil: not in the cache).
    case recordToDelete(RecordKey, Record?)
    /// `$EDITOR` returned: the file's content (nil if it could not be read) and the editor's exit status.
    case jsonEdited(JSONEdit, edited: String?, status: Int32)
    case commitFinished([CommitOutcome], zones: [ZoneOutcome] = [], subscriptions: [SubscriptionOutcome] = [])
    case conflictVersions(ZoneKey, Result<[RecordResult], BrowserFailure>)
    case commitVerified([CommitVerdict], failure: BrowserFailure?)
    /// Records were written to the open list in the cache.
    case recordsStored(generation: Int, total: Int)
    /// The journal was read at start: staged ops, and requests of a commit that was in flight.
    case journalRestored(StagedBatch, inflight: [CommitPlan.Request])
    /// A journal of the earlier layout holds entries made against an unrecorded server: ask the user.
    case legacyJournalFound(LegacyJournal)
    /// Names of users by record name (`name <email>`, or the name alone).
    case usersDiscovered([String: String])
    /// The signed-in user's strongest permission on a shared zone (nil: none found).
    case sharePermissionLoaded(ZoneKey, SharePermission?)
    case shareAccepted(String, Result<ShortGUIDResult, BrowserFailure>)
    case sharesLoaded(DatabaseScope, Result<[Record], BrowserFailure>)
    case schemaLoaded(Result<KnownSchema, BrowserFailure>)
    /// The long-poll's connection changed.
    case notificationsStatus(NotificationFeed.Connection, at: Int64)
    /// A push arrived (`dropped`: the server's count of notifications lost from a full queue).
    case notificationReceived(PushNotification, dropped: Int, at: Int64)
    case assetFileChecked(RecordKey, field: String, Result<LocalAssetFile, BrowserFailure>)
    /// The paths that start with what was typed (directories end in `/`), in the typed form.
    case pathsListed(typed: String, [String])
    /// The file typed for an asset field cannot be uploaded (missing, a directory, unreadable, too big).
    case assetFileRefused(RecordKey, field: String, path: String, reason: String)
    /// The file typed to save an asset to is refused before anything is downloaded (it exists).
    case assetSaveRefused(AssetDownload, reason: String)
    /// Bytes of a download so far (of `total`, when known).
    case assetProgress(label: String, done: Int64, total: Int64?)
    /// A download ended: the bytes written to `path` (absolute), or why not.
    case assetDownloaded(label: String, Result<(path: String, bytes: Int64), BrowserFailure>)
    /// What deleting each record does to the cached records that refer to it.
    case referrersFound([RecordKey: DeleteImpact])
    /// What the server said refers to each staged delete (the fields asked about).
    case serverReferrersCounted([RecordKey: ServerReferrers], fields: [ReferenceField])
    /// The cached records that refer to an opened record.
    case referencedByFound(RecordKey, ReferencedBy)
    /// The account's `:` history, read at start (oldest first).
    case historyRestored([String])
    /// Which of the looked-up records exist (`failure`: the lookup of the others failed).
    case targetsChecked([RecordKey: Bool], failure: BrowserFailure?)
    /// The names `V` or `*` asked for (`skipped`: deleted rows in the range, which cannot be marked).
    case rowsToMark(generation: Int, names: [String], skipped: Int)
    /// The marked records the cache holds (`missing`: the names it does not).
    case markedLoaded(ListKey, BulkPurpose, records: [Record], missing: [String])
    /// An export's file can be written (nil), or why not.
    case exportPathChecked(ExportRequest, refused: String?)
    /// An export was written (the records and the absolute path), or why not (nothing was written).
    case exported(ExportRequest, Result<ExportResult, BrowserFailure>)
}

/// What an export wrote.
public struct ExportResult: Sendable, Hashable {
    public var records: Int
    public var path: String
    public init(records: Int, path: String) {
        self.records = records
        self.path = path
    }
}

/// What writing a page to the cache produced.
public struct PageOutcome: Sendable, Hashable {
    public var total: Int
    public var syncToken: String?
    public var continuationMarker: String?
    public var moreComing: Bool
    public var received: Int
    public var tokenRefused: Bool
    /// Of `total`, the tombstones (shown as deleted rows until the list is opened again).
    public var deleted = 0

    public init(total: Int, syncToken: String?, continuationMarker: String?, moreComing: Bool, received: Int, tokenRefused: Bool = false) {
        self.total = total
        self.syncToken = syncToken
        self.continuationMarker = continuationMarker
        self.moreComing = moreComing
        self.received = received
        self.tokenRefused = tokenRefused
    }
}
