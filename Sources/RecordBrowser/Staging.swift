import CloudKitWeb

/// One staged change to one record, with what the user saw when they made it.
public struct StagedOperation: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case update, delete }

    public var kind: Kind
    public var database: DatabaseScope
    public var zoneID: ZoneID
    public var recordName: String
    public var recordType: String?
    /// The change tag the user edited from: `update` and `delete` carry it.
    public var baseTag: String?
    /// The fields as the user saw them (the "base" column of a conflict).
    public var baseFields: [String: FieldValue]
    /// Field → new value for updates (`.null` clears the field).
    public var changes: [String: FieldValue]

    public init(kind: Kind, database: DatabaseScope, zoneID: ZoneID, base: Record, changes: [String: FieldValue] = [:]) {
        self.kind = kind
        self.database = database
        self.zoneID = zoneID
        self.recordName = base.recordName
        self.recordType = base.recordType
        self.baseTag = base.recordChangeTag
        self.baseFields = base.fields
        self.changes = changes
    }

    /// Identifies the record: at most one operation per record in a batch.
    public var target: String { "\(database.rawValue)/\(zoneID.zoneName)/\(recordName)" }

    /// The operation as records/modify takes it.
    public var recordOperation: RecordOperation {
        switch kind {
        case .delete: return .delete(recordName: recordName, recordChangeTag: baseTag)
        case .update: return .update(Record(recordName: recordName, recordType: recordType, recordChangeTag: baseTag, fields: changes))
        }
    }

    /// Old → new per changed field, in field-name order.
    public var diff: [FieldDiff] {
        switch kind {
        case .delete: return baseFields.keys.sorted().map { FieldDiff(field: $0, old: baseFields[$0], new: nil) }
        case .update: return changes.keys.sorted().map { FieldDiff(field: $0, old: baseFields[$0], new: changes[$0]) }
        }
    }
}

public struct FieldDiff: Sendable, Hashable {
    public var field: String
    public var old: FieldValue?
    /// nil: the record is deleted; `.null`: the field is cleared.
    public var new: FieldValue?
}

/// The staged operations, in the order they were staged; one per record.
public struct StagedBatch: Sendable, Hashable {
    public private(set) var operations: [StagedOperation] = []

    public init(operations: [StagedOperation] = []) {
        for operation in operations { stage(operation) }
    }

    public var isEmpty: Bool { operations.isEmpty }

    /// Stages an operation. A second update of the same record merges into the first (keeping the
    /// first base tag and base fields); a delete replaces an update; an update of a record staged for
    /// deletion replaces the delete.
    public mutating func stage(_ operation: StagedOperation) {
        guard let index = operations.firstIndex(where: { $0.target == operation.target }) else {
            operations.append(operation)
            return
        }
        var existing = operations[index]
        if existing.kind == .update && operation.kind == .update {
            for (field, value) in operation.changes { existing.changes[field] = value }
            // A change back to the base value is no change.
            existing.changes = existing.changes.filter { existing.baseFields[$0.key] != $0.value && !($0.value == .null && existing.baseFields[$0.key] == nil) }
            if existing.changes.isEmpty { operations.remove(at: index) } else { operations[index] = existing }
        } else {
            var replacement = operation
            replacement.baseTag = existing.baseTag
            replacement.baseFields = existing.baseFields
            operations[index] = replacement
        }
    }

    public mutating func unstage(target: String) { operations.removeAll { $0.target == target } }
    public mutating func discardAll() { operations.removeAll() }

    public func operation(for target: String) -> StagedOperation? { operations.first { $0.target == target } }
}

/// The requests a commit sends, and what the user must be told before confirming.
public struct CommitPlan: Sendable, Hashable {
    public struct Request: Sendable, Hashable {
        public var database: DatabaseScope
        public var body: ModifyRecordsRequest
        public var atomic: Bool { body.atomic ?? true }

        public init(database: DatabaseScope, body: ModifyRecordsRequest) {
            self.database = database
            self.body = body
        }
    }

    public var requests: [Request]
    /// Notes for the preview: atomicity per zone only, non-atomic zones.
    public var notes: [String]

    /// Groups the batch into one request per database and zone. Custom zones (and the private default
    /// zone) are sent with `atomic: true`; the public database's zone cannot apply a batch atomically,
    /// so its request is non-atomic and a note says so. More operations in one zone than one request
    /// allows is refused: an atomic batch is never split silently.
    public static func make(_ batch: StagedBatch) throws -> CommitPlan {
        var groups: [(DatabaseScope, ZoneID, [StagedOperation])] = []
        for operation in batch.operations {
            if let i = groups.firstIndex(where: { $0.0 == operation.database && $0.1.zoneName == operation.zoneID.zoneName }) {
                groups[i].2.append(operation)
            } else {
                groups.append((operation.database, operation.zoneID, [operation]))
            }
        }
        var requests: [Request] = []
        var notes: [String] = []
        for (database, zoneID, operations) in groups {
            guard operations.count <= ModifyRecordsRequest.maximumOperations else {
                throw BrowserFailure(message: "\(operations.count) staged operations in zone \(zoneID.zoneName): one request allows at most \(ModifyRecordsRequest.maximumOperations), and ckbrowse will not split an atomic batch. Unstage some and commit in parts.")
            }
            let atomic = !(database == .public)
            if !atomic {
                notes.append("\(database.rawValue) \(zoneID.zoneName): CloudKit cannot apply these \(operations.count) operations atomically; each succeeds or fails on its own.")
            }
            let zone = ZoneID(zoneName: zoneID.zoneName, ownerRecordName: zoneID.ownerRecordName)
            requests.append(Request(database: database, body: ModifyRecordsRequest(operations: operations.map(\.recordOperation), zoneID: zone, atomic: atomic)))
        }
        if requests.count > 1 {
            notes.insert("\(requests.count) requests: atomicity holds within each zone only, not across them.", at: 0)
        }
        return CommitPlan(requests: requests, notes: notes)
    }
}
