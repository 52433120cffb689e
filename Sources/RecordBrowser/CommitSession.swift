import CloudKitModels

/// A commit from preview to outcome, with the conflict prompt in between: a state machine. Its stage
/// is private, each stage carries exactly its data (a typed confirmation only in the preview, conflicts
/// only in the conflict prompt, the requests being checked only while a lost answer is checked), and
/// only the transitions below move it; each returns the effects the runtime performs.
public struct CommitSession: Sendable {
    /// Where the commit is, for the screens and the tests (read off the stage).
    public enum Phase: Sendable, Hashable {
        /// The exact requests are shown; waiting for the user to confirm.
        case preview
        case sending
        /// The answer was lost: looking the records up to find out what was applied.
        case verifying
        /// Some records conflicted: the conflict prompt is open.
        case conflicts
        /// The outcome is shown.
        case done
    }

    private enum Stage: Sendable {
        /// `typed`: what the user typed to confirm a production commit (the container's name).
        case preview(typed: String)
        case sending
        /// The requests whose answer was lost, being looked up.
        case verifying([CommitPlan.Request])
        case conflicts(ConflictPrompt)
        case done
    }

    /// The conflict prompt: the records that came back with CONFLICT (or NOT_FOUND), the one shown, and
    /// what else the answer said of the batch.
    public struct ConflictPrompt: Sendable, Hashable {
        public var conflicts: [Conflict]
        /// The conflict being shown.
        public var selection = 0
        /// Ops that failed only because another op of their atomic batch failed.
        public var innocent: [RecordKey]
        /// Ops refused for another reason; they stay staged.
        public var failed: [RecordKey: FailedOperation]

        /// The conflict shown.
        public var current: Conflict? { conflicts.indices.contains(selection) ? conflicts[selection] : nil }
    }

    public private(set) var plan: CommitPlan
    private var stage: Stage = .preview(typed: "")
    public var scroll = 0
    /// The outcome, once known: typed entries, worded and coloured by the renderer.
    public private(set) var outcome: [CommitReport] = []
    /// Changes whenever `plan` does (the requests as sent replace those staged).
    public private(set) var planRevision = 0
    /// The requests' rows as drawn, kept from one key to the next (`Browser.keepRequestRows`).
    var requestRows: RequestRows?

    /// The requests of the plan as the commit screen draws them, wrapped to `width`: built once per
    /// plan and width, not on every key (10,000 operations are some 150,000 rows of JSON).
    struct RequestRows: Sendable {
        var width: Int
        var revision: Int
        var rows: [(text: String, tone: Browser.Tone)]
    }

    public init(plan: CommitPlan) {
        self.plan = plan
    }

    /// A commit prepared again after its conflicts were resolved: the preview opens with the choices.
    public init(plan: CommitPlan, resolved: CommitReport) {
        self.plan = plan
        outcome = [resolved]
    }

    public var phase: Phase {
        switch stage {
        case .preview: return .preview
        case .sending: return .sending
        case .verifying: return .verifying
        case .conflicts: return .conflicts
        case .done: return .done
        }
    }

    /// Waiting for the server (sent, or a lost answer being checked): nothing else may start.
    public var inFlight: Bool { phase == .sending || phase == .verifying }

    /// A number the user must type to send: the operations of a batch split into several requests,
    /// the records a cascade deletes, or (both) their sum; `what` says which, for the prompt.
    public struct TypedCount: Sendable, Hashable {
        public var count: Int
        public var what: String
    }

    /// The count a commit of `plan` needs typed, given how many records its deletes cascade to (nil:
    /// none; `y` sends).
    public static func typedCount(_ plan: CommitPlan, cascade: Int) -> TypedCount? {
        let operations = plan.requests.reduce(0) { $0 + $1.body.operations.count }
        let requests = plan.requests.count
        switch (plan.split.isEmpty, cascade > 0) {
        case (true, false): return nil
        case (true, true):
            return TypedCount(count: cascade, what: "the \(Format.plural(cascade, "record")) the cascade also deletes")
        case (false, false):
            return TypedCount(count: operations, what: "the \(Format.plural(operations, "operation")), sent as \(requests) requests")
        case (false, true):
            return TypedCount(count: operations + cascade,
                              what: "\(Format.plural(operations, "operation")) in \(requests) requests + \(Format.plural(cascade, "record")) the cascade deletes")
        }
    }

    /// What was typed to confirm a production commit.
    public var typed: String { if case .preview(let typed) = stage { return typed } else { return "" } }

    /// The conflict prompt, in that stage (nil in any other; a change made outside it is ignored).
    public var prompt: ConflictPrompt? {
        get { if case .conflicts(let prompt) = stage { return prompt } else { return nil } }
        set { if case .conflicts = stage, let newValue { stage = .conflicts(newValue) } }
    }

    public var conflicts: [Conflict] { prompt?.conflicts ?? [] }
    public var innocent: [RecordKey] { prompt?.innocent ?? [] }
    public var failed: [RecordKey: FailedOperation] { prompt?.failed ?? [:] }
    public var selection: Int { prompt?.selection ?? 0 }

    // MARK: Transitions

    /// A letter of the production confirmation (or Backspace: nil).
    public mutating func type(_ character: Character?) {
        guard case .preview(var typed) = stage else { return }
        if let character { typed.append(character) } else if !typed.isEmpty { typed.removeLast() }
        stage = .preview(typed: typed)
    }

    /// Confirmed: the requests go out (the runtime records them in the journal first).
    public mutating func send() -> [BrowserEffect] {
        guard case .preview = stage else { return [] }
        stage = .sending
        outcome = []
        return [.commit(plan)]
    }

    /// The requests as the runtime sent them (uploaded files' receipts in place of their file: URLs),
    /// shown in the result; only while sending, and only requests of the same zones.
    public mutating func sent(_ requests: [CommitPlan.Request]) {
        guard case .sending = stage, requests.map(\.zone) == plan.requests.map(\.zone) else { return }
        plan.requests = requests
        planRevision += 1
    }

    /// The answer came back: its reports, then the conflict prompt (the server's versions of the
    /// conflicting records are looked up), the check of a lost answer, or the outcome.
    public mutating func answered(_ report: [CommitReport], conflicts: [Conflict], innocent: [RecordKey], failed: [RecordKey: FailedOperation],
                                  unknown: [CommitPlan.Request]) -> [BrowserEffect] {
        outcome = report
        // The outcome is at the top of the commit screen: that is where the user looks.
        scroll = 0
        if !conflicts.isEmpty {
            stage = .conflicts(ConflictPrompt(conflicts: conflicts, innocent: innocent, failed: failed))
            var groups: [(ZoneKey, [String])] = []
            for c in conflicts {
                if let i = groups.firstIndex(where: { $0.0 == c.zone }) { groups[i].1.append(c.recordName) } else { groups.append((c.zone, [c.recordName])) }
            }
            return groups.map { .lookupConflicts($0.0, $0.1) }
        }
        if !unknown.isEmpty {
            stage = .verifying(unknown)
            return [.verifyCommit(unknown)]
        }
        stage = .done
        return []
    }

    /// A lost answer was checked: its verdicts join the outcome.
    public mutating func verified(_ report: [CommitReport]) {
        guard case .verifying = stage else { return }
        outcome += report
        stage = .done
    }
}

/// One entry of a commit's report. Rendering derives every word and colour from these values, so no
/// behaviour depends on how a line is worded.
public enum CommitReport: Sendable, Hashable {
    /// What became of one request.
    public enum RequestResult: Sendable, Hashable {
        case appliedAll(Int)
        /// An atomic request of which nothing was applied: `refused` operations failed.
        case nothingApplied(refused: Int)
        /// A non-atomic request: some applied, some failed.
        case partial(applied: Int, failed: Int)
        /// The whole request was refused (nothing applied).
        case refused(BrowserFailure)
        /// No answer: whether it was applied is being checked.
        case unknown(BrowserFailure)
        /// Not sent, because an earlier request's outcome is unknown.
        case notSent
    }

    /// The batch was rebuilt after conflicts: what the user chose per record, and how many innocent
    /// operations (ATOMIC_ERROR only) are sent again unchanged.
    case resolved([ResolvedConflict], innocent: Int)
    case request(zone: ZoneKey, atomic: Bool, RequestResult)
    /// A zones/modify: which zones were created or deleted, which failed and why.
    case zones(DatabaseScope, done: [StagedZoneOperation], failed: [StagedZoneOperation: String], refused: BrowserFailure?)
    /// A subscriptions/modify: which subscriptions were created, changed or deleted, which were
    /// refused (each with its error, shown where it belongs), or why the request as a whole failed.
    case subscriptions(DatabaseScope, done: [StagedSubscriptionOperation], failed: [StagedSubscriptionOperation: FailedOperation], refused: BrowserFailure?)
    /// An operation refused for another reason than a conflict: it stays staged.
    case failedOperation(RecordKey, FailedOperation)
    /// A commit whose answer was lost could not be checked.
    case verificationFailed(BrowserFailure)
    /// A commit whose answer was lost, checked by looking its records up.
    case verified(applied: Int, notApplied: Int, unclear: Int)
    case verdict(CommitVerdict)
}

/// How one conflict was resolved, for the report of the commit sent again.
public struct ResolvedConflict: Sendable, Hashable {
    public var key: RecordKey
    public var resolution: Conflict.Resolution
    /// The server's change tag it was re-based on; nil when the server's record is deleted.
    public var serverTag: String?
    /// The server already held exactly my change: dropped without asking.
    public var alreadyApplied = false
}

/// One record that came back with CONFLICT (or NOT_FOUND: deleted on the server meanwhile).
public struct Conflict: Sendable, Hashable {
    public enum ServerVersion: Sendable, Hashable {
        case loading
        case record(Record)
        case deleted
        case failed(String)
    }

    /// What the user chose for the record.
    public enum Resolution: Sendable, Hashable {
        /// Keep my op, re-based on the server's current change tag.
        case rebase
        /// Keep my op and send it without a tag (forceUpdate / forceDelete).
        case force
        /// Drop my op: the server's version stays.
        case takeServer
        /// My changes for the fields marked `true` in `merge`, the server's for the others (re-based).
        case merge
        /// Deleted on the server; create it again with my version.
        case recreate
    }

    public var key: RecordKey
    public var code: ServerErrorCode
    public var reason: String
    public var server: ServerVersion = .loading
    public var resolution: Resolution?
    /// Merge mode: field → keep mine.
    public var merge: [String: Bool]?
    /// The server's version already held exactly my change: resolved as "take the server's" on its own.
    public var alreadyApplied = false
    public var fieldSelection = 0
    /// The first field shown in the prompt's table (PgDn/PgUp; in merge mode it follows the selection).
    public var fieldScroll = 0

    public var zone: ZoneKey { key.zone }
    public var database: DatabaseScope { key.zone.database }
    public var zoneID: ZoneID { key.zone.zoneID }
    public var recordName: String { key.recordName }
}

/// An operation a commit's answer refused for a reason other than a conflict (it stays staged).
public struct FailedOperation: Sendable, Hashable {
    /// nil: the answer had no result for the operation.
    public var code: ServerErrorCode?
    public var reason: String?
}

/// What a commit's zones/modify came back with.
public struct ZoneOutcome: Sendable, Hashable {
    public enum Answer: Sendable, Hashable {
        case answered([ZoneResult])
        case refused(BrowserFailure)
        /// No answer: whether the zones changed is not known (the records were not sent).
        case unknown(BrowserFailure)
    }

    public var request: CommitPlan.ZoneRequest
    public var answer: Answer

    /// Whether the server's answer is known (applied or refused), not lost.
    public var isKnown: Bool { if case .unknown = answer { return false } else { return true } }

    public init(request: CommitPlan.ZoneRequest, answer: Answer) {
        self.request = request
        self.answer = answer
    }
}

/// What a commit's subscriptions/modify came back with.
public struct SubscriptionOutcome: Sendable, Hashable {
    public enum Answer: Sendable, Hashable {
        case answered([SubscriptionResult])
        case refused(BrowserFailure)
        /// No answer, and subscriptions/lookup could not tell either: the operations stay staged.
        case unknown(BrowserFailure)
    }

    public var request: CommitPlan.SubscriptionRequest
    public var answer: Answer

    public init(request: CommitPlan.SubscriptionRequest, answer: Answer) {
        self.request = request
        self.answer = answer
    }
}

/// What one request of a commit came back with.
public struct CommitOutcome: Sendable, Hashable {
    public enum Answer: Sendable, Hashable {
        /// Per-record results, in operation order (an atomic failure included).
        case answered([RecordResult])
        /// The whole request was refused (nothing applied).
        case refused(BrowserFailure)
        /// The request may have reached the server, but no answer came back.
        case unknown(BrowserFailure)
        /// Not sent (an earlier request's outcome was unknown).
        case notSent
    }

    public var request: CommitPlan.Request
    public var answer: Answer

    /// Whether the server's answer is known (applied or refused), not lost.
    public var isKnown: Bool { if case .unknown = answer { return false } else { return true } }

    public init(request: CommitPlan.Request, answer: Answer) {
        self.request = request
        self.answer = answer
    }
}

/// Whether an operation of a commit whose answer was lost was applied, judged from the record's
/// current version on the server.
public struct CommitVerdict: Sendable, Hashable {
    public enum Applied: Sendable, Hashable { case yes, no, unclear }
    /// What the lookup showed.
    public enum Evidence: Sendable, Hashable {
        case gone
        case stillHasTag(String)
        case hasAnotherTag
        case doesNotExist
        case holdsSentValues(tag: String?)
        case changedDifferently
        case lookupFailed(ServerErrorCode)
    }

    public var key: RecordKey
    public var applied: Applied
    public var evidence: Evidence

    public init(key: RecordKey, applied: Applied, evidence: Evidence) {
        self.key = key
        self.applied = applied
        self.evidence = evidence
    }

    public var recordName: String { key.recordName }

    /// Judges one operation by the server's current answer for its record:
    /// - a conditional update/delete whose tag is still the record's tag was not applied;
    /// - an update whose fields all hold the sent values, or a delete whose record is gone, was
    ///   (or someone made the same change: indistinguishable, and harmless to treat as applied);
    /// - anything else (the record moved on differently) is unclear and stays staged.
    public static func judge(_ operation: RecordOperation, zone: ZoneKey, server: RecordResult) -> CommitVerdict {
        let name = operation.record.recordName
        func verdict(_ applied: Applied, _ evidence: Evidence) -> CommitVerdict {
            CommitVerdict(key: RecordKey(zone: zone, recordName: name), applied: applied, evidence: evidence)
        }
        let gone: Bool
        var current: Record?
        switch server {
        case .record(let record): current = record; gone = false
        case .deleted: gone = true
        case .failure(let error):
            if error.serverErrorCode == .notFound { gone = true } else { return verdict(.unclear, .lookupFailed(error.serverErrorCode)) }
        }
        if operation.operationType.isDelete {
            if gone { return verdict(.yes, .gone) }
            if let tag = operation.record.recordChangeTag, current?.recordChangeTag == tag { return verdict(.no, .stillHasTag(tag)) }
            return verdict(.unclear, .hasAnotherTag)
        }
        guard let current else {
            return verdict(operation.operationType == .create ? .unclear : .no, .doesNotExist)
        }
        if operation.operationType == .update, let tag = operation.record.recordChangeTag, current.recordChangeTag == tag {
            return verdict(.no, .stillHasTag(tag))
        }
        let sent = operation.record.fields
        let holds = sent.allSatisfy { name, value in value == .null ? current.fields[name] == nil || current.fields[name] == .null : current.fields[name] == value }
        return holds ? verdict(.yes, .holdsSentValues(tag: current.recordChangeTag)) : verdict(.unclear, .changedDifferently)
    }
}
