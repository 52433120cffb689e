/// A CloudKit `serverErrorCode`. Open-ended: codes a newer server invents decode and compare by value.
///
/// ```swift
/// switch error.serverErrorCode { case .conflict?: refetch(); default: break }
/// ```
public struct ServerErrorCode: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let accessDenied: Self = "ACCESS_DENIED"
    public static let atomicError: Self = "ATOMIC_ERROR"
    public static let authenticationFailed: Self = "AUTHENTICATION_FAILED"
    public static let authenticationRequired: Self = "AUTHENTICATION_REQUIRED"
    public static let badRequest: Self = "BAD_REQUEST"
    public static let conflict: Self = "CONFLICT"
    public static let exists: Self = "EXISTS"
    public static let internalError: Self = "INTERNAL_ERROR"
    public static let notFound: Self = "NOT_FOUND"
    public static let quotaExceeded: Self = "QUOTA_EXCEEDED"
    public static let throttled: Self = "THROTTLED"
    public static let tryAgainLater: Self = "TRY_AGAIN_LATER"
    public static let validatingReferenceError: Self = "VALIDATING_REFERENCE_ERROR"
    public static let zoneNotFound: Self = "ZONE_NOT_FOUND"
    /// Listed by CloudKit JS only; HTTP status unconfirmed (409 assumed).
    public static let uniqueFieldError: Self = "UNIQUE_FIELD_ERROR"
    /// Not in Apple's table; one client handles it for an expired sync token (unconfirmed).
    public static let changeTokenExpired: Self = "CHANGE_TOKEN_EXPIRED"

    /// The 14 codes of Apple's reference table.
    public static let documented: [ServerErrorCode] = [
        .accessDenied, .atomicError, .authenticationFailed, .authenticationRequired, .badRequest, .conflict,
        .exists, .internalError, .notFound, .quotaExceeded, .throttled, .tryAgainLater,
        .validatingReferenceError, .zoneNotFound,
    ]

    /// The HTTP status the service sends with this code as a request-level error (reference §5.1).
    public var httpStatus: Int {
        switch self {
        case .accessDenied: return 403
        case .atomicError, .badRequest: return 400
        case .authenticationFailed: return 401
        case .authenticationRequired: return 421
        case .conflict, .exists, .uniqueFieldError: return 409
        case .notFound, .zoneNotFound: return 404
        case .quotaExceeded: return 413
        case .throttled: return 429
        case .tryAgainLater: return 503
        case .validatingReferenceError: return 412
        default: return 500
        }
    }

    /// THROTTLED and TRY_AGAIN_LATER: the request may be sent again after a wait.
    public var isRetryable: Bool { self == .throttled || self == .tryAgainLater }

    public static func ~= (pattern: ServerErrorCode, value: ServerErrorCode?) -> Bool { value == pattern }
}

/// The error keys every CloudKit error dictionary shares (top level, record, zone, subscription).
public struct ServerErrorInfo: Sendable, Hashable {
    public var serverErrorCode: ServerErrorCode
    public var reason: String?
    public var uuid: String?
    /// Suggested wait in seconds; absent means the operation cannot be retried.
    public var retryAfter: Double?
    /// Only with AUTHENTICATION_REQUIRED: where the user signs in.
    public var redirectURL: String?

    public init(
        serverErrorCode: ServerErrorCode, reason: String? = nil, uuid: String? = nil, retryAfter: Double? = nil,
        redirectURL: String? = nil
    ) {
        self.serverErrorCode = serverErrorCode
        self.reason = reason
        self.uuid = uuid
        self.retryAfter = retryAfter
        self.redirectURL = redirectURL
    }

    package init(object: JSONObject) throws {
        serverErrorCode = try at("serverErrorCode") { try ServerErrorCode(json: try object.required("serverErrorCode")) }
        reason = try object.string("reason")
        uuid = try object.string("uuid")
        retryAfter = try object.double("retryAfter")
        redirectURL = try object.string("redirectURL")
    }

    package func write(into object: inout JSONObject) {
        object.set("serverErrorCode", serverErrorCode)
        object.set("reason", reason)
        object.set("uuid", uuid)
        object.set("retryAfter", retryAfter.map(Self.numberJSON))
        object.set("redirectURL", redirectURL)
    }

    static func numberJSON(_ d: Double) -> JSON {
        d.rounded() == d && abs(d) < 1e15 ? .int(Int64(d)) : .double(d)
    }
}

/// The top-level error dictionary: the whole request failed.
public struct ErrorResponse: JSONConvertible, Hashable {
    public var info: ServerErrorInfo
    public init(_ info: ServerErrorInfo) { self.info = info }
    public init(json: JSON) throws { info = try ServerErrorInfo(object: json.object()) }
    public var json: JSON {
        var object = JSONObject()
        object.set("uuid", info.uuid)
        object.set("serverErrorCode", info.serverErrorCode)
        object.set("reason", info.reason)
        object.set("retryAfter", info.retryAfter.map(ServerErrorInfo.numberJSON))
        object.set("redirectURL", info.redirectURL)
        return .object(object)
    }
}

/// Record Fetch Error dictionary: one failed item inside `records`.
public struct RecordError: JSONConvertible, Hashable {
    public var recordName: String?
    public var info: ServerErrorInfo
    public var serverErrorCode: ServerErrorCode { info.serverErrorCode }
    public var reason: String? { info.reason }

    public init(recordName: String?, info: ServerErrorInfo) {
        self.recordName = recordName
        self.info = info
    }

    public init(json: JSON) throws {
        let object = try json.object()
        recordName = try object.string("recordName")
        info = try ServerErrorInfo(object: object)
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("recordName", recordName)
        info.write(into: &object)
        return .object(object)
    }
}

/// Zone Fetch Error dictionary (also the per-zone error of changes/zone).
public struct ZoneError: JSONConvertible, Hashable {
    public var zoneID: ZoneID?
    public var info: ServerErrorInfo
    public var serverErrorCode: ServerErrorCode { info.serverErrorCode }
    public var reason: String? { info.reason }

    public init(zoneID: ZoneID?, info: ServerErrorInfo) {
        self.zoneID = zoneID
        self.info = info
    }

    public init(json: JSON) throws {
        let object = try json.object()
        zoneID = try object.decode("zoneID")
        info = try ServerErrorInfo(object: object)
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("zoneID", zoneID)
        info.write(into: &object)
        return .object(object)
    }
}

/// Subscription Fetch Error dictionary.
public struct SubscriptionError: JSONConvertible, Hashable {
    public var subscriptionID: String?
    public var info: ServerErrorInfo
    public var serverErrorCode: ServerErrorCode { info.serverErrorCode }
    public var reason: String? { info.reason }

    public init(subscriptionID: String?, info: ServerErrorInfo) {
        self.subscriptionID = subscriptionID
        self.info = info
    }

    public init(json: JSON) throws {
        let object = try json.object()
        subscriptionID = try object.string("subscriptionID")
        info = try ServerErrorInfo(object: object)
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("subscriptionID", subscriptionID)
        info.write(into: &object)
        return .object(object)
    }
}

extension JSON {
    /// Error items are told from successes by the presence of `serverErrorCode`.
    package var isErrorItem: Bool { self["serverErrorCode"] != nil }
}
