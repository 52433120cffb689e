/// `development` or `production`.
public enum CloudKitEnvironment: String, Sendable, Hashable, CaseIterable, Codable {
    case development
    case production
}

/// `public`, `private` or `shared` (lower-case in URLs).
public enum DatabaseScope: String, Sendable, Hashable, CaseIterable, Codable {
    case `public`
    case `private`
    case shared

    /// The numeric scope in webcourier push payloads (`dbs`) as `ckbrowse serve` sends it: 0 public,
    /// 1 private, 2 shared. Public is 0 because Apple's own web client reads it so (CloudKit JS 1.x,
    /// 2.4.0 and 2.6.4: `isPublicDatabase = dbs === 0`). Private 1 and shared 2 are unconfirmed: no
    /// client we know tells them apart; they keep the native `CKDatabaseScope` order (public,
    /// private, shared) counted from CloudKit JS's 0. Servers before this numbering sent the native
    /// values 1, 2, 3 (see `PushNotification.DatabaseNumbering`).
    public var pushValue: Int {
        switch self {
        case .public: return 0
        case .private: return 1
        case .shared: return 2
        }
    }
}

public enum HTTPMethod: String, Sendable, Hashable {
    case get = "GET"
    case post = "POST"
    /// Only a CORS preflight uses it (a browser sends it; tests do too).
    case options = "OPTIONS"
}

/// A CloudKit Web Services endpoint: its path after the database segment, its method, and the
/// databases it accepts (reference §4.0).
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    public let operation: String
    public let method: HTTPMethod
    public let databases: Set<DatabaseScope>
    /// Under `/device/1/…` instead of `/database/1/…/{database}/` (APNs token endpoints).
    public let isDevicePath: Bool

    init(_ operation: String, _ method: HTTPMethod, _ databases: Set<DatabaseScope>, device: Bool = false) {
        self.operation = operation
        self.method = method
        self.databases = databases
        self.isDevicePath = device
    }

    public var description: String { operation }

    static let all: Set<DatabaseScope> = [.public, .private, .shared]
    static let userDatabases: Set<DatabaseScope> = [.private, .shared]

    public static let zonesList = Endpoint("zones/list", .get, all)
    public static let zonesLookup = Endpoint("zones/lookup", .post, all)
    public static let zonesModify = Endpoint("zones/modify", .post, [.private, .shared])
    public static let changesDatabase = Endpoint("changes/database", .post, userDatabases)
    public static let changesZone = Endpoint("changes/zone", .post, userDatabases)
    /// Deprecated (§4.12): the database's zone changes, with `metaSyncToken` for `syncToken`.
    public static let zonesChanges = Endpoint("zones/changes", .post, userDatabases)
    public static let recordsChanges = Endpoint("records/changes", .post, userDatabases)
    public static let recordsQuery = Endpoint("records/query", .post, all)
    public static let recordsLookup = Endpoint("records/lookup", .post, all)
    public static let recordsModify = Endpoint("records/modify", .post, all)
    public static let subscriptionsList = Endpoint("subscriptions/list", .get, all)
    public static let subscriptionsLookup = Endpoint("subscriptions/lookup", .post, all)
    public static let subscriptionsModify = Endpoint("subscriptions/modify", .post, all)
    /// Always on the `public` path segment.
    public static let usersCurrent = Endpoint("users/current", .get, [.public, .private])
    public static let usersCaller = Endpoint("users/caller", .get, [.public, .private])
    public static let usersDiscover = Endpoint("users/discover", .post, [.public, .private])
    public static let usersDiscoverAll = Endpoint("users/discover", .get, [.public, .private])
    public static let usersLookupEmail = Endpoint("users/lookup/email", .post, [.public, .private])
    public static let usersLookupID = Endpoint("users/lookup/id", .post, [.public, .private])
    /// Share metadata by shortGUID, and accepting shares: always on the `public` path (§4.7, §4.8).
    public static let recordsResolve = Endpoint("records/resolve", .post, [.public])
    public static let recordsAccept = Endpoint("records/accept", .post, [.public])
    public static let assetsUpload = Endpoint("assets/upload", .post, [.public, .private])
    public static let assetsRereference = Endpoint("assets/rereference", .post, [.public, .private])
    public static let tokensCreate = Endpoint("tokens/create", .post, [], device: true)
    public static let tokensRegister = Endpoint("tokens/register", .post, [], device: true)

    /// The URL path, e.g. `/database/1/iCloud.com.example.Notes/development/private/records/modify`.
    public func path(container: String, environment: CloudKitEnvironment, database: DatabaseScope) -> String {
        let container = PercentEncoding.encodePathSegment(container)
        if isDevicePath { return "/device/1/\(container)/\(environment.rawValue)/\(operation)" }
        return "/database/1/\(container)/\(environment.rawValue)/\(database.rawValue)/\(operation)"
    }
}

/// Percent-encoding as the service needs it: web auth tokens contain `+`, `/` and `=`, which must go
/// as `%2B`, `%2F`, `%3D` or the token is rejected.
public enum PercentEncoding {
    /// Keeps only RFC 3986 unreserved characters.
    public static func encodeQueryValue(_ value: String) -> String {
        var result = ""
        result.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            if isUnreserved(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + hex(byte)
            }
        }
        return result
    }

    public static func encodePathSegment(_ value: String) -> String { encodeQueryValue(value) }

    /// Decodes `%XX` escapes (and `+` as a space when `plusAsSpace`); nil for malformed input.
    public static func decode(_ value: Substring, plusAsSpace: Bool = false) -> String? {
        // Most values have nothing to decode (the server reads a request's tokens this way).
        if !value.utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusAsSpace && $0 == UInt8(ascii: "+")) }) { return String(value) }
        var bytes: [UInt8] = []
        var iterator = value.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let h = iterator.next(), let l = iterator.next(), let hi = hexValue(h), let lo = hexValue(l) else {
                    return nil
                }
                bytes.append(hi << 4 | lo)
            } else if plusAsSpace && byte == UInt8(ascii: "+") {
                bytes.append(0x20)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default: return false
        }
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".unicodeScalars)
        return String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xF)])
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
