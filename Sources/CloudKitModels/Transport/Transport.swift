#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
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
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// Sends one HTTP exchange. The real one is `AsyncHTTPTransport`; the local server provides an
/// in-process one; tests script their own. Throw `CloudKitError` with kind `.transport` or `.timeout`.
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
    /// Sends a request whose answer may be large (an asset download): a 2xx answer's body is handed to
    /// `body` piece by piece as it arrives, and the returned response's `body` is empty; any other
    /// answer comes back whole, as from `send`.
    func stream(_ request: HTTPRequest, body: @escaping @Sendable ([UInt8]) throws -> Void) async throws -> HTTPResponse
}

extension HTTPTransport {
    /// Transports that cannot stream hand the whole body over at once.
    public func stream(_ request: HTTPRequest, body: @escaping @Sendable ([UInt8]) throws -> Void) async throws -> HTTPResponse {
        var response = try await send(request)
        guard (200..<300).contains(response.status) else { return response }
        try body(response.body)
        response.body = []
        return response
    }
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
    /// The whole exchange, secrets redacted, when the client keeps them (`recordsExchanges`).
    public var exchange: RequestExchange?

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

/// One request and its answer as the request inspector shows them. Every token, web auth token and
/// signature is replaced by `<redacted>` before it is kept: in the URL's query, in headers, in bodies.
public struct RequestExchange: Sendable, Hashable {
    public struct Header: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// When it was sent (ms since 1970).
    public var at: Int64
    public var url: String
    public var requestHeaders: [Header]
    public var requestBody: String?
    public var responseHeaders: [Header]
    public var responseBody: String?
    /// Body bytes left out past `RequestExchange.bodyLimit` (request, response).
    public var omitted: (request: Int, response: Int) { (requestOmitted, responseOmitted) }
    public var requestOmitted = 0
    public var responseOmitted = 0

    /// Bodies are kept up to this many bytes each.
    public static let bodyLimit = 1 << 20

    public init(at: Int64, url: String, requestHeaders: [Header], requestBody: String?) {
        self.at = at
        self.url = url
        self.requestHeaders = requestHeaders
        self.requestBody = requestBody
        self.responseHeaders = []
    }

    /// Headers whose values are credentials.
    public static let secretHeaders: Set<String> = [
        "x-apple-cloudkit-request-signaturev1", "x-apple-cloudkit-web-auth-token", "x-apple-cloudkit-session", "authorization", "cookie",
        "set-cookie",
    ]

    /// A body as text, cut at `bodyLimit`, with `secrets` redacted.
    public static func text(_ bytes: [UInt8], secrets: [String]) -> (text: String, omitted: Int) {
        let kept = bytes.prefix(bodyLimit)
        return (Redactor.redact(String(decoding: kept, as: UTF8.self), secrets: secrets), bytes.count - kept.count)
    }

    public static func headers(_ headers: [(name: String, value: String)], secrets: [String]) -> [Header] {
        headers.map { header in
            secretHeaders.contains(header.name.lowercased())
                ? Header(name: header.name, value: Redactor.placeholder) : Header(name: header.name, value: Redactor.redact(header.value, secrets: secrets))
        }
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
