import CloudKitWeb

/// A request-level failure: rendered as the service's top-level error dictionary with the HTTP status
/// of the reference (Hummingbird's pattern: handlers just throw).
public struct ServiceError: Error, Sendable, CustomStringConvertible {
    public internal(set) var code: ServerErrorCode
    public internal(set) var reason: String
    var status: Int
    var redirectURL: String?
    var retryAfter: Double?
    var extraHeaders: [(String, String)] = []

    init(_ code: ServerErrorCode, _ reason: String, status: Int? = nil, redirectURL: String? = nil) {
        self.code = code
        self.reason = reason
        self.status = status ?? code.httpStatus
        self.redirectURL = redirectURL
    }

    static func badRequest(_ reason: String) -> ServiceError { ServiceError(.badRequest, reason) }

    /// A failure nothing more specific describes (the details stay in the server, never in the answer).
    static let internalError = ServiceError(.internalError, "internal error")

    /// Any error as the answer's error: a `ServiceError` as it is, a JSON shape error as BAD_REQUEST
    /// naming the place, anything else as INTERNAL_ERROR.
    static func from(_ error: any Error) -> ServiceError {
        switch error {
        case let error as ServiceError: return error
        case let error as JSONDecodingError: return .badRequest("BadRequestException: \(error.description)")
        default: return .internalError
        }
    }

    public var description: String { "\(code.rawValue): \(reason)" }

    /// The one rendering of every error the server answers (Hummingbird's pattern: handlers just
    /// throw): CloudKit's error dictionary (`uuid`, `serverErrorCode`, `reason`, and `redirectURL`
    /// and `retryAfter` where set) with the reference's HTTP status, `X-Apple-Request-UUID`, and
    /// `Retry-After` or `Allow` where they apply.
    func response(uuid: String, extraHeaders more: [(String, String)] = []) -> ServerResponse {
        var object = JSONObject()
        object.set("uuid", uuid)
        object.set("serverErrorCode", code.rawValue)
        object.set("reason", reason)
        object.set("redirectURL", redirectURL)
        object.set("retryAfter", retryAfter)
        var headers: [(name: String, value: String)] = [
            (name: "Content-Type", value: "application/json; charset=UTF-8"), (name: "X-Apple-Request-UUID", value: uuid),
        ]
        if let retryAfter { headers.append((name: "Retry-After", value: String(Int(retryAfter.rounded(.up))))) }
        headers += (more + extraHeaders).map { (name: $0.0, value: $0.1) }
        return ServerResponse(status: status, headers: headers, body: JSON.object(object).bytes)
    }
}

/// A per-item failure inside a batch: becomes an error dictionary in the results array.
struct ItemError: Error, Sendable {
    var code: ServerErrorCode
    var reason: String
    init(_ code: ServerErrorCode, _ reason: String) {
        self.code = code
        self.reason = reason
    }
}

/// Thrown where work would grow with the data (a query reading every candidate of its type) while a
/// request is answered on the HTTP server's event loop (`RequestContext.boundedOnly`): the request
/// then takes the full path. Never reaches a client.
struct NotBoundedWork: Error {}
