/// An error from the CloudKit client: a server error with its `serverErrorCode` and `reason`, or a
/// transport, decoding or configuration failure.
///
/// Its `description` is one line a user can act on. It never contains a token, a key or a record
/// payload: server reasons pass through the client's redactor, and decoding errors name places, not values.
public struct CloudKitError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure. Open-ended so kinds can be added.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The service answered with an error dictionary (see `serverErrorCode`).
        public static let server = Kind("server")
        /// The connection failed or was dropped.
        public static let transport = Kind("transport")
        /// No answer within the timeout.
        public static let timeout = Kind("timeout")
        /// The answer was not the JSON the reference describes.
        public static let invalidResponse = Kind("invalid response")
        /// A change feed said `moreComing` but its token did not advance.
        public static let stalledPaging = Kind("stalled paging")
        /// The request cannot be sent as configured (wrong database for the endpoint, too many operations…).
        public static let invalidRequest = Kind("invalid request")
        /// A server-to-server key file could not be used.
        public static let keyFile = Kind("key file")
        public static let cancelled = Kind("cancelled")
        /// A local file (an asset being uploaded or downloaded) could not be read or written.
        public static let file = Kind("file")
    }

    public var kind: Kind
    /// The endpoint, e.g. `records/modify`.
    public var operation: String?
    public var httpStatus: Int?
    public var serverErrorCode: ServerErrorCode?
    public var reason: String?
    public var uuid: String?
    /// Seconds to wait before retrying, as the server suggested.
    public var retryAfter: Double?
    /// With AUTHENTICATION_REQUIRED: where the user signs in.
    public var redirectURL: String?

    public init(
        kind: Kind, operation: String? = nil, httpStatus: Int? = nil, serverErrorCode: ServerErrorCode? = nil,
        reason: String? = nil, uuid: String? = nil, retryAfter: Double? = nil, redirectURL: String? = nil
    ) {
        self.kind = kind
        self.operation = operation
        self.httpStatus = httpStatus
        self.serverErrorCode = serverErrorCode
        self.reason = reason
        self.uuid = uuid
        self.retryAfter = retryAfter
        self.redirectURL = redirectURL
    }

    package init(server info: ServerErrorInfo, operation: String?, httpStatus: Int?) {
        self.init(
            kind: .server, operation: operation, httpStatus: httpStatus, serverErrorCode: info.serverErrorCode,
            reason: info.reason, uuid: info.uuid, retryAfter: info.retryAfter, redirectURL: info.redirectURL)
    }

    public var isAuthenticationRequired: Bool { serverErrorCode == .authenticationRequired }

    public var description: String {
        var parts: [String] = []
        if let operation { parts.append(operation + ":") }
        if let code = serverErrorCode {
            parts.append(code.rawValue)
        } else {
            parts.append(kind.rawValue)
        }
        if let httpStatus { parts.append("(HTTP \(httpStatus))") }
        var line = parts.joined(separator: " ")
        if let reason, !reason.isEmpty { line += " — " + reason }
        if let hint { line += ". " + hint }
        if let uuid { line += " [request \(uuid)]" }
        return line
    }

    /// What the user can do about it.
    public var hint: String? {
        switch serverErrorCode {
        case .authenticationRequired?:
            if let redirectURL { return "Sign in at \(redirectURL), then pass the web auth token" }
            return "This needs a signed-in user: pass a web auth token"
        case .authenticationFailed?: return "Check the API token or server-to-server key for this container"
        case .conflict?: return "The record changed on the server: fetch it again"
        case .throttled?, .tryAgainLater?:
            if let retryAfter { return "Retry after \(Self.format(seconds: retryAfter))" }
            return "Retry later"
        case .zoneNotFound?: return "The zone does not exist in this database"
        default: break
        }
        if kind == .stalledPaging { return "The server repeated its sync token; stopping instead of looping" }
        return nil
    }

    package static func format(seconds: Double) -> String {
        seconds.rounded() == seconds ? "\(Int(seconds)) s" : String(Double(Int(seconds * 10)) / 10) + " s"
    }

    /// A copy with every occurrence of the given secrets replaced by `<redacted>`.
    package func redacting(_ secrets: [String]) -> CloudKitError {
        guard !secrets.isEmpty else { return self }
        var copy = self
        copy.reason = reason.map { Redactor.redact($0, secrets: secrets) }
        copy.redirectURL = redirectURL.map { Redactor.redact($0, secrets: secrets) }
        return copy
    }
}

/// Replaces secrets (and their percent-encoded forms) in text meant for people or logs.
public enum Redactor {
    public static let placeholder = "<redacted>"

    public static func redact(_ text: String, secrets: [String]) -> String {
        var result = text
        for secret in secrets where secret.count >= 4 {
            for form in Set([secret, PercentEncoding.encodeQueryValue(secret)]) where result.contains(form) {
                result = result.replacing(form, with: placeholder)
            }
        }
        return result
    }
}
