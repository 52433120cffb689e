import CloudKitWeb
import Foundation

/// Reads a fixture written from the API reference.
func fixture(_ name: String) throws -> [UInt8] {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name).json")
    return Array(try Data(contentsOf: url))
}

/// A transport that answers from a script and records what it was sent. No sockets, no sleeps.
final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
    typealias Responder = @Sendable (HTTPRequest) throws -> HTTPResponse
    private let lock = NSLock()
    private var responders: [Responder]
    private var _requests: [HTTPRequest] = []

    init(_ responders: [Responder]) { self.responders = responders }

    convenience init(json bodies: [(Int, String)], headers: [(String, String)] = []) {
        self.init(bodies.map { status, body in
            { _ in HTTPResponse(status: status, headers: headers.map { (name: $0.0, value: $0.1) }, body: Array(body.utf8)) }
        })
    }

    var requests: [HTTPRequest] { lock.withLock { _requests } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let responder: Responder = try lock.withLock {
            _requests.append(request)
            guard !responders.isEmpty else { throw CloudKitError(kind: .transport, reason: "script exhausted") }
            return responders.removeFirst()
        }
        return try responder(request)
    }
}

/// Records requested waits instead of sleeping.
final class RecordingSleeper: RetrySleeper, @unchecked Sendable {
    private let lock = NSLock()
    private var _waits: [Double] = []
    var waits: [Double] { lock.withLock { _waits } }
    func sleep(seconds: Double) async throws { lock.withLock { _waits.append(seconds) } }
}

func queryItems(_ url: String) -> [String: String] {
    guard let q = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return [:] }
    var items: [String: String] = [:]
    for pair in q.split(separator: "&") {
        let kv = pair.split(separator: "=", maxSplits: 1)
        items[String(kv[0])] = kv.count > 1 ? PercentEncoding.decode(kv[1]) : ""
    }
    return items
}

func makeClient(
    _ transport: ScriptedTransport, credentials: Credentials = .apiToken("api-token-123", webAuthToken: nil),
    sleeper: RecordingSleeper = RecordingSleeper(), retry: RetryPolicy = RetryPolicy(),
    now: @escaping @Sendable () -> Date = { Date(timeIntervalSince1970: 1_709_294_400) },
    onRotate: (@Sendable (String) -> Void)? = nil
) -> CloudKitClient {
    CloudKitClient(
        configuration: CloudKitConfiguration(
            serverURL: "https://api.apple-cloudkit.com", container: "iCloud.com.example.Notes",
            environment: .development, retryPolicy: retry),
        credentials: credentials, transport: transport, sleeper: sleeper, now: now, onWebAuthTokenRotated: onRotate)
}
