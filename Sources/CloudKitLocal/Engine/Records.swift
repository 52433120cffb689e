import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CSQLite
import SQLiteDB

extension LocalCloudKit {
    /// records/modify: operations in order, one per record, at most 200. In a zone with atomic
    /// capability and `atomic` (default true) it is all or nothing: the culprit carries its real code,
    /// every other operation ATOMIC_ERROR, answered with HTTP 400 as the live service does.
    ///
    /// `isolatingOperations`: run each operation in its own savepoint. An atomic request first runs
    /// without (see below); when one of its operations fails, it throws `AtomicBatchRetry`, and the
    /// caller rolls the transaction back and runs the request again with it (`runWrite`).
    func modifyRecords(_ db: Database, _ context: RequestContext, _ body: JSON, isolatingOperations: Bool = false) throws -> (Int, Reply) {
        let request = try decodeBody(ModifyRecordsRequest.self, Self.markingUntypedValues(Self.assigningRecordNames(body)))
        try checkCount(request.operations.count, "operations")
        var seen = Set<String>()
        for operation in request.operations where !seen.insert(operation.record.recordName).inserted {
            throw ServiceError.badRequest(
                "record '\(operation.record.recordName)' appears in more than one operation; one operation per record per request")
        }
        for operation in request.operations where !RecordOperationType.all.contains(operation.operationType) {
            throw ServiceError.badRequest("unknown operationType '\(operation.operationType.rawValue)'")
        }
        let (zone, context) = try zoneAndContext(db, context, request.zoneID)
        let atomic = (request.atomic ?? true) && isAtomicZone(zone, context)
        let numbersAsStrings = request.numbersAsStrings ?? false
        let zoneID = context.zoneID(zone.name)

        var results: [Result<StoredRecord, ItemError>] = []
        var failed = false
        let log = ChangeLog()
        // Partial updates may edit the stored fields text without decoding it (`FieldsText`) when no
        // one needs the decoded fields afterwards: no subscription reads them, and the answer copies
        // the text as it is (no desiredKeys, no numbersAsStrings). `apply` also decodes when the
        // update touches a REFERENCE field, or sets an asset through a value sent without a type.
        let noSubscriptions = try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM subscription WHERE db = ? LIMIT 1"), arguments: [context.dbID]) == nil
        // The same query as `storedSubscriptions`, which fires them: with none, no change is kept for it.
        log.keepsChanges = !noSubscriptions
        func fieldsAsText(_ operation: RecordOperation) -> Bool {
            noSubscriptions && !numbersAsStrings && (operation.desiredKeys ?? request.desiredKeys) == nil
                && (operation.operationType == .update || operation.operationType == .forceUpdate)
                && !operation.record.fields.values.contains(where: \.holdsAssets)  // checked against the current value
            // A value sent without a type (as CloudKit JS apps write them) is typed by `apply`'s
            // checkSchema first; one that turns out to be an asset has the current fields decoded there.
        }
        // An atomic request is all or nothing. Its operations first run straight in the request's
        // transaction, with no savepoint at all: when one fails, the caller rolls the transaction back
        // and runs the request again (`AtomicBatchRetry`), each operation in its own savepoint, so that
        // each failure is the one it would be alone. Under a savepoint SQLite copies every page the
        // operations touch into its statement journal, and every statement that may fail half-way
        // journals its pages again: a 200-record update batch on a data directory wrote a temporary
        // file in /var/tmp (past SQLite's 64 KiB) 1,200 to 1,750 times, a fifth of the server's time on
        // it (strace, perf: PERFORMANCE.md). Outside a savepoint a statement's journal holds only its own
        // pages, in memory, dropped when it ends. A request that is not atomic runs each operation in a
        // savepoint of its own, directly in the transaction; the atomic one run again has them inside
        // one savepoint for the whole request, rolled back when any failed.
        let eachInSavepoint = !atomic || isolatingOperations
        func applyAll() throws {
            for operation in request.operations {
                if !eachInSavepoint {
                    do {
                        results.append(.success(try apply(operation, db, context, zone, log, fieldsAsText: fieldsAsText(operation))))
                        continue
                    } catch is ItemError {
                        throw AtomicBatchRetry()
                    }
                }
                var outcome: Result<StoredRecord, ItemError> = .failure(ItemError(.internalError, "not applied"))
                let mark = log.changes.count
                let zoneSeqs = log.zoneSeqs, seq = log.seq
                // Each operation in its own savepoint: a failing one leaves nothing behind (a half-done cascade).
                try db.inSavepoint {
                    do {
                        outcome = .success(try apply(operation, db, context, zone, log, fieldsAsText: fieldsAsText(operation)))
                        return .commit
                    } catch let error as ItemError {
                        outcome = .failure(error)
                        log.changes.removeSubrange(mark...)
                        log.zoneSeqs = zoneSeqs  // its sequence numbers are used again
                        log.seq = seq
                        log.schema = [:]  // schema rows it added are rolled back too
                        log.indexSpecs = [:]
                        log.schemaVersion = nil
                        return .rollback
                    }
                }
                if case .failure = outcome { failed = true }
                results.append(outcome)
            }
            for (zoneName, seq) in log.zoneSeqs { try touchZone(db, context.dbID, zoneName, seq) }
            // Participants of a shared zone see it changed in their shared database.
            if !(atomic && failed) { try touchSharedZones(db, context, ownerDB: context.dbID, zones: log.zoneSeqs.keys) }
            if let seq = log.seq {
                try db.cachedStatement(sql: "UPDATE ckdb SET seq = ? WHERE id = ?").execute(arguments: [seq, context.dbID])
            }
        }
        if atomic && isolatingOperations {
            try db.inSavepoint {
                try applyAll()
                return failed ? .rollback : .commit
            }
        } else {
            try applyAll()
        }
        // Subscriptions fire in the same transaction as the write: a rolled-back batch fires nothing.
        if !(atomic && failed) { try fireSubscriptions(db, context, log.changes) }

        let status = atomic && failed ? 400 : 200
        // The answer is written record by record; a saved record's fields go out as the text just
        // stored (unless desiredKeys or numbersAsStrings reshape them).
        var writer = JSONWriter(capacity: results.reduce(64) { $0 + ((try? $1.get())?.storedFieldsText?.utf8.count ?? 64) + 400 })
        let zoneIDBytes = zoneID.json.bytes
        writer.raw(#"{"records":["#)
        for (index, (operation, result)) in zip(request.operations, results).enumerated() {
            if index > 0 { writer.raw(",") }
            let name = operation.record.recordName
            switch result {
            case .success where status == 400:
                // Atomic failure: everything that did not fail itself failed because of the culprit.
                writer.write(itemError(name, .atomicError, "Atomic failure: another operation in the batch failed"))
            case .success(let record) where (record.type == Self.shareRecordType || record.hasAssets) && !record.deleted:
                writer.write(try recordWire(record, db, context, zoneID: zoneID, desiredKeys: nil, numbersAsStrings: false))
            case .success(let record):
                let keys = operation.desiredKeys ?? request.desiredKeys
                if keys == nil && !numbersAsStrings, let rendering = record.rendering {
                    // What the save stored: `write(into:)`'s bytes, not written a second time.
                    rendering.withUnsafeBytes { RecordWire.write($0.bindMemory(to: UInt8.self), zoneID: zoneIDBytes, into: &writer) }
                } else if keys == nil && !numbersAsStrings {
                    record.write(into: &writer, zoneID: zoneID)
                } else {
                    writer.write(record.wire(zoneID: zoneID, desiredKeys: keys, numbersAsStrings: numbersAsStrings))
                }
            case .failure(let error):
                writer.write(itemError(name, error.code, error.reason))
            }
        }
        writer.raw("]}")
        return (status, .encoded(writer.bytes))
    }

    func itemError(_ recordName: String, _ code: ServerErrorCode, _ reason: String) -> JSON {
        RecordError(recordName: recordName, info: ServerErrorInfo(serverErrorCode: code, reason: reason, uuid: UUID().uuidString.lowercased())).json
    }

    /// `create` without a `recordName` gets an upper-case UUID, as the service assigns.
    static func assigningRecordNames(_ body: JSON) -> JSON {
        guard case .object(var object) = body, case .array(var operations)? = object["operations"] else { return body }
        for i in operations.indices {
            guard case .object(var operation) = operations[i], case .object(var record)? = operation["record"],
                record["recordName"] == nil || record["recordName"]!.isNull
            else { continue }
            record["recordName"] = .string(UUID().uuidString)
            operation["record"] = .object(record)
            operations[i] = .object(operation)
        }
        object["operations"] = .array(operations)
        return .object(object)
    }

    /// The `type` a field value without one is given before decoding, so it decodes as `.other` with
    /// its JSON kept: `checkSchema` reads it as the field's declared type, or infers one for a field
    /// the schema does not have (reference §3.4 note 1). Not a wire type: a client that sends it gets
    /// what sending no type gets.
    static let untypedMarker = "ckbrowse.untyped"

    /// Field values written as `{"value": …}` without `type` (CloudKit JS apps and Apple's samples
    /// write them so) are marked with `untypedMarker`; JSON inference alone would make a base64 BYTES
    /// value a STRING and a TIMESTAMP an INT64, which the schema then refuses.
    static func markingUntypedValues(_ body: JSON) -> JSON {
        guard case .object(var object) = body, case .array(var operations)? = object["operations"] else { return body }
        for i in operations.indices {
            guard case .object(var operation) = operations[i], case .object(var record)? = operation["record"],
                case .object(var fields)? = record["fields"]
            else { continue }
            var marked = false
            for j in fields.pairs.indices {
                guard case .object(var field) = fields.pairs[j].value, field["type"] == nil, let value = field["value"], !value.isNull else { continue }
                field.set("type", JSON.string(untypedMarker))
                fields.pairs[j].value = .object(field)
                marked = true
            }
            guard marked else { continue }
            record["fields"] = .object(fields)
            operation["record"] = .object(record)
            operations[i] = .object(operation)
        }
        object["operations"] = .array(operations)
        return .object(object)
    }

    /// Applies one operation; throws `ItemError` for per-record failures. `fieldsAsText`: the stored
    /// fields may be merged as text (see `modifyRecords`); the returned record then carries only
    /// `storedFieldsText`, and its `fields` and those of the change logged are empty.
    func apply(
        _ operation: RecordOperation, _ db: Database, _ context: RequestContext, _ zone: ZoneRow, _ log: ChangeLog, fieldsAsText: Bool = false
    ) throws -> StoredRecord {
        var incoming = operation.record
        let name = incoming.recordName
        if let problem = Self.nameProblem(name) { throw ItemError(.badRequest, "invalid recordName: \(problem)") }
        let stored = try StoredRecord.load(db, dbID: context.dbID, zone: zone.name, name: name, parsingFields: !fieldsAsText)
        var existing = stored.flatMap { $0.deleted ? nil : $0 }
        let type = operation.operationType
        if let access = context.access { try checkSharedWrite(operation, existing, access) }
        let isShare = (incoming.recordType ?? existing?.type) == Self.shareRecordType

        if let existing {
            try checkGrant(.write, recordType: existing.type ?? "", creator: existing.created?.userRecordName, db, context, log)
        } else if let recordType = incoming.recordType, type != .delete, type != .forceDelete {
            try checkGrant(.create, recordType: recordType, creator: context.caller.actingRecordName, db, context, log)
        }
        if type.needsChangeTag, let existing {
            // A conditional write without a tag is treated as stale (unconfirmed; the reference suggests CONFLICT).
            guard let tag = incoming.recordChangeTag else {
                throw ItemError(
                    .conflict,
                    "oplock error: record '\(name)' exists (change tag \(existing.tag ?? "none")) and this \(type.rawValue) sends no recordChangeTag; send the tag you read, or use force\(type.rawValue.prefix(1).uppercased() + type.rawValue.dropFirst())")
            }
            guard tag == existing.tag else {
                throw ItemError(.conflict, "oplock error: record '\(name)' was changed (change tag \(existing.tag ?? "none")); fetch it and retry")
            }
        }
        switch type {
        case .delete, .forceDelete:
            guard let existing else { throw ItemError(.notFound, "Record not found") }
            try delete(existing, db, context, zone, cascadeDepth: 0, log)
            var tombstone = existing
            tombstone.deleted = true
            return tombstone
        case .create:
            if existing != nil { throw ItemError(.exists, "record '\(name)' already exists") }
        case .update, .replace:
            guard existing != nil else { throw ItemError(.notFound, "Record not found") }
        default:
            break
        }

        var record: StoredRecord
        if let existing {
            record = existing
            if let newType = incoming.recordType, newType != existing.type {
                throw ItemError(.badRequest, "cannot change recordType of '\(name)' from \(existing.type ?? "?") to \(newType)")
            }
        } else {
            guard let recordType = incoming.recordType else {
                throw ItemError(.badRequest, "recordType is required to create record \(Self.quoted(name))")
            }
            if let problem = Self.nameProblem(recordType) {
                throw ItemError(.badRequest, "recordType \(Self.quoted(recordType)) is not valid: \(problem)")
            }
            record = StoredRecord(zone: zone.name, name: name, type: recordType)
            record.created = RecordStamp(timestamp: context.now, userRecordName: context.caller.actingRecordName, deviceID: Self.deviceID)
        }
        let recordType = record.type ?? ""
        let knownFields = log.schema[recordType]?.count
        try checkSchema(db, context, recordType: recordType, fields: &incoming.fields, log: log)
        // A field created just in time changes what the type indexes.
        if log.schema[recordType]?.count != knownFields { log.indexSpecs[recordType] = nil }
        // The stored fields read without decoding (fieldsAsText), decoded after all.
        func decodeExisting(_ text: String) throws {
            existing!.fields = try Record.decodeStoredFields(text)
            existing!.storedFieldsText = nil
            record.fields = existing!.fields
            record.storedFieldsText = nil
        }
        // An untyped value that checkSchema typed as an asset is checked against the field's current
        // asset: that needs the current fields.
        if let text = existing?.storedFieldsText, incoming.fields.values.contains(where: \.holdsAssets) { try decodeExisting(text) }
        // Asset values are checked against their receipts (or the field's current asset) and stored
        // without receipt.
        var incomingFields = incoming.fields
        if incomingFields.values.contains(where: \.holdsAssets) {
            incomingFields = try acceptAssets(incomingFields, previous: existing?.fields ?? [:], db, context)
        }
        var merged: String?
        if let text = existing?.storedFieldsText {
            // Read without decoding (fieldsAsText). Setting or clearing (null) a REFERENCE field
            // changes the reference index: that needs the decoded fields after all, as does a text
            // this server did not write. checkSchema has typed every field set here, so the schema
            // tells both cases.
            let schema = log.schema[recordType] ?? [:]
            let touchesReferences = incoming.fields.keys.contains { name in
                schema[name].map { [FieldType.reference.rawValue, FieldType.referenceList.rawValue].contains($0) } ?? false
            }
            merged = touchesReferences ? nil : FieldsText.merge(text, incoming.fields)
            if merged == nil { try decodeExisting(text) }
        }
        if merged == nil {
            switch type {
            case .replace, .forceReplace, .create:
                record.fields = incomingFields.filter { if case .null = $0.value { return false } else { return true } }
            default:
                for (key, value) in incomingFields {
                    if case .null = value { record.fields[key] = nil } else { record.fields[key] = value }
                }
            }
            record.hasAssets = record.fields.values.contains(where: \.holdsAssets)
        }
        let encodedFields = merged ?? Record.encodeStoredFields(record.fields)
        if encodedFields.utf8.count > 1_000_000 {
            throw ItemError(.badRequest, "record '\(name)' is larger than 1 MB (asset contents excluded)")
        }
        if let parent = incoming.parent { record.parent = parent.recordName }
        if incoming.createShortGUID == true && record.shortGUID == nil {
            record.shortGUID = Self.shortGUID()
        }
        if isShare { try prepareShare(operation, &record, existing: existing, db, context, zone) }
        let seq = try log.nextSeq(db, context.dbID)
        record.seq = seq
        record.tag = String(seq, radix: 36)
        record.modified = RecordStamp(timestamp: context.now, userRecordName: context.caller.actingRecordName, deviceID: Self.deviceID)
        record.deleted = false
        try saveReferences(record, previous: existing, db, context)
        record.rendering = try record.save(db, dbID: context.dbID, encodedFields: encodedFields, over: stored)
        // The query index, in the same transaction: every indexed field of a new or replaced record,
        // the indexed fields an update names. A partial update merged as text stored exactly the values
        // it names (typed by checkSchema; `.null` clears a field), so those are read from the request,
        // not decoded from the text again.
        let spec = try indexSpec(recordType, db, context, log)
        let replacesAll = existing == nil || [.create, .replace, .forceReplace].contains(type)
        let touched: Set<String>? = replacesAll ? nil : Set(incoming.fields.keys).filter { spec.fields[$0] != nil }
        if touched?.isEmpty != true {
            try FieldIndex.write(
                db, dbID: context.dbID, zone: zone.name, type: recordType, name: name, spec: spec, only: touched, isNew: existing == nil
            ) { field in merged != nil ? incoming.fields[field] : record.fields[field] }
        }
        record.storedFieldsText = encodedFields
        log.zoneSeqs[zone.name] = seq
        log.record(RecordChange(kind: existing == nil ? .created : .updated, before: existing, after: record))
        if isShare { try saveShare(operation, record, db, context, zone, log) }
        return record
    }

    static let deviceID = "ckbrowse-local"

    /// The indexed fields of a record type, read once per request (`FieldIndex`).
    func indexSpec(_ recordType: String, _ db: Database, _ context: RequestContext, _ log: ChangeLog) throws -> FieldIndex.Spec {
        if let spec = log.indexSpecs[recordType] { return spec }
        let key = TypeKey(container: context.container, environment: context.environment, name: recordType)
        let spec = try writeIndexSpecs.value(at: try schemaVersion(db, log), key) {
            try FieldIndex.spec(db, container: context.container, environment: context.environment.rawValue, type: recordType)
        }
        log.indexSpecs[recordType] = spec
        return spec
    }

    /// The schema version the request's transaction is at (`ChangeLog.schemaVersion`).
    func schemaVersion(_ db: Database, _ log: ChangeLog) throws -> Int64 {
        if let version = log.schemaVersion { return version }
        let version = try SchemaTables.version(db)
        log.schemaVersion = version
        return version
    }

    static func shortGUID() -> String {
        let alphabet = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        return String((0..<25).map { _ in alphabet.randomElement()! })
    }

    func touchZone(_ db: Database, _ dbID: Int64, _ zone: String, _ seq: Int64) throws {
        try db.cachedStatement(sql: "UPDATE zone SET seq = ? WHERE db = ? AND name = ?").execute(arguments: [seq, dbID, zone])
    }

    /// Deletes a record: refuses while a VALIDATE reference points at it, cascades DELETE_SELF sources.
    func delete(_ record: StoredRecord, _ db: Database, _ context: RequestContext, _ zone: ZoneRow, cascadeDepth: Int, _ log: ChangeLog) throws {
        var sources: [(zone: String, source: String, action: String)] = []
        try db.forEachRow("SELECT DISTINCT zone, source, action FROM reference WHERE db = ? AND target_zone = ? AND target = ?", {
            $0.add(context.dbID)
            $0.add(zone.name)
            $0.add(record.name)
        }) { row in
            sources.append((row.text(0) ?? "", row.text(1) ?? "", row.text(2) ?? ""))
        }
        if let validating = sources.first(where: { $0.action == "VALIDATE" && $0.source != record.name }) {
            throw ItemError(.validatingReferenceError, "record '\(record.name)' is referenced with VALIDATE by '\(validating.source)'")
        }
        let seq = try log.nextSeq(db, context.dbID)
        var tombstone = record
        tombstone.deleted = true
        tombstone.seq = seq
        tombstone.fields = [:]
        try tombstone.save(db, dbID: context.dbID, over: record)
        try FieldIndex.removeRecord(db, dbID: context.dbID, zone: record.zone, name: record.name)
        try db.run("DELETE FROM reference WHERE db = ? AND zone = ? AND source = ?") {
            $0.add(context.dbID)
            $0.add(zone.name)
            $0.add(record.name)
        }
        log.zoneSeqs[zone.name] = seq
        log.record(RecordChange(kind: .deleted, before: record, after: nil))
        // A deleted share revokes its participants' access; a deleted shared root takes its share along.
        if record.type == Self.shareRecordType { try deletedShare(record, db, context, zone, log) }
        if let share = record.share, let shareRecord = try StoredRecord.load(db, dbID: context.dbID, zone: zone.name, name: share), !shareRecord.deleted {
            try delete(shareRecord, db, context, zone, cascadeDepth: cascadeDepth + 1, log)
        }
        guard cascadeDepth < 64 else { return }
        for source in sources where source.action == "DELETE_SELF" {
            let sourceZoneName = source.zone
            guard let sourceZone = try ZoneRow.load(db, context.dbID, sourceZoneName),
                let sourceRecord = try StoredRecord.load(db, dbID: context.dbID, zone: sourceZoneName, name: source.source),
                !sourceRecord.deleted
            else { continue }
            try delete(sourceRecord, db, context, sourceZone, cascadeDepth: cascadeDepth + 1, log)
        }
    }

    /// Keeps the reference index in step with a record's REFERENCE fields; VALIDATE targets must exist.
    /// `previous`: the record's live state before this write (nil for a new record). The index holds
    /// rows only for live records' references: nothing to remove when it had none, and nothing to do
    /// when the write left its references as they were (a VALIDATE target cannot have gone meanwhile).
    func saveReferences(_ record: StoredRecord, previous: StoredRecord?, _ db: Database, _ context: RequestContext) throws {
        let before = previous.map { $0.fields.filter(\.value.isReference) } ?? [:]
        let after = record.fields.filter(\.value.isReference)
        if previous != nil && before == after { return }
        if !before.isEmpty {
            try db.cachedStatement(sql: "DELETE FROM reference WHERE db = ? AND zone = ? AND source = ?").execute(arguments: [context.dbID, record.zone, record.name])
        }
        for (field, value) in record.fields {
            let references: [Reference]
            switch value {
            case .reference(let r): references = [r]
            case .referenceList(let list): references = list
            default: continue
            }
            for reference in references {
                let targetZone = reference.zoneID?.zoneName ?? record.zone
                let action = reference.action?.rawValue ?? "NONE"
                if action == "VALIDATE" && reference.recordName != record.name {
                    let target = try StoredRecord.load(db, dbID: context.dbID, zone: targetZone, name: reference.recordName)
                    if target == nil || target!.deleted {
                        throw ItemError(.validatingReferenceError, "field '\(field)' references missing record '\(reference.recordName)' with VALIDATE")
                    }
                }
                try db.cachedStatement(
                    sql: "INSERT INTO reference (db, zone, source, field, target_zone, target, action) VALUES (?, ?, ?, ?, ?, ?, ?)"
                ).execute(
                    arguments: [context.dbID, record.zone, record.name, field, targetZone, reference.recordName, action])
            }
        }
    }

    /// Development creates record types and fields on first write, as CloudKit does, with the
    /// indexes and grants just-in-time creation gives (`SchemaTables`); a value contradicting a
    /// field's known type is BAD_REQUEST. Production enforces its schema (what was deployed), with
    /// the reasons CloudKit gives natively (§2.2; the Web Services text is unrecorded). System types
    /// (`cloudkit.share`) are the service's and are created in any environment. A value sent without
    /// `type` (`untypedMarker`) is read as the field's declared type, or typed by its JSON shape when the
    /// schema does not have the field; it is refused only when it cannot be read as that type.
    func checkSchema(_ db: Database, _ context: RequestContext, recordType: String, fields: inout [String: FieldValue], log: ChangeLog) throws {
        let env = context.environment.rawValue
        let creates = context.environment == .development || SchemaTables.isSystemType(recordType)
        // The record type's fields (field → type; "" is the type itself), read once per request and
        // kept across requests at the schema version they were read at.
        if log.schema[recordType] == nil {
            let key = TypeKey(container: context.container, environment: context.environment, name: recordType)
            log.schema[recordType] = try writeFieldTypes.value(at: try schemaVersion(db, log), key) {
                var known: [String: String] = [:]
                try db.forEachRow("SELECT field, type FROM field_schema WHERE container = ? AND environment = ? AND record_type = ?", {
                    $0.add(context.container)
                    $0.add(env)
                    $0.add(recordType)
                }) { row in
                    known[row.text(0) ?? ""] = row.text(1) ?? ""
                }
                return known
            }
        }
        if log.schema[recordType]?[""] == nil {
            guard creates else { throw ItemError(.badRequest, "Cannot create new type \(recordType) in production schema") }
            try SchemaTables.addJustInTimeType(db, container: context.container, environment: context.environment, name: recordType)
            log.schema[recordType]?[""] = ""
            log.schemaVersion = nil
        }
        for (name, sent) in fields {
            var value = sent
            if case .other(Self.untypedMarker, let json) = sent {
                let declared = log.schema[recordType]?[name].map(FieldType.init(rawValue:))
                let type = declared ?? FieldValue.inferType(of: json)
                do {
                    value = try FieldValue.decode(json, as: type)
                } catch let error as JSONDecodingError {
                    throw ItemError(
                        .badRequest,
                        "Invalid value for field '\(name)' of type '\(recordType)', expected type \(type.rawValue)\(declared == nil ? "" : " (the field's type)"): \(error.message)")
                }
                fields[name] = value
            }
            let type: FieldType
            switch value {
            case .null: continue
            case .other(Self.untypedMarker, _): throw ItemError(.badRequest, "field '\(name)': no type can be read from its value")
            case .other(let t, _): throw ItemError(.badRequest, "field '\(name)': unknown field type \(t)")
            case .unknownList: continue  // an untyped empty list fits any list field
            default: type = value.type
            }
            guard Self.isValidName(name), !name.hasPrefix("___") else { throw ItemError(.badRequest, "invalid field name '\(name)'") }
            if let existing = log.schema[recordType]?[name] {
                if existing != type.rawValue {
                    throw ItemError(
                        .badRequest,
                        "invalid attempt to set value type \(type.rawValue) for field '\(name)' for type '\(recordType)', defined to be: \(existing)")
                }
            } else if creates {
                try SchemaTables.addJustInTimeField(
                    db, container: context.container, environment: context.environment, type: recordType, field: name, wireType: type.rawValue)
                try FieldIndex.addedField(
                    db, container: context.container, environment: context.environment.rawValue, type: recordType, field: name,
                    wireType: type.rawValue, indexes: SchemaFieldType(wireType: type.rawValue)?.justInTimeIndexes ?? [])
                log.schema[recordType]?[name] = type.rawValue
                log.schemaVersion = nil
            } else {
                throw ItemError(.badRequest, "Cannot create or modify field '\(name)' in record '\(recordType)' in production schema")
            }
        }
    }

    /// The public database's security roles (§4): CREATE to save a new record, WRITE to change or
    /// delete one, by the grants of its type. `_creator` is held by the record's creator (for a new
    /// record, the caller). Private and shared databases are governed by owners and shares instead.
    func checkGrant(
        _ permission: SchemaGrant.Permission, recordType: String, creator: String?, _ db: Database, _ context: RequestContext, _ log: ChangeLog
    ) throws {
        guard context.scope == .public, !SchemaTables.isSystemType(recordType) else { return }
        // The type's grants and the caller's roles are read once per request.
        if log.grants[recordType] == nil {
            log.grants[recordType] = try SchemaTables.type(db, container: context.container, environment: context.environment, name: recordType)
                ?? RecordTypeSchema(name: recordType, grants: RecordTypeSchema.defaultGrants)
        }
        if log.roles == nil {
            log.roles = try SchemaTables.roles(db, container: context.container, environment: context.environment, user: context.caller.actingRecordName)
        }
        var roles = log.roles!
        if let caller = context.caller.actingRecordName, creator == caller { roles.insert("_creator") }
        guard log.grants[recordType]!.permits(permission, roles: roles) else {
            throw ItemError(.accessDenied, RecordTypeSchema.refusal(permission))
        }
    }

    // MARK: - Lookup and change feeds

    func lookupRecords(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> JSON {
        let request = try decodeBody(LookupRecordsRequest.self, body)
        try checkCount(request.records.count, "records")
        let (zone, context) = try zoneAndContext(db, context, request.zoneID)
        let zoneID = context.zoneID(zone.name)
        var results: [JSON] = []
        var readable: [String: ReadAccess] = [:]
        for item in request.records {
            if let record = try StoredRecord.load(db, dbID: context.dbID, zone: zone.name, name: item.recordName), !record.deleted,
                context.access.map({ $0.permission(record.name) != nil }) ?? true
            {
                if context.scope == .public, let typeName = record.type {
                    if readable[typeName] == nil {
                        let type = try recordType(typeName, db, context)
                            ?? RecordTypeSchema(name: typeName, grants: RecordTypeSchema.defaultGrants)
                        readable[typeName] = try readAccess(type, db, context)
                    }
                    if readable[typeName]?.permits(record) == false {
                        results.append(itemError(item.recordName, .accessDenied, RecordTypeSchema.refusal(.read)))
                        continue
                    }
                }
                results.append(try recordWire(record, db, context, zoneID: zoneID, desiredKeys: item.desiredKeys ?? request.desiredKeys, numbersAsStrings: request.numbersAsStrings ?? false))
            } else {
                results.append(itemError(item.recordName, .notFound, "Record not found"))
            }
        }
        return .object(["records": .array(results)])
    }

    func recordChanges(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> [UInt8] {
        let request = try decodeBody(RecordChangesRequest.self, body)
        let (zone, context) = try zoneAndContext(db, context, request.zoneID)
        let limit = try checkLimit(request.resultsLimit)
        // A demo record is 700–1,100 bytes: room for the page without growing (growing copies it).
        var writer = JSONWriter(capacity: 1280 * limit + 256)
        try writeChangePage(
            db, context, zone, syncToken: request.syncToken, limit: limit,
            desiredKeys: request.desiredKeys, recordTypes: nil, numbersAsStrings: request.numbersAsStrings ?? false,
            reverseKey: true, into: &writer)
        return writer.bytes
    }

    func zoneChanges(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> [UInt8] {
        let request = try decodeBody(ZoneChangesRequest.self, body)
        try checkCount(request.zones.count, "zones")
        var writer = JSONWriter(capacity: 64 * 1024)
        writer.raw(#"{"zones":["#)
        for (i, entry) in request.zones.enumerated() {
            if i > 0 { writer.raw(",") }
            do {
                let (zone, context) = try zoneAndContext(db, context, entry.zoneID)
                try writeChangePage(
                    db, context, zone, syncToken: entry.syncToken,
                    limit: try checkLimit(entry.resultsLimit ?? request.resultsLimit),
                    desiredKeys: entry.desiredKeys ?? request.desiredKeys,
                    recordTypes: entry.desiredRecordTypes ?? request.desiredRecordTypes,
                    numbersAsStrings: request.numbersAsStrings ?? false, zoneID: context.zoneID(zone.name),
                    reverse: entry.reverse ?? request.reverse ?? false, into: &writer)
            } catch let error as ServiceError {
                writer.write(ZoneError(zoneID: context.zoneID(entry.zoneID.zoneName, type: false), info: ServerErrorInfo(serverErrorCode: error.code, reason: error.reason, uuid: UUID().uuidString.lowercased())).json)
            }
        }
        writer.raw("]}")
        return writer.bytes
    }

    /// Writes one page of a custom zone's change feed, `{"records":[…],"syncToken":…,"moreComing":…}`
    /// (with `zoneID` first for changes/zone): each changed record once, in its latest state, ordered by
    /// the change that produced that state. The token is the position after the page, so writes between
    /// pages are neither skipped nor repeated. Records are written from the rows as they are stepped
    /// (`RowJSON`): their stored fields text is copied into the answer, not parsed and encoded again,
    /// unless `desiredKeys` or `numbersAsStrings` reshape it. A bad token or the default zone throws
    /// before anything is written.
    func writeChangePage(
        _ db: Database, _ context: RequestContext, _ zone: ZoneRow, syncToken: String?, limit: Int,
        desiredKeys: [String]?, recordTypes: [String]?, numbersAsStrings: Bool, zoneID: ZoneID? = nil,
        reverse: Bool = false, reverseKey: Bool = false, into writer: inout JSONWriter
    ) throws {
        guard !zone.isDefault else {
            throw ServiceError.badRequest("cannot get changes in default zone")
        }
        var since: Int64 = 0
        if let syncToken {
            guard let seq = OpaqueToken.zoneSeq(syncToken, zone: zone.name, incarnation: zone.incarnation) else {
                throw ServiceError.badRequest("Unknown sync continuation type")
            }
            since = seq
        }
        let visible = context.access.flatMap { $0.isWholeZone ? nil : $0 }
        let types = recordTypes.map(Set.init)
        writer.raw("{")
        if let zoneID {
            writer.raw(#""zoneID":"#)
            writer.write(zoneID.json)
            writer.raw(",")
        }
        writer.raw(#""records":["#)
        let shape = RowShape(desiredKeys: desiredKeys, numbersAsStrings: numbersAsStrings)
        if !shape.reshapes {
            return try writeRenderedChangePage(
                db, context, zone, since: since, limit: limit, types: types, visible: visible, reverse: reverse, reverseKey: reverseKey, into: &writer)
        }
        let statement = try db.cachedStatement(
            sql: "SELECT \(StoredRecord.columns) FROM record WHERE db = ? AND zone = ? AND seq > ? ORDER BY seq LIMIT ?")
        let rows = try Row.fetchCursor(statement, arguments: [context.dbID, zone.name, since, limit + 1])
        let current = statement.sqliteStatement
        var stepped = 0, written = 0, last = since
        // `reverse`: the page's records newest first. Pages still advance from the oldest change, so a
        // sync token keeps its meaning (unconfirmed how the service pages in reverse).
        var reversed: [[UInt8]] = []
        var out = JSONWriter(capacity: reverse ? 4096 : 0)
        // One row past the limit says whether more are coming; the cursor is stepped to its end so the
        // statement is finished.
        while let row = try rows.next() {
            stepped += 1
            guard stepped <= limit else { continue }
            last = RowJSON.seq(current)
            if let types, !RowJSON.isDeleted(current), !(RowJSON.type(current).map(types.contains) ?? false) { continue }
            // A participant of a record share sees only the shared hierarchies.
            if let visible, visible.permission(try StoredRecord(row: row, parsingFields: false).name) == nil { continue }
            if reverse {
                out = JSONWriter(capacity: 1024)
            } else if written > 0 {
                writer.raw(",")
            }
            written += 1
            if reverse {
                try writeRow(row, current, db, context, shape: shape, into: &out)
            } else {
                try writeRow(row, current, db, context, shape: shape, into: &writer)
            }
            if reverse { reversed.append(out.bytes) }
        }
        for (i, record) in reversed.reversed().enumerated() {
            if i > 0 { writer.raw(",") }
            writer.raw(record)
        }
        writeChangePageEnd(zone, since: since, last: last, moreComing: stepped > limit, reverse: reverse, reverseKey: reverseKey, into: &writer)
    }

    /// The page's end: its sync token, `moreComing`, and `reverse` when the request named it.
    private func writeChangePageEnd(
        _ zone: ZoneRow, since: Int64, last: Int64, moreComing: Bool, reverse: Bool, reverseKey: Bool, into writer: inout JSONWriter
    ) {
        let token = OpaqueToken.zoneToken(zone: zone.name, incarnation: zone.incarnation, seq: moreComing ? last : max(since, zone.seq))
        writer.raw(#"],"syncToken":"#)
        writer.writeString(token)
        writer.raw(moreComing ? #","moreComing":true"# : #","moreComing":false"#)
        if reverseKey { writer.raw(reverse ? #","reverse":true"# : #","reverse":false"#) }
        writer.raw("}")
    }

    /// `writeChangePage` for records answered as stored: SQLite is asked for the few columns that
    /// decide how a row is answered and its stored rendering (`RecordWire`), not all seventeen; a
    /// tombstone is written from its name, and a row without a rendering (shares, rows from before
    /// renderings) is read whole by its key and written as before.
    ///
    /// Each column named costs SQLite its decoding on every row, wanted or not: the type is asked
    /// only when the request filters by type, and there is no rowid for the rare row without a
    /// rendering (nor a `CASE` hiding a tombstone's rendering: the tombstone is decided first). Those
    /// three were 15 % of SQLite's work on the Gallery's 200-record page (PERFORMANCE.md).
    private func writeRenderedChangePage(
        _ db: Database, _ context: RequestContext, _ zone: ZoneRow, since: Int64, limit: Int, types: Set<String>?,
        visible: SharedAccess?, reverse: Bool, reverseKey: Bool, into writer: inout JSONWriter
    ) throws {
        enum Column { static let seq: Int32 = 0, deleted: Int32 = 1, name: Int32 = 2, wire: Int32 = 3, hasAssets: Int32 = 4, type: Int32 = 5 }
        let statement = try db.cachedStatement(sql: types == nil ? Self.renderedChangePageSQL : Self.renderedChangePageOfTypesSQL)
        let rows = try Row.fetchCursor(statement, arguments: [context.dbID, zone.name, since, limit + 1])
        let current = statement.sqliteStatement
        let shape = RowShape(desiredKeys: nil, numbersAsStrings: false)
        var stepped = 0, written = 0, last = since
        var reversed: [[UInt8]] = []
        var out = JSONWriter(capacity: reverse ? 4096 : 0)
        // One row past the limit says whether more are coming; the cursor is stepped to its end so the
        // statement is finished.
        while try rows.next() != nil {
            stepped += 1
            guard stepped <= limit else { continue }
            last = sqlite3_column_int64(current, Column.seq)
            let deleted = sqlite3_column_int64(current, Column.deleted) != 0
            if let types, !deleted, !(RowJSON.text(current, Column.type).map { types.contains(String(decoding: $0, as: UTF8.self)) } ?? false) { continue }
            // A participant of a record share sees only the shared hierarchies.
            if let visible, visible.permission(RowJSON.text(current, Column.name).map { String(decoding: $0, as: UTF8.self) } ?? "") == nil { continue }
            if reverse {
                out = JSONWriter(capacity: 1024)
            } else if written > 0 {
                writer.raw(",")
            }
            written += 1
            let name = { RowJSON.text(current, Column.name).map { String(decoding: $0, as: UTF8.self) } ?? "" }
            if deleted {
                if reverse { RowJSON.writeTombstone(current, nameColumn: Column.name, into: &out) } else { RowJSON.writeTombstone(current, nameColumn: Column.name, into: &writer) }
            } else if let wire = RecordWire.bytes(current, column: Column.wire) {
                let hasAssets = sqlite3_column_int64(current, Column.hasAssets) != 0
                if reverse {
                    try writeRendering(wire, hasAssets: hasAssets, record: name(), zone: zone.name, db, context, zoneID: nil, into: &out)
                } else {
                    try writeRendering(wire, hasAssets: hasAssets, record: name(), zone: zone.name, db, context, zoneID: nil, into: &writer)
                }
            } else if reverse {
                try writeWholeRecord(named: name(), zone: zone.name, db, context, shape: shape, into: &out)
            } else {
                try writeWholeRecord(named: name(), zone: zone.name, db, context, shape: shape, into: &writer)
            }
            if reverse { reversed.append(out.bytes) }
        }
        for (i, record) in reversed.reversed().enumerated() {
            if i > 0 { writer.raw(",") }
            writer.raw(record)
        }
        writeChangePageEnd(zone, since: since, last: last, moreComing: stepped > limit, reverse: reverse, reverseKey: reverseKey, into: &writer)
    }

    /// `writeRenderedChangePage`'s rows; the type last, so the other columns keep their places.
    private static let renderedChangePageSQL = "SELECT seq, deleted, name, wire, has_assets FROM record WHERE db = ? AND zone = ? AND seq > ? ORDER BY seq LIMIT ?"
    private static let renderedChangePageOfTypesSQL = "SELECT seq, deleted, name, wire, has_assets, type FROM record WHERE db = ? AND zone = ? AND seq > ? ORDER BY seq LIMIT ?"
}

/// How a page's records are answered: `desiredKeys` and `numbersAsStrings` reshape them (then they are
/// decoded); `zoneID` ends each record (query answers).
struct RowShape {
    let desiredKeys: [String]?
    let numbersAsStrings: Bool
    let zoneID: ZoneID?
    /// `zoneID` encoded once for the page.
    let zoneIDBytes: [UInt8]?

    init(desiredKeys: [String]?, numbersAsStrings: Bool, zoneID: ZoneID? = nil) {
        self.desiredKeys = desiredKeys
        self.numbersAsStrings = numbersAsStrings
        self.zoneID = zoneID
        zoneIDBytes = zoneID?.json.bytes
    }

    var reshapes: Bool { desiredKeys != nil || numbersAsStrings }
}

extension LocalCloudKit {
    /// Writes the record of the row `statement` stands on (selected with `StoredRecord.columns`).
    /// Copied from the row as stored, with download URLs spliced into its asset fields; reshaped
    /// records, share records (with their share keys) and rows whose stored text cannot be copied go
    /// through a decoded record.
    func writeRow(_ row: Row, _ statement: SQLiteStatement, _ db: Database, _ context: RequestContext, shape: RowShape, into writer: inout JSONWriter) throws {
        if !shape.reshapes, !RowJSON.typeIs(statement, Self.shareRecordTypeText) {
            let deleted = RowJSON.isDeleted(statement)
            // The stored rendering (`RecordWire`), where the row has one.
            if !deleted, let wire = RecordWire.bytes(statement) {
                return try writeRendering(
                    wire, hasAssets: RowJSON.hasAssets(statement), record: row[1], zone: row[0], db, context, zoneID: shape.zoneIDBytes, into: &writer)
            }
            if deleted || !RowJSON.hasAssets(statement) {
                return RowJSON.writeRecord(statement, deleted: deleted, zoneID: shape.zoneIDBytes, into: &writer)
            }
            if let text = RowJSON.fieldsText(statement) {
                // Nil: no URL to add, the row is copied.
                let linked = try linkedFields(text, record: row[1], zone: row[0], db, context)
                return RowJSON.writeRecord(statement, deleted: false, fields: linked, zoneID: shape.zoneIDBytes, into: &writer)
            }
        }
        let record = try StoredRecord(row: row)
        writer.write(try recordWire(record, db, context, zoneID: shape.zoneID, desiredKeys: shape.desiredKeys, numbersAsStrings: shape.numbersAsStrings))
    }

    /// Writes the record `name` of `zone` read again whole, for a page that read only some of its
    /// row's columns and found them not enough (no rendering to copy, or a share record).
    func writeWholeRecord(
        named name: String, zone: String, _ db: Database, _ context: RequestContext, shape: RowShape, into writer: inout JSONWriter
    ) throws {
        let whole = try db.cachedStatement(sql: "SELECT \(StoredRecord.columns) FROM record WHERE db = ? AND zone = ? AND name = ?")
        let rows = try Row.fetchCursor(whole, arguments: [context.dbID, zone, name])
        while let row = try rows.next() {
            try writeRow(row, whole.sqliteStatement, db, context, shape: shape, into: &writer)
        }
    }

    /// Writes a stored rendering, with download URLs spliced into its asset dictionaries when the
    /// record holds uploaded assets (the splice finds them as it does in the fields text: their marker
    /// cannot occur elsewhere in a rendering, where names and types are JSON strings). The record's
    /// name and zone are read only then: made into strings for every row of a query page, they and
    /// the sort keys `writeIndexedPage` took of every row were 18 % of the page's instructions.
    func writeRendering(
        _ wire: UnsafeBufferPointer<UInt8>, hasAssets: Bool, record: @autoclosure () -> String, zone: @autoclosure () -> String, _ db: Database,
        _ context: RequestContext, zoneID: [UInt8]?, into writer: inout JSONWriter
    ) throws {
        if hasAssets, try writeWithDownloadURLs(wire, record: record(), zone: zone(), db, context, zoneID: zoneID, into: &writer) { return }
        RecordWire.write(wire, zoneID: zoneID, into: &writer)
    }
}

extension FieldValue {
    fileprivate var isReference: Bool {
        switch self {
        case .reference, .referenceList: return true
        default: return false
        }
    }
}
