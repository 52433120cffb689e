import CloudKitLocal
import CloudKitWeb
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// A real `ckbrowse serve` stack (Hummingbird on a loopback port, SQLite in a temp directory) for one
/// test. Stop it with `stop()`, which removes the temp directory the server made for itself (a run of
/// the suite left a hundred of them behind); a directory the test named stays the test's.
final class LiveServer: Sendable {
    static let container = "iCloud.com.example.Tests"
    static let apiToken = "test-api-token"
    static let alice = (name: "alice", token: "alice+web/token=")
    static let bob = (name: "bob", token: "bob-web-token")

    let directory: String
    /// Whether `start` made `directory` (no directory was given), so `stop` removes it.
    let ownsDirectory: Bool
    let service: LocalCloudKit
    let port: Int
    let task: Task<Void, any Error>
    let group: ServiceGroup

    static func start(
        directory: String? = nil, serverKeys: [(keyID: String, publicKeyPEM: String)] = [],
        now: @escaping @Sendable () -> Date = { Date() }, notifications: NotificationSettings = NotificationSettings(),
        maximumBodyBytes: Int? = nil, configure: (inout LocalServerConfiguration) -> Void = { _ in }
    ) async throws -> LiveServer {
        let ownsDirectory = directory == nil
        let directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("ckl-\(UUID().uuidString)").path
        var configuration = LocalServerConfiguration()
        configuration.apiTokens = [apiToken]
        configuration.users = [alice, bob]
        configuration.userContacts = ["alice": UserContact(email: "alice@example.com", phone: "+1 555 0100"), "bob": UserContact(email: "bob@example.com")]
        configuration.serverKeys = serverKeys
        configuration.now = now
        configuration.notifications = notifications
        if let maximumBodyBytes { configuration.maximumBodyBytes = maximumBodyBytes }
        configure(&configuration)
        let service = try LocalCloudKit(store: try Store(directory: directory), configuration: configuration)
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let app = LocalHTTPServer(service: service, host: "127.0.0.1", port: 0).application { port in
            continuation.yield(port)
        }
        // A service group without signals, stopped by a graceful shutdown: cancelling the task instead
        // makes Hummingbird log "Waiting on child channel: CancellationError()" for every test.
        let group = ServiceGroup(services: [app], gracefulShutdownSignals: [], cancellationSignals: [], logger: Logger(label: "live-server"))
        let task = Task { try await group.run() }
        var port = 0
        for await p in stream {
            port = p
            break
        }
        service.setBaseURL("http://127.0.0.1:\(port)")
        return LiveServer(directory: directory, ownsDirectory: ownsDirectory, service: service, port: port, task: task, group: group)
    }

    private init(directory: String, ownsDirectory: Bool, service: LocalCloudKit, port: Int, task: Task<Void, any Error>, group: ServiceGroup) {
        self.directory = directory
        self.ownsDirectory = ownsDirectory
        self.service = service
        self.port = port
        self.task = task
        self.group = group
    }

    var url: String { "http://127.0.0.1:\(port)" }

    func client(
        user: (name: String, token: String)? = LiveServer.alice, apiToken: String = LiveServer.apiToken,
        environment: CloudKitEnvironment = .development, credentials: Credentials? = nil, retry: RetryPolicy = .none
    ) -> CloudKitClient {
        CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: url, container: Self.container, environment: environment, requestTimeout: 20, retryPolicy: retry),
            credentials: credentials ?? .apiToken(apiToken, webAuthToken: user?.token), transport: AsyncHTTPTransport())
    }

    /// A raw request, bypassing the client's own checks.
    func raw(_ method: HTTPMethod, _ path: String, query: String? = nil, body: String? = nil, headers: [(String, String)] = []) async throws -> CloudKitWeb.HTTPResponse {
        let q = query ?? "ckAPIToken=\(Self.apiToken)&ckWebAuthToken=\(PercentEncoding.encodeQueryValue(Self.alice.token))"
        let full = url + path + (q.isEmpty ? "" : "?" + q)
        return try await AsyncHTTPTransport().send(
            CloudKitWeb.HTTPRequest(method: method, url: full, headers: headers.map { (name: $0.0, value: $0.1) }, body: body.map { Array($0.utf8) }, timeout: 20))
    }

    func path(_ database: String, _ operation: String, environment: String = "development") -> String {
        "/database/1/\(Self.container)/\(environment)/\(database)/\(operation)"
    }

    /// `keepingData`: the test starts another server on `directory` afterwards (and removes it).
    func stop(keepingData: Bool = false) async {
        // Long-polls would hold a graceful stop for their whole hold time: end them first, as serve does.
        service.closeLongPolls()
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        if ownsDirectory && !keepingData { try? FileManager.default.removeItem(atPath: directory) }
    }
}

extension CloudKitDatabase {
    @discardableResult
    func createZone(_ name: String) async throws -> ZoneResult {
        try await modifyZones([ZoneOperation(.create, ZoneID(zoneName: name))])[0]
    }

    func modify(_ ops: [RecordOperation], zone: String? = nil, atomic: Bool? = nil) async throws -> ModifyRecordsResult {
        try await modifyRecords(ModifyRecordsRequest(operations: ops, zoneID: zone.map { ZoneID(zoneName: $0) }, atomic: atomic))
    }

    func lookup(_ name: String, zone: String? = nil) async throws -> RecordResult {
        try await lookupRecords([name], zoneID: zone.map { ZoneID(zoneName: $0) })[0]
    }
}

func record(_ name: String, _ type: String, tag: String? = nil, _ fields: [String: FieldValue] = [:]) -> Record {
    Record(recordName: name, recordType: type, recordChangeTag: tag, fields: fields)
}

func record(_ name: String, tag: String? = nil, _ fields: [String: FieldValue] = [:]) -> Record {
    Record(recordName: name, recordType: "Note", recordChangeTag: tag, fields: fields)
}
