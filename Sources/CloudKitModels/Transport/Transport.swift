import Foundation

/// An HTTP request as the client hands it to a transport.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// Absolute URL including the query string.
    public var url: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]?
    /// Seconds before the transport gives up.
    public var timeout: Double

    public init(method: HTTPMethod, url: String, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil, timeout: Double = 30) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// The path without scheme, host or query: what server-to-server signatures cover.
    public var path: String { URLParts(url).path }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// An HTTP response as a transport returns it.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// Sends one HTTP exchange. The real one is `AsyncHTTPTransport`; the local server provides an
/// in-process one; tests script their own. Throw `CloudKitError` with kind `.transport` or `.timeout`.
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// Waits between retries. Injected so tests run without real sleeps.
public protocol RetrySleeper: Sendable {
    func sleep(seconds: Double) async throws
}

/// Sleeps with `Task.sleep`.
public struct TaskSleeper: RetrySleeper {
    public init() {}
    public func sleep(seconds: Double) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
    }
}

/// When and how often to retry THROTTLED, TRY_AGAIN_LATER and HTTP 503 answers.
public struct RetryPolicy: Sendable, Hashable {
    /// Total attempts including the first.
    public var maximumAttempts: Int
    /// Backoff without `retryAfter`: base × 2^(attempt-1), capped at `maximumDelay`.
    public var baseDelay: Double
    public var maximumDelay: Double
    /// A `retryAfter` longer than this is not waited for: the error goes to the caller.
    public var maximumRetryAfter: Double

    public init(maximumAttempts: Int = 4, baseDelay: Double = 0.5, maximumDelay: Double = 8, maximumRetryAfter: Double = 60) {
        self.maximumAttempts = maximumAttempts
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
    }

    public static let none = RetryPolicy(maximumAttempts: 1)

    /// The wait before attempt `attempt + 1`, or nil to give up.
    public func delay(afterAttempt attempt: Int, retryAfter: Double?) -> Double? {
        guard attempt < maximumAttempts else { return nil }
        if let retryAfter {
            return retryAfter <= maximumRetryAfter ? max(0, retryAfter) : nil
        }
        return min(maximumDelay, baseDelay * Double(1 << min(attempt - 1, 20)))
    }
}

/// One exchange as the debug pane and logs see it: no query string, no headers, no bodies.
public struct RequestRecord: Sendable, Hashable {
    public var method: HTTPMethod
    public var operation: String
    public var database: DatabaseScope?
    public var status: Int?
    public var serverErrorCode: ServerErrorCode?
    public var duration: Double
    public var bytesSent: Int
    public var bytesReceived: Int
    public var attempt: Int

    public init(
        method: HTTPMethod, operation: String, database: DatabaseScope?, status: Int?, serverErrorCode: ServerErrorCode?, duration: Double,
        bytesSent: Int, bytesReceived: Int, attempt: Int
    ) {
        self.method = method
        self.operation = operation
        self.database = database
        self.status = status
        self.serverErrorCode = serverErrorCode
        self.duration = duration
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.attempt = attempt
    }
}

/// Minimal URL splitting that does not depend on Foundation's URL parser quirks.
package struct URLParts {
    package var scheme: String
    package var host: String
    package var port: Int?
    package var path: String
    package var query: String?

    package init(_ url: String) {
        var rest = Substring(url)
        if let range = rest.firstRange(of: "://") {
            scheme = String(rest[..<range.lowerBound]).lowercased()
            rest = rest[range.upperBound...]
        } else {
            scheme = "http"
        }
        let hostEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let hostPort = rest[..<hostEnd]
        rest = rest[hostEnd...]
        if let colon = hostPort.lastIndex(of: ":"), !hostPort.hasSuffix("]") {
            host = String(hostPort[..<colon])
            port = Int(hostPort[hostPort.index(after: colon)...])
        } else {
            host = String(hostPort)
            port = nil
        }
        if let q = rest.firstIndex(of: "?") {
            path = String(rest[..<q])
            query = String(rest[rest.index(after: q)...])
        } else {
            path = String(rest)
            query = nil
        }
        if path.isEmpty { path = "/" }
    }
}
