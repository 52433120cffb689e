#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Logging

/// Where requests go.
public struct CloudKitConfiguration: Sendable, Hashable {
    public static let appleServerURL = "https://api.apple-cloudkit.com"

    /// Scheme and host (and port), without a trailing slash.
    public var serverURL: String
    /// Container ID, e.g. `iCloud.com.example.Notes`.
    public var container: String
    public var environment: CloudKitEnvironment
    /// Seconds before a request times out.
    public var requestTimeout: Double
    public var retryPolicy: RetryPolicy
    /// Keep each whole exchange (URL, headers, bodies; secrets redacted) in the request records the
    /// observer gets: the browser's request inspector. Off by default: it copies every body.
    public var recordsExchanges = false

    public init(
        serverURL: String = appleServerURL, container: String, environment: CloudKitEnvironment = .development,
        requestTimeout: Double = 30, retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        self.serverURL = serverURL.hasSuffix("/") ? String(serverURL.dropLast()) : serverURL
        self.container = container
        self.environment = environment
        self.requestTimeout = requestTimeout
        self.retryPolicy = retryPolicy
    }
}

/// The CloudKit Web Services client. Thread-safe; one per container and set of credentials.
///
/// ```swift
/// let client = CloudKitClient(configuration: .init(container: "iCloud.com.example.Notes"),
///                             credentials: .apiToken(token, webAuthToken: web),
///                             transport: AsyncHTTPTransport())
/// let zones = try await client.database(.private).listZones()
/// ```
public final class CloudKitClient: Sendable {
    public let configuration: CloudKitConfiguration
    let transport: any HTTPTransport
    let sleeper: any RetrySleeper
    let now: @Sendable () -> Date
    let logger: Logger
    let observer: (@Sendable (RequestRecord) -> Void)?
    let session: SessionState

    /// - Parameters:
    ///   - sleeper: waits between retries (inject a recording one in tests).
    ///   - now: the clock for server-to-server signature dates.
    ///   - logger: receives one debug line per exchange (no tokens, no bodies).
    ///   - observer: called after every exchange, e.g. for a debug pane.
    ///   - onWebAuthTokenRotated: called with each replacement web auth token, so it can be persisted.
    public init(
        configuration: CloudKitConfiguration, credentials: Credentials, transport: any HTTPTransport,
        sleeper: any RetrySleeper = TaskSleeper(), now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "ckbrowse.cloudkit", factory: { _ in SwiftLogNoOpLogHandler() }),
        observer: (@Sendable (RequestRecord) -> Void)? = nil,
        onWebAuthTokenRotated: (@Sendable (String) -> Void)? = nil
    ) {
        self.configuration = configuration
        self.transport = transport
        self.sleeper = sleeper
        self.now = now
        self.logger = logger
        self.observer = observer
        self.session = SessionState(credentials: credentials, onRotate: onWebAuthTokenRotated)
    }

    /// Endpoints of one database.
    public func database(_ scope: DatabaseScope) -> CloudKitDatabase {
        CloudKitDatabase(client: self, scope: scope)
    }

    /// The newest web auth token (after rotations), if any.
    public var webAuthToken: String? {
        get async { await session.webAuthToken }
    }

    /// Replaces the web auth token (e.g. after the user signed in).
    public func setWebAuthToken(_ token: String?) async {
        await session.setWebAuthToken(token)
    }

    /// `tokens/create`: a push token for this container and a `webcourierURL` to long-poll.
    public func createToken(apnsEnvironment: CloudKitEnvironment) async throws -> APNsToken {
        let answer = try await perform(.tokensCreate, database: .public, body: APNsToken(apnsEnvironment: apnsEnvironment.rawValue).json)
        return try decode(APNsToken.self, answer.json, .tokensCreate)
    }

    /// `tokens/register`: attach an existing APNs token to this container.
    public func registerToken(_ token: APNsToken) async throws {
        _ = try await perform(.tokensRegister, database: .public, body: token.json)
    }

    // MARK: - The exchange

    /// Sends one request, retrying THROTTLED / TRY_AGAIN_LATER / 503 as the policy allows, and returns
    /// the decoded JSON body. `itemErrorsOn400`: records/modify answers a failed atomic batch with
    /// HTTP 400 and a `records` array, which is a result, not a request-level error.
    func perform(
        _ endpoint: Endpoint, database: DatabaseScope, body: JSON?, itemErrorsOn400: Bool = false
    ) async throws -> (status: Int, json: JSON) {
        if !endpoint.isDevicePath && !endpoint.databases.contains(database) {
            throw CloudKitError(
                kind: .invalidRequest, operation: endpoint.operation,
                reason: "\(endpoint.operation) is not available in the \(database.rawValue) database")
        }
        let bodyBytes = body.map(\.bytes)
        var attempt = 0
        while true {
            attempt += 1
            let (status, json, error) = try await exchange(
                endpoint, database: database, body: bodyBytes, attempt: attempt, itemErrorsOn400: itemErrorsOn400)
            if let json { return (status, json) }
            let failure = error!
            // Only answers that prove the request was refused as a whole are retried, so a records/modify
            // is never applied twice.
            let retryable = failure.serverErrorCode?.isRetryable == true || failure.httpStatus == 503
            if retryable, let delay = configuration.retryPolicy.delay(afterAttempt: attempt, retryAfter: failure.retryAfter) {
                logger.debug("retrying \(endpoint.operation) in \(delay) s after \(failure.serverErrorCode?.rawValue ?? "HTTP \(failure.httpStatus ?? 0)")")
                try await sleeper.sleep(seconds: delay)
                continue
            }
            throw failure
        }
    }

    private func exchange(
        _ endpoint: Endpoint, database: DatabaseScope, body: [UInt8]?, attempt: Int, itemErrorsOn400: Bool
    ) async throws -> (Int, JSON?, CloudKitError?) {
        let path = endpoint.path(container: configuration.container, environment: configuration.environment, database: database)
        let credentials = await session.snapshot()
        var headers: [(name: String, value: String)] = []
        var url = configuration.serverURL + path
        switch credentials.credentials {
        case .apiToken(let apiToken, _):
            url += "?ckAPIToken=" + PercentEncoding.encodeQueryValue(apiToken)
            if let web = credentials.webAuthToken {
                url += "&ckWebAuthToken=" + PercentEncoding.encodeQueryValue(web)
            }
        case .serverToServer(let key):
            do {
                for header in try key.headers(date: now(), body: body, subpath: path) {
                    headers.append((name: header.0, value: header.1))
                }
            } catch {
                throw CloudKitError(kind: .keyFile, operation: endpoint.operation, reason: "signing failed")
            }
        }
        if body != nil { headers.append((name: "Content-Type", value: "application/json")) }
        let request = HTTPRequest(method: endpoint.method, url: url, headers: headers, body: body, timeout: configuration.requestTimeout)

        let started = DispatchTime.now().uptimeNanoseconds
        var record = RequestRecord(
            method: endpoint.method, operation: endpoint.operation, database: endpoint.isDevicePath ? nil : database,
            status: nil, serverErrorCode: nil, duration: 0, bytesSent: body?.count ?? 0, bytesReceived: 0,
            attempt: attempt)
        // tokens/create and tokens/register carry the long-poll's credential (the push token, the
        // webcourier URL) in their bodies: redacted in their exchanges too.
        let pushSecrets = configuration.recordsExchanges && endpoint.isDevicePath ? CloudKitClient.pushSecrets(in: body) : []
        if configuration.recordsExchanges {
            let secrets = credentials.secrets + [credentials.webAuthToken].compactMap { $0 } + pushSecrets
            let sent = body.map { RequestExchange.text($0, secrets: secrets) }
            var exchange = RequestExchange(
                at: Int64(Date().timeIntervalSince1970 * 1000), url: Redactor.redact(url, secrets: secrets),
                requestHeaders: RequestExchange.headers(headers, secrets: secrets), requestBody: sent?.text)
            exchange.requestOmitted = sent?.omitted ?? 0
            record.exchange = exchange
        }
        var answered: HTTPResponse?
        func finish(_ status: Int?, _ code: ServerErrorCode?, _ received: Int) {
            if var exchange = record.exchange, let answered {
                let secrets = credentials.secrets + [credentials.webAuthToken].compactMap { $0 }
                    + [answered.header("X-Apple-CloudKit-Web-Auth-Token")].compactMap { $0 }
                    + pushSecrets + (endpoint.isDevicePath ? CloudKitClient.pushSecrets(in: answered.body) : [])
                exchange.responseHeaders = RequestExchange.headers(answered.headers, secrets: secrets)
                let kept = RequestExchange.text(answered.body, secrets: secrets)
                exchange.responseBody = kept.text
                exchange.responseOmitted = kept.omitted
                record.exchange = exchange
            }
            record.status = status
            record.serverErrorCode = code
            record.bytesReceived = received
            record.duration = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            logger.debug(
                "\(record.method.rawValue) \(record.operation) → \(status.map(String.init) ?? "failed") \(code?.rawValue ?? "") in \(Int(record.duration * 1000)) ms, \(record.bytesSent)/\(record.bytesReceived) bytes")
            observer?(record)
        }

        let response: HTTPResponse
        do {
            response = try await transport.send(request)
            answered = response
        } catch var error as CloudKitError {
            finish(nil, nil, 0)
            error.operation = endpoint.operation
            throw error.redacting(credentials.secrets)
        } catch {
            finish(nil, nil, 0)
            throw CloudKitError(kind: .transport, operation: endpoint.operation, reason: "request failed").redacting(credentials.secrets)
        }

        // Adopt a rotated web auth token, on errors too (the service sends it with 429 and 500).
        if let rotated = response.header("X-Apple-CloudKit-Web-Auth-Token") ?? response.header("X-Apple-CloudKit-Session"),
            !rotated.isEmpty
        {
            await session.adopt(rotated)
        }
        let secrets = credentials.secrets + [await session.webAuthToken].compactMap { $0 }

        let json: JSON?
        do {
            json = response.body.isEmpty ? nil : try JSON(parsing: response.body)
        } catch {
            finish(response.status, nil, response.body.count)
            if response.status == 503 || response.status == 429 {
                return (response.status, nil, CloudKitError(kind: .server, operation: endpoint.operation, httpStatus: response.status, reason: "service unavailable"))
            }
            let what = (200..<300).contains(response.status) ? "malformed JSON" : "a non-JSON answer"
            throw CloudKitError(
                kind: .invalidResponse, operation: endpoint.operation, httpStatus: response.status,
                reason: "\(what) (\(response.body.count) bytes): \((error as? JSONDecodingError)?.description ?? "unreadable")")
        }

        if (200..<300).contains(response.status) {
            finish(response.status, nil, response.body.count)
            guard let json else {
                // tokens/register may answer with an empty body.
                return (response.status, .object([:]), nil)
            }
            return (response.status, json, nil)
        }
        if itemErrorsOn400, response.status == 400, let json, json["records"] != nil, json["serverErrorCode"] == nil {
            finish(response.status, .atomicError, response.body.count)
            return (response.status, json, nil)
        }
        if let json, case .object(let object) = json, object["serverErrorCode"] != nil,
            let info = try? ServerErrorInfo(object: object)
        {
            finish(response.status, info.serverErrorCode, response.body.count)
            let error = CloudKitError(server: info, operation: endpoint.operation, httpStatus: response.status)
            return (response.status, nil, error.redacting(secrets))
        }
        finish(response.status, nil, response.body.count)
        let reason: String
        switch response.status {
        case 404: reason = "no such endpoint"
        case 405: reason = "method not allowed" + (response.header("Allow").map { " (allowed: \($0))" } ?? "")
        default: reason = "unexpected answer without an error dictionary"
        }
        return (response.status, nil, CloudKitError(kind: .server, operation: endpoint.operation, httpStatus: response.status, reason: reason))
    }

    func decode<T: JSONConvertible>(_ type: T.Type, _ json: JSON, _ endpoint: Endpoint) throws -> T {
        do {
            return try T(json: json)
        } catch let error as JSONDecodingError {
            throw CloudKitError(kind: .invalidResponse, operation: endpoint.operation, reason: error.description)
        }
    }
}

/// The mutable part of authentication: the newest web auth token.
actor SessionState {
    let credentials: Credentials
    private(set) var webAuthToken: String?
    private var previousTokens: [String] = []
    let onRotate: (@Sendable (String) -> Void)?

    init(credentials: Credentials, onRotate: (@Sendable (String) -> Void)?) {
        self.credentials = credentials
        if case .apiToken(_, let web) = credentials { webAuthToken = web }
        self.onRotate = onRotate
    }

    struct Snapshot {
        var credentials: Credentials
        var webAuthToken: String?
        var secrets: [String]
    }

    func snapshot() -> Snapshot {
        Snapshot(credentials: credentials, webAuthToken: webAuthToken, secrets: credentials.secrets + previousTokens + [webAuthToken].compactMap { $0 })
    }

    func adopt(_ token: String) {
        guard token != webAuthToken, case .apiToken = credentials else { return }
        if let old = webAuthToken { previousTokens = Array((previousTokens + [old]).suffix(8)) }
        webAuthToken = token
        onRotate?(token)
    }

    func setWebAuthToken(_ token: String?) {
        if let old = webAuthToken { previousTokens = Array((previousTokens + [old]).suffix(8)) }
        webAuthToken = token
    }
}
