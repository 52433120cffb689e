import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RecordBrowser

/// The Notifications pane's listener: a push token from tokens/create, then the webcourier long-poll
/// in a loop, for as long as its task runs. Empty (keep-alive) answers and timeouts poll again at once;
/// failures back off 1, 2, 4 … 60 s and are reported; an unknown token (404) gets a new one. After a
/// failure the token is registered again (tokens/register) before polling: that answers at once, so
/// the reconnect is known (and shown) without waiting out a long-poll's hold.
public struct NotificationListener: Sendable {
    public let client: CloudKitClient
    public var sleeper: any RetrySleeper
    /// Seconds one long-poll may take (the local server holds 60 s).
    public var pollTimeout: Double
    public var maximumBackoff: Double

    public init(client: CloudKitClient, sleeper: any RetrySleeper = TaskSleeper(), pollTimeout: Double = 120, maximumBackoff: Double = 60) {
        self.client = client
        self.sleeper = sleeper
        self.pollTimeout = pollTimeout
        self.maximumBackoff = maximumBackoff
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    public func run(_ deliver: @escaping @Sendable (BrowserEvent) async -> Void) async {
        var backoff = 1.0
        var url: String?
        var token: APNsToken?
        var connected = false
        func failed(_ error: any Error) async {
            connected = false
            await deliver(.notificationsStatus(.disconnected(reason: BrowserFailure(error).message, retryIn: backoff), at: Self.now()))
            try? await sleeper.sleep(seconds: backoff)
            backoff = min(maximumBackoff, backoff * 2)
        }
        while !Task.isCancelled {
            guard let webcourierURL = url else {
                await deliver(.notificationsStatus(.registering, at: Self.now()))
                do {
                    let created = try await client.createToken(apnsEnvironment: client.configuration.environment)
                    guard let u = created.webcourierURL, !u.isEmpty else {
                        throw CloudKitError(kind: .invalidResponse, operation: "tokens/create", reason: "the answer has no webcourierURL")
                    }
                    url = u
                    token = created
                    connected = true
                    backoff = 1
                    await deliver(.notificationsStatus(.connected, at: Self.now()))
                } catch {
                    await failed(error)
                }
                continue
            }
            if !connected, let token {
                do {
                    try await client.registerToken(APNsToken(apnsEnvironment: token.apnsEnvironment, apnsToken: token.apnsToken))
                    connected = true  // the back-off resets only after a poll succeeds
                    await deliver(.notificationsStatus(.connected, at: Self.now()))
                } catch let error as CloudKitError where error.serverErrorCode == .badRequest {
                    url = nil  // the server no longer knows the token
                    continue
                } catch {
                    if Task.isCancelled { return }
                    await failed(error)
                    continue
                }
            }
            do {
                let answer = try await client.pollWebcourier(webcourierURL, timeout: pollTimeout)
                if !connected {
                    connected = true
                    await deliver(.notificationsStatus(.connected, at: Self.now()))
                }
                backoff = 1
                if let notification = answer.notification {
                    await deliver(.notificationReceived(notification, dropped: answer.dropped, at: Self.now()))
                }
            } catch let error as CloudKitError where error.kind == .timeout {
                continue  // a long hold: poll again
            } catch let error as CloudKitError where error.httpStatus == 404 {
                url = nil  // the server forgot the token: make a new one
            } catch {
                if Task.isCancelled { return }
                await failed(error)
            }
        }
    }
}
