import CloudKitModels

/// Pushes received this session from the webcourier long-poll, and the state of its connection.
public struct NotificationFeed: Sendable {
    public enum Connection: Sendable, Hashable {
        case off
        /// tokens/create in progress.
        case registering
        case connected
        /// The long-poll failed; the listener retries after `retryIn` seconds.
        case disconnected(reason: String, retryIn: Double)
    }

    public struct Item: Sendable, Hashable {
        /// When it arrived (epoch ms).
        public var received: Int64
        public var notification: PushNotification
    }

    public var connection: Connection = .off
    /// Oldest first.
    public var items: [Item] = []
    public var seen: Set<String> = []
    public var selection = 0
    /// The first row shown.
    public var scroll = 0
    /// Notifications the server dropped from a full queue.
    public var dropped = 0
    /// When the connection was lost (epoch ms), while it is; and the last gap after a reconnect.
    public var disconnectedSince: Int64?
    public var lastGap: (from: Int64, to: Int64)?

    public init() {}

    /// Items kept in memory; older ones are forgotten.
    static let limit = 1000

    public var isDisconnected: Bool { if case .disconnected = connection { return true } else { return false } }
}
