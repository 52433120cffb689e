import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Serves a `LocalCloudKit` over HTTP/1.1 with Hummingbird. Routing, auth and errors live in
/// `LocalCloudKit.handle`; this adapter only moves bytes.
public struct LocalHTTPServer: Sendable {
    public let service: LocalCloudKit
    public let host: String
    public let port: Int
    /// Timeouts and the connection cap (`ConnectionLimits`).
    public let limits: ConnectionLimits

    public init(service: LocalCloudKit, host: String = "127.0.0.1", port: Int = 0, limits: ConnectionLimits = ConnectionLimits()) {
        self.service = service
        self.host = host
        self.port = port
        self.limits = limits
    }

    /// Words for an error that kept the server from listening on `host`:`port` (nil: not such an
    /// error). NIO's own read "bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)".
    public static func listenFailure(_ error: any Error, host: String, port: Int) -> String? {
        guard let io = error as? IOError else { return nil }
        switch io.errnoCode {
        case EADDRINUSE: return "port \(port) on \(host) is in use (another server listens there): choose another --port, or --port 0 for a free one"
        case EACCES: return "no permission to listen on port \(port) (ports below 1024 need privileges): choose another --port"
        case EADDRNOTAVAIL: return "\(host) is not an address of this machine: use 127.0.0.1 (the default) or one of its own"
        default: return "cannot listen on \(host):\(port): \(String(cString: strerror(io.errnoCode)))"
        }
    }

    /// Builds the application; `onReady` receives the bound port once the server listens.
    /// `quiet`: only critical log lines (the benchmarks, which stop their servers by cancelling them).
    public func application(quiet: Bool = false, onReady: @escaping @Sendable (Int) async -> Void) -> some ApplicationProtocol {
        let service = self.service
        let maximumBody = service.configuration.maximumBodyBytes
        let maximumAsset = service.configuration.maximumAssetBytes
        let responder = CallbackResponder<ServeRequestContext> { request, context in
            var request = request
            let body: ByteBuffer
            let isUpload = request.uri.path.hasPrefix(LocalCloudKit.uploadPathPrefix)
            do {
                body = try await request.collectBody(upTo: isUpload ? maximumAsset : maximumBody)
            } catch is NIOTooManyBytesError {
                // Too large: answered without allocating the body; refused first if the policy refuses
                // it (the guard refuses from the head, unless an earlier answer was outstanding), and
                // with CORS for a page that may read the answer.
                let head = ServerRequest(
                    method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
                    headers: Self.headers(request.headers, authority: request.head.authority), body: [])
                return Self.response(service.oversizedBodyResponse(head, isUpload: isUpload))
            } catch {
                // The client went away (or the body could not be read): nothing to answer.
                throw error
            }
            let serverRequest = ServerRequest(
                method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
                headers: Self.headers(request.headers, authority: request.head.authority), body: Array(buffer: body))
            if serverRequest.path.hasPrefix("/webcourier/") {
                // A long-poll waits up to --hold-seconds: when its connection closes first (the client
                // went away: see `ConnectionGuard`), the wait is cancelled and its request ends.
                let poll = Task { await service.handle(serverRequest) }
                context.channel.closeFuture.whenComplete { _ in poll.cancel() }
                return Self.response(await withTaskCancellationHandler { await poll.value } onCancel: { poll.cancel() })
            }
            return Self.response(await service.handle(serverRequest))
        }
        let shared = CachedAnswerShared()
        let limits = self.limits
        let connections = ConnectionCount(limit: limits.maximumConnections)
        var logger = Logger(label: "ckbrowse.serve")
        logger.logLevel = quiet ? .critical : .warning
        return Application(
            responder: responder,
            // In pipeline order: ConnectionGuard and FinishAnswersBeforeClose see the cache's answers and
            // Hummingbird's; the guard's closes (timeouts) are not held back by FinishAnswersBeforeClose.
            server: HTTPServerBuilder { responder in
                LocalHTTP1Channel(responder: responder) { codec in
                    // An answer made on the event loop goes down the same handlers by call (`DirectAnswerWriter`).
                    let connectionGuard = ConnectionGuard(limits: limits, count: connections, direct: codec, policyRefusal: { head in
                        LocalHTTPServer.policyRequest(head).flatMap(service.policyRefusalResponse)
                    })
                    let finish = FinishAnswersBeforeClose(direct: connectionGuard)
                    return [connectionGuard, finish, CachedAnswerHandler(service: service, shared: shared, direct: finish)]
                }
            },
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                // On the listening channel, before any other handler sees an accepted connection.
                try? await channel.eventLoop.submit {
                    try channel.pipeline.syncOperations.addHandler(AcceptLimit(limit: limits.maximumOpen), position: .first)
                }.get()
                await onReady(channel.localAddress?.port ?? 0)
            },
            logger: logger)
    }

    static func response(_ response: ServerResponse) -> Response {
        Response(
            status: HTTPResponse.Status(code: response.status), headers: fields(response.headers),
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: response.body)))
    }

    /// A request head as the request policy reads it: its target, and of its header fields only those
    /// the policy reads (`Host`, `Origin`, `Sec-Fetch-Mode`). Every request's head is checked, so its
    /// other fields are not copied; and nil for what nearly every request is, one the policy lets
    /// through without a look at its endpoint: no `Origin`, no `Sec-Fetch-Mode`, and a loopback `Host`
    /// (or none).
    static func policyRequest(_ head: HTTPRequest) -> ServerRequest? {
        // The first of repeated fields, as `ServerRequest.header` reads them (the subscript joins them).
        let origin = head.headerFields[values: .origin].first, mode = head.headerFields[values: secFetchMode].first
        if origin == nil, mode == nil, head.authority.map(LocalCloudKit.isLoopbackHostHeader) ?? true { return nil }
        var headers: [(name: String, value: String)] = []
        if let authority = head.authority { headers.append((name: "Host", value: authority)) }
        if let origin { headers.append((name: "Origin", value: origin)) }
        if let mode { headers.append((name: "Sec-Fetch-Mode", value: mode)) }
        return ServerRequest(method: head.method.rawValue, target: Substring(head.path ?? "/"), headers: headers, body: [])
    }

    private static let secFetchMode = HTTPField.Name("Sec-Fetch-Mode")!

    /// A request's header fields as `ServerRequest` takes them.
    /// HTTP/1.1's `Host` arrives as the request's authority (swift-http-types keeps it out of the
    /// fields): it is put back as `Host`, which the request policy checks.
    static func headers(_ fields: HTTPFields, authority: String?) -> [(name: String, value: String)] {
        var headers = fields.map { (name: $0.name.rawName, value: $0.value) }
        if let authority { headers.append((name: "Host", value: authority)) }
        return headers
    }

    /// An answer's headers as HTTP fields (names HTTP does not allow are left out).
    static func fields(_ headers: [(name: String, value: String)]) -> HTTPFields {
        var fields = HTTPFields()
        fields.reserveCapacity(headers.count)
        for header in headers {
            if let name = commonNames[header.name] ?? HTTPFields.Element.Name(header.name) {
                fields.append(HTTPFields.Element(name: name, value: header.value))
            }
        }
        return fields
    }

    /// The names nearly every answer carries, checked once (a name's check and lowercasing was a
    /// few percent of an answer from the cache).
    static let commonNames: [String: HTTPFields.Element.Name] = Dictionary(
        uniqueKeysWithValues: ["Content-Type", "X-Apple-Request-UUID", "X-Apple-CloudKit-Web-Auth-Token", "Access-Control-Allow-Origin",
                               "Access-Control-Expose-Headers", "Vary", "Access-Control-Allow-Credentials", "Cache-Control"]
            .compactMap { name in HTTPFields.Element.Name(name).map { (name, $0) } })
}

/// Hummingbird's basic request context, plus the connection's channel (a long-poll watches it close).
struct ServeRequestContext: Hummingbird.RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        channel = source.channel
    }
}

/// An `HTTPTransport` that hands requests to a `LocalCloudKit` in the same process: the same JSON
/// bytes and status codes as over HTTP, with no socket. The embedded demo container uses it.
public struct InProcessTransport: HTTPTransport {
    public let service: LocalCloudKit

    public init(service: LocalCloudKit) { self.service = service }

    public func send(_ request: CloudKitWeb.HTTPRequest) async throws -> CloudKitWeb.HTTPResponse {
        var target = Substring(request.url)
        if let scheme = target.firstRange(of: "://") {
            let afterScheme = target[scheme.upperBound...]
            target = afterScheme[(afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex)...]
        }
        let response = await service.handle(
            ServerRequest(method: request.method.rawValue, target: target, headers: request.headers, body: request.body ?? []))
        return CloudKitWeb.HTTPResponse(status: response.status, headers: response.headers, body: response.body)
    }
}
