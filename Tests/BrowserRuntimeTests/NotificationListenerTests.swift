import BrowserRuntime
import CloudKitLocal
import CloudKitWeb
import Foundation
import RecordBrowser
import Testing

/// Collects the listener's events.
actor EventLog {
    var events: [BrowserEvent] = []
    func add(_ event: BrowserEvent) { events.append(event) }
    func received() -> [PushNotification] { events.compactMap { if case .notificationReceived(let n, _, _) = $0 { return n } else { return nil } } }
    func statuses() -> [NotificationFeed.Connection] { events.compactMap { if case .notificationsStatus(let c, _) = $0 { return c } else { return nil } } }
}

/// Fails the first `failures` webcourier polls as a dropped connection would, then passes through.
final class FlakyTransport: HTTPTransport, @unchecked Sendable {
    let inner: InProcessTransport
    private let lock = NSLock()
    private var failures: Int
    init(_ inner: InProcessTransport, failures: Int) {
        self.inner = inner
        self.failures = failures
    }
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if request.url.contains("/webcourier/") {
            let fail = lock.withLock { () -> Bool in
                guard failures > 0 else { return false }
                failures -= 1
                return true
            }
            if fail { throw CloudKitError(kind: .transport, reason: "connection reset") }
        }
        return try await inner.send(request)
    }
}

/// Records waits instead of sleeping.
final class RecordingSleeper: RetrySleeper, @unchecked Sendable {
    private let lock = NSLock()
    private var waits: [Double] = []
    var recorded: [Double] { lock.withLock { waits } }
    func sleep(seconds: Double) async throws { lock.withLock { waits.append(seconds) } }
}

@Suite struct NotificationListenerTests {
    @Test func listensReconnectsWithBackoffAndDelivers() async throws {
        var configuration = LocalServerConfiguration()
        configuration.apiTokens = ["t"]
        configuration.users = [(name: "u", token: "w")]
        configuration.notifications.holdSeconds = 0.3
        configuration.baseURL = "http://in-process"
        let service = try LocalCloudKit(store: try Store(directory: tempDirectory("srv")), configuration: configuration)
        let transport = FlakyTransport(InProcessTransport(service: service), failures: 3)
        let client = CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: "http://in-process", container: "iCloud.t"),
            credentials: .apiToken("t", webAuthToken: "w"), transport: transport)
        let db = client.database(.private)
        _ = try await db.modifyZones([ZoneOperation(.create, ZoneID(zoneName: "Z"))])
        _ = try await db.modifySubscriptions([SubscriptionOperation(.create, .zone("z", ZoneID(zoneName: "Z")))])
        let log = EventLog()
        let sleeper = RecordingSleeper()
        let listener = NotificationListener(client: client, sleeper: sleeper)
        let task = Task { await listener.run { await log.add($0) } }
        // Wait until the failures are behind us and the listener polls again.
        for _ in 0..<200 where await log.statuses().last != .connected || sleeper.recorded.count < 3 { try await Task.sleep(nanoseconds: 10_000_000) }
        _ = try await db.modifyRecords(ModifyRecordsRequest(operations: [.create(Record(recordName: "a", recordType: "T"))], zoneID: ZoneID(zoneName: "Z")))
        for _ in 0..<300 where await log.received().isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        task.cancel()
        #expect(await log.received().map(\.kind) == [.recordZone])
        #expect(sleeper.recorded == [1, 2, 4], "failures back off 1, 2, 4 s")
        let statuses = await log.statuses()
        #expect(statuses.first == .registering && statuses.contains(.connected))
        #expect(statuses.contains { if case .disconnected = $0 { return true } else { return false } })
    }
}
