import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB

/// A user as others find them: the name they sign in with, their record name and look-up keys.
struct UserInfo: Sendable, Hashable {
    var name: String
    var recordName: String
    var email: String?
    var phone: String?

    init(row: Row) {
        name = row["name"]
        recordName = row["record_name"]
        email = row["email"]
        phone = row["phone"]
    }

    /// User Identity dictionary (§3.11). Every local user is discoverable; the name is the given name.
    var identity: UserIdentity {
        UserIdentity(
            lookupInfo: UserLookupInfo(emailAddress: email, phoneNumber: phone, userRecordName: recordName),
            userRecordName: recordName, nameComponents: NameComponents(givenName: name))
    }

    /// User dictionary of the legacy look-ups; `emailAddress` only in answers to email look-ups.
    func user(withEmail: Bool) -> User {
        User(userRecordName: recordName, firstName: name, lastName: nil, emailAddress: withEmail ? email : nil)
    }

    static func find(_ db: Database, _ info: UserLookupInfo) throws -> UserInfo? {
        if let recordName = info.userRecordName {
            return try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM user_info WHERE record_name = ?"), arguments: [recordName]).map(UserInfo.init)
        }
        if let email = info.emailAddress {
            return try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM user_info WHERE email = ? COLLATE NOCASE"), arguments: [email]).map(UserInfo.init)
        }
        if let phone = info.phoneNumber {
            let digits = phone.filter(\.isNumber)
            return try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM user_info WHERE phone IS NOT NULL")).map(UserInfo.init)
                .first { ($0.phone ?? "").filter(\.isNumber) == digits && !digits.isEmpty }
        }
        return nil
    }

    static func named(_ db: Database, recordName: String) throws -> UserInfo? {
        try find(db, UserLookupInfo(userRecordName: recordName))
    }
}

extension LocalCloudKit {
    /// users/caller, users/discover (GET and POST), users/lookup/email and users/lookup/id. Look-ups
    /// that match nobody are left out of `users` (the reference does not say what the service
    /// answers for them; unconfirmed).
    func users(_ endpoint: Endpoint, caller: Caller, body: JSON) async throws -> JSON {
        guard let recordName = caller.userRecordName else {
            throw ServiceError(.authenticationFailed, "users endpoints need a signed-in user")
        }
        return try await store.pool.read { db in
            switch endpoint {
            case .usersCaller:
                let me = try UserInfo.named(db, recordName: recordName)
                let identity = me?.identity ?? UserIdentity(lookupInfo: UserLookupInfo(userRecordName: recordName), userRecordName: recordName)
                // The identity's keys at the top level, as CloudKit JS reads it, and `users` beside
                // them, as the reference page shows it (SERVER.md).
                return CallerIdentityResponse(identity: identity).json
            case .usersDiscoverAll:
                // Everyone else on this server is in the caller's "address book".
                let all = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM user_info WHERE record_name <> ? ORDER BY name"), arguments: [recordName]).map(UserInfo.init)
                return ["users": .array(all.map(\.identity.json))]
            case .usersDiscover:
                let infos = try self.decodeList(body, "lookupInfos", UserLookupInfo.init(json:))
                let found = try infos.compactMap { try UserInfo.find(db, $0) }
                return ["users": .array(found.map(\.identity.json))]
            case .usersLookupEmail:
                let infos = try self.decodeList(body, "users", UserLookupInfo.init(json:))
                guard infos.allSatisfy({ $0.emailAddress != nil }) else { throw ServiceError.badRequest("each entry of users needs emailAddress") }
                return ["users": .array(try infos.compactMap { try UserInfo.find(db, $0)?.user(withEmail: true).json })]
            default:
                let infos = try self.decodeList(body, "users", UserLookupInfo.init(json:))
                guard infos.allSatisfy({ $0.userRecordName != nil }) else { throw ServiceError.badRequest("each entry of users needs userRecordName") }
                return ["users": .array(try infos.compactMap { try UserInfo.find(db, $0)?.user(withEmail: false).json })]
            }
        }
    }

    /// The array under `key` of a request body, each element decoded; BAD_REQUEST naming the place.
    func decodeList<T>(_ body: JSON, _ key: String, _ decode: (JSON) throws -> T) throws -> [T] {
        do {
            guard case .array(let items)? = try body.object()[key] else { throw ServiceError.badRequest("BadRequestException: missing \(key)") }
            try checkCount(items.count, key)
            return try items.enumerated().map { i, item in
                do { return try decode(item) } catch let error as JSONDecodingError {
                    throw ServiceError.badRequest("BadRequestException: \(key)[\(i)]: \(error.description)")
                }
            }
        } catch let error as JSONDecodingError {
            throw ServiceError.badRequest("BadRequestException: \(error.description)")
        }
    }
}
