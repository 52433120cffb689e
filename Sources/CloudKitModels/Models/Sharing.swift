/// `NONE`, `READ_ONLY`, `READ_WRITE`, `UNKNOWN`.
public struct SharePermission: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `NONE`. (Not named `none`, which would read as a missing permission in optional contexts.)
    public static let noPermission: Self = "NONE"
    public static let readOnly: Self = "READ_ONLY"
    public static let readWrite: Self = "READ_WRITE"
    public static let unknown: Self = "UNKNOWN"
}

/// `OWNER`, `ADMINISTRATOR`, `USER`, `PUBLIC_USER`, `UNKNOWN`.
public struct ParticipantType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let owner: Self = "OWNER"
    public static let administrator: Self = "ADMINISTRATOR"
    public static let user: Self = "USER"
    public static let publicUser: Self = "PUBLIC_USER"
    public static let unknown: Self = "UNKNOWN"
}

/// `INVITED`, `ACCEPTED`, `REMOVED`, `UNKNOWN`.
public struct AcceptanceStatus: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let invited: Self = "INVITED"
    public static let accepted: Self = "ACCEPTED"
    public static let removed: Self = "REMOVED"
    public static let unknown: Self = "UNKNOWN"
}

/// Share Participant dictionary.
public struct ShareParticipant: JSONConvertible, Hashable {
    public var userIdentity: UserIdentity?
    public var permission: SharePermission?
    public var type: ParticipantType?
    public var acceptanceStatus: AcceptanceStatus?
    public var participantId: String?

    public init(
        userIdentity: UserIdentity? = nil, permission: SharePermission? = nil, type: ParticipantType? = nil,
        acceptanceStatus: AcceptanceStatus? = nil, participantId: String? = nil
    ) {
        self.userIdentity = userIdentity
        self.permission = permission
        self.type = type
        self.acceptanceStatus = acceptanceStatus
        self.participantId = participantId
    }

    public init(json: JSON) throws {
        let object = try json.object()
        userIdentity = try object.decode("userIdentity")
        permission = try object.decode("permission")
        type = try object.decode("type")
        acceptanceStatus = try object.decode("acceptanceStatus")
        participantId = try object.string("participantId")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("userIdentity", userIdentity)
        object.set("permission", permission)
        object.set("type", type)
        object.set("acceptanceStatus", acceptanceStatus)
        object.set("participantId", participantId)
        return .object(object)
    }
}

/// User Identity Lookup Info dictionary.
public struct UserLookupInfo: JSONConvertible, Hashable {
    public var emailAddress: String?
    public var phoneNumber: String?
    public var userRecordName: String?

    public init(emailAddress: String? = nil, phoneNumber: String? = nil, userRecordName: String? = nil) {
        self.emailAddress = emailAddress
        self.phoneNumber = phoneNumber
        self.userRecordName = userRecordName
    }

    public init(json: JSON) throws {
        let object = try json.object()
        emailAddress = try object.string("emailAddress")
        phoneNumber = try object.string("phoneNumber")
        userRecordName = try object.string("userRecordName")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("emailAddress", emailAddress)
        object.set("phoneNumber", phoneNumber)
        object.set("userRecordName", userRecordName)
        return .object(object)
    }
}

/// Name Components dictionary. `phoneticRepresentation` is itself a name-components dictionary.
public struct NameComponents: JSONConvertible, Hashable {
    public var namePrefix: String?
    public var givenName: String?
    public var middleName: String?
    public var familyName: String?
    public var nameSuffix: String?
    public var nickname: String?
    private var phonetic: [NameComponents]

    public var phoneticRepresentation: NameComponents? {
        get { phonetic.first }
        set { phonetic = newValue.map { [$0] } ?? [] }
    }

    public init(
        namePrefix: String? = nil, givenName: String? = nil, middleName: String? = nil, familyName: String? = nil,
        nameSuffix: String? = nil, nickname: String? = nil, phoneticRepresentation: NameComponents? = nil
    ) {
        self.namePrefix = namePrefix
        self.givenName = givenName
        self.middleName = middleName
        self.familyName = familyName
        self.nameSuffix = nameSuffix
        self.nickname = nickname
        self.phonetic = phoneticRepresentation.map { [$0] } ?? []
    }

    public init(json: JSON) throws {
        let object = try json.object()
        namePrefix = try object.string("namePrefix")
        givenName = try object.string("givenName")
        middleName = try object.string("middleName")
        familyName = try object.string("familyName")
        nameSuffix = try object.string("nameSuffix")
        nickname = try object.string("nickname")
        phonetic = try object.decode("phoneticRepresentation", as: NameComponents.self).map { [$0] } ?? []
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("namePrefix", namePrefix)
        object.set("givenName", givenName)
        object.set("middleName", middleName)
        object.set("familyName", familyName)
        object.set("nameSuffix", nameSuffix)
        object.set("nickname", nickname)
        object.set("phoneticRepresentation", phoneticRepresentation)
        return .object(object)
    }
}

/// User Identity dictionary.
public struct UserIdentity: JSONConvertible, Hashable {
    public var lookupInfo: UserLookupInfo?
    public var userRecordName: String?
    public var nameComponents: NameComponents?

    public init(lookupInfo: UserLookupInfo? = nil, userRecordName: String? = nil, nameComponents: NameComponents? = nil) {
        self.lookupInfo = lookupInfo
        self.userRecordName = userRecordName
        self.nameComponents = nameComponents
    }

    public init(json: JSON) throws {
        let object = try json.object()
        lookupInfo = try object.decode("lookupInfo")
        userRecordName = try object.string("userRecordName")
        nameComponents = try object.decode("nameComponents")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("lookupInfo", lookupInfo)
        object.set("userRecordName", userRecordName)
        object.set("nameComponents", nameComponents)
        return .object(object)
    }
}

/// User dictionary (users/current and the legacy lookups).
public struct User: JSONConvertible, Hashable {
    public var userRecordName: String
    public var firstName: String?
    public var lastName: String?
    public var emailAddress: String?

    public init(userRecordName: String, firstName: String? = nil, lastName: String? = nil, emailAddress: String? = nil) {
        self.userRecordName = userRecordName
        self.firstName = firstName
        self.lastName = lastName
        self.emailAddress = emailAddress
    }

    public init(json: JSON) throws {
        let object = try json.object()
        userRecordName = try at("userRecordName") { try object.required("userRecordName").string() }
        firstName = try object.string("firstName")
        lastName = try object.string("lastName")
        emailAddress = try object.string("emailAddress")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("userRecordName", userRecordName)
        object.set("firstName", firstName)
        object.set("lastName", lastName)
        object.set("emailAddress", emailAddress)
        return .object(object)
    }
}

/// ShortGUID dictionary (input to records/resolve and records/accept).
public struct ShortGUID: JSONConvertible, Hashable {
    public var value: String
    public var shouldFetchRootRecord: Bool
    public var rootRecordDesiredKeys: [String]?

    public init(value: String, shouldFetchRootRecord: Bool = false, rootRecordDesiredKeys: [String]? = nil) {
        self.value = value
        self.shouldFetchRootRecord = shouldFetchRootRecord
        self.rootRecordDesiredKeys = rootRecordDesiredKeys
    }

    public init(json: JSON) throws {
        let object = try json.object()
        value = try at("value") { try object.required("value").string() }
        // The reference page marks it required; CloudKit JS 2.6.4 sends `{"value": …}` alone, so it
        // defaults to false (reference §11.1: Apple's client wins).
        shouldFetchRootRecord = try object.bool("shouldFetchRootRecord") ?? false
        rootRecordDesiredKeys = try object.strings("rootRecordDesiredKeys")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("value", value)
        object.set("shouldFetchRootRecord", shouldFetchRootRecord)
        object.set("rootRecordDesiredKeys", rootRecordDesiredKeys)
        return .object(object)
    }
}

/// ShortGUID Result dictionary (records/resolve, records/accept).
public struct ShortGUIDResult: JSONConvertible, Hashable {
    public struct PotentialMatch: JSONConvertible, Hashable {
        public var participantId: String?
        public var emailAddress: String?
        public var phoneNumber: String?

        public init(participantId: String? = nil, emailAddress: String? = nil, phoneNumber: String? = nil) {
            self.participantId = participantId
            self.emailAddress = emailAddress
            self.phoneNumber = phoneNumber
        }

        public init(json: JSON) throws {
            let object = try json.object()
            participantId = try object.string("participantId")
            let contact = try object.value("contactInformation").map { v in try at("contactInformation") { try v.object() } }
            emailAddress = try contact?.string("emailAddress")
            phoneNumber = try contact?.string("phoneNumber")
        }

        public var json: JSON {
            var object = JSONObject()
            object.set("participantId", participantId)
            if emailAddress != nil || phoneNumber != nil {
                var contact = JSONObject()
                contact.set("emailAddress", emailAddress)
                contact.set("phoneNumber", phoneNumber)
                object.set("contactInformation", JSON.object(contact))
            }
            return .object(object)
        }
    }

    public var containerIdentifier: String?
    /// `PRIVATE` or `SHARED`.
    public var databaseScope: String?
    public var rootRecordName: String?
    public var ownerIdentity: UserIdentity?
    public var environment: String?
    public var rootRecord: Record?
    public var zoneID: ZoneID?
    public var share: Record?
    public var shortGUID: String?
    public var potentialMatchList: [PotentialMatch]?
    public var participantPermission: SharePermission?
    public var participantStatus: AcceptanceStatus?
    public var participantType: ParticipantType?
    public var webpageURL: String?

    public init() {}

    public init(json: JSON) throws {
        let object = try json.object()
        containerIdentifier = try object.string("containerIdentifier")
        databaseScope = try object.string("databaseScope")
        rootRecordName = try object.string("rootRecordName")
        ownerIdentity = try object.decode("ownerIdentity")
        environment = try object.string("environment")
        rootRecord = try object.decode("rootRecord")
        zoneID = try object.decode("zoneID")
        share = try object.decode("share")
        shortGUID = try object.string("shortGUID")
        potentialMatchList = try object.decodeArray("potentialMatchList")
        participantPermission = try object.decode("participantPermission")
        participantStatus = try object.decode("participantStatus")
        participantType = try object.decode("participantType")
        webpageURL = try object.string("webpageURL")
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("containerIdentifier", containerIdentifier)
        object.set("databaseScope", databaseScope)
        object.set("rootRecordName", rootRecordName)
        object.set("ownerIdentity", ownerIdentity)
        object.set("environment", environment)
        object.set("rootRecord", rootRecord)
        object.set("zoneID", zoneID)
        object.set("share", share)
        object.set("shortGUID", shortGUID)
        object.set("potentialMatchList", potentialMatchList)
        object.set("participantPermission", participantPermission)
        object.set("participantStatus", participantStatus)
        object.set("participantType", participantType)
        object.set("webpageURL", webpageURL)
        return .object(object)
    }
}
