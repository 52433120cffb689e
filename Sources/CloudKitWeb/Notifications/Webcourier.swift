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

    /// A webcourier URL as the inspector may show it, and the secrets it holds: its last path segment
    /// (this server's `/webcourier/1/{token}`) and its query's values (a token in the query, as other
    /// servers may send it) are the credential, each `<redacted>`.
    static func redactedWebcourierURL(_ url: String) -> (url: String, secrets: [String]) {
        let parts = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var base = String(parts[0])
        var secrets: [String] = []
        let schemeEnd = base.firstRange(of: "://").map(\.upperBound) ?? base.startIndex
        if let slash = base[schemeEnd...].lastIndex(of: "/"), base.index(after: slash) < base.endIndex {
            secrets.append(String(base[base.index(after: slash)...]))
            base = base[...slash] + Redactor.placeholder
        }
        guard parts.count > 1 else { return (base, secrets) }
        let query = parts[1].split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let value = pair[pair.index(after: equals)...]
            if !value.isEmpty { secrets.append(String(value)) }
            return pair[...equals] + (value.isEmpty ? "" : Redactor.placeholder)
        }
        return (base + "?" + query.joined(separator: "&"), secrets)
    }

    /// Apple's service or another server: how a push's unmarked `dbs` is read (`PushNotification.DatabaseNumbering`).
    public var pushOrigin: PushNotification.Origin {
        configuration.serverURL.lowercased() == CloudKitConfiguration.appleServerURL ? .appleService : .otherServer
    }
}
