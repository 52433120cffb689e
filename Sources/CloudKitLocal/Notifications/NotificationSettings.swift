import CloudKitWeb
import SQLiteDB

/// How the local server fires subscriptions and delivers their notifications. Each setting is one of
/// the rules `cloudkit-notifications.md` marks unconfirmed; the defaults are the ones it states.
public struct NotificationSettings: Sendable, Hashable {
    /// Whether the device that made a change is notified of it (spec §2.5).
    public enum OriginExclusion: String, Sendable, Hashable, CaseIterable {
        /// Every token of the subscription's owner, the one that made the change included (default:
        /// a web request does not say which device sent it).
        case none
        /// Skip tokens created with the same web auth token as the writing request.
        case session
        /// Skip the token named in the writing request's `X-CK-Device-Token` header (our extension).
        case header
    }

    /// Which version of an updated record must match a query subscription (spec §2.2).
    public enum UpdateMatch: String, Sendable, Hashable, CaseIterable {
        /// The record after the change (default): an update out of the predicate fires nothing.
        case after
        /// Before or after: an update out of the predicate fires too.
        case beforeOrAfter = "before_or_after"
    }

    public var originExclusion: OriginExclusion = .none
    public var updateMatch: UpdateMatch = .after
    /// A long-poll with nothing to deliver is answered with an empty body after this many seconds.
    public var holdSeconds: Double = 60
    /// Notifications kept per token while nobody polls; the oldest are dropped (and counted).
    public var maxQueued: Int = 100
    /// Queued notifications older than this are dropped.
    public var ttlSeconds: Double = 86_400
    /// Payloads larger than this (UTF-8 JSON bytes) are pruned (spec §3.4; APNs' 4096 by default).
    public var payloadLimit: Int = 4096
    /// `ck.ce` per environment (spec §3.3: meaning unconfirmed; 1 development, 2 production).
    public var environmentCodes: [CloudKitEnvironment: Int] = [.development: 1, .production: 2]

    public init() {}
}

/// One record change of a committed write, as subscriptions see it.
struct RecordChange {
    enum Kind: Int { case created = 1, updated = 2, deleted = 3 }
    var kind: Kind
    var before: StoredRecord?
    var after: StoredRecord?

    var record: StoredRecord { after ?? before! }
}

/// The changes one request makes, collected as it applies them (an operation that fails takes its
/// changes back out).
final class ChangeLog {
    var changes: [RecordChange] = []
    /// Whether `changes` is kept: only subscriptions read it (`fireSubscriptions`), and a database
    /// with none has each change's two states copied for nothing (`modifyRecords` turns it off).
    var keepsChanges = true

    /// Logs a change, made only when the log keeps changes (`keepsChanges`).
    func record(_ change: @autoclosure () -> RecordChange) {
        if keepsChanges { changes.append(change()) }
    }

    /// Field schema read during the request (record type → field → type).
    var schema: [String: [String: String]] = [:]
    /// Record types whose grants were read during the request (public database).
    var grants: [String: RecordTypeSchema] = [:]
    /// The indexed fields of record types written during the request (`FieldIndex`).
    var indexSpecs: [String: FieldIndex.Spec] = [:]
    /// The caller's roles in the public database (`_creator` aside), read once per request.
    var roles: Set<String>?
    /// The schema version (`SchemaTables.version`) the request's transaction is at, as last read: set
    /// back to nil whenever the request changes the schema (a field created just in time) or rolls such
    /// a change back, so that what is read of the schema is kept under the version it was read at.
    var schemaVersion: Int64?
    /// The newest change sequence number per zone written during the request; the zones' rows are
    /// updated once at the end of the request instead of once per record.
    var zoneSeqs: [String: Int64] = [:]
    /// The database's change counter as advanced by this request: read once, written back once at the
    /// end of the request (`modifyRecords`), instead of an UPDATE per record.
    var seq: Int64?

    /// The next change sequence number of database `dbID`.
    func nextSeq(_ db: Database, _ dbID: Int64) throws -> Int64 {
        let next = try (seq ?? Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM ckdb WHERE id = ?"), arguments: [dbID]) ?? 0) + 1
        seq = next
        return next
    }
}
