import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB

/// What a participant may reach in one zone shared with them: the whole zone (a zone-wide share) or
/// the records of shared hierarchies (a root, its `parent` descendants and the share record), each
/// with the participant's permission. A class: a create under a shared parent joins the hierarchy
/// for the rest of the request.
final class SharedAccess: @unchecked Sendable {
    var zonePermission: SharePermission?
    var records: [String: SharePermission] = [:]

    init(zonePermission: SharePermission?, records: [String: SharePermission]) {
        self.zonePermission = zonePermission
        self.records = records
    }

    func permission(_ recordName: String) -> SharePermission? { records[recordName] ?? zonePermission }
    var isWholeZone: Bool { zonePermission != nil }
}

/// One share: a `cloudkit.share` record's row in `share`.
struct ShareRow: Sendable {
    var db: Int64
    var zone: String
    var name: String
    /// The shared root; nil for a zone-wide share.
    var root: String?
    var publicPermission: SharePermission
    var shortGUID: String

    init(row: Row) {
        db = row["db"]
        zone = row["zone"]
        name = row["name"]
        root = row["root"]
        publicPermission = SharePermission(rawValue: row["public_permission"])
        shortGUID = row["short_guid"]
    }

    static func load(_ db: Database, _ dbID: Int64, _ zone: String, _ name: String) throws -> ShareRow? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM share WHERE db = ? AND zone = ? AND name = ?"), arguments: [dbID, zone, name]).map(ShareRow.init)
    }
}

/// One participant row of a share.
struct ParticipantRow: Sendable {
    var participantID: String
    var userRecordName: String?
    var email: String?
    var phone: String?
    var permission: SharePermission
    var type: ParticipantType
    var status: AcceptanceStatus

    init(row: Row) {
        participantID = row["participant_id"]
        userRecordName = row["user_record_name"]
        email = row["email"]
        phone = row["phone"]
        permission = SharePermission(rawValue: row["permission"])
        type = ParticipantType(rawValue: row["type"])
        status = AcceptanceStatus(rawValue: row["status"])
    }

    static func all(_ db: Database, _ share: ShareRow) throws -> [ParticipantRow] {
        try Row.fetchAll(
            db, sql: "SELECT * FROM share_participant WHERE db = ? AND zone = ? AND share = ? ORDER BY type = 'OWNER' DESC, rowid",
            arguments: [share.db, share.zone, share.name]
        ).map(ParticipantRow.init)
    }

    /// Share Participant dictionary; the identity carries the user's name when the look-up matched one.
    func json(_ db: Database) throws -> ShareParticipant {
        let user = try userRecordName.flatMap { try UserInfo.named(db, recordName: $0) }
        var identity = user?.identity ?? UserIdentity(lookupInfo: UserLookupInfo(emailAddress: email, phoneNumber: phone), userRecordName: userRecordName)
        if user != nil, email != nil || phone != nil {
            identity.lookupInfo = UserLookupInfo(emailAddress: email ?? user?.email, phoneNumber: phone ?? user?.phone, userRecordName: userRecordName)
        }
        return ShareParticipant(userIdentity: identity, permission: permission, type: type, acceptanceStatus: status, participantId: participantID)
    }
}

extension LocalCloudKit {
    static let shareRecordType = "cloudkit.share"
    /// The same, for comparing with a row's text where SQLite holds it (`RowJSON.typeIs`).
    static let shareRecordTypeText: StaticString = "cloudkit.share"
    /// The name the native framework gives a zone-wide share record; a share created under this name
    /// without `forRecord` shares its whole zone.
    static let zoneShareName = "cloudkit.zoneshare"

    // MARK: - The shared database: zones another user shared with the caller

    /// The zone a request names and the context to run it in. In the shared database the zone is the
    /// owner's (`ownerRecordName`), reached only when a share of it was accepted by the caller: the
    /// context then points at the owner's private database and carries what the caller may reach.
    /// Anything else is ZONE_NOT_FOUND, as a zone that is not shared with the caller does not exist
    /// in their shared database.
    func zoneAndContext(_ db: Database, _ context: RequestContext, _ zoneID: ZoneID?) throws -> (ZoneRow, RequestContext) {
        guard context.scope == .shared else { return (try requireZone(db, context, zoneID), context) }
        let name = zoneID?.zoneName ?? ZoneID.defaultZoneName
        let notFound = ServiceError(.zoneNotFound, "Zone '\(name)' does not exist")
        guard let owner = zoneID?.ownerRecordName, owner != context.caller.userRecordName,
            let ownerDB = try db.existingDatabaseID(DatabaseKey(container: context.container, environment: context.environment, scope: .private, owner: owner)),
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM shared_zone WHERE shared_db = ? AND owner_db = ? AND zone = ? AND deleted = 0"), arguments: [context.dbID, ownerDB, name]) == true,
            let zone = try ZoneRow.load(db, ownerDB, name), !zone.deleted
        else { throw notFound }
        var shared = context
        shared.key = DatabaseKey(container: context.container, environment: context.environment, scope: .private, owner: owner)
        shared.dbID = ownerDB
        shared.access = try access(db, ownerDB: ownerDB, zone: name, user: context.caller.userRecordName ?? "")
        return (zone, shared)
    }

    /// What `user` may reach in a zone: their accepted participations, zone-wide or per hierarchy.
    func access(_ db: Database, ownerDB: Int64, zone: String, user: String) throws -> SharedAccess {
        let rows = try Row.fetchAll(
            db, sql: """
                SELECT s.root, s.name, p.permission FROM share s JOIN share_participant p ON p.db = s.db AND p.zone = s.zone AND p.share = s.name
                WHERE s.db = ? AND s.zone = ? AND p.user_record_name = ? AND p.status = 'ACCEPTED'
                """, arguments: [ownerDB, zone, user])
        let access = SharedAccess(zonePermission: nil, records: [:])
        for row in rows {
            let permission = SharePermission(rawValue: row["permission"])
            guard let root: String = row["root"] else {
                access.zonePermission = Self.stronger(access.zonePermission, permission)
                continue
            }
            access.records[row["name"]] = Self.stronger(access.records[row["name"]], .readOnly)
            // The root and its descendants, breadth first over `parent`.
            var frontier = [root]
            while !frontier.isEmpty {
                var next: [String] = []
                for name in frontier where access.records[name] != permission {
                    access.records[name] = Self.stronger(access.records[name], permission)
                    next += try String.fetchAll(
                        db, sql: "SELECT name FROM record WHERE db = ? AND zone = ? AND parent = ? AND deleted = 0", arguments: [ownerDB, zone, name])
                }
                frontier = next
            }
        }
        return access
    }

    static func stronger(_ a: SharePermission?, _ b: SharePermission) -> SharePermission {
        a == .readWrite || b == .readWrite ? .readWrite : (a ?? b)
    }

    /// A write in a shared zone: the participant's permission on the record (or, for a new record, on
    /// the parent it is created under) must be READ_WRITE; share records are the owner's alone.
    /// The reference names ACCESS_DENIED for permission violations (§7.2).
    func checkSharedWrite(_ operation: RecordOperation, _ existing: StoredRecord?, _ access: SharedAccess) throws {
        let name = operation.record.recordName
        if existing?.type == Self.shareRecordType || operation.record.recordType == Self.shareRecordType {
            throw ItemError(.accessDenied, "only the owner can change a share")
        }
        // A new record: the zone's permission, or its parent's in a shared hierarchy.
        let permission = existing == nil
            ? access.zonePermission ?? operation.record.parent.flatMap { access.records[$0.recordName] }
            : access.permission(name)
        guard let permission else {
            throw ItemError(.accessDenied, existing == nil ? "a new record in a shared hierarchy needs a parent in it" : "record '\(name)' is not shared with you")
        }
        guard permission == .readWrite else {
            throw ItemError(.accessDenied, "your permission on this share is \(permission.rawValue): writes are not allowed")
        }
        if existing == nil, !access.isWholeZone { access.records[name] = permission }
    }

    // MARK: - Zone-level endpoints of the shared database

    /// The zones shared with the caller that are live: (owner's database, owner, zone row).
    func sharedZones(_ db: Database, _ context: RequestContext) throws -> [(ownerDB: Int64, owner: String, zone: ZoneRow)] {
        let rows = try Row.fetchAll(
            db, sql: "SELECT z.owner_db, z.zone, d.owner FROM shared_zone z JOIN ckdb d ON d.id = z.owner_db WHERE z.shared_db = ? AND z.deleted = 0 ORDER BY d.owner, z.zone",
            arguments: [context.dbID])
        return try rows.compactMap { row in
            guard let zone = try ZoneRow.load(db, row["owner_db"], row["zone"]), !zone.deleted else { return nil }
            return (row["owner_db"], row["owner"], zone)
        }
    }

    func sharedZoneJSON(_ zone: ZoneRow, owner: String, deleted: Bool = false) -> JSON {
        var object = JSONObject()
        object.set("zoneID", ZoneID(zoneName: zone.name, ownerRecordName: owner, zoneType: .regularCustomZone))
        if deleted {
            object.set("deleted", true)
        } else {
            object.set("syncToken", OpaqueToken.zoneToken(zone: zone.name, incarnation: zone.incarnation, seq: zone.seq))
            object.set("atomic", true)
        }
        return .object(object)
    }

    func listSharedZones(_ db: Database, _ context: RequestContext) throws -> JSON {
        .object(["zones": .array(try sharedZones(db, context).map { sharedZoneJSON($0.zone, owner: $0.owner) })])
    }

    func lookupSharedZones(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> JSON {
        let request = try decodeBody(LookupZonesRequest.self, body)
        try checkCount(request.zones.count, "zones")
        return .object(["zones": .array(try request.zones.map { zoneID in
            do {
                let (zone, shared) = try zoneAndContext(db, context, zoneID)
                return sharedZoneJSON(zone, owner: shared.key.owner)
            } catch let error as ServiceError {
                return ZoneError(zoneID: zoneID, info: ServerErrorInfo(serverErrorCode: error.code, reason: error.reason, uuid: UUID().uuidString.lowercased())).json
            }
        })])
    }

    /// changes/database in the shared database: zones shared with the caller that changed (shared,
    /// written to, or no longer shared: those carry `deleted`), in the order of the caller's own
    /// shared-database counter.
    func sharedDatabaseChanges(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> JSON {
        let request = try decodeBody(DatabaseChangesRequest.self, body)
        let limit = try checkLimit(request.resultsLimit)
        var since: Int64 = 0
        if let token = request.syncToken {
            guard let seq = OpaqueToken.databaseSeq(token) else { throw ServiceError.badRequest("Unknown sync continuation type") }
            since = seq
        }
        let rows = try Row.fetchAll(
            db, sql: "SELECT z.zone, z.seq, z.deleted, d.owner FROM shared_zone z JOIN ckdb d ON d.id = z.owner_db WHERE z.shared_db = ? AND z.seq > ? ORDER BY z.seq LIMIT ?",
            arguments: [context.dbID, since, limit + 1])
        let page = rows.prefix(limit)
        let current = try Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM ckdb WHERE id = ?"), arguments: [context.dbID]) ?? 0
        let more = rows.count > limit
        let next = more ? (page.last?["seq"] as Int64? ?? since) : max(since, current)
        return [
            "zones": .array(page.map { row in
                var object = JSONObject()
                object.set("zoneID", ZoneID(zoneName: row["zone"], ownerRecordName: row["owner"], zoneType: .regularCustomZone))
                if (row["deleted"] as Int64) != 0 { object.set("deleted", true) }
                return .object(object)
            }),
            "syncToken": .string(OpaqueToken.databaseToken(seq: next)),
            "moreComing": .bool(more),
        ]
    }

    // MARK: - Keeping the participants' shared databases in step

    /// Brings every participant's `shared_zone` row for a zone in line with the accepted shares of
    /// that zone: new ones appear, revoked ones are marked deleted (each a change in that
    /// participant's shared database).
    func refreshSharedZone(_ db: Database, _ context: RequestContext, ownerDB: Int64, zone: String) throws {
        let users = Set(try String.fetchAll(
            db, sql: "SELECT DISTINCT user_record_name FROM share_participant WHERE db = ? AND zone = ? AND status = 'ACCEPTED' AND type <> 'OWNER' AND user_record_name IS NOT NULL",
            arguments: [ownerDB, zone]))
        let existing = try Row.fetchAll(
            db, sql: "SELECT z.shared_db, z.deleted, d.owner FROM shared_zone z JOIN ckdb d ON d.id = z.shared_db WHERE z.owner_db = ? AND z.zone = ?",
            arguments: [ownerDB, zone])
        var seen = Set<String>()
        for row in existing {
            let user: String = row["owner"], sharedDB: Int64 = row["shared_db"], deleted = (row["deleted"] as Int64) != 0
            seen.insert(user)
            if users.contains(user) == deleted {
                try db.cachedStatement(sql: "UPDATE shared_zone SET deleted = ?, seq = ? WHERE shared_db = ? AND owner_db = ? AND zone = ?")
                    .execute(arguments: [deleted ? 0 : 1, try db.nextSeq(sharedDB), sharedDB, ownerDB, zone])
                try fireSharedDatabaseSubscriptions(db, context, sharedDB: sharedDB, zone: zone)
            }
        }
        for user in users.subtracting(seen) {
            let sharedDB = try db.databaseID(DatabaseKey(container: context.container, environment: context.environment, scope: .shared, owner: user))
            try db.cachedStatement(sql: "INSERT INTO shared_zone (shared_db, owner_db, zone, seq, deleted) VALUES (?, ?, ?, ?, 0)")
                .execute(arguments: [sharedDB, ownerDB, zone, try db.nextSeq(sharedDB)])
            try fireSharedDatabaseSubscriptions(db, context, sharedDB: sharedDB, zone: zone)
        }
    }

    /// Records changed in shared zones: each participant's shared database sees the zone changed,
    /// and its database subscriptions fire.
    func touchSharedZones(_ db: Database, _ context: RequestContext, ownerDB: Int64, zones: some Sequence<String>) throws {
        for zone in zones {
            for sharedDB in try Int64.fetchAll(
                db.cachedStatement(sql: "SELECT shared_db FROM shared_zone WHERE owner_db = ? AND zone = ? AND deleted = 0"), arguments: [ownerDB, zone])
            {
                try db.cachedStatement(sql: "UPDATE shared_zone SET seq = ? WHERE shared_db = ? AND owner_db = ? AND zone = ?")
                    .execute(arguments: [try db.nextSeq(sharedDB), sharedDB, ownerDB, zone])
                try fireSharedDatabaseSubscriptions(db, context, sharedDB: sharedDB, zone: zone)
            }
        }
    }

    /// A participant's database subscriptions (saved in their shared database) fire for a change in
    /// a zone shared with them: records written, the zone shared, or no longer shared (spec §2.4:
    /// "any custom zone of the database … includes share acceptance in the shared DB").
    func fireSharedDatabaseSubscriptions(_ db: Database, _ context: RequestContext, sharedDB: Int64, zone: String) throws {
        guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM subscription WHERE db = ? LIMIT 1"), arguments: [sharedDB]) == true,
            let participant = try String.fetchOne(db.cachedStatement(sql: "SELECT owner FROM ckdb WHERE id = ?"), arguments: [sharedDB])
        else { return }
        var shared = context
        shared.route.scope = .shared
        shared.key = DatabaseKey(container: context.container, environment: context.environment, scope: .shared, owner: participant)
        shared.dbID = sharedDB
        shared.access = nil
        var recipients = Recipients()
        for stored in try storedSubscriptions(db, shared) where stored.subscription.subscriptionType == .database {
            let change = RecordChange(kind: .updated, before: nil, after: StoredRecord(zone: zone, name: "", type: nil))
            try notify(db, shared, stored, change, .database, &recipients)
        }
    }

    // MARK: - Share records in records/modify

    /// Checks a share record before it is saved and fills in what the service sets: the shortGUID
    /// (the root's, minted if it has none). Shares live in custom zones of the owner's private
    /// database; `forRecord` names an existing root that has no other share; a share without
    /// `forRecord` must be named `cloudkit.zoneshare` and shares its whole zone.
    func prepareShare(_ operation: RecordOperation, _ record: inout StoredRecord, existing: StoredRecord?, _ db: Database, _ context: RequestContext, _ zone: ZoneRow) throws {
        guard context.scope == .private, context.access == nil else {
            throw ItemError(.badRequest, "shares can only be saved by their owner, in the private database")
        }
        guard !zone.isDefault else { throw ItemError(.badRequest, "Sharing requires a custom zone") }
        if let existing, let share = try ShareRow.load(db, context.dbID, zone.name, existing.name) {
            if let forRecord = operation.record.forRecord, forRecord.recordName != share.root {
                throw ItemError(.badRequest, "a share's root cannot change (it shares '\(share.root ?? "the zone")')")
            }
            record.shortGUID = share.shortGUID
            return
        }
        if let forRecord = operation.record.forRecord {
            guard let root = try StoredRecord.load(db, dbID: context.dbID, zone: zone.name, name: forRecord.recordName), !root.deleted,
                root.type != Self.shareRecordType
            else { throw ItemError(.badRequest, "Cannot share - no such record exists to share") }
            if let tag = forRecord.recordChangeTag, tag != root.tag {
                throw ItemError(.conflict, "oplock error: the shared record '\(root.name)' was changed (change tag \(root.tag ?? "none"))")
            }
            if let other = root.share, other != record.name {
                throw ItemError(.badRequest, "record '\(root.name)' is already shared by '\(other)'")
            }
            record.shortGUID = root.shortGUID ?? Self.shortGUID()
        } else {
            guard record.name == Self.zoneShareName else {
                throw ItemError(.badRequest, "a share needs forRecord, or the name \(Self.zoneShareName) to share its whole zone")
            }
            record.shortGUID = Self.shortGUID()
        }
    }

    /// After a share record was saved: its row, its participants (the owner first, accepted; the
    /// others by their look-up info, resolved to users where one matches, INVITED until they
    /// accept; an accepted participant keeps their status; one left out is removed), the root's
    /// `share` link, and the participants' shared databases.
    func saveShare(_ operation: RecordOperation, _ record: StoredRecord, _ db: Database, _ context: RequestContext, _ zone: ZoneRow, _ log: ChangeLog) throws {
        let previous = try ShareRow.load(db, context.dbID, zone.name, record.name)
        let root = previous?.root ?? operation.record.forRecord?.recordName
        let publicPermission = operation.record.publicPermission ?? previous?.publicPermission ?? .noPermission
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO share (db, zone, name, root, public_permission, short_guid) VALUES (?, ?, ?, ?, ?, ?)")
            .execute(arguments: [context.dbID, zone.name, record.name, root, publicPermission.rawValue, record.shortGUID])
        let shareRow = try ShareRow.load(db, context.dbID, zone.name, record.name)!
        let before = try ParticipantRow.all(db, shareRow)
        let owner = context.key.owner
        var kept: [String] = []
        if !before.contains(where: { $0.type == .owner }) {
            try insertParticipant(db, shareRow, id: Self.participantID(), user: owner, email: nil, phone: nil, permission: .readWrite, type: .owner, status: .accepted)
        }
        kept += before.filter { $0.type == .owner }.map(\.participantID)
        if let incoming = operation.record.participants {
            for participant in incoming where participant.type != .owner {
                let info = participant.userIdentity?.lookupInfo ?? UserLookupInfo(userRecordName: participant.userIdentity?.userRecordName)
                guard info.emailAddress != nil || info.phoneNumber != nil || info.userRecordName != nil else {
                    throw ItemError(.badRequest, "a participant needs userIdentity.lookupInfo (emailAddress, phoneNumber or userRecordName)")
                }
                let user = try UserInfo.find(db, info)
                if user?.recordName == owner { continue }  // the owner is already the OWNER participant
                let permission = participant.permission ?? .readOnly
                guard permission == .readOnly || permission == .readWrite else {
                    throw ItemError(.badRequest, "a participant's permission is READ_ONLY or READ_WRITE")
                }
                // The same participant again (by id, or the same user or address): their status stays.
                let match = before.first { p in
                    (participant.participantId != nil && p.participantID == participant.participantId)
                        || (user != nil && p.userRecordName == user?.recordName)
                        || (info.emailAddress != nil && p.email?.lowercased() == info.emailAddress?.lowercased())
                }
                if let match, match.status != .removed {
                    try db.cachedStatement(sql: "UPDATE share_participant SET permission = ? WHERE db = ? AND zone = ? AND share = ? AND participant_id = ?")
                        .execute(arguments: [permission.rawValue, context.dbID, zone.name, record.name, match.participantID])
                    kept.append(match.participantID)
                } else {
                    let id = Self.participantID()
                    try insertParticipant(db, shareRow, id: id, user: user?.recordName, email: info.emailAddress, phone: info.phoneNumber,
                                          permission: permission, type: participant.type == .administrator ? .administrator : .user, status: .invited)
                    kept.append(id)
                }
            }
            for gone in before where !kept.contains(gone.participantID) {
                try db.cachedStatement(sql: "DELETE FROM share_participant WHERE db = ? AND zone = ? AND share = ? AND participant_id = ?")
                    .execute(arguments: [context.dbID, zone.name, record.name, gone.participantID])
            }
        }
        if previous == nil, let root {
            try link(root: root, to: record.name, shortGUID: record.shortGUID, db, context, zone, log)
        }
        try refreshSharedZone(db, context, ownerDB: context.dbID, zone: zone.name)
    }

    func insertParticipant(
        _ db: Database, _ share: ShareRow, id: String, user: String?, email: String?, phone: String?,
        permission: SharePermission, type: ParticipantType, status: AcceptanceStatus
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO share_participant (db, zone, share, participant_id, user_record_name, email, phone, permission, type, status)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [share.db, share.zone, share.name, id, user, email, phone, permission.rawValue, type.rawValue, status.rawValue])
    }

    static func participantID() -> String { UUID().uuidString }

    /// Sets (or, with `to: nil`, clears) a root's `share` link: a change of the root, with a new tag.
    func link(root name: String, to share: String?, shortGUID: String?, _ db: Database, _ context: RequestContext, _ zone: ZoneRow, _ log: ChangeLog) throws {
        guard var root = try StoredRecord.load(db, dbID: context.dbID, zone: zone.name, name: name), !root.deleted else { return }
        let before = root
        root.share = share
        if root.shortGUID == nil { root.shortGUID = shortGUID }
        let seq = try log.nextSeq(db, context.dbID)
        root.seq = seq
        root.tag = String(seq, radix: 36)
        root.modified = RecordStamp(timestamp: context.now, userRecordName: context.caller.actingRecordName, deviceID: Self.deviceID)
        try root.save(db, dbID: context.dbID, encodedFields: Record.encodeStoredFields(root.fields), over: before)
        log.zoneSeqs[zone.name] = seq
        log.record(RecordChange(kind: .updated, before: before, after: root))
    }

    /// A share record deleted: its participants lose access at once, and its root is unlinked.
    func deletedShare(_ record: StoredRecord, _ db: Database, _ context: RequestContext, _ zone: ZoneRow, _ log: ChangeLog) throws {
        guard let share = try ShareRow.load(db, context.dbID, zone.name, record.name) else { return }
        try db.cachedStatement(sql: "DELETE FROM share_participant WHERE db = ? AND zone = ? AND share = ?").execute(arguments: [share.db, share.zone, share.name])
        try db.cachedStatement(sql: "DELETE FROM share WHERE db = ? AND zone = ? AND name = ?").execute(arguments: [share.db, share.zone, share.name])
        if let root = share.root { try link(root: root, to: nil, shortGUID: nil, db, context, zone, log) }
        try refreshSharedZone(db, context, ownerDB: context.dbID, zone: zone.name)
    }

    // MARK: - Share records as answered

    /// A share record's answer: the record and `owner`, `participants`, `publicPermission` and
    /// `currentUserParticipant` (the caller's own participation, when they have one).
    func shareWire(_ record: StoredRecord, _ db: Database, ownerDB: Int64, zoneID: ZoneID?, caller: String?) throws -> JSON {
        var json = record.wire(zoneID: zoneID, desiredKeys: nil, numbersAsStrings: false)
        guard let share = try ShareRow.load(db, ownerDB, record.zone, record.name), case .object(var object) = json else { return json }
        let participants = try ParticipantRow.all(db, share).filter { $0.status != .removed }
        let entries = try participants.map { try $0.json(db) }
        object.set("owner", entries.first { $0.type == .owner })
        object.set("participants", entries)
        object.set("publicPermission", share.publicPermission)
        if let caller, let mine = participants.firstIndex(where: { $0.userRecordName == caller }) {
            object.set("currentUserParticipant", entries[mine])
        }
        json = .object(object)
        return json
    }

    /// A record as answered anywhere: share records with their share keys.
    func recordWire(_ record: StoredRecord, _ db: Database, _ context: RequestContext, zoneID: ZoneID?, desiredKeys: [String]?, numbersAsStrings: Bool) throws -> JSON {
        if record.type == Self.shareRecordType, !record.deleted {
            return try shareWire(record, db, ownerDB: context.dbID, zoneID: zoneID, caller: context.caller.userRecordName)
        }
        return try withDownloadURLs(record, db, context).wire(zoneID: zoneID, desiredKeys: desiredKeys, numbersAsStrings: numbersAsStrings)
    }

    // MARK: - records/resolve and records/accept

    /// records/resolve and records/accept (on the public path): shortGUIDs to share metadata; accept
    /// also makes the caller an accepted participant (an invited one, matched by user or email, or
    /// anyone when the share has a public permission) and puts the zone in their shared database.
    /// The accept answer's shape is the resolve one (reference §4.8: inferred, unconfirmed).
    func resolveShares(_ route: Route, caller: Caller, body: JSON, accept: Bool) async throws -> JSON {
        guard let me = caller.userRecordName else { throw ServiceError(.authenticationFailed, "records/resolve needs a signed-in user") }
        let items = try decodeList(body, "shortGUIDs", ShortGUID.init(json:))
        let now = Int64((configuration.now().timeIntervalSince1970 * 1000).rounded())
        let work: @Sendable (Database) throws -> JSON = { db in
            var results: [JSON] = []
            for item in items {
                do {
                    results.append(try self.resolve(item, route: route, caller: caller, me: me, accept: accept, now: now, db))
                } catch let error as ServiceError {
                    results.append(ShortGUIDError(shortGUID: item.value, info: ServerErrorInfo(serverErrorCode: error.code, reason: error.reason)).json)
                }
            }
            return ["results": .array(results)]
        }
        if accept { return try await store.pool.write(work) }
        return try await store.pool.read(work)
    }

    func resolve(_ item: ShortGUID, route: Route, caller: Caller, me: String, accept: Bool, now: Int64, _ db: Database) throws -> JSON {
        let notFound = ServiceError(.notFound, "no share with this shortGUID")
        guard let row = try Row.fetchOne(
            db, sql: "SELECT s.*, d.owner, d.container, d.environment FROM share s JOIN ckdb d ON d.id = s.db WHERE s.short_guid = ?", arguments: [item.value]),
            (row["container"] as String) == route.container, (row["environment"] as String) == route.environment.rawValue
        else { throw notFound }
        let share = ShareRow(row: row)
        let owner: String = row["owner"]
        var participants = try ParticipantRow.all(db, share)
        let myInfo = try UserInfo.named(db, recordName: me)
        func mine() -> ParticipantRow? {
            participants.first { $0.userRecordName == me }
                ?? participants.first { p in p.userRecordName == nil && p.email != nil && p.email?.lowercased() == myInfo?.email?.lowercased() }
        }
        let key = DatabaseKey(container: route.container, environment: route.environment, scope: .private, owner: owner)
        let context = RequestContext(route: route, caller: caller, key: key, dbID: share.db, now: now)
        guard try ZoneRow.load(db, share.db, share.zone).map({ !$0.deleted }) == true else { throw notFound }
        if owner != me {
            let participation = mine()
            guard participation.map({ $0.status != .removed }) ?? (share.publicPermission != .noPermission) else {
                throw ServiceError(.accessDenied, "this share is not shared with you", status: 403)
            }
            if accept {
                if let participation {
                    try db.cachedStatement(sql: "UPDATE share_participant SET status = 'ACCEPTED', user_record_name = ? WHERE db = ? AND zone = ? AND share = ? AND participant_id = ?")
                        .execute(arguments: [me, share.db, share.zone, share.name, participation.participantID])
                } else {
                    try insertParticipant(db, share, id: Self.participantID(), user: me, email: myInfo?.email, phone: myInfo?.phone,
                                          permission: share.publicPermission, type: .publicUser, status: .accepted)
                }
                try refreshSharedZone(db, context, ownerDB: share.db, zone: share.zone)
                participants = try ParticipantRow.all(db, share)
            }
        } else if accept {
            throw ServiceError.badRequest("the owner of a share does not accept it")
        }
        let zoneID = ZoneID(zoneName: share.zone, ownerRecordName: owner, zoneType: .regularCustomZone)
        var result = ShortGUIDResult()
        result.containerIdentifier = route.container
        result.environment = route.environment.rawValue
        result.databaseScope = owner == me ? "PRIVATE" : "SHARED"
        result.rootRecordName = share.root
        result.ownerIdentity = try UserInfo.named(db, recordName: owner)?.identity ?? UserIdentity(userRecordName: owner)
        result.zoneID = zoneID
        result.shortGUID = share.shortGUID
        result.webpageURL = shareURL(share.shortGUID)
        if let participation = mine() {
            result.participantPermission = participation.permission
            result.participantStatus = participation.status
            result.participantType = participation.type
        } else if owner != me {
            result.participantPermission = share.publicPermission
            result.participantType = .publicUser
        }
        var object: JSONObject
        if case .object(let o) = result.json { object = o } else { object = JSONObject() }
        if let shareRecord = try StoredRecord.load(db, dbID: share.db, zone: share.zone, name: share.name) {
            object.set("share", try shareWire(shareRecord, db, ownerDB: share.db, zoneID: zoneID, caller: me))
        }
        if item.shouldFetchRootRecord, let rootName = share.root,
            let root = try StoredRecord.load(db, dbID: share.db, zone: share.zone, name: rootName), !root.deleted
        {
            object.set("rootRecord", root.wire(zoneID: zoneID, desiredKeys: item.rootRecordDesiredKeys, numbersAsStrings: false))
        }
        return .object(object)
    }

    /// `GET /share/<shortGUID>`: what a share URL opens on this server. It names the container, zone,
    /// root and owner (no participants: the page needs no sign-in) and says how to accept it.
    func sharePage(_ guid: String) async -> ServerResponse {
        let found = try? await store.pool.read { db -> (String, String, String?, String, String)? in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT s.zone, s.root, d.container, d.environment, d.owner FROM share s JOIN ckdb d ON d.id = s.db WHERE s.short_guid = ?", arguments: [guid])
            else { return nil }
            let ownerRecordName: String = row["owner"]
            let owner = try UserInfo.named(db, recordName: ownerRecordName)?.name ?? ownerRecordName
            return (row["container"], row["environment"], row["root"], row["zone"], owner)
        }
        guard let (container, environment, root, zone, owner) = found ?? nil else {
            return ServerResponse(status: 404, headers: [(name: "Content-Type", value: "text/plain; charset=UTF-8")], body: Array("No share with this shortGUID.\n".utf8))
        }
        let what = root.map { "the record '\($0)' (and the records below it) in zone \(zone)" } ?? "the zone \(zone)"
        let text = """
            A CloudKit share on a local ckbrowse server.
            \(owner) shares \(what) of \(container) (\(environment)).
            Accept it with records/accept and the shortGUID \(guid), or in ckbrowse: :accept \(shareURL(guid))

            """
        return ServerResponse(status: 200, headers: [(name: "Content-Type", value: "text/plain; charset=UTF-8")], body: Array(text.utf8))
    }

    /// Every share of a container, for printing: the zone, the root (nil: the whole zone), its URL.
    public func shares(container: String, environment: CloudKitEnvironment) throws -> [(zone: String, root: String?, url: String)] {
        try store.pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT s.zone, s.root, s.short_guid FROM share s JOIN ckdb d ON d.id = s.db WHERE d.container = ? AND d.environment = ? ORDER BY s.zone, s.name",
                arguments: [container, environment.rawValue])
        }.map { (zone: $0["zone"], root: $0["root"], url: shareURL($0["short_guid"])) }
    }

    /// The URL a share is opened at: this server's `/share/<shortGUID>` (the service's is
    /// https://www.icloud.com/share/<shortGUID>).
    public func shareURL(_ shortGUID: String) -> String { baseURL.withLock { $0 } + "/share/" + shortGUID }
}
