import CloudKitModels

/// One staged change to one record, with what the user saw when they made it.
public struct StagedOperation: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case update, delete }

    /// How the operation goes on the wire. `conditional` (the default) carries the base tag;
    /// the conflict prompt can turn an op into `force` (forceUpdate / forceDelete, no tag) or, for a
    /// record deleted on the server meanwhile, `recreate` (create with the base fields plus my changes).
    public enum Mode: String, Sendable, Hashable {
        case conditional, force, recreate
        /// A record made in the browser (`n`): sent as a create with every field staged for it.
        case create
    }

    public var kind: Kind
    public var mode: Mode = .conditional
    /// The record: server, container, environment, signed-in identity, database, zone owner, zone and
    /// name. At most one operation per key in a batch.
    public var key: RecordKey
    public var recordType: String?
    /// The change tag the user edited from: `update` and `delete` carry it.
    public var baseTag: String?
    /// The fields as the user saw them (the "base" column of a conflict).
    public var baseFields: [String: FieldValue]
    /// Field → new value for updates (`.null` clears the field).
    public var changes: [String: FieldValue]
    /// A share record's own keys, changed (participants, public permission; a new share's root).
    public var share: ShareEdit?

    public init(kind: Kind, zone: ZoneKey, base: Record, changes: [String: FieldValue] = [:]) {
        self.kind = kind
        self.key = RecordKey(zone: zone, recordName: base.recordName)
        self.recordType = base.recordType
        self.baseTag = base.recordChangeTag
        self.baseFields = base.fields
        self.changes = changes
    }

    public var zone: ZoneKey { key.zone }
    /// DELETE, CREATE (a new record, or one re-created after the server deleted it) or UPDATE: what
    /// is sent, as the batch and the commit preview name it.
    public var verb: String { kind == .delete ? "DELETE" : (mode == .create || mode == .recreate ? "CREATE" : "UPDATE") }
    public var database: DatabaseScope { key.zone.database }
    /// The zone ID to send (with its owner in the shared database).
    public var zoneID: ZoneID { key.zone.zoneID }
    public var recordName: String { key.recordName }

    /// The operation as records/modify takes it.
    public var recordOperation: RecordOperation {
        var operation = fieldOperation
        if let share, kind == .update {
            operation.record.participants = share.participants
            operation.record.publicPermission = share.publicPermission
            if mode == .create || mode == .recreate { operation.record.forRecord = share.forRecord }
        }
        return operation
    }

    var fieldOperation: RecordOperation {
        switch (kind, mode) {
        case (.delete, .force), (.delete, .recreate): return .forceDelete(recordName: recordName)
        case (.delete, .conditional): return .delete(recordName: recordName, recordChangeTag: baseTag)
        case (.update, .conditional): return .update(Record(recordName: recordName, recordType: recordType, recordChangeTag: baseTag, fields: changes))
        case (.update, .force): return RecordOperation(.forceUpdate, Record(recordName: recordName, recordType: recordType, fields: changes))
        case (.update, .recreate), (.update, .create): return .create(Record(recordName: recordName, recordType: recordType, fields: resultingFields))
        case (.delete, .create): return .forceDelete(recordName: recordName)
        }
    }

    /// The record's fields once this update is applied to its base (cleared fields removed).
    public var resultingFields: [String: FieldValue] {
        var fields = baseFields
        for (name, value) in changes { fields[name] = value == .null ? nil : value }
        return fields
    }

    /// A new record of `recordType` named `recordName` in `zone`, with no field yet.
    public static func newRecord(zone: ZoneKey, recordType: String, recordName: String) -> StagedOperation {
        var op = StagedOperation(kind: .update, zone: zone, base: Record(recordName: recordName, recordType: recordType))
        op.mode = .create
        return op
    }

    /// Re-bases the op on a newer version of the record: its tag and fields become the base; my
    /// changes stay (a change equal to the new base value is no change any more).
    public mutating func rebase(on record: Record) {
        baseTag = record.recordChangeTag
        baseFields = record.fields
        recordType = record.recordType ?? recordType
        mode = .conditional
        changes = changes.filter { !Self.isNoChange($0.value, base: baseFields[$0.key]) }
    }

    static func isNoChange(_ value: FieldValue, base: FieldValue?) -> Bool {
        base == value || (value == .null && base == nil)
    }

    /// Old → new per changed field, in field-name order (a share's public permission and
    /// participants first, as text).
    public var diff: [FieldDiff] {
        switch kind {
        case .delete: return baseFields.keys.sorted().map { FieldDiff(field: $0, old: baseFields[$0], new: nil) }
        case .update where mode == .recreate:
            // Deleted on the server and sent again whole: every field it will have is new.
            let fields = resultingFields
            return fields.keys.sorted().map { FieldDiff(field: $0, old: nil, new: fields[$0]) }
        case .update:
            var diffs: [FieldDiff] = []
            if let share {
                if let root = share.forRecord, mode == .create { diffs.append(FieldDiff(field: "forRecord", old: nil, new: .string(root.recordName))) }
                if share.publicPermission != share.basePublicPermission || mode == .create {
                    diffs.append(FieldDiff(field: "publicPermission", old: share.basePublicPermission.map { .string($0.rawValue) }, new: .string((share.publicPermission ?? .noPermission).rawValue)))
                }
                if share.participants != share.baseParticipants {
                    diffs.append(FieldDiff(field: "participants", old: .string(ShareEdit.summary(share.baseParticipants)), new: .string(ShareEdit.summary(share.participants))))
                }
            }
            return diffs + changes.keys.sorted().map { FieldDiff(field: $0, old: baseFields[$0], new: changes[$0]) }
        }
    }
}

/// A share record's keys as staged: the participants to send (the whole list, the owner left out:
/// the server keeps the owner) and the public permission, with what they were (for the diff).
public struct ShareEdit: Sendable, Hashable {
    /// A new share of a record: the root (name and change tag).
    public var forRecord: RecordLink?
    /// A new share's root as it was when the share was staged (its type and fields): saving the share
    /// updates the root, which fires the root's update subscriptions (`FiringForecast`).
    public var root: Record?
    public var publicPermission: SharePermission?
    public var participants: [ShareParticipant]
    public var basePublicPermission: SharePermission?
    public var baseParticipants: [ShareParticipant]

    public init(of share: Record) {
        forRecord = share.forRecord
        publicPermission = share.publicPermission
        basePublicPermission = share.publicPermission
        participants = (share.participants ?? []).filter { $0.type != .owner && $0.acceptanceStatus != .removed }
        baseParticipants = participants
    }

    /// A new share: of `root`, or of the whole zone when nil.
    public init(newShareOf root: RecordLink?) {
        forRecord = root
        publicPermission = .noPermission
        basePublicPermission = .noPermission
        participants = []
        baseParticipants = []
    }

    /// Something differs from what the share was.
    public var isChanged: Bool { participants != baseParticipants || publicPermission != basePublicPermission }

    /// A later edit of the same share: its participants and permission, the earlier one's base.
    static func merged(_ earlier: ShareEdit?, _ later: ShareEdit) -> ShareEdit {
        guard let earlier else { return later }
        var merged = later
        merged.forRecord = earlier.forRecord ?? later.forRecord
        merged.root = earlier.root ?? later.root
        merged.baseParticipants = earlier.baseParticipants
        merged.basePublicPermission = earlier.basePublicPermission
        return merged
    }

    /// `bob@example.com READ_ONLY INVITED, carol@… READ_WRITE`.
    public static func summary(_ participants: [ShareParticipant]) -> String {
        participants.isEmpty ? "none" : participants.map { p in
            [who(p), p.permission?.rawValue, p.acceptanceStatus?.rawValue].compactMap { $0 }.joined(separator: " ")
        }.joined(separator: ", ")
    }

    /// A participant as shown: email, else phone, else name, else record name.
    public static func who(_ p: ShareParticipant) -> String {
        p.userIdentity?.lookupInfo?.emailAddress ?? p.userIdentity?.lookupInfo?.phoneNumber ?? p.userIdentity?.nameComponents?.givenName
            ?? p.userIdentity?.userRecordName ?? p.participantId ?? "?"
    }
}

public struct FieldDiff: Sendable, Hashable {
    public var field: String
    public var old: FieldValue?
    /// nil: the record is deleted; `.null`: the field is cleared.
    public var new: FieldValue?
}

/// A staged zones/modify operation: a zone to create, or to delete with all its records.
public struct StagedZoneOperation: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case create, delete }
    public var kind: Kind
    public var zone: ZoneKey

    public init(kind: Kind, zone: ZoneKey) {
        self.kind = kind
        self.zone = zone
    }

    public var zoneOperation: ZoneOperation { ZoneOperation(kind == .create ? .create : .delete, zone.zoneID) }
}

/// The staged operations, in the order they were staged; one per record (and one per zone).
public struct StagedBatch: Sendable, Hashable {
    public private(set) var operations: [StagedOperation] = []
    /// Zones to create or delete: sent first, through zones/modify, in the same commit.
    public private(set) var zoneOperations: [StagedZoneOperation] = []
    /// Subscriptions to create, change or delete: sent after the zones, before the records (so a
    /// record change of the same commit can fire a subscription it creates).
    public internal(set) var subscriptionOperations: [StagedSubscriptionOperation] = []

    /// Record, zone and subscription operations.
    public var count: Int { operations.count + zoneOperations.count + subscriptionOperations.count }

    /// Stages a zone operation (a second one for the same zone replaces the first; deleting a zone only
    /// staged for creation drops both).
    public mutating func stage(zone operation: StagedZoneOperation) {
        if let index = zoneOperations.firstIndex(where: { $0.zone == operation.zone }) {
            if zoneOperations[index].kind == .create && operation.kind == .delete {
                zoneOperations.remove(at: index)
            } else {
                zoneOperations[index] = operation
            }
        } else {
            zoneOperations.append(operation)
        }
    }

    public mutating func unstage(zone: ZoneKey) { zoneOperations.removeAll { $0.zone == zone } }

    public init(operations: [StagedOperation] = []) {
        for operation in operations { stage(operation) }
    }

    public var isEmpty: Bool { operations.isEmpty && zoneOperations.isEmpty && subscriptionOperations.isEmpty }

    /// Stages an operation. A second update of the same record merges into the first (keeping the
    /// first base tag and base fields); a delete replaces an update; an update of a record staged for
    /// deletion replaces the delete.
    public mutating func stage(_ operation: StagedOperation) {
        guard let index = operations.firstIndex(where: { $0.key == operation.key }) else {
            operations.append(operation)
            return
        }
        var existing = operations[index]
        if existing.mode == .create && operation.kind == .delete {
            // Deleting a record that was only staged for creation: nothing to send at all.
            operations.remove(at: index)
            return
        }
        if existing.mode == .create && operation.kind == .update {
            // Fields of a new record: its changes are all it has (none left is still a new record).
            for (field, value) in operation.changes { existing.changes[field] = value == .null ? nil : value }
            if let share = operation.share { existing.share = ShareEdit.merged(existing.share, share) }
            operations[index] = existing
            return
        }
        if existing.kind == .update && operation.kind == .update {
            for (field, value) in operation.changes { existing.changes[field] = value }
            // A change back to the base value is no change.
            existing.changes = existing.changes.filter { !StagedOperation.isNoChange($0.value, base: existing.baseFields[$0.key]) }
            if let share = operation.share { existing.share = ShareEdit.merged(existing.share, share) }
            if existing.changes.isEmpty && existing.share?.isChanged != true { operations.remove(at: index) } else { operations[index] = existing }
        } else {
            var replacement = operation
            replacement.baseTag = existing.baseTag
            replacement.baseFields = existing.baseFields
            operations[index] = replacement
        }
    }

    /// Stages many operations at once (a bulk `d` or `:set`): as `stage` one by one, but a record not
    /// staged yet is appended without a search through the batch, so 10,000 cost 10,000 steps, not
    /// 10,000 searches.
    public mutating func stage(all newOperations: [StagedOperation]) {
        var staged = Set(operations.map(\.key))
        for operation in newOperations {
            if staged.insert(operation.key).inserted {
                operations.append(operation)
            } else {
                stage(operation)
                staged = Set(operations.map(\.key))
            }
        }
    }

    /// Replaces a record's staged update with exactly `changes` (relative to the op's base, which is
    /// kept when the record was already staged): the `$EDITOR` path, where the user edits the whole
    /// field set. No change left unstages the record.
    public mutating func replaceChanges(_ operation: StagedOperation) {
        var replacement = operation
        if let existing = self.operation(for: operation.key) {
            replacement.baseTag = existing.baseTag
            replacement.baseFields = existing.baseFields
        }
        replacement.changes = replacement.changes.filter { !StagedOperation.isNoChange($0.value, base: replacement.baseFields[$0.key]) }
        if let index = operations.firstIndex(where: { $0.key == operation.key }) {
            if replacement.changes.isEmpty && replacement.kind == .update { operations.remove(at: index) } else { operations[index] = replacement }
        } else if !(replacement.changes.isEmpty && replacement.kind == .update) {
            operations.append(replacement)
        }
    }

    /// Puts `operation` in place of the op for the same record (as is: base and mode included).
    public mutating func replace(_ operation: StagedOperation) {
        if let index = operations.firstIndex(where: { $0.key == operation.key }) { operations[index] = operation } else { operations.append(operation) }
    }

    public mutating func unstage(_ key: RecordKey) { operations.removeAll { $0.key == key } }
    /// Unstages many at once: one pass over the batch.
    public mutating func unstage(_ keys: Set<RecordKey>) {
        guard !keys.isEmpty else { return }
        operations.removeAll { keys.contains($0.key) }
    }

    /// Drops the staged change of one field of an update; the record's other changes stay (no change
    /// left unstages the record). Returns false when that field had no staged change.
    @discardableResult
    public mutating func unstage(field: String, of key: RecordKey) -> Bool {
        guard let index = operations.firstIndex(where: { $0.key == key }), operations[index].kind == .update,
            operations[index].changes[field] != nil
        else { return false }
        operations[index].changes[field] = nil
        if operations[index].changes.isEmpty { operations.remove(at: index) }
        return true
    }
    public mutating func discardAll() {
        operations.removeAll()
        zoneOperations.removeAll()
        subscriptionOperations.removeAll()
    }

    public func operation(for key: RecordKey) -> StagedOperation? { operations.first { $0.key == key } }
}

/// The requests a commit sends, and what the user must be told before confirming.
public struct CommitPlan: Sendable, Hashable {
    public struct Request: Sendable, Hashable {
        /// The zone every operation of the request belongs to (one request per database, owner and zone).
        public var zone: ZoneKey
        public var body: ModifyRecordsRequest
        public var atomic: Bool { body.atomic ?? true }
        public var database: DatabaseScope { zone.database }

        public init(zone: ZoneKey, body: ModifyRecordsRequest) {
            self.zone = zone
            self.body = body
        }

        /// The key of the record an operation of this request names.
        public func key(_ recordName: String) -> RecordKey { RecordKey(zone: zone, recordName: recordName) }
    }

    /// One zones/modify per database, sent before the records.
    public struct ZoneRequest: Sendable, Hashable {
        public var database: DatabaseScope
        public var operations: [StagedZoneOperation]
        public var body: ModifyZonesRequest { ModifyZonesRequest(operations: operations.map(\.zoneOperation)) }

        public init(database: DatabaseScope, operations: [StagedZoneOperation]) {
            self.database = database
            self.operations = operations
        }
    }

    /// One subscriptions/modify per database, sent after the zones and before the records.
    public struct SubscriptionRequest: Sendable, Hashable {
        public var database: DatabaseScope
        public var operations: [StagedSubscriptionOperation]
        public var body: ModifySubscriptionsRequest { ModifySubscriptionsRequest(operations: operations.map(\.operation)) }

        public init(database: DatabaseScope, operations: [StagedSubscriptionOperation]) {
            self.database = database
            self.operations = operations
        }
    }

    public var zoneRequests: [ZoneRequest] = []
    public var subscriptionRequests: [SubscriptionRequest] = []
    public var requests: [Request]
    /// Notes for the preview: atomicity per zone only, non-atomic zones.
    public var notes: [String]
    /// Zones whose operations go out in several requests (more than one request allows).
    public var split: [SplitZone] = []

    /// A zone whose operations are split into several requests.
    public struct SplitZone: Sendable, Hashable {
        public var zone: ZoneKey
        public var operations: Int
        public var requests: Int
    }
    /// Some request is not atomic: the user must accept that explicitly.
    public var hasNonAtomic: Bool { requests.contains { !$0.atomic } }

    /// Files staged into asset fields go first (assets/upload, then their bytes); the receipts they
    /// get replace the file: URLs. Said while the requests still hold files (none once sent).
    public var uploadNotes: [String] {
        var notes: [String] = []
        for request in requests {
            for operation in request.body.operations {
                for (field, value) in operation.record.fields.sorted(by: { $0.key < $1.key }) {
                    guard case .asset(let asset) = value, let path = asset.localFilePath else { continue }
                    notes.append("'\(field)' of \(operation.record.recordName): \(path) (\(asset.size.map { AssetProgress.bytes($0) } ?? "?")) is uploaded first; its receipt replaces the file: URL below.")
                }
            }
        }
        return notes
    }

    /// Groups the batch into one request per database, zone owner and zone (two owners' zones called
    /// `Notes` in the shared database are two requests, each addressed to its owner's zone). Custom zones are sent with
    /// `atomic: true`. Default zones (the public database has only its default zone) are not: the
    /// reference says `atomic` is ignored there (7.1; it also notes the private default zone was once
    /// observed reporting `atomic: true`, which we do not rely on), so their requests say
    /// `atomic: false` and a note asks the user to accept that. More operations in one zone than one
    /// request allows is refused: an atomic batch is never split silently.
    public static func make(_ batch: StagedBatch) throws -> CommitPlan {
        var groups: [(ZoneKey, [StagedOperation])] = []
        for operation in batch.operations {
            if let i = groups.firstIndex(where: { $0.0 == operation.zone }) {
                groups[i].1.append(operation)
            } else {
                groups.append((operation.zone, [operation]))
            }
        }
        var requests: [Request] = []
        var notes: [String] = []
        var split: [SplitZone] = []
        let most = ModifyRecordsRequest.maximumOperations
        for (zone, operations) in groups {
            let atomic = zone.database != .public && zone.zoneName != ZoneID.defaultZoneName
            if !atomic {
                notes.append("\(zone.database.rawValue) \(zone.displayName): CloudKit cannot apply \(operations.count == 1 ? "this operation" : "these \(operations.count) operations") atomically (a default zone); each succeeds or fails on its own.")
            }
            // More than one request allows: several requests, in order, each atomic on its own (the
            // preview says so and the count must be typed to send them).
            let parts = stride(from: 0, to: operations.count, by: most).map { Array(operations[$0..<min(operations.count, $0 + most)]) }
            if parts.count > 1 {
                split.append(SplitZone(zone: zone, operations: operations.count, requests: parts.count))
                notes.append("\(operations.count) operations in zone \(zone.displayName) go out as \(parts.count) \(atomic ? "atomic " : "")requests of at most \(most): atomicity holds within each request only (one can be applied and another refused).")
            }
            for part in parts {
                requests.append(Request(zone: zone, body: ModifyRecordsRequest(operations: part.map(\.recordOperation), zoneID: zone.zoneID, atomic: atomic)))
            }
        }
        if groups.count > 1 {
            notes.insert("\(groups.count) zones, \(requests.count) requests: atomicity holds within each zone only, not across them.", at: 0)
        }
        var zoneRequests: [ZoneRequest] = []
        for operation in batch.zoneOperations {
            if let i = zoneRequests.firstIndex(where: { $0.database == operation.zone.database }) {
                zoneRequests[i].operations.append(operation)
            } else {
                zoneRequests.append(ZoneRequest(database: operation.zone.database, operations: [operation]))
            }
        }
        if !zoneRequests.isEmpty {
            let deletes = batch.zoneOperations.filter { $0.kind == .delete }
            if !deletes.isEmpty {
                notes.insert("deleting \(deletes.map(\.zone.displayName).joined(separator: ", ")) deletes every record in \(deletes.count == 1 ? "it" : "them"); the zones go first, then the records.", at: 0)
            }
            if let touched = batch.operations.first(where: { op in deletes.contains { $0.zone == op.zone } }) {
                throw BrowserFailure(message: "'\(touched.recordName)' is staged in zone \(touched.zone.displayName), which is staged for deletion: unstage one of them")
            }
        }
        var subscriptionRequests: [SubscriptionRequest] = []
        for operation in batch.subscriptionOperations {
            if let i = subscriptionRequests.firstIndex(where: { $0.database == operation.database }) {
                subscriptionRequests[i].operations.append(operation)
            } else {
                subscriptionRequests.append(SubscriptionRequest(database: operation.database, operations: [operation]))
            }
        }
        for request in subscriptionRequests where request.operations.count > ModifyRecordsRequest.maximumOperations {
            throw BrowserFailure(message: "\(request.operations.count) staged subscription operations in the \(request.database.rawValue) database: one request allows at most \(ModifyRecordsRequest.maximumOperations). Unstage some and commit in parts.")
        }
        if !subscriptionRequests.isEmpty {
            notes.append("subscriptions/modify is not atomic: each subscription is created, changed or deleted on its own, and one refused stays staged with its reason.")
        }
        var plan = CommitPlan(requests: requests, notes: notes)
        plan.split = split
        plan.zoneRequests = zoneRequests
        plan.subscriptionRequests = subscriptionRequests
        return plan
    }
}

/// Staged operations (and a commit in flight) found in a journal of the earlier layout, which kept one
/// file per container and environment without saying which server or user they were made against.
/// They are shown and the user decides: keep them for the server open now, or discard them.
public struct LegacyJournal: Sendable, Hashable {
    public var path: String
    /// Read as operations of the account open now (that is the question put to the user).
    public var batch: StagedBatch
    public var inflight: [CommitPlan.Request]
    /// Why the file could not be read (it is then left untouched).
    public var unreadable: String?

    public init(path: String, batch: StagedBatch, inflight: [CommitPlan.Request], unreadable: String? = nil) {
        self.path = path
        self.batch = batch
        self.inflight = inflight
        self.unreadable = unreadable
    }

    public var isEmpty: Bool { batch.isEmpty && inflight.isEmpty && unreadable == nil }
}
