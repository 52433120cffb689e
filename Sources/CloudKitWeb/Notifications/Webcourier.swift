#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CloudKitClient {
    /// One GET of a `webcourierURL` (from `tokens/create`). No CloudKit authentication is added; the
    /// URL is the credential, so it never appears in errors or the request log. An explicit `:443`
    /// is removed, as clients of the live service do.
    public func pollWebcourier(_ url: String, timeout: Double = 90) async throws -> WebcourierAnswer {
        let cleaned = url.replacing(":443/", with: "/")
        let started = Date()
        let response: HTTPResponse
        do {
            response = try await transport.send(HTTPRequest(method: .get, url: cleaned, timeout: timeout))
        } catch let error as CloudKitError {
            throw CloudKitError(kind: error.kind, operation: "webcourier", reason: error.kind == .timeout ? "no answer within \(Int(timeout)) s" : "the long-poll connection failed")
        } catch {
            throw CloudKitError(kind: .transport, operation: "webcourier", reason: "the long-poll connection failed")
        }
        var record = RequestRecord(method: .get, operation: "webcourier", database: nil, status: response.status, serverErrorCode: nil,
                                   duration: Date().timeIntervalSince(started), bytesSent: 0, bytesReceived: response.body.count, attempt: 1)
        if configuration.recordsExchanges {
            // The inspector shows the poll as it shows every request (its time, the push's payload),
            // with the URL's credential, its token, redacted wherever it appears.
            let (shown, secrets) = Self.redactedWebcourierURL(cleaned)
            var exchange = RequestExchange(at: Int64(started.timeIntervalSince1970 * 1000), url: shown, requestHeaders: [], requestBody: nil)
            exchange.responseHeaders = RequestExchange.headers(response.headers, secrets: secrets)
            let kept = RequestExchange.text(response.body, secrets: secrets)
            exchange.responseBody = kept.text
            exchange.responseOmitted = kept.omitted
            record.exchange = exchange
        }
        observer?(record)
        guard (200..<300).contains(response.status) else {
            throw CloudKitError(kind: .server, operation: "webcourier", httpStatus: response.status,
                                reason: response.status == 404 ? "the push token is unknown to the server (create a new one)" : "HTTP \(response.status)")
        }
        let dropped = response.header("X-Ckbrowse-Dropped-Notifications").flatMap(Int.init) ?? 0
        guard !response.body.isEmpty, let json = try? JSON(parsing: response.body), let notification = try? PushNotification(payload: json, from: pushOrigin) else {
            return WebcourierAnswer(notification: nil, dropped: dropped)
        }
        return WebcourierAnswer(notification: notification, dropped: dropped)
    }

    /// A webcourier URL as the inspector may show it, and the secrets it holds. The URL is the
    /// credential, and where in it the token sits is the server's affair (this server's path ends in
    /// it; another may put it in the query or an earlier segment): only its scheme and host are shown,
    /// `https://host/<redacted>`. Its secrets, to redact wherever else they appear (the push's body):
    /// the path and query whole, each segment and each query value, as sent and percent-decoded.
    public static func redactedWebcourierURL(_ url: String) -> (url: String, secrets: [String]) {
        let schemeEnd = url.firstRange(of: "://").map(\.upperBound) ?? url.startIndex
        let pathStart = url[schemeEnd...].firstIndex { $0 == "/" || $0 == "?" } ?? url.endIndex
        let rest = String(url[pathStart...])
        guard !rest.isEmpty, rest != "/" else { return (url, []) }
        var secrets = [rest]
        for part in rest.split(whereSeparator: { "/?&=".contains($0) }) where part.count >= 4 {
            secrets.append(String(part))
            if let decoded = PercentEncoding.decode(part, plusAsSpace: false), decoded != String(part) { secrets.append(decoded) }
        }
        return (url[..<pathStart] + "/" + Redactor.placeholder, secrets)
    }

    /// The push credentials a tokens/create or tokens/register body holds (`apnsToken`, and the
    /// `webcourierURL` with its parts), for an exchange to redact: the URL is the long-poll's credential.
    public static func pushSecrets(in body: [UInt8]?) -> [String] {
        guard let body, let json = try? JSON(parsing: body) else { return [] }
        var secrets: [String] = []
        if case .string(let token)? = json["apnsToken"] { secrets.append(token) }
        if case .string(let url)? = json["webcourierURL"] { secrets += [url] + redactedWebcourierURL(url).secrets }
        return secrets
    }

    /// Apple's service or another server: how a push's unmarked `dbs` is read (`PushNotification.DatabaseNumbering`).
    public var pushOrigin: PushNotification.Origin {
        configuration.serverURL.lowercased() == CloudKitConfiguration.appleServerURL ? .appleService : .otherServer
    }
}
