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
        observer?(RequestRecord(method: .get, operation: "webcourier", database: nil, status: response.status, serverErrorCode: nil,
                                duration: Date().timeIntervalSince(started), bytesSent: 0, bytesReceived: response.body.count, attempt: 1))
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

    /// Apple's service or another server: how a push's unmarked `dbs` is read (`PushNotification.DatabaseNumbering`).
    public var pushOrigin: PushNotification.Origin {
        configuration.serverURL.lowercased() == CloudKitConfiguration.appleServerURL ? .appleService : .otherServer
    }
}
