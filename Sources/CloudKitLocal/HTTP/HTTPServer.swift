import CloudKitWeb
import Foundation
import Hummingbird
import Logging
import NIOCore

/// Serves a `LocalCloudKit` over HTTP/1.1 with Hummingbird. Routing, auth and errors live in
/// `LocalCloudKit.handle`; this adapter only moves bytes.
public struct LocalHTTPServer: Sendable {
    public let service: LocalCloudKit
    public let host: String
    public let port: Int

    public init(service: LocalCloudKit, host: String = "127.0.0.1", port: Int = 0) {
        self.service = service
        self.host = host
        self.port = port
    }

    /// Builds the application; `onReady` receives the bound port once the server listens.
    public func application(onReady: @escaping @Sendable (Int) async -> Void) -> some ApplicationProtocol {
        let service = self.service
        let maximumBody = service.configuration.maximumBodyBytes
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            var request = request
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: maximumBody)
            } catch {
                return Self.response(
                    await service.handle(ServerRequest(method: "POST", path: "/", query: nil, headers: [], body: Array(repeating: 0, count: maximumBody + 1))))
            }
            let serverRequest = ServerRequest(
                method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
                headers: request.headers.map { (name: $0.name.rawName, value: $0.value) },
                body: Array(buffer: body))
            return Self.response(await service.handle(serverRequest))
        }
        let buffers = AnswerBuffers()
        var logger = Logger(label: "ckbrowse.serve")
        logger.logLevel = .warning
        return Application(
            responder: responder,
            server: .http1(configuration: .init(additionalChannelHandlers: [CachedAnswerHandler(service: service, buffers: buffers)])),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in await onReady(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    static func response(_ response: ServerResponse) -> Response {
        var headers = HTTPFields()
        for header in response.headers {
            if let name = HTTPFields.Element.Name(header.name) { headers.append(HTTPFields.Element(name: name, value: header.value)) }
        }
        return Response(
            status: HTTPResponse.Status(code: response.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: response.body)))
    }
}

/// An `HTTPTransport` that hands requests to a `LocalCloudKit` in the same process: the same JSON
/// bytes and status codes as over HTTP, with no socket. The embedded demo container uses it.
public struct InProcessTransport: HTTPTransport {
    public let service: LocalCloudKit

    public init(service: LocalCloudKit) { self.service = service }

    public func send(_ request: CloudKitWeb.HTTPRequest) async throws -> CloudKitWeb.HTTPResponse {
        var path = request.url
        if let scheme = path.firstRange(of: "://") {
            let afterScheme = path[scheme.upperBound...]
            path = String(afterScheme[(afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex)...])
        }
        var query: String?
        if let q = path.firstIndex(of: "?") {
            query = String(path[path.index(after: q)...])
            path = String(path[..<q])
        }
        let response = await service.handle(
            ServerRequest(method: request.method.rawValue, path: path, query: query, headers: request.headers, body: request.body ?? []))
        return CloudKitWeb.HTTPResponse(status: response.status, headers: response.headers, body: response.body)
    }
}
