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

    public var description: String { "\(code.rawValue): \(reason)" }
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
