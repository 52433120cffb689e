import CloudKitWeb

/// A commit from preview to outcome, with the conflict prompt in between.
public struct CommitSession: Sendable {
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

    public var plan: CommitPlan
    public var phase: Phase
    /// What the user typed to confirm a production commit (the container name).
    public var typed = ""
    public var scroll = 0
    public var conflicts: [Conflict] = []
    /// Ops that failed only because another op of their atomic batch failed.
    public var innocent: [String] = []
    /// Ops refused for another reason (target → "CODE: reason"); they stay staged.
    public var failed: [String: String] = [:]
    /// The conflict being shown.
    public var selection = 0
    /// The outcome, once known.
    public var outcome: [String] = []

    public init(plan: CommitPlan, phase: Phase = .preview) {
        self.plan = plan
        self.phase = phase
    }
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

    public var target: String
    public var database: DatabaseScope
    public var zoneID: ZoneID
    public var recordName: String
    public var code: String
    public var reason: String
    public var server: ServerVersion = .loading
    public var resolution: Resolution?
    /// Merge mode: field → keep mine.
    public var merge: [String: Bool]?
    public var fieldSelection = 0
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

    public init(request: CommitPlan.Request, answer: Answer) {
        self.request = request
        self.answer = answer
    }
}

/// Whether an operation of a commit whose answer was lost was applied, judged from the record's
/// current version on the server.
public struct CommitVerdict: Sendable, Hashable {
    public enum Applied: Sendable, Hashable { case yes, no, unclear }
    public var database: DatabaseScope
    public var zoneID: ZoneID
    public var recordName: String
    public var applied: Applied
    public var explanation: String

    public init(database: DatabaseScope, zoneID: ZoneID, recordName: String, applied: Applied, explanation: String) {
        self.database = database
        self.zoneID = zoneID
        self.recordName = recordName
        self.applied = applied
        self.explanation = explanation
    }

    public var target: String { "\(database.rawValue)/\(zoneID.zoneName)/\(recordName)" }

    /// Judges one operation by the server's current answer for its record:
    /// - a conditional update/delete whose tag is still the record's tag was not applied;
    /// - an update whose fields all hold the sent values, or a delete whose record is gone, was
    ///   (or someone made the same change: indistinguishable, and harmless to treat as applied);
    /// - anything else (the record moved on differently) is unclear and stays staged.
    public static func judge(_ operation: RecordOperation, database: DatabaseScope, zoneID: ZoneID, server: RecordResult) -> CommitVerdict {
        let name = operation.record.recordName
        func verdict(_ applied: Applied, _ why: String) -> CommitVerdict {
            CommitVerdict(database: database, zoneID: zoneID, recordName: name, applied: applied, explanation: why)
        }
        let gone: Bool
        var current: Record?
        switch server {
        case .record(let record): current = record; gone = false
        case .deleted: gone = true
        case .failure(let error):
            if error.serverErrorCode == .notFound { gone = true } else { return verdict(.unclear, "lookup failed: \(error.serverErrorCode.rawValue)") }
        }
        if operation.operationType.isDelete {
            if gone { return verdict(.yes, "the record is gone") }
            if let tag = operation.record.recordChangeTag, current?.recordChangeTag == tag { return verdict(.no, "the record still has change tag \(tag)") }
            return verdict(.unclear, "the record exists with another change tag")
        }
        guard let current else {
            return verdict(operation.operationType == .create ? .unclear : .no, "the record does not exist on the server")
        }
        if operation.operationType == .update, let tag = operation.record.recordChangeTag, current.recordChangeTag == tag {
            return verdict(.no, "the record still has change tag \(tag)")
        }
        let sent = operation.record.fields
        let holds = sent.allSatisfy { name, value in value == .null ? current.fields[name] == nil || current.fields[name] == .null : current.fields[name] == value }
        return holds ? verdict(.yes, "the record holds the sent values (change tag \(current.recordChangeTag ?? "?"))")
            : verdict(.unclear, "the record changed, but not to the sent values")
    }
}
