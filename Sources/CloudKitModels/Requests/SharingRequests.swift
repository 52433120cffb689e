/// One result of records/resolve or records/accept: share metadata, or why that shortGUID failed.
public enum ShortGUIDResultItem: JSONConvertible, Hashable {
    case result(ShortGUIDResult)
    case failure(ShortGUIDError)

    public init(json: JSON) throws {
        self = json.isErrorItem ? .failure(try ShortGUIDError(json: json)) : .result(try ShortGUIDResult(json: json))
    }

    public var json: JSON {
        switch self {
        case .result(let result): return result.json
        case .failure(let error): return error.json
        }
    }
}

/// ShortGUID fetch error (§3.10): `reason`, `retryAfter`, `serverErrorCode` (and the shortGUID it is for).
public struct ShortGUIDError: JSONConvertible, Hashable {
    public var shortGUID: String?
    public var info: ServerErrorInfo
    public var serverErrorCode: ServerErrorCode { info.serverErrorCode }

    public init(shortGUID: String?, info: ServerErrorInfo) {
        self.shortGUID = shortGUID
        self.info = info
    }

    public init(json: JSON) throws {
        let object = try json.object()
        shortGUID = try object.string("shortGUID")
        info = try ServerErrorInfo(object: object)
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("shortGUID", shortGUID)
        info.write(into: &object)
        return .object(object)
    }
}

/// `{ "results": [ … ] }` of records/resolve and records/accept.
public struct ShortGUIDResponse: JSONConvertible, Hashable {
    public var results: [ShortGUIDResultItem]

    public init(results: [ShortGUIDResultItem]) { self.results = results }

    public init(json: JSON) throws {
        let object = try json.object()
        results = try at("results") { try object.required("results").decodeArray { try ShortGUIDResultItem(json: $0) } }
    }

    public var json: JSON { .object(["results": .array(results.map(\.json))]) }
}

/// `{ "users": [ <User Identity> … ] }` of users/caller and users/discover.
public struct UserIdentitiesResponse: JSONConvertible, Hashable {
    public var users: [UserIdentity]

    public init(users: [UserIdentity]) { self.users = users }

    public init(json: JSON) throws {
        let object = try json.object()
        users = try at("users") { try object.required("users").decodeArray { try UserIdentity(json: $0) } }
    }

    public var json: JSON { .object(["users": .array(users.map(\.json))]) }
}

/// The answer of users/caller, in both shapes clients read: the reference page's `{"users": [identity]}`
/// and CloudKit JS's, which takes the body itself as the identity (`userRecordName`, `nameComponents`,
/// `lookupInfo` at the top level: `fetchCurrentUserIdentity()`, `setUpAuth()`, Apple's samples).
/// Decoding reads the top-level keys when there are any, else `users[0]`; encoding writes both.
public struct CallerIdentityResponse: JSONConvertible, Hashable {
    public var identity: UserIdentity?

    public init(identity: UserIdentity?) { self.identity = identity }

    public init(json: JSON) throws {
        let object = try json.object()
        if object["userRecordName"] != nil || object["nameComponents"] != nil || object["lookupInfo"] != nil {
            identity = try UserIdentity(json: json)
        } else {
            identity = try UserIdentitiesResponse(json: json).users.first
        }
    }

    public var json: JSON {
        guard let identity, case .object(var object) = identity.json else { return .object(["users": .array([])]) }
        object.set("users", JSON.array([identity.json]))
        return .object(object)
    }
}

/// `{ "users": [ <User> … ] }` of the legacy users/lookup/email and users/lookup/id.
public struct UsersResponse: JSONConvertible, Hashable {
    public var users: [User]

    public init(users: [User]) { self.users = users }

    public init(json: JSON) throws {
        let object = try json.object()
        users = try at("users") { try object.required("users").decodeArray { try User(json: $0) } }
    }

    public var json: JSON { .object(["users": .array(users.map(\.json))]) }
}

extension ShareParticipant {
    /// A participant to invite, found by email (or phone, or user record name).
    public static func invite(_ lookupInfo: UserLookupInfo, permission: SharePermission) -> ShareParticipant {
        ShareParticipant(userIdentity: UserIdentity(lookupInfo: lookupInfo), permission: permission, type: .user, acceptanceStatus: .invited)
    }
}

extension Record {
    /// The name a zone-wide share record has (the native framework's `CKRecordNameZoneWideShare`).
    public static let zoneShareName = "cloudkit.zoneshare"

    /// A share record to create: of `root` (its name and change tag), or of its whole zone when
    /// `root` is nil.
    public static func share(of root: RecordLink?, recordName: String? = nil, publicPermission: SharePermission = .noPermission, participants: [ShareParticipant] = []) -> Record {
        var record = Record(recordName: recordName ?? (root == nil ? zoneShareName : "share-" + (root?.recordName ?? "")), recordType: shareRecordType)
        record.forRecord = root
        record.publicPermission = publicPermission
        record.participants = participants
        return record
    }
}
