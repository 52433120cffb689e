import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB

struct ZoneRow: Sendable {
    var name: String
    var owner: String
    var incarnation: Int64
    var seq: Int64
    var deleted: Bool

    var isDefault: Bool { name == ZoneID.defaultZoneName }

    /// The columns `read(_:)` reads, in its order.
    private static let columns = "name, owner, incarnation, seq, deleted"

    /// A row selected with `columns`, read in place by position: every request that names a zone
    /// reads one, and reading it by column name through a `Row` (a copy of every value, then a
    /// search of the names for each) cost 19 k instructions a records/changes page (callgrind).
    private static func read(_ row: StatementRow) -> ZoneRow {
        ZoneRow(
            name: row.text(0) ?? "", owner: row.text(1) ?? "", incarnation: row.integer(2) ?? 0, seq: row.integer(3) ?? 0,
            deleted: (row.integer(4) ?? 0) != 0)
    }

    static func load(_ db: Database, _ dbID: Int64, _ name: String) throws -> ZoneRow? {
        try db.firstRow("SELECT \(columns) FROM zone WHERE db = ? AND name = ?", { $0.add(dbID); $0.add(name) }) {
            read(StatementRow(statement: $0))
        }
    }

    static func all(_ db: Database, _ dbID: Int64, since seq: Int64? = nil) throws -> [ZoneRow] {
        var zones: [ZoneRow] = []
        if let seq {
            try db.forEachRow("SELECT \(columns) FROM zone WHERE db = ? AND seq > ? ORDER BY seq", { $0.add(dbID); $0.add(seq) }) {
                zones.append(read($0))
            }
        } else {
            try db.forEachRow("SELECT \(columns) FROM zone WHERE db = ? AND deleted = 0 ORDER BY name = '_defaultZone' DESC, name", { $0.add(dbID) }) {
                zones.append(read($0))
            }
        }
        return zones
    }
}

extension LocalCloudKit {
    /// Custom zones and the private default zone apply batches atomically; the public default zone
    /// does not. (Live zones/list reports `atomic: true` for the private default zone, reference §3.2.)
    func isAtomicZone(_ zone: ZoneRow, _ context: RequestContext) -> Bool {
        !zone.isDefault || context.scope != .public
    }

    func zoneJSON(_ zone: ZoneRow, _ context: RequestContext, deleted: Bool = false) -> JSON {
        var object = JSONObject()
        object.set("zoneID", context.zoneID(zone.name))
        if deleted {
            object.set("deleted", true)
        } else {
            object.set("syncToken", OpaqueToken.zoneToken(zone: zone.name, incarnation: zone.incarnation, seq: zone.seq))
            object.set("atomic", isAtomicZone(zone, context))
        }
        return .object(object)
    }

    /// A live zone, or ZONE_NOT_FOUND.
    func requireZone(_ db: Database, _ context: RequestContext, _ zoneID: ZoneID?) throws -> ZoneRow {
        let name = zoneID?.zoneName ?? ZoneID.defaultZoneName
        guard let zone = try ZoneRow.load(db, context.dbID, name), !zone.deleted else {
            throw ServiceError(.zoneNotFound, "Zone '\(name)' does not exist")
        }
        return zone
    }

    func listZones(_ db: Database, _ context: RequestContext) throws -> JSON {
        .object(["zones": .array(try ZoneRow.all(db, context.dbID).map { zoneJSON($0, context) })])
    }

    func lookupZones(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> JSON {
        let request = try decodeBody(LookupZonesRequest.self, body)
        try checkCount(request.zones.count, "zones")
        var results: [JSON] = []
        for zoneID in request.zones {
            if let zone = try ZoneRow.load(db, context.dbID, zoneID.zoneName), !zone.deleted {
                results.append(zoneJSON(zone, context))
            } else {
                results.append(
                    ZoneError(
                        zoneID: ZoneID(zoneName: zoneID.zoneName, ownerRecordName: context.zoneOwner),
                        info: ServerErrorInfo(serverErrorCode: .zoneNotFound, reason: "Zone does not exist", uuid: UUID().uuidString.lowercased())
                    ).json)
            }
        }
        return .object(["zones": .array(results)])
    }

    func modifyZones(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> JSON {
        let request = try decodeBody(ModifyZonesRequest.self, body)
        try checkCount(request.operations.count, "operations")
        var seen = Set<String>()
        for operation in request.operations where !seen.insert(operation.zoneID.zoneName).inserted {
            throw ServiceError.badRequest("zone '\(operation.zoneID.zoneName)' appears in more than one operation")
        }
        var results: [JSON] = []
        var changedZones: [String] = []
        for operation in request.operations {
            let name = operation.zoneID.zoneName
            func fail(_ code: ServerErrorCode, _ reason: String) -> JSON {
                ZoneError(zoneID: context.zoneID(name, type: false), info: ServerErrorInfo(serverErrorCode: code, reason: reason, uuid: UUID().uuidString.lowercased())).json
            }
            switch operation.operationType {
            case .create:
                guard context.scope == .private else {
                    results.append(fail(.badRequest, "custom zones can only be created in the private database"))
                    continue
                }
                guard Self.isValidName(name), name != ZoneID.defaultZoneName else {
                    results.append(fail(.badRequest, "invalid zone name"))
                    continue
                }
                if let zone = try ZoneRow.load(db, context.dbID, name), !zone.deleted {
                    results.append(zoneJSON(zone, context))  // creating an existing zone is a no-op
                    continue
                }
                let seq = try db.nextSeq(context.dbID)
                // Prepared once (a prepare of this statement cost 79 k instructions, a third of the write).
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO zone (db, name, owner, incarnation, seq, deleted) VALUES (?, ?, ?, ?, ?, 0)")
                    .execute(arguments: [context.dbID, name, context.zoneOwner, seq, seq])
                try db.cachedStatement(sql: "DELETE FROM record WHERE db = ? AND zone = ?").execute(arguments: [context.dbID, name])
                try db.cachedStatement(sql: "DELETE FROM field_index WHERE db = ? AND zone = ?").execute(arguments: [context.dbID, name])
                results.append(zoneJSON(try ZoneRow.load(db, context.dbID, name)!, context))
                changedZones.append(name)
            case .delete:
                guard name != ZoneID.defaultZoneName else {
                    results.append(fail(.badRequest, "the default zone cannot be deleted"))
                    continue
                }
                guard let zone = try ZoneRow.load(db, context.dbID, name), !zone.deleted else {
                    results.append(fail(.zoneNotFound, "Zone does not exist"))
                    continue
                }
                let seq = try db.nextSeq(context.dbID)
                // Deleting a zone deletes its records (and their references and subscriptions on it).
                try db.cachedStatement(sql: "DELETE FROM record WHERE db = ? AND zone = ?").execute(arguments: [context.dbID, name])
                try db.cachedStatement(sql: "DELETE FROM field_index WHERE db = ? AND zone = ?").execute(arguments: [context.dbID, name])
                try db.cachedStatement(sql: "DELETE FROM reference WHERE db = ? AND zone = ?").execute(arguments: [context.dbID, name])
                try db.cachedStatement(sql: "UPDATE zone SET deleted = 1, seq = ? WHERE db = ? AND name = ?").execute(arguments: [seq, context.dbID, name])
                results.append(zoneJSON(zone, context, deleted: true))
                changedZones.append(name)
            default:
                results.append(fail(.badRequest, "unknown zone operation type '\(operation.operationType.rawValue)'"))
            }
        }
        // Database subscriptions fire on zone creation and deletion too (spec §2.4), in this transaction.
        try fireDatabaseSubscriptions(db, context, zones: changedZones)
        return .object(["zones": .array(results)])
    }

    func databaseChanges(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> JSON {
        let request = try decodeBody(DatabaseChangesRequest.self, body)
        let limit = try checkLimit(request.resultsLimit)
        var since: Int64 = 0
        if let token = request.syncToken {
            guard let seq = OpaqueToken.databaseSeq(token) else {
                throw ServiceError.badRequest("Unknown sync continuation type")
            }
            since = seq
        }
        // The default zone has no change feed (changes/zone refuses it), so it is never reported here:
        // a client following §4.6's loop then never asks for what it cannot get.
        let changed = try ZoneRow.all(db, context.dbID, since: since).filter { !$0.isDefault }
        let page = Array(changed.prefix(limit))
        let current = try Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM ckdb WHERE id = ?"), arguments: [context.dbID]) ?? 0
        let next = page.count < changed.count ? page.last!.seq : max(since, current)
        return [
            "zones": .array(page.map { zone in
                var object = JSONObject()
                object.set("zoneID", context.zoneID(zone.name))
                if zone.deleted { object.set("deleted", true) }
                return .object(object)
            }),
            "syncToken": .string(OpaqueToken.databaseToken(seq: next)),
            "moreComing": .bool(page.count < changed.count),
        ]
    }

    /// zones/changes (deprecated, §4.12): changes/database spelled with `metaSyncToken`; the answer
    /// has exactly `zones`, `metaSyncToken` and `moreComing`. A `syncToken` sent instead is ignored,
    /// as the service ignores it (so its first page comes back).
    func zonesChanges(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> JSON {
        guard case .object(let object) = body else { throw ServiceError.badRequest("BadRequestException: the body is not an object") }
        var request = JSONObject()
        if let token = object["metaSyncToken"] { request.set("syncToken", token) }
        if let limit = object["resultsLimit"] { request.set("resultsLimit", limit) }
        let answer = context.scope == .shared ? try sharedDatabaseChanges(db, context, .object(request)) : try databaseChanges(db, context, .object(request))
        return ["zones": answer["zones"] ?? .array([]), "metaSyncToken": answer["syncToken"] ?? .null, "moreComing": answer["moreComing"] ?? .bool(false)]
    }

    func checkCount(_ count: Int, _ what: String) throws {
        if count > ModifyRecordsRequest.maximumOperations {
            throw ServiceError.badRequest("too many \(what): \(count); at most \(ModifyRecordsRequest.maximumOperations) per request")
        }
        if count == 0 { throw ServiceError.badRequest("\(what) must not be empty") }
    }

    static func isValidName(_ name: String) -> Bool { nameProblem(name) == nil }

    /// Why `name` cannot name a zone, record, record type, field or subscription, in words (nil: it
    /// can): empty, over 255 bytes, or holding a control character (C0, DEL, C1).
    static func nameProblem(_ name: String) -> String? {
        if name.isEmpty { return "it is empty" }
        if name.utf8.count > 255 { return "it is \(name.utf8.count) bytes long (at most 255)" }
        if let control = name.unicodeScalars.first(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return "it holds the control character U+" + String(cFormat: "%04X", control.value)
        }
        return nil
    }

    /// A name as a reason may quote it: at most `limit` characters (then `…`), controls as `\u{…}`.
    static func quoted(_ name: String, limit: Int = 60) -> String {
        var out = ""
        for scalar in name.unicodeScalars.prefix(limit) {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.properties.generalCategory == .format {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return "'" + out + (name.unicodeScalars.count > limit ? "…'" : "'")
    }
}
