import CloudKitModels

/// What the hint line reports, as a value: the core says `.staged(.deletion(record: "a"), total: 3)`,
/// `render` makes the words (`NoticeWords.swift`). Decisions and tests read the case, never the words;
/// whether a report goes with the next move, survives one screen change, or reopens an input line is
/// its `kind`.
public enum Notice: Sendable, Hashable {
    // MARK: Staging and unstaging
    /// Something staged by one key; `total` is the batch's size after it.
    case staged(StagedChange, total: Int)
    case stagedNewRecord(type: String, name: String)
    case stagedZoneCreation(String)
    case stagedZoneDeletion(String)
    case stagedNewShare(record: String?, zone: String)
    case bulkStaged(BulkPurpose, records: Int, notCached: Int, staged: Int)
    /// Why a key staged nothing.
    case nothingStaged(NothingStaged)
    case unstaged(Unstaged, total: Int?)
    case unstagedField(String, record: String, changesLeft: Int)
    case discarded(Int)
    case keptStaged
    case backToConflicts
    case recordNotLoaded
    case fieldCleared(String)
    case alreadyCleared(String)
    case alreadyDeleted(String)
    case typeNotEditable(FieldType)
    case notCachedToDelete(String)
    case zoneOperationHint
    case inOtherDatabase(String, DatabaseScope)
    case defaultZoneUndeletable
    /// A key that acts on a kind of line, pressed elsewhere.
    case select(Selectable)
    case selectReferenceToFollow
    /// What staging a delete does to the records that refer to it.
    case deleteImpact(record: String, DeleteImpact)
    /// A staged `VALIDATE` reference names a record that does not exist (and `more` others).
    case targetMissing(record: String, field: String, target: String, stagedForDeletion: Bool, more: Int)

    // MARK: Marks and bulk edits
    case cannotMarkDeleted(record: String)
    case markToggled(record: String, marked: Bool, total: Int)
    case rangeNeedsAnchor
    case nothingToMark
    case readingMarked(count: Int, purpose: BulkPurpose)
    case unmarked(count: Int)
    case markedMore(added: Int, total: Int, notLoadedLeft: Bool, skippedDeleted: Int)
    case checkingPath(String)
    case writing(path: String)
    case exported(records: Int, path: String, format: ExportRequest.Format)
    case exportPageFailed

    // MARK: Lists and records
    /// `G`, or an export, loading page after page (`loaded` nil: not counted yet).
    case loadingToEnd(loaded: Int?, forExport: Bool)
    case stoppedLoading(at: Int, exportDropped: Bool)
    case fetchingChangesSinceCache(cached: Int)
    case refreshing
    case syncTokenRefused
    case defaultZoneHasNoFeed
    case queryFailed(backTo: QueryFallback)
    case productionWillRefuse(reason: String)
    case columns(type: String, [String])
    case sorted(ListSort?)
    case noMoreMatches
    case copied(Copied)
    case exchangeNotKept(kept: Int)
    case notCachedToCopy(String)
    case cache(CacheProblem)
    case cacheDropped(file: String)
    case schemaRead(path: String, recordTypes: Int)
    case schemaInferred(source: String)
    /// An error, in the words of its failure (it is in `!` too).
    case failed(BrowserFailure)

    // MARK: Assets
    case notAnAsset(String, FieldType)
    case assetNotUploaded(String, path: String)
    case assetHasNoURL(String)
    case downloading(String, to: String)
    case downloadProgress(String, done: Int64, total: Int64?)
    case assetSaved(String, path: String, bytes: Int64)

    // MARK: Sharing
    case sharedReadOnly(zone: String)
    case shareAccepted(ShortGUIDResult, inSharedDatabase: Bool)
    case acceptingShare(String)
    case shareOwnerOnly
    case shareNeeds(ShareRequirement)
    case alreadyShared(String, share: String)

    // MARK: Subscriptions and pushes
    case firedOnceDeleted(String, fromPush: Bool)
    case subscriptionRowIsError
    case subscriptionStagedForDeletion(String)
    case subscriptionDropped(String)
    case subscriptionFiredGone(String)
    case subscriptionAsOnServer(String)
    case recreateNeedsFired
    case notificationsReconnected
    case notificationsDropped(Int)
    case notificationsCleared
    case pushed(PushNotification)
    case pushIn(PushTarget)
    case openZoneFirst(for: NeedsZone)

    // MARK: Commit
    case commitInFlight
    case nothingToCommit
    case notSent(NotSent)
    case commitCancelled(staged: Int)
    /// What must be typed to send: the production confirmation (`expected`), or only the count.
    case typeToSend(expected: String?, count: CommitSession.TypedCount?)
    case waitingForAnswer
    case sending(requests: Int)
    case committed(saved: Int, deleted: Int, subscriptions: Int, failed: Int)
    case commitReport(CommitReport)
    case conflicted(records: Int)
    case answerLost
    case alreadyApplied(records: Int)
    case fetchingServerVersion(String)
    case conflictKeys(ConflictKeys)
    case rebasedToEdit(String, tag: String?)
    case commitAborted(staged: Int)
    case conflictsResolvedNothingLeft
    case reviewAgain
    case checkingInflightCommit
    case journalRestored(operations: Int)
    case legacyJournal(LegacyJournalAnswer)
    case journal(JournalProblem)

    // MARK: Input
    /// Why what was typed on the input line was refused: the line opens again with it.
    case refused(Refusal)

    /// Why a line typed on the input line was refused.
    public enum Refusal: Sendable, Hashable {
        // Commands
        case unknownCommand(String)
        case dbUsage
        case openUsage
        /// `:open NAME` where no zone is open or selected.
        case openNeedsZone
        /// A command that takes nothing after it was given something.
        case takesNoArguments(String)
        case acceptUsage
        case noZoneForQuery
        case queryZoneUnnamed
        case unknownZone(String, DatabaseScope)
        case needsRecordsList(String)
        case columnsNeedRecord
        case notAFieldName(String)
        /// No record type of the list has this field (by the schema).
        case noSuchField(String, types: [String])
        case sortUsage
        /// A line the parser refused, in its words (e.g. a query's unknown comparator).
        case failed(BrowserFailure)
        // New zones, records and fields
        case invalidZoneName
        /// `d` on a zone: the name typed is not the zone's.
        case zoneNameMismatch(String)
        case zonesOnlyInPrivate
        case zoneExists(String)
        case newRecordUsage
        case invalidRecordType(String)
        case alreadyStaged(String)
        case addFieldUsage
        case schemaTypeDiffers(String, type: String, source: String, wireType: String)
        case invalidFieldName(String)
        case fieldExists(String, FieldType)
        case typeNotTypeable(String)
        // New subscriptions
        case newSubscriptionUsage
        case subscriptionQueryNeedsType
        case unknownRecordType(String)
        case subscriptionZoneNeedsZone
        // Sharing
        case inviteUsage
        case invalidPermission(String)
        // Marks and bulk edits
        case setUsage
        case setNeedsList
        case setNeedsMarks
        /// `recordType`: the record's type when the loaded schema has it (and not the field).
        case setTypeUnknown(field: String, record: String, recordType: String?)
        case setValueInvalid(String, type: FieldType, field: String, record: String, error: String)
        case exportUsage
        case exportNeedsZone
        case exportNotWritten(String)
        // Files
        case saveNeedsName
        case uploadNeedsPath
        /// A file the runner refused (`staging`: for an upload, else for a download).
        case fileRefused(String, staging: Bool)
    }

    /// What one key staged.
    public enum StagedChange: Sendable, Hashable {
        case field(String, record: String)
        /// `cleared`: how many of the changes clear a field (a field left out of the $EDITOR file).
        case fieldChanges(Int, record: String, cleared: Int)
        case elementRemoved(Int, field: String)
        case cleared(field: String, record: String)
        case deletion(record: String)
        case upload(String, bytes: Int64, field: String)
        case publicPermission(SharePermission)
        case participantRemoved(String)
        case participantPermission(String, SharePermission)
        case invited(String, SharePermission)
        case subscription(String, StagedSubscriptionOperation.Kind)
        case subscriptionRecreated(String)
    }

    /// Why nothing was staged.
    public enum NothingStaged: Sendable, Hashable {
        case readOnly(String)
        case sharedReadOnly(zone: String, owner: String)
        case editCancelled
        case unchanged(field: String)
        case editedFileUnreadable
        case editorFailed(status: Int32)
        case editorFileNotWritten(path: String)
        /// The editor quit without writing the file.
        case notSaved
        /// The shell could not find the editor (`$VISUAL`/`$EDITOR`, else vi).
        case editorNotFound(String)
        case noChange
        case fileEmptied
        case fieldsEqual(record: String)
        case zone(String)
        case record(String)
        case subscription
        case subscriptionsInDevelopmentOnly
        case databaseChanged
        case recordClosed(path: String)
        case failed(BrowserFailure)
    }

    /// What was unstaged.
    public enum Unstaged: Sendable, Hashable {
        case record(String)
        /// A zone's staged operation (its kind, when it is said).
        case zone(String, StagedZoneOperation.Kind?)
        case subscription(String, StagedSubscriptionOperation.Kind)
    }

    /// The kind of line a key needs selected.
    public enum Selectable: Sendable, Hashable {
        case fieldToEdit, fieldToClear, elementToEdit, elementToRemove, participant, assetField
    }

    public enum Copied: Sendable, Hashable {
        case exchange
        case record(String)
        case field(String)
        case userRecordName(String)
        case subscription
        case pushPayload
    }

    public enum QueryFallback: Sendable, Hashable { case whereTyped, listBefore }

    public enum CacheProblem: Sendable, Hashable {
        case unreadable(reason: String)
        case notUpdated(reason: String)
    }

    public enum ShareRequirement: Sendable, Hashable { case privateDatabase, customZone, notAShare, aRecord }

    public enum PushTarget: Sendable, Hashable {
        case otherDatabase(DatabaseScope)
        case unknownDatabase(code: Int64)
        case pruned
        case deletedRecord(String)
    }

    public enum NeedsZone: Sendable, Hashable { case refreshFromPush }

    public enum NotSent: Sendable, Hashable {
        case readOnly(String)
        case subscriptionCreateInProduction(String)
        case countMistyped(String, CommitSession.TypedCount?)
        /// What the staged deletes take with them is still being counted.
        case impactPending
        /// The batch changed after the preview was made: it is shown again.
        case batchChanged
    }

    /// The keys a conflict takes, for the server's version it has.
    public enum ConflictKeys: Sendable, Hashable {
        case changedOnServer
        case serverVersionFailed(String)
        case deletedOnServer
        case deletedOnServerToo
    }

    public enum LegacyJournalAnswer: Sendable, Hashable {
        case kept(operations: Int, server: String)
        case discarded(operations: Int)
        case leftAlone
    }

    public enum JournalProblem: Sendable, Hashable {
        case cannotOpen(reason: String)
        case unreadable(path: String, reason: String)
        case cannotWrite(reason: String)
        case legacyUnreadable(path: String, reason: String)
    }

    /// How the report behaves: whether a move clears it, whether it outlives a screen change.
    public var kind: MessageKind {
        switch self {
        case .loadingToEnd: return .progress(.loadingToEnd)
        case .fetchingChangesSinceCache, .refreshing: return .progress(.fetching)
        case .downloading(let label, _), .downloadProgress(let label, _, _): return .progress(.download(label))
        case .assetSaved, .committed, .commitReport: return .outcome
        case .firedOnceDeleted(_, let fromPush): return fromPush ? .subscriptionFiredOnce : .plain
        case .refused: return .refusal
        default: return .plain
        }
    }
}

extension BrowserState {
    /// Reports on the hint line (replacing what it said).
    public mutating func say(_ notice: Notice) {
        report.notice = notice
        report.kind = notice.kind
    }

    /// Clears the hint line.
    public mutating func clearNotice() {
        report.notice = nil
        report.kind = .plain
    }

    /// The hint line's words (what `render` draws).
    public var message: String? { report.notice.map { Browser.words($0, self) } }
}
